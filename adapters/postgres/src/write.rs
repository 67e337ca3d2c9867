//! One batch, one transaction: the batch reduced to one change per task, written as at most
//! three statements (upserts, message updates, deletes; their rows as array parameters) and
//! the notifications to the other replicas (carrying the changed rows, so that they need
//! not read them back; a status message alone, or a row too big, by its id), all prepared once per
//! connection and sent together (pipelined), so that a batch costs three round trips
//! (`BEGIN`, the statements, `COMMIT`) whatever its size.
//!
//! A change PostgreSQL refuses for what it holds (a constraint, a value it cannot store, the
//! trigger) fails its whole statement: the batch is then written again one task at a time,
//! each under a savepoint, so that only the changes of the task at fault are refused. A
//! change to a task that is finished in the database (another replica finished it first) is
//! left out by the upsert itself, and refused. The changes of a task whose work runs here
//! carry this process's fencing token ([`Fences`]) and go through an update of their own,
//! which leaves the task alone, and refuses the change, once another process claimed it.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::future::Future;
use std::pin::Pin;

use taskwire_driver::engine::{JournalEntry, Millis, TaskSnapshot};
use taskwire_driver::{refused_entries, NetBatch, NetChange, Refused};
use tokio_postgres::{Client, Statement, Transaction};

use crate::claims::{Fences, ANSWERS_CHANNEL};
use crate::news;
use crate::schema::{snapshot_of, COLUMNS, TERMINAL};

/// The statements of a write, prepared on the connection.
pub(crate) struct Statements {
    upsert: Statement,
    fenced: Statement,
    message: Statement,
    answers: Statement,
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
            // (a write retried after its commit was not heard). An unfinished task's runner
            // is set when it is stored first (none: queued for a worker), then only by
            // claims. `inserted`: the row is new.
            upsert: prepare(format!(
                "INSERT INTO taskwire_tasks
                     (id, owner, status, message, updated_at, snapshot, runner, created_at, era)
                 SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[],
                                      $5::int8[], $6::text[], $7::text[], $8::int8[], $9::text[])
                 ON CONFLICT (id) DO UPDATE
                 SET owner = excluded.owner, status = excluded.status,
                     message = excluded.message, updated_at = excluded.updated_at,
                     snapshot = excluded.snapshot,
                     runner = CASE WHEN excluded.status IN {TERMINAL} THEN NULL
                                   ELSE taskwire_tasks.runner END
                 WHERE taskwire_tasks.status NOT IN {TERMINAL}
                    OR (taskwire_tasks.status = excluded.status
                        AND (taskwire_tasks.snapshot::jsonb -> 'outcome')
                            IS NOT DISTINCT FROM (excluded.snapshot::jsonb -> 'outcome'))
                 RETURNING id, (xmax = 0) AS inserted"
            ))
            .await?,
            // The changes of tasks whose work runs here, under the claim's token ($7): left
            // out once another process claimed the task (or it finished elsewhere), unless
            // written again as stored under the same claim (a retried write).
            fenced: prepare(format!(
                "UPDATE taskwire_tasks AS t
                 SET owner = u.owner, status = u.status, message = u.message,
                     updated_at = u.at, snapshot = u.snapshot,
                     runner = CASE WHEN u.status IN {TERMINAL} THEN NULL ELSE t.runner END
                 FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::int8[],
                             $6::text[], $7::int8[]) AS u(id, owner, status, message, at, snapshot, fence)
                 WHERE t.id = u.id
                   AND ((t.status NOT IN {TERMINAL} AND t.runner = $8 AND t.fence = u.fence)
                        OR (t.status = u.status AND t.status IN {TERMINAL} AND t.fence = u.fence
                            AND (t.snapshot::jsonb -> 'outcome')
                                IS NOT DISTINCT FROM (u.snapshot::jsonb -> 'outcome')))
                 RETURNING t.id"
            ))
            .await?,
            message: prepare(format!(
                "UPDATE taskwire_tasks AS t SET message = m.message, updated_at = m.at
                 FROM unnest($1::text[], $2::text[], $3::int8[], $4::int8[]) AS m(id, message, at, fence)
                 WHERE t.id = m.id AND t.status NOT IN {TERMINAL}
                   AND (m.fence IS NULL OR (t.runner = $5 AND t.fence = m.fence))"
            ))
            .await?,
            answers: prepare(
                "INSERT INTO taskwire_answers (task, responses)
                 SELECT * FROM unnest($1::text[], $2::text[])"
                    .to_owned(),
            )
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
type Pending<'a> = Pin<Box<dyn Future<Output = Result<u64, Failure>> + 'a>>;

