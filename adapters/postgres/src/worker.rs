//! The store's thread: a current-thread tokio runtime that owns the connection, connects again
//! when it was lost, loads the tasks and writes each batch as one transaction.

use std::sync::Arc;

use taskwire_driver::engine::{JournalEntry, Millis, TaskSnapshot};
use taskwire_driver::{StoreError, StoreJob};
use tokio::sync::mpsc;
use tokio_postgres::{Client, Config, NoTls, Row};

use crate::batch::{self, Net};
use crate::news;
use crate::schema::{self, TERMINAL};

/// The connection, made again after it breaks.
pub(crate) struct Connection {
    config: Config,
    client: Option<Client>,
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
                let replica = connection.replica.clone();
                let loaded = match connection.client().await {
                    Ok(client) => load(client, &replica).await,
                    Err(e) => Err(e),
                };
                let _ = reply.send(loaded.map_err(failed));
            }
            StoreJob::Write(entries, reply) => {
                let replica = connection.replica.clone();
                let written = match connection.client().await {
                    Ok(client) => write(client, &entries, &replica).await,
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
                 SELECT id, message, updated_at, snapshot FROM taskwire_tasks
                 WHERE status IN {TERMINAL} OR id IN (SELECT id FROM claimed)"
            ),
            &[&replica],
        )
        .await
        .map_err(|e| e.to_string())?;
    rows.iter().map(snapshot_of).collect()
}

/// A task read from its row (`id, message, updated_at, snapshot`).
pub(crate) fn snapshot_of(row: &Row) -> Result<TaskSnapshot, String> {
    let id: &str = row.get(0);
    let mut task: TaskSnapshot = serde_json::from_str(row.get(3))
        .map_err(|e| format!("task {id} is stored unreadably ({e}); nothing was loaded"))?;
    task.info.status_message = row.get(1);
    task.info.last_updated_at = Millis(u64::try_from(row.get::<_, i64>(2)).unwrap_or(0));
    Ok(task)
}

/// The batch's net changes in one transaction: at most three statements, their rows as
/// array parameters, and a notification per 200 changed tasks for the other replicas. A
/// finished task is left as it is (a replica that finished it first wins; the trigger
/// refuses what gets past the guards).
async fn write(client: &mut Client, entries: &[JournalEntry], replica: &str) -> Result<(), String> {
    let statements = batch::reduce(entries)?;
    let transaction = client.transaction().await.map_err(|e| e.to_string())?;
    let mut changed: Vec<&str> = Vec::new();
    if !statements.puts.is_empty() {
        let mut columns = PutColumns::default();
        for (id, put) in &statements.puts {
            if let Net::Put {
                snapshot,
                message,
                at,
            } = put
            {
                let finished = snapshot.info.status.is_terminal();
                columns.id.push(id);
                columns.owner.push(snapshot.owner.as_str());
                columns.status.push(snapshot.info.status.to_string());
                columns.message.push(*message);
                columns.at.push(millis(*at));
                columns
                    .snapshot
                    .push(serde_json::to_string(snapshot).map_err(|e| e.to_string())?);
                columns.runner.push((!finished).then_some(replica));
            }
        }
        let stored = transaction
            .query(
                &format!(
                    "INSERT INTO taskwire_tasks (id, owner, status, message, updated_at, snapshot, runner)
                     SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[],
                                          $5::int8[], $6::text[], $7::text[])
                     ON CONFLICT (id) DO UPDATE
                     SET owner = excluded.owner, status = excluded.status,
                         message = excluded.message, updated_at = excluded.updated_at,
                         snapshot = excluded.snapshot,
                         runner = CASE WHEN excluded.runner IS NULL THEN NULL
                                       ELSE coalesce(taskwire_tasks.runner, excluded.runner) END
                     WHERE taskwire_tasks.status NOT IN {TERMINAL}
                     RETURNING id"
                ),
                &[
                    &columns.id,
                    &columns.owner,
                    &columns.status,
                    &columns.message,
                    &columns.at,
                    &columns.snapshot,
                    &columns.runner,
                ],
            )
            .await
            .map_err(|e| format!("storing {} tasks: {}", columns.id.len(), detail(&e)))?;
        if stored.len() < columns.id.len() {
            tracing::warn!(
                refused = columns.id.len() - stored.len(),
                "changes to tasks another replica had finished were not stored; its outcome stands"
            );
        }
        changed.extend(&columns.id);
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
                &format!(
                    "UPDATE taskwire_tasks AS t SET message = m.message, updated_at = m.at
                     FROM unnest($1::text[], $2::text[], $3::int8[]) AS m(id, message, at)
                     WHERE t.id = m.id AND t.status NOT IN {TERMINAL}"
                ),
                &[&ids, &messages, &ats],
            )
            .await
            .map_err(|e| format!("storing {} status messages: {}", ids.len(), detail(&e)))?;
        changed.extend(&ids);
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
    for ids in changed.chunks(NOTIFY_TASKS) {
        let payload = news::payload(replica, ids);
        transaction
            .execute("SELECT pg_notify($1, $2)", &[&news::CHANNEL, &payload])
            .await
            .map_err(|e| format!("telling the other replicas: {}", detail(&e)))?;
    }
    transaction.commit().await.map_err(|e| detail(&e))
}

/// Tasks named in one notification: 200 ids of up to 36 bytes stay well below
/// PostgreSQL's 8000-byte limit on a payload.
const NOTIFY_TASKS: usize = 200;

/// The columns of the upsert, one entry per task.
#[derive(Default)]
struct PutColumns<'a> {
    id: Vec<&'a str>,
    owner: Vec<&'a str>,
    status: Vec<String>,
    message: Vec<Option<&'a str>>,
    at: Vec<i64>,
    snapshot: Vec<String>,
    runner: Vec<Option<&'a str>>,
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
