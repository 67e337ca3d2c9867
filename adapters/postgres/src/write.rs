//! One batch, one transaction: the batch reduced to one change per task, written as at most
//! three statements (upserts, message updates, deletes; their rows as array parameters) and
//! a notification per 200 changed tasks for the other replicas, all prepared once per
//! connection and sent together (pipelined), so that a batch costs three round trips
//! (`BEGIN`, the statements, `COMMIT`) whatever its size.
//!
//! A change PostgreSQL refuses for what it holds (a constraint, a value it cannot store, the
//! trigger) fails its whole statement: the batch is then written again one task at a time,
//! each under a savepoint, so that only the changes of the task at fault are refused. A
//! change to a task that is finished in the database (another replica finished it first) is
//! left out by the upsert itself, and refused.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::future::Future;
use std::pin::Pin;

use taskwire_driver::engine::{JournalEntry, Millis};
use taskwire_driver::{refused_entries, NetBatch, NetChange, Refused};
use tokio_postgres::{Client, Statement, Transaction};

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
            // trigger refuses what gets past the guards), unless it is written again as it is
            // (a write retried after its commit was not heard). The runner of an unfinished
            // task is the replica that stored it first (or took it over).
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
                    OR (taskwire_tasks.status = excluded.status
                        AND (taskwire_tasks.snapshot::jsonb -> 'outcome')
                            IS NOT DISTINCT FROM (excluded.snapshot::jsonb -> 'outcome'))
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

/// Why a statement failed.
enum Failure {
    /// For what a change holds: writing it again fails again.
    Refused(String),
    /// For the connection or the server (lost, busy, shutting down): it may pass.
    Passing(String),
}

impl Failure {
    /// The failure of `error`, saying `what` was being done.
    fn of(what: impl fmt::Display, error: &tokio_postgres::Error) -> Failure {
        let why = format!("{what}: {}", detail(error));
        // SQLSTATE classes: 22 data exception (a value the column cannot hold), 23 integrity
        // constraint, 54 program limit (a row too big), P0 a PL/pgSQL RAISE (the trigger).
        let class = error.code().map(|code| code.code().get(..2));
        match class {
            Some(Some("22" | "23" | "54" | "P0")) => Failure::Refused(why),
            _ => Failure::Passing(why),
        }
    }
}

/// A statement of the batch on its way: its rows, or why it failed.
type Sent<'a> = Pin<Box<dyn Future<Output = Result<u64, Failure>> + 'a>>;

/// The batch's net changes in one transaction; `replica` runs the unfinished tasks it stores
/// first. The entries refused for good come back; an `Err` may pass.
pub(crate) async fn write(
    client: &mut Client,
    statements: &Statements,
    entries: &[JournalEntry],
    replica: &str,
) -> Result<Vec<Refused>, String> {
    let (net, mut refused) = NetBatch::of(entries);
    let passing = |e: tokio_postgres::Error| detail(&e);
    let transaction = client.transaction().await.map_err(passing)?;
    let tasks = net.puts.iter().chain(&net.messages).map(|(id, _)| *id);
    let changed: Vec<&str> = tasks.collect();
    let finished = match send(&transaction, statements, &net, replica, &changed).await {
        Ok(finished) => {
            transaction.commit().await.map_err(passing)?;
            finished
        }
        Err(Failure::Passing(why)) => return Err(why),
        Err(Failure::Refused(why)) => {
            tracing::warn!(%why, "a change of the batch was refused; writing it task by task");
            transaction.rollback().await.map_err(passing)?;
            one_by_one(client, statements, &net, replica).await?
        }
    };
    refused.extend(refused_entries(entries, &finished));
    Ok(refused)
}

/// The batch again, each task's change under a savepoint of its own: the tasks refused, and
/// why.
async fn one_by_one<'a>(
    client: &mut Client,
    statements: &Statements,
    net: &NetBatch<'a>,
    replica: &str,
) -> Result<HashMap<&'a str, String>, String> {
    let passing = |e: tokio_postgres::Error| detail(&e);
    let mut transaction = client.transaction().await.map_err(passing)?;
    let mut refused = HashMap::new();
    let mut stored = Vec::new();
    for (task, alone) in net.one_by_one() {
        let savepoint = transaction.savepoint("change").await.map_err(passing)?;
        match send(&savepoint, statements, &alone, replica, &[]).await {
            Ok(finished) => {
                savepoint.commit().await.map_err(passing)?;
                refused.extend(finished);
                if alone.deletes.is_empty() {
                    stored.push(task);
                }
            }
            Err(Failure::Refused(why)) => {
                savepoint.rollback().await.map_err(passing)?;
                refused.insert(task, why);
            }
            Err(Failure::Passing(why)) => return Err(why),
        }
    }
    for payload in stored
        .chunks(NOTIFY_TASKS)
        .map(|ids| news::payload(replica, ids))
    {
        transaction
            .execute(&statements.notify, &[&news::CHANNEL, &payload])
            .await
            .map_err(|e| format!("telling the other replicas: {}", detail(&e)))?;
    }
    transaction.commit().await.map_err(passing)?;
    Ok(refused)
}

