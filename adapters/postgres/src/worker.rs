//! The store's thread: a current-thread tokio runtime that owns the connection, connects again
//! when it was lost, loads the tasks and writes each batch as one transaction.

use std::sync::Arc;

use taskwire_driver::engine::TaskSnapshot;
use taskwire_driver::{StoreError, StoreJob};
use tokio::sync::mpsc;
use tokio_postgres::{Client, Config, NoTls};

use crate::claims::Fences;
use crate::schema::{self, snapshot_of, COLUMNS, TERMINAL};
use crate::write::{self, Prepared};

/// The connection, made again after it breaks.
pub(crate) struct Connection {
    config: Config,
    client: Option<(Client, Prepared)>,
    /// This process's replica name: the runner of the unfinished tasks it stores.
    replica: Arc<str>,
    /// The tokens of the tasks whose work runs here.
    fences: Fences,
}

impl Connection {
    /// Connects and prepares the tables (made on first use, else their version checked).
    pub async fn open(
        config: Config,
        replica: Arc<str>,
        fences: Fences,
    ) -> Result<Connection, String> {
        let mut connection = Connection {
            config,
            client: None,
            replica,
            fences,
        };
        connection.client().await?;
        Ok(connection)
    }

    /// The live client and its prepared write, connecting first when there is none or
    /// it broke.
    async fn client(&mut self) -> Result<&mut (Client, Prepared), String> {
        if self.client.as_ref().is_none_or(|(c, _)| c.is_closed()) {
            let (mut client, connection) = self
                .config
                .connect(NoTls)
                .await
                .map_err(|e| format!("cannot connect: {e}"))?;
            tokio::spawn(async move {
                if let Err(error) = connection.await {
                    tracing::warn!(%error, "the PostgreSQL connection broke; the next write connects again");
                }
            });
            schema::prepare(&mut client).await?;
            let prepared = Prepared::prepare(&client).await?;
            self.client = Some((client, prepared));
        }
        Ok(self.client.as_mut().expect("connected above"))
    }
}

/// Serves jobs until every handle of the store is dropped.
pub(crate) async fn run(
    mut connection: Connection,
    mut jobs: mpsc::UnboundedReceiver<StoreJob>,
    name: Arc<str>,
) {
    while let Some(job) = jobs.recv().await {
        let failed = |e: String| StoreError::new(format!("{name}: {e}"));
        match job {
            StoreJob::Load(reply) => {
                let (replica, fences) = (connection.replica.clone(), connection.fences.clone());
                let loaded = match connection.client().await {
                    Ok((client, _)) => load(client, &replica, &fences, true).await,
                    Err(e) => Err(e),
                };
                let _ = reply.send(loaded.map_err(failed));
            }
            StoreJob::LoadRunning(reply) => {
                let (replica, fences) = (connection.replica.clone(), connection.fences.clone());
                let loaded = match connection.client().await {
                    Ok((client, _)) => load(client, &replica, &fences, false).await,
                    Err(e) => Err(e),
                };
                let _ = reply.send(loaded.map_err(failed));
            }
            StoreJob::Write(entries, reply) => {
                let (replica, fences) = (connection.replica.clone(), connection.fences.clone());
                let written = match connection.client().await {
                    Ok((client, prepared)) => {
                        write::write(client, prepared, &entries, &replica, &fences).await
                    }
                    Err(e) => Err(e),
                };
                let _ = reply.send(written.map_err(failed));
            }
        }
    }
}

/// The tasks this process takes on at start: the unfinished ones whose runner is this
/// replica (an earlier run of it), whose work runs here again under their token, and
/// (`finished`) every finished one; without them, finished ones are read when a request
/// names them. The tasks other replicas run, work waiting for a process included, are
/// reported by the watch (and claimed through it).
async fn load(
    client: &Client,
    replica: &str,
    fences: &Fences,
    finished: bool,
) -> Result<Vec<TaskSnapshot>, String> {
    let rows = client
        .query(
            &format!(
                "SELECT {COLUMNS}, fence, runner FROM taskwire_tasks
                 WHERE (status NOT IN {TERMINAL} AND runner = $1)
                    OR ($2 AND status IN {TERMINAL})"
            ),
            &[&replica, &finished],
        )
        .await
        .map_err(|e| e.to_string())?;
    let mut tasks = Vec::with_capacity(rows.len());
    for row in &rows {
        let task = snapshot_of(row)?;
        if row.get::<_, Option<&str>>(5).is_some() {
            fences.hold(&task.info.id, row.get(4));
        }
        tasks.push(task);
    }
    Ok(tasks)
}