/// The batch's net changes in one transaction; `replica` runs the unfinished tasks it stores
/// first (unless queued for a worker), and the tasks `fences` holds. Returns the entries
/// refused for good; those refused for the version of their task the database keeps
/// (finished by another process first, or claimed by another) carry that version, and their
/// tasks no longer run here. An `Err` may pass.
pub(crate) async fn write(
    client: &mut Client,
    statements: &Statements,
    entries: &[JournalEntry],
    replica: &str,
    fences: &Fences,
) -> Result<Vec<Refused>, String> {
    let (net, mut refused) = NetBatch::of(entries);
    let passing = |e: tokio_postgres::Error| detail(&e);
    let transaction = client.transaction().await.map_err(passing)?;
    let outcome = match send(&transaction, statements, &net, replica, fences, true).await {
        Ok(outcome) => {
            transaction.commit().await.map_err(passing)?;
            outcome.settle(fences);
            outcome
        }
        Err(Failure::Passing(why)) => return Err(why),
        Err(Failure::Refused(why)) => {
            tracing::warn!(%why, "a change of the batch was refused; writing it task by task");
            transaction.rollback().await.map_err(passing)?;
            one_by_one(client, statements, &net, replica, fences).await?
        }
    };
    let mut refused_here = refused_entries(entries, &outcome.refused);
    if !outcome.superseded.is_empty() {
        let stored = stored_versions(client, &outcome.superseded, fences).await?;
        for entry in &mut refused_here {
            let task = entries
                .binary_search_by_key(&entry.seq, |e| e.seq)
                .ok()
                .map(|at| entries[at].change.task().as_str());
            entry.stored = task.and_then(|t| stored.get(t)).cloned();
        }
    }
    refused.extend(refused_here);
    Ok(refused)
}

/// The tasks `ids` as the database keeps them, by id (a deleted one is missing); none of
/// them runs here any more.
async fn stored_versions(
    client: &Client,
    ids: &[&str],
    fences: &Fences,
) -> Result<HashMap<String, TaskSnapshot>, String> {
    let rows = client
        .query(
            &format!("SELECT {COLUMNS} FROM taskwire_tasks WHERE id = ANY($1::text[])"),
            &[&ids],
        )
        .await
        .map_err(|e| format!("reading back tasks another process changed: {}", detail(&e)))?;
    for id in ids {
        fences.drop_task(id);
    }
    let mut stored = HashMap::with_capacity(rows.len());
    for row in &rows {
        let task = snapshot_of(row)?;
        stored.insert(task.info.id.to_string(), task);
    }
    Ok(stored)
}

/// What the statements of a batch did, applied to [`Fences`] once committed.
#[derive(Default)]
struct Sent<'a> {
    /// Tasks whose change was left out, and why.
    refused: HashMap<&'a str, String>,
    /// Of those, the ones left out for the version the database keeps (finished by
    /// another process first, or claimed by another).
    superseded: Vec<&'a str>,
    /// Unfinished tasks stored first by this batch, which run here (token 0).
    inserted: Vec<&'a str>,
    /// Tasks stored as finished: no longer held.
    finished: Vec<&'a str>,
}

impl<'a> Sent<'a> {
    fn settle(&self, fences: &Fences) {
        for id in &self.inserted {
            fences.hold(id, 0);
        }
        for id in &self.finished {
            fences.drop_task(id);
        }
    }

    fn extend(&mut self, other: Sent<'a>) {
        self.refused.extend(other.refused);
        self.superseded.extend(other.superseded);
        self.inserted.extend(other.inserted);
        self.finished.extend(other.finished);
    }
}