/// Sends the statements of `net` and the notifications naming `changed` on `tx`, together:
/// the tasks whose change was left out because they are finished in the database, and why.
async fn send<'a>(
    tx: &Transaction<'_>,
    statements: &Statements,
    net: &NetBatch<'a>,
    replica: &str,
    changed: &[&str],
) -> Result<HashMap<&'a str, String>, Failure> {
    let mut columns = PutColumns::default();
    for (id, put) in &net.puts {
        if let NetChange::Put {
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
            let json = serde_json::to_string(snapshot)
                .map_err(|e| Failure::Refused(format!("task {id}: cannot serialize: {e}")))?;
            columns.snapshot.push(json);
            let finished = snapshot.info.status.is_terminal();
            columns.runner.push((!finished).then_some(replica));
        }
    }
    let (mut ids, mut messages, mut ats) = (Vec::new(), Vec::new(), Vec::new());
    for (id, change) in &net.messages {
        if let NetChange::Message { message, at } = change {
            ids.push(*id);
            messages.push(*message);
            ats.push(millis(*at));
        }
    }
    let payloads: Vec<String> = changed
        .chunks(NOTIFY_TASKS)
        .map(|ids| news::payload(replica, ids))
        .collect();

    let put = &columns;
    let upsert = async move {
        if put.id.is_empty() {
            return Ok(Vec::new());
        }
        let params: [&(dyn tokio_postgres::types::ToSql + Sync); 7] = [
            &put.id,
            &put.owner,
            &put.status,
            &put.message,
            &put.at,
            &put.snapshot,
            &put.runner,
        ];
        tx.query(&statements.upsert, &params)
            .await
            .map_err(|e| Failure::of(format_args!("storing {} tasks", put.id.len()), &e))
    };
    let mut sent: Vec<Sent<'_>> = Vec::new();
    if !ids.is_empty() {
        let (ids, messages, ats) = (&ids, &messages, &ats);
        sent.push(Box::pin(async move {
            tx.execute(&statements.message, &[ids, messages, ats])
                .await
                .map_err(|e| Failure::of(format_args!("storing {} status messages", ids.len()), &e))
        }));
    }
    if !net.deletes.is_empty() {
        let deletes = &net.deletes;
        sent.push(Box::pin(async move {
            tx.execute(&statements.delete, &[deletes])
                .await
                .map_err(|e| Failure::of(format_args!("deleting {} tasks", deletes.len()), &e))
        }));
    }
    for payload in &payloads {
        sent.push(Box::pin(async move {
            tx.execute(&statements.notify, &[&news::CHANNEL, payload])
                .await
                .map_err(|e| Failure::of("telling the other replicas", &e))
        }));
    }
    // Polled together, the statements go out in this order without waiting for each other.
    // After one fails, the next ones fail for that (the transaction is aborted): a refusal
    // among the failures is the cause.
    let (rows, done) = futures::future::join(upsert, futures::future::join_all(sent)).await;
    let mut failures = Vec::new();
    let rows = rows.unwrap_or_else(|failure| {
        failures.push(failure);
        Vec::new()
    });
    failures.extend(done.into_iter().filter_map(Result::err));
    if !failures.is_empty() {
        let cause = failures
            .iter()
            .position(|f| matches!(f, Failure::Refused(_)))
            .unwrap_or(0);
        return Err(failures.swap_remove(cause));
    }
    let stored: HashSet<&str> = rows.iter().map(|row| row.get(0)).collect();
    let finished = net
        .puts
        .iter()
        .map(|&(id, _)| id)
        .filter(|id| !stored.contains(id))
        .map(|id| {
            let why = format!(
                "task {id} is finished in the database (another process finished it first), \
                 and a finished task does not change"
            );
            (id, why)
        })
        .collect();
    Ok(finished)
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
