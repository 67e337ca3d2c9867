//! One batch, one statement: the batch reduced to one change per task, its rows as array
//! parameters of a single prepared statement (prepared once per connection) whose
//! data-modifying parts upsert, update the tasks run here, update status messages, delete
//! and store answers, and which then notifies the other replicas of the tasks it stored
//! (carrying their rows, so that they need not read them back; a status message alone, or a
//! row too big, by its id), and the runners when it stored answers. Alone, the statement is
//! its own transaction: a batch costs one round trip whatever its size.
//!
//! A change PostgreSQL refuses for what it holds (a constraint, a value it cannot store, the
//! trigger) fails the whole statement: the batch is then written again one task at a time,
//! each under a savepoint of one transaction, so that only the changes of the task at fault
//! are refused. A change to a task that is finished in the database (another replica
//! finished it first) is left out by the upsert itself, not notified, and refused. The
//! changes of a task whose work runs here carry this process's fencing token ([`Fences`])
//! and go through an update of their own, which leaves the task alone, and refuses the
//! change, once another process claimed it.

use std::collections::{HashMap, HashSet};
use std::fmt;

use taskwire_driver::engine::{JournalEntry, Millis, TaskSnapshot};
use taskwire_driver::{refused_entries, NetBatch, NetChange, Refused};
use tokio_postgres::types::ToSql;
use tokio_postgres::{Client, GenericClient, Statement};

use crate::claims::{Fences, ANSWERS_CHANNEL};
use crate::news;
use crate::schema::{snapshot_of, COLUMNS, TERMINAL};

/// The statement of a write, prepared on the connection.
pub(crate) struct Prepared(Statement);

impl Prepared {
    pub async fn prepare(client: &Client) -> Result<Prepared, String> {
        // `upserted`: a finished task is left as it is (a replica that finished it first
        // wins; the trigger refuses what gets past the guards), unless it is written again
        // as it is (a write retried after its commit was not heard). An unfinished task's
        // runner is set when it is stored first (none: queued for a worker), then only by
        // claims. `inserted`: the row is new.
        // `fenced`: the changes of tasks whose work runs here, under the claim's token:
        // left out once another process claimed the task (or it finished elsewhere), unless
        // written again as stored under the same claim (a retried write).
        // `told`: one notification per payload, of the lines of the tasks stored (the
        // parts see one snapshot and touch one row per task each; a deleted task is not
        // told). The query reads the notifications, so that they are sent.
        let sql = format!(
            "WITH upserted AS (
                 INSERT INTO taskwire_tasks
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
                 RETURNING id, (xmax = 0) AS inserted
             ), fenced AS (
                 UPDATE taskwire_tasks AS t
                 SET owner = u.owner, status = u.status, message = u.message,
                     updated_at = u.at, snapshot = u.snapshot,
                     runner = CASE WHEN u.status IN {TERMINAL} THEN NULL ELSE t.runner END
                 FROM unnest($10::text[], $11::text[], $12::text[], $13::text[], $14::int8[],
                             $15::text[], $16::int8[]) AS u(id, owner, status, message, at, snapshot, fence)
                 WHERE t.id = u.id
                   AND ((t.status NOT IN {TERMINAL} AND t.runner = $17::text AND t.fence = u.fence)
                        OR (t.status = u.status AND t.status IN {TERMINAL} AND t.fence = u.fence
                            AND (t.snapshot::jsonb -> 'outcome')
                                IS NOT DISTINCT FROM (u.snapshot::jsonb -> 'outcome')))
                 RETURNING t.id
             ), messaged AS (
                 UPDATE taskwire_tasks AS t SET message = m.message, updated_at = m.at
                 FROM unnest($18::text[], $19::text[], $20::int8[], $21::int8[])
                      AS m(id, message, at, fence)
                 WHERE t.id = m.id AND t.status NOT IN {TERMINAL}
                   AND (m.fence IS NULL OR (t.runner = $17::text AND t.fence = m.fence))
                 RETURNING t.id
             ), deleted AS (
                 DELETE FROM taskwire_tasks WHERE id = ANY($22::text[])
             ), answered AS (
                 INSERT INTO taskwire_answers (task, responses)
                 SELECT * FROM unnest($23::text[], $24::text[])
                 RETURNING task
             ), told AS (
                 SELECT pg_notify('{channel}',
                                  $17::text || E'\\n' || string_agg(n.line, E'\\n' ORDER BY n.at))
                 FROM unnest($25::text[], $26::text[], $27::int4[])
                      WITH ORDINALITY AS n(id, line, payload, at)
                 WHERE n.id IN (SELECT id FROM upserted UNION ALL SELECT id FROM fenced
                                UNION ALL SELECT id FROM messaged)
                 GROUP BY n.payload
             ), answers_told AS (
                 SELECT pg_notify('{ANSWERS_CHANNEL}', '') WHERE EXISTS (SELECT FROM answered)
             )
             SELECT id, inserted FROM upserted
             UNION ALL SELECT id, false FROM fenced
             UNION ALL SELECT NULL, NULL FROM told
             UNION ALL SELECT NULL, NULL FROM answers_told",
            channel = news::CHANNEL,
        );
        // Planned at each write, for its arrays and the table as it is then: after five
        // writes PostgreSQL may otherwise keep one plan for any arrays, made on the table as
        // it was (while small, reading it whole), until the table is next analyzed.
        client
            .batch_execute("SET plan_cache_mode = force_custom_plan")
            .await
            .map_err(|e| format!("cannot prepare the write: {}", detail(&e)))?;
        let statement = client
            .prepare(&sql)
            .await
            .map_err(|e| format!("cannot prepare the write: {}", detail(&e)))?;
        Ok(Prepared(statement))
    }
}

