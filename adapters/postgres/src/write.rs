//! One batch, one transaction: the batch reduced to one change per task, written as at most
//! three statements (upserts, message updates, deletes; their rows as array parameters) and
//! a notification per 200 changed tasks for the other replicas, all prepared once per
//! connection and sent together (pipelined), so that a batch costs three round trips
//! (`BEGIN`, the statements, `COMMIT`) whatever its size.

use std::future::Future;
use std::pin::Pin;

use taskwire_driver::engine::{JournalEntry, Millis};
use tokio_postgres::{Client, Statement};

use crate::batch::{self, Net};
use crate::news;
use crate::schema::TERMINAL;

/// Tasks named in one notification: 200 ids of up to 36 bytes stay well below
/// PostgreSQL's 8000-byte limit on a payload.
const NOTIFY_TASKS: usize = 200;

/// The statements of a write, prepared on the connection.
pub(crate) struct Statements {
    upsert: Statement,
    message: Statement,
    delete: Statement,
    notify: Statement,
}

impl Statements {
    pub async fn prepare(client: &Client) -> Result<Statements, String> {
        let prepare = |sql: String| async move {
            client
                .prepare(&sql)
                .await
                .map_err(|e| format!("cannot prepare a statement: {e}"))
        };
        Ok(Statements {
            // A finished task is left as it is (a replica that finished it first wins; the
            // trigger refuses what gets past the guards). The runner of an unfinished task is
            // the replica that stored it first (or took it over).
            upsert: prepare(format!(
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
            ))
            .await?,
            message: prepare(format!(
                "UPDATE taskwire_tasks AS t SET message = m.message, updated_at = m.at
                 FROM unnest($1::text[], $2::text[], $3::int8[]) AS m(id, message, at)
                 WHERE t.id = m.id AND t.status NOT IN {TERMINAL}"
            ))
            .await?,
            delete: prepare("DELETE FROM taskwire_tasks WHERE id = ANY($1::text[])".to_owned())
                .await?,
            notify: prepare("SELECT pg_notify($1, $2)".to_owned()).await?,
        })
    }
}

/// A statement of the batch on its way: its rows, or its error saying what it stored.
type Sent<'a> = Pin<Box<dyn Future<Output = Result<u64, String>> + 'a>>;

/// The batch's net changes in one transaction; `replica` runs the unfinished tasks it stores
/// first.
pub(crate) async fn write(
    client: &mut Client,
    statements: &Statements,
    entries: &[JournalEntry],
    replica: &str,
) -> Result<(), String> {
    let net = batch::reduce(entries)?;
    let mut columns = PutColumns::default();
    for (id, put) in &net.puts {
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
            let finished = snapshot.info.status.is_terminal();
            columns.runner.push((!finished).then_some(replica));
        }
    }
    let (mut ids, mut messages, mut ats) = (Vec::new(), Vec::new(), Vec::new());
    for (id, change) in &net.messages {
        if let Net::Message { message, at } = change {
            ids.push(*id);
            messages.push(*message);
            ats.push(millis(*at));
        }
    }
    let changed: Vec<&str> = columns.id.iter().chain(&ids).copied().collect();
    let payloads: Vec<String> = changed
        .chunks(NOTIFY_TASKS)
        .map(|ids| news::payload(replica, ids))
        .collect();

    let transaction = client.transaction().await.map_err(|e| e.to_string())?;
    let mut sent: Vec<Sent<'_>> = Vec::new();
    if !columns.id.is_empty() {
        let (tx, put) = (&transaction, &columns);
        sent.push(Box::pin(async move {
            let stored = tx
                .query(
                    &statements.upsert,
                    &[
                        &put.id,
                        &put.owner,
                        &put.status,
                        &put.message,
                        &put.at,
                        &put.snapshot,
                        &put.runner,
                    ],
                )
                .await
                .map_err(|e| format!("storing {} tasks: {}", put.id.len(), detail(&e)))?;
            if stored.len() < put.id.len() {
                tracing::warn!(
                    refused = put.id.len() - stored.len(),
                    "changes to tasks another replica had finished were not stored; its outcome stands"
                );
            }
            Ok(stored.len() as u64)
        }));
    }
    if !ids.is_empty() {
        let (tx, ids, messages, ats) = (&transaction, &ids, &messages, &ats);
        sent.push(Box::pin(async move {
            tx.execute(&statements.message, &[ids, messages, ats])
                .await
                .map_err(|e| format!("storing {} status messages: {}", ids.len(), detail(&e)))
        }));
    }
    if !net.deletes.is_empty() {
        let (tx, deletes) = (&transaction, &net.deletes);
        sent.push(Box::pin(async move {
            tx.execute(&statements.delete, &[deletes])
                .await
                .map_err(|e| format!("deleting {} tasks: {}", deletes.len(), detail(&e)))
        }));
    }
    for payload in &payloads {
        let tx = &transaction;
        sent.push(Box::pin(async move {
            tx.execute(&statements.notify, &[&news::CHANNEL, payload])
                .await
                .map_err(|e| format!("telling the other replicas: {}", detail(&e)))
        }));
    }
    // Polled together, the statements go out in this order without waiting for each other.
    futures::future::try_join_all(sent).await?;
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
