//! The store's thread: a current-thread tokio runtime that owns the connection, connects again
//! when it was lost, loads the tasks and writes each batch as one transaction.

use std::sync::Arc;

use taskwire_driver::engine::TaskSnapshot;
use taskwire_driver::{StoreError, StoreJob};
use tokio::sync::mpsc;
use tokio_postgres::{Client, Config, NoTls};

use crate::schema::{self, snapshot_of, COLUMNS, TERMINAL};
use crate::write::{self, Statements};

/// The connection, made again after it breaks.
pub(crate) struct Connection {
    config: Config,
    client: Option<(Client, Statements)>,
    /// This process's replica name: the runner of the unfinished tasks it stores.
    replica: Arc<str>,
}

impl Connection {
    /// Connects and prepares the tables (made on first use, else their version checked).
    pub async fn open(config: Config, replica: Arc<str>) -> Result<Connection, String> {
        let mut connection = Connection {
            config,
            client: None,
            replica,
        };
        connection.client().await?;
        Ok(connection)
    }

    /// The live client and its prepared statements, connecting first when there is none or
    /// it broke.
    async fn client(&mut self) -> Result<&mut (Client, Statements), String> {
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
            let statements = Statements::prepare(&client).await?;
            self.client = Some((client, statements));
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
                let replica = connection.replica.clone();
                let loaded = match connection.client().await {
                    Ok((client, _)) => load(client, &replica).await,
                    Err(e) => Err(e),
                };
                let _ = reply.send(loaded.map_err(failed));
            }
            StoreJob::Write(entries, reply) => {
                let replica = connection.replica.clone();
                let written = match connection.client().await {
                    Ok((client, statements)) => {
                        write::write(client, statements, &entries, &replica).await
                    }
                    Err(e) => Err(e),
                };
                let _ = reply.send(written.map_err(failed));
            }
        }
    }
}

/// The tasks this process takes on at start: every finished one, and every unfinished one
/// whose runner is this replica (an earlier run of it), nobody, or a replica whose lease ran
/// out (claimed in the same statement). Another live replica's unfinished tasks stay its
/// own (the watch reports them).
async fn load(client: &Client, replica: &str) -> Result<Vec<TaskSnapshot>, String> {
    let rows = client
        .query(
            &format!(
                "WITH claimed AS (
                     UPDATE taskwire_tasks AS t SET runner = $1
                     WHERE status NOT IN {TERMINAL} AND (runner IS NULL OR runner = $1 OR NOT EXISTS (
                         SELECT 1 FROM taskwire_replicas AS r
                         WHERE r.id = t.runner AND r.expires_at > taskwire_now_ms()))
                     RETURNING id)
                 SELECT {COLUMNS} FROM taskwire_tasks
                 WHERE status IN {TERMINAL} OR id IN (SELECT id FROM claimed)"
            ),
            &[&replica],
        )
        .await
        .map_err(|e| e.to_string())?;
    rows.iter().map(snapshot_of).collect()
}