/// Why the statement failed.
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

/// The batch's net changes in one statement; `replica` runs the unfinished tasks it stores
/// first (unless queued for a worker), and the tasks `fences` holds. Returns the entries
/// refused for good; those refused for the version of their task the database keeps
/// (finished by another process first, or claimed by another) carry that version, and their
/// tasks no longer run here. An `Err` may pass.
pub(crate) async fn write(
    client: &mut Client,
    prepared: &Prepared,
    entries: &[JournalEntry],
    replica: &str,
    fences: &Fences,
) -> Result<Vec<Refused>, String> {
    let (net, mut refused) = NetBatch::of(entries);
    if net.is_empty() {
        return Ok(refused);
    }
    let outcome = match send(&*client, prepared, &net, replica, fences).await {
        Ok(outcome) => {
            outcome.settle(fences);
            outcome
        }
        Err(Failure::Passing(why)) => return Err(why),
        Err(Failure::Refused(why)) => {
            tracing::warn!(%why, "a change of the batch was refused; writing it task by task");
            one_by_one(client, prepared, &net, replica, fences).await?
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

/// What the statement of a batch did, applied to [`Fences`] once committed.
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

/// The batch again, each task's change under a savepoint of its own (its notifications
/// with it), in one transaction.
async fn one_by_one<'a>(
    client: &mut Client,
    prepared: &Prepared,
    net: &NetBatch<'a>,
    replica: &str,
    fences: &Fences,
) -> Result<Sent<'a>, String> {
    let passing = |e: tokio_postgres::Error| detail(&e);
    let mut transaction = client.transaction().await.map_err(passing)?;
    let mut outcome = Sent::default();
    for (task, alone) in net.one_by_one() {
        let savepoint = transaction.savepoint("change").await.map_err(passing)?;
        match send(&savepoint, prepared, &alone, replica, fences).await {
            Ok(sent) => {
                savepoint.commit().await.map_err(passing)?;
                outcome.extend(sent);
            }
            Err(Failure::Refused(why)) => {
                savepoint.rollback().await.map_err(passing)?;
                outcome.refused.insert(task, why);
            }
            Err(Failure::Passing(why)) => return Err(why),
        }
    }
    transaction.commit().await.map_err(passing)?;
    outcome.settle(fences);
    Ok(outcome)
}

/// Runs the statement of `net` on `client` (alone, its own transaction).
async fn send<'a>(
    client: &impl GenericClient,
    prepared: &Prepared,
    net: &NetBatch<'a>,
    replica: &str,
    fences: &Fences,
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
    for put in [&columns, &fenced] {
        for (i, id) in put.id.iter().enumerate() {
            notes.row(id, put.message[i], put.at[i], &put.snapshot[i]);
        }
    }
    for id in &ids {
        notes.id(id);
    }
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
    let (put, held) = (&columns, &fenced);
    let params: [&(dyn ToSql + Sync); 27] = [
        &put.id,
        &put.owner,
        &put.status,
        &put.message,
        &put.at,
        &put.snapshot,
        &put.runner,
        &put.created_at,
        &put.era,
        &held.id,
        &held.owner,
        &held.status,
        &held.message,
        &held.at,
        &held.snapshot,
        &held.fence,
        &replica,
        &ids,
        &messages,
        &ats,
        &message_fences,
        &net.deletes,
        &answer_tasks,
        &answer_texts,
        &notes.ids,
        &notes.lines,
        &notes.payloads,
    ];
    let rows = client.query(&prepared.0, &params).await.map_err(|e| {
        let changes = net.puts.len() + net.messages.len() + net.deletes.len() + net.answers.len();
        Failure::of(format_args!("writing {changes} changes"), &e)
    })?;
    let mut outcome = Sent {
        finished,
        ..Sent::default()
    };
    // A row per task stored (a notification's has no id).
    let mut stored: HashSet<&str> = HashSet::new();
    for row in &rows {
        let Some(id) = row.get::<_, Option<&str>>(0) else {
            continue;
        };
        stored.insert(id);
        let inserted: bool = row.get(1);
        if let Some(&put) = runs_here.get(id).filter(|_| inserted) {
            outcome.inserted.push(put);
        }
    }
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

/// The columns of the upsert (or of the fenced update), one entry per task.
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
