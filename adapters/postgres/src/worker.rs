//! The store's thread: a current-thread tokio runtime that owns the connection, connects again
//! when it was lost, loads the tasks and writes each batch as one transaction.

use std::sync::Arc;

use taskwire_driver::engine::{JournalEntry, Millis, TaskSnapshot};
use taskwire_driver::{StoreError, StoreJob};
use tokio::sync::mpsc;
use tokio_postgres::{Client, Config, NoTls};

use crate::batch::{self, Net};
use crate::schema;

/// The connection, made again after it breaks.
pub(crate) struct Connection {
    config: Config,
    client: Option<Client>,
}

impl Connection {
    /// Connects and prepares the tables (made on first use, else their version checked).
    pub async fn open(config: Config) -> Result<Connection, String> {
        let mut connection = Connection {
            config,
            client: None,
        };
        connection.client().await?;
        Ok(connection)
    }

    /// The live client, connecting first when there is none or it broke.
    async fn client(&mut self) -> Result<&mut Client, String> {
        if self.client.as_ref().is_none_or(Client::is_closed) {
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
            self.client = Some(client);
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
                let loaded = match connection.client().await {
                    Ok(client) => load(client).await,
                    Err(e) => Err(e),
                };
                let _ = reply.send(loaded.map_err(failed));
            }
            StoreJob::Write(entries, reply) => {
                let written = match connection.client().await {
                    Ok(client) => write(client, &entries).await,
                    Err(e) => Err(e),
                };
                let _ = reply.send(written.map_err(failed));
            }
        }
    }
}

async fn load(client: &Client) -> Result<Vec<TaskSnapshot>, String> {
    let rows = client
        .query(
            "SELECT id, message, updated_at, snapshot FROM taskwire_tasks",
            &[],
        )
        .await
        .map_err(|e| e.to_string())?;
    let mut tasks = Vec::with_capacity(rows.len());
    for row in rows {
        let id: &str = row.get(0);
        let mut task: TaskSnapshot = serde_json::from_str(row.get(3))
            .map_err(|e| format!("task {id} is stored unreadably ({e}); nothing was loaded"))?;
        task.info.status_message = row.get(1);
        task.info.last_updated_at = Millis(u64::try_from(row.get::<_, i64>(2)).unwrap_or(0));
        tasks.push(task);
    }
    Ok(tasks)
}

/// The batch's net changes in one transaction: at most three statements, their rows as
/// array parameters.
async fn write(client: &mut Client, entries: &[JournalEntry]) -> Result<(), String> {
    let statements = batch::reduce(entries)?;
    let transaction = client.transaction().await.map_err(|e| e.to_string())?;
    if !statements.puts.is_empty() {
        let mut columns = PutColumns::default();
        for (id, put) in &statements.puts {
            if let Net::Put {
                snapshot,
                message,
                at,
            } = put
            {
                columns.id.push(id);
                columns.owner.push(snapshot.owner.as_str());
                columns.status.push(snapshot.info.status.to_string());
                columns.message.push(*message);
                columns.at.push(millis(*at));
                columns
                    .snapshot
                    .push(serde_json::to_string(snapshot).map_err(|e| e.to_string())?);
            }
        }
        transaction
            .execute(
                "INSERT INTO taskwire_tasks (id, owner, status, message, updated_at, snapshot)
                 SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[],
                                      $5::int8[], $6::text[])
                 ON CONFLICT (id) DO UPDATE
                 SET owner = excluded.owner, status = excluded.status, message = excluded.message,
                     updated_at = excluded.updated_at, snapshot = excluded.snapshot",
                &[
                    &columns.id,
                    &columns.owner,
                    &columns.status,
                    &columns.message,
                    &columns.at,
                    &columns.snapshot,
                ],
            )
            .await
            .map_err(|e| format!("storing {} tasks: {}", columns.id.len(), detail(&e)))?;
    }
    if !statements.messages.is_empty() {
        let (mut ids, mut messages, mut ats) = (Vec::new(), Vec::new(), Vec::new());
        for (id, change) in &statements.messages {
            if let Net::Message { message, at } = change {
                ids.push(*id);
                messages.push(*message);
                ats.push(millis(*at));
            }
        }
        transaction
            .execute(
                "UPDATE taskwire_tasks AS t SET message = m.message, updated_at = m.at
                 FROM unnest($1::text[], $2::text[], $3::int8[]) AS m(id, message, at)
                 WHERE t.id = m.id",
                &[&ids, &messages, &ats],
            )
            .await
            .map_err(|e| format!("storing {} status messages: {}", ids.len(), detail(&e)))?;
    }
    if !statements.deletes.is_empty() {
        transaction
            .execute(
                "DELETE FROM taskwire_tasks WHERE id = ANY($1::text[])",
                &[&statements.deletes],
            )
            .await
            .map_err(|e| {
                format!(
                    "deleting {} tasks: {}",
                    statements.deletes.len(),
                    detail(&e)
                )
            })?;
    }
    transaction.commit().await.map_err(|e| detail(&e))
}

/// The columns of the upsert, one entry per task.
#[derive(Default)]
struct PutColumns<'a> {
    id: Vec<&'a str>,
    owner: Vec<&'a str>,
    status: Vec<String>,
    message: Vec<Option<&'a str>>,
    at: Vec<i64>,
    snapshot: Vec<String>,
}

fn millis(at: Millis) -> i64 {
    i64::try_from(at.0).unwrap_or(i64::MAX)
}

/// The server's own message when there is one (a trigger's, a constraint's), else the error.
fn detail(error: &tokio_postgres::Error) -> String {
    match error.as_db_error() {
        Some(db) => db.message().to_owned(),
        None => error.to_string(),
    }
}