/// The batch again, each task's change under a savepoint of its own.
async fn one_by_one<'a>(
    client: &mut Client,
    statements: &Statements,
    net: &NetBatch<'a>,
    replica: &str,
    fences: &Fences,
) -> Result<Sent<'a>, String> {
    let passing = |e: tokio_postgres::Error| detail(&e);
    let mut transaction = client.transaction().await.map_err(passing)?;
    let mut outcome = Sent::default();
    let mut stored = Vec::new();
    for (task, alone) in net.one_by_one() {
        let savepoint = transaction.savepoint("change").await.map_err(passing)?;
        match send(&savepoint, statements, &alone, replica, fences, false).await {
            Ok(sent) => {
                savepoint.commit().await.map_err(passing)?;
                outcome.extend(sent);
                if alone.deletes.is_empty() {
                    stored.push(task);
                }
            }
            Err(Failure::Refused(why)) => {
                savepoint.rollback().await.map_err(passing)?;
                outcome.refused.insert(task, why);
            }
            Err(Failure::Passing(why)) => return Err(why),
        }
    }
    let mut payloads = news::Payloads::new(replica);
    for id in stored {
        payloads.id(id);
    }
    for payload in payloads.finish() {
        transaction
            .execute(&statements.notify, &[&news::CHANNEL, &payload])
            .await
            .map_err(|e| format!("telling the other replicas: {}", detail(&e)))?;
    }
    transaction.commit().await.map_err(passing)?;
    outcome.settle(fences);
    Ok(outcome)
}

