//! Work this process runs under a claim: taking waiting work (queued by fronts, or left by a
//! process whose lease ran out) with `FOR UPDATE SKIP LOCKED`, and the fencing token of each
//! claim, which every change this process writes to the task carries: once another process
//! claimed the task (counting the token up), this one's late changes are refused.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::{Map, Value};
use taskwire_driver::engine::TaskSnapshot;
use tokio_postgres::{Client, Row};

use crate::schema::{snapshot_of, COLUMNS_T, TERMINAL};

/// The notification channel a process tells runners on that answers wait for them.
pub(crate) const ANSWERS_CHANNEL: &str = "taskwire_answers";

/// The fencing token of each unfinished task whose work runs here, shared by the watch
/// (claims) and the writer (whose changes carry it).
#[derive(Clone, Debug, Default)]
pub(crate) struct Fences(Arc<Mutex<HashMap<String, i64>>>);

impl Fences {
    fn map(&self) -> std::sync::MutexGuard<'_, HashMap<String, i64>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The token this process holds task `id` under, if its work runs here.
    pub fn get(&self, id: &str) -> Option<i64> {
        self.map().get(id).copied()
    }

    /// Task `id`'s work runs here under `fence`.
    pub fn hold(&self, id: &str, fence: i64) {
        self.map().insert(id.to_owned(), fence);
    }

    /// Task `id`'s work no longer runs here.
    pub fn drop_task(&self, id: &str) {
        self.map().remove(id);
    }

    /// No task's work runs here any more.
    pub fn clear(&self) {
        self.map().clear();
    }

    /// Every task held, with its token.
    pub fn held(&self) -> (Vec<String>, Vec<i64>) {
        self.map().iter().map(|(id, f)| (id.clone(), *f)).unzip()
    }
}

/// Takes up to `max` tasks whose work runs nowhere (queued first in the order they were
/// queued, then those of replicas whose lease ran out) for `replica`, in one statement: each
/// task goes to one process, its token counted up; a queued task's status message ("waiting
/// for a worker") is cleared.
pub(crate) async fn claim(
    client: &Client,
    replica: &str,
    max: usize,
    fences: &Fences,
) -> Result<Vec<TaskSnapshot>, String> {
    let max = i64::try_from(max).unwrap_or(i64::MAX);
    let rows = client
        .query(
            &format!(
                "WITH queued AS (
                     SELECT id FROM taskwire_tasks
                     WHERE runner IS NULL AND status NOT IN {TERMINAL}
                     ORDER BY updated_at LIMIT $2 FOR UPDATE SKIP LOCKED),
                 orphaned AS (
                     SELECT q.id FROM taskwire_tasks AS q
                     WHERE q.status NOT IN {TERMINAL} AND q.runner <> $1
                       AND NOT EXISTS (SELECT 1 FROM taskwire_replicas AS r
                                       WHERE r.id = q.runner AND r.expires_at > taskwire_now_ms())
                     LIMIT $2 FOR UPDATE OF q SKIP LOCKED)
                 UPDATE taskwire_tasks AS t
                 SET runner = $1, fence = t.fence + 1,
                     message = CASE WHEN t.runner IS NULL THEN NULL ELSE t.message END
                 WHERE t.id IN (SELECT id FROM (SELECT id FROM orphaned
                                                UNION ALL SELECT id FROM queued) AS c LIMIT $2)
                 RETURNING {COLUMNS_T}, t.fence"
            ),
            &[&replica, &max],
        )
        .await
        .map_err(|e| format!("cannot claim work: {e}"))?;
    let mut tasks = Vec::with_capacity(rows.len());
    for row in &rows {
        let task = snapshot_of(row)?;
        fences.hold(&task.info.id, row.get(4));
        tasks.push(task);
    }
    if !tasks.is_empty() {
        tracing::debug!(tasks = tasks.len(), "claimed work waiting in the store");
    }
    Ok(tasks)
}

/// The tasks held here that another process claimed since (this one was paused or cut off
/// past its lease), as stored now; they are no longer held.
pub(crate) async fn lost(
    client: &Client,
    replica: &str,
    fences: &Fences,
) -> Result<Vec<Row>, String> {
    let (ids, tokens) = fences.held();
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let rows = client
        .query(
            &format!(
                "SELECT {COLUMNS_T}, t.runner, t.fence FROM taskwire_tasks AS t
                 JOIN unnest($1::text[], $2::int8[]) AS h(id, fence) ON t.id = h.id
                 WHERE t.runner IS DISTINCT FROM $3 OR t.fence <> h.fence"
            ),
            &[&ids, &tokens, &replica],
        )
        .await
        .map_err(|e| format!("cannot check this process's claims: {e}"))?;
    let mut lost = Vec::new();
    for row in rows {
        let id: &str = row.get(0);
        fences.drop_task(id);
        // A task that finished is not lost: its end is told as any change.
        let runner: Option<&str> = row.get(4);
        if runner.is_some() {
            lost.push(row);
        }
    }
    Ok(lost)
}

/// How many tasks wait for a process to run their work (queued, or left by an expired lease).
pub(crate) async fn unclaimed(client: &Client, replica: &str) -> Result<usize, String> {
    client
        .query_one(
            &format!(
                "SELECT (SELECT count(*) FROM taskwire_tasks
                         WHERE runner IS NULL AND status NOT IN {TERMINAL})
                      + (SELECT count(*) FROM taskwire_tasks AS q
                         WHERE q.status NOT IN {TERMINAL} AND q.runner <> $1
                           AND NOT EXISTS (SELECT 1 FROM taskwire_replicas AS r
                                           WHERE r.id = q.runner
                                             AND r.expires_at > taskwire_now_ms()))"
            ),
            &[&replica],
        )
        .await
        .map(|row| usize::try_from(row.get::<_, i64>(0)).unwrap_or(0))
        .map_err(|e| format!("cannot count the work waiting: {e}"))
}

/// Takes the answers waiting for the tasks `replica` runs (another process took them from
/// their requestor): each task's answers, oldest first. An unreadable row is logged and
/// dropped.
pub(crate) async fn answers(
    client: &Client,
    replica: &str,
) -> Result<Vec<(String, Map<String, Value>)>, String> {
    let rows = client
        .query(
            "DELETE FROM taskwire_answers AS a USING taskwire_tasks AS t
             WHERE a.task = t.id AND t.runner = $1
             RETURNING a.task, a.responses",
            &[&replica],
        )
        .await
        .map_err(|e| format!("cannot take the answers waiting: {e}"))?;
    let mut taken = Vec::with_capacity(rows.len());
    for row in &rows {
        let task: String = row.get(0);
        match serde_json::from_str(row.get(1)) {
            Ok(responses) => taken.push((task, responses)),
            Err(error) => tracing::error!(%task, %error, "stored answers cannot be read; dropped"),
        }
    }
    Ok(taken)
}