/// Sends the statements of `net` on `tx`, with (`notify`) the notifications of its changes,
/// together.
async fn send<'a>(
    tx: &Transaction<'_>,
    statements: &Statements,
    net: &NetBatch<'a>,
    replica: &str,
    fences: &Fences,
    notify: bool,
) -> Result<Sent<'a>, Failure> {
    let (mut columns, mut fenced) = (PutColumns::default(), PutColumns::default());
    // Unfinished tasks this batch stores with this replica as their runner.
    let mut runs_here: HashSet<&'a str> = HashSet::new();
    let mut finished = Vec::new();
    for (id, put) in &net.puts {
        if let NetChange::Put {
            snapshot,
            message,
            at,
        } = put
        {
            let fence = fences.get(id);
            let into = if fence.is_some() {
                &mut fenced
            } else {
                &mut columns
            };
            into.id.push(id);
            into.owner.push(snapshot.owner.as_str());
            into.status.push(snapshot.info.status.to_string());
            into.message.push(*message);
            into.at.push(millis(*at));
            let json = serde_json::to_string(snapshot)
                .map_err(|e| Failure::Refused(format!("task {id}: cannot serialize: {e}")))?;
            into.snapshot.push(json);
            let done = snapshot.info.status.is_terminal();
            if done {
                finished.push(*id);
            }
            // Attempt 0: handed off by a front, queued for a worker.
            let waits = !done && snapshot.request.as_ref().is_some_and(|r| r.attempt == 0);
            if !done && !waits {
                runs_here.insert(*id);
            }
            into.runner.push((!done && !waits).then_some(replica));
            into.fence.push(fence.unwrap_or(0));
            into.created_at.push(millis(snapshot.info.created_at));
            into.era.push(snapshot.era.as_str());
        }
    }
    let (mut ids, mut messages, mut ats, mut message_fences) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for (id, change) in &net.messages {
        if let NetChange::Message { message, at } = change {
            ids.push(*id);
            messages.push(*message);
            ats.push(millis(*at));
            message_fences.push(fences.get(id));
        }
    }
    let mut notes = news::Payloads::new(replica);
    if notify {
        for put in [&columns, &fenced] {
            for (i, id) in put.id.iter().enumerate() {
                notes.row(id, put.message[i], put.at[i], &put.snapshot[i]);
            }
        }
        for id in &ids {
            notes.id(id);
        }
    }
    let payloads = notes.finish();
    let (answer_tasks, answer_texts): (Vec<&str>, Vec<String>) = net
        .answers
        .iter()
        .map(|a| {
            (
                a.task,
                serde_json::Value::Object(a.responses.clone()).to_string(),
            )
        })
        .unzip();

    let put = &columns;
    let upsert = async move {
        if put.id.is_empty() {
            return Ok(Vec::new());
        }
        let params: [&(dyn tokio_postgres::types::ToSql + Sync); 9] = [
            &put.id,
            &put.owner,
            &put.status,
            &put.message,
            &put.at,
            &put.snapshot,
            &put.runner,
            &put.created_at,
            &put.era,
        ];
        tx.query(&statements.upsert, &params)
            .await
            .map_err(|e| Failure::of(format_args!("storing {} tasks", put.id.len()), &e))
    };
    let held = &fenced;
    let fenced_update = async move {
        if held.id.is_empty() {
            return Ok(Vec::new());
        }
        let params: [&(dyn tokio_postgres::types::ToSql + Sync); 8] = [
            &held.id,
            &held.owner,
            &held.status,
            &held.message,
            &held.at,
            &held.snapshot,
            &held.fence,
            &replica,
        ];
        tx.query(&statements.fenced, &params)
            .await
            .map_err(|e| Failure::of(format_args!("storing {} tasks run here", held.id.len()), &e))
    };
    let mut sent: Vec<Pending<'_>> = Vec::new();
    if !ids.is_empty() {
        let (ids, messages, ats, message_fences) = (&ids, &messages, &ats, &message_fences);
        sent.push(Box::pin(async move {
            tx.execute(
                &statements.message,
                &[ids, messages, ats, message_fences, &replica],
            )
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
    if !answer_tasks.is_empty() {
        let (tasks, texts) = (&answer_tasks, &answer_texts);
        sent.push(Box::pin(async move {
            tx.execute(&statements.answers, &[tasks, texts])
                .await
                .map_err(|e| {
                    Failure::of(
                        format_args!("storing answers for {} tasks", tasks.len()),
                        &e,
                    )
                })
        }));
        sent.push(Box::pin(async move {
            tx.execute(&statements.notify, &[&ANSWERS_CHANNEL, &""])
                .await
                .map_err(|e| Failure::of("telling the runners", &e))
        }));
    }
    // Polled together, the statements go out in this order without waiting for each other.
    // After one fails, the next ones fail for that (the transaction is aborted): a refusal
    // among the failures is the cause.
    let ((rows, held_rows), done) = futures::future::join(
        futures::future::join(upsert, fenced_update),
        futures::future::join_all(sent),
    )
    .await;
    let mut failures = Vec::new();
    let mut rows_of = |result: Result<Vec<tokio_postgres::Row>, Failure>| {
        result.unwrap_or_else(|failure| {
            failures.push(failure);
            Vec::new()
        })
    };
    let (rows, held_rows) = (rows_of(rows), rows_of(held_rows));
    failures.extend(done.into_iter().filter_map(Result::err));
    if !failures.is_empty() {
        let cause = failures
            .iter()
            .position(|f| matches!(f, Failure::Refused(_)))
            .unwrap_or(0);
        return Err(failures.swap_remove(cause));
    }
    let mut outcome = Sent {
        finished,
        ..Sent::default()
    };
    let mut stored: HashSet<&str> = HashSet::new();
    for row in &rows {
        let id: &str = row.get(0);
        stored.insert(id);
        let inserted: bool = row.get(1);
        if let Some(&put) = runs_here.get(id).filter(|_| inserted) {
            outcome.inserted.push(put);
        }
    }
    stored.extend(held_rows.iter().map(|row| row.get::<_, &str>(0)));
    for &(id, _) in &net.puts {
        if stored.contains(id) {
            continue;
        }
        outcome.superseded.push(id);
        let why = if fences.get(id).is_some() {
            format!(
                "task {id} is no longer this process's to change: another process claimed its \
                 work (this one's claim ran out), or it finished in the database"
            )
        } else {
            format!(
                "task {id} is finished in the database (another process finished it first), \
                 and a finished task does not change"
            )
        };
        outcome.refused.insert(id, why);
    }
    outcome.finished.retain(|id| stored.contains(id));
    Ok(outcome)
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
    /// The token of each (only for the fenced update).
    fence: Vec<i64>,
    created_at: Vec<i64>,
    era: Vec<&'static str>,
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
