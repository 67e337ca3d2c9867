//! Task views: the transition table, timestamps that never go back, expiry, terminal views
//! that never change, the tasks a message names (for owner isolation), and the wire view of
//! a task as the spec writes it.

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};
use taskwire_engine::era::v2025_11_25::RELATED_TASK;
use taskwire_engine::time::MAX_MILLIS;
use taskwire_engine::{Millis, Outcome, TaskInfo, TaskSnapshot, TaskStatus};

use super::message::Msg;

/// The spec's transition table (2025-11-25 §tasks, "Task Status Lifecycle").
pub fn allowed(from: &str, to: &str) -> bool {
    matches!(
        (from, to),
        (
            "working",
            "input_required" | "completed" | "failed" | "cancelled"
        ) | (
            "input_required",
            "working" | "completed" | "failed" | "cancelled"
        )
    )
}

/// `completed`, `failed` and `cancelled`.
pub fn terminal(status: &str) -> bool {
    matches!(status, "completed" | "failed" | "cancelled")
}

/// Whether `s` is the engine's fixed RFC 3339 form `YYYY-MM-DDTHH:MM:SS.mmmZ`, which sorts
/// lexicographically in time order.
pub fn is_timestamp(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 24
        && b.iter().enumerate().all(|(i, &c)| match i {
            4 | 7 => c == b'-',
            10 => c == b'T',
            13 | 16 => c == b':',
            19 => c == b'.',
            23 => c == b'Z',
            _ => c.is_ascii_digit(),
        })
}

/// Milliseconds since the epoch of a timestamp in the fixed form (see [`is_timestamp`]).
pub fn timestamp_ms(s: &str) -> Option<u64> {
    if !is_timestamp(s) {
        return None;
    }
    let n = |a: usize, b: usize| -> i64 { s[a..b].parse().expect("digits") };
    let (y, m, d) = (n(0, 4), n(5, 7), n(8, 10));
    // Days from 1970-01-01 (Howard Hinnant's days_from_civil, written out again here).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * ((m + 9) % 12) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let secs = days * 86_400 + n(11, 13) * 3600 + n(14, 16) * 60 + n(17, 19);
    u64::try_from(secs * 1000 + n(20, 23)).ok()
}

/// What one observer knows of one task.
#[derive(Clone, Debug)]
pub(super) struct Seen {
    view: Value,
    /// `createdAt` in ms.
    born: u64,
    ttl: Option<u64>,
}

/// Watches every view of every task one party reports and checks the lifecycle rules.
#[derive(Debug, Default)]
pub struct TaskWatch {
    seen: BTreeMap<String, Seen>,
    /// Check `createdAt` against the harness clock (only for the receiver's own tasks).
    pub check_clock: bool,
    /// Views checked, for reporting.
    pub views: usize,
}

impl TaskWatch {
    /// A watch for the receiver's own tasks (creation time and expiry are checked).
    pub fn receiver() -> Self {
        TaskWatch {
            check_clock: true,
            ..TaskWatch::default()
        }
    }

    /// A watch for a requestor's view of the peer's tasks.
    pub fn requestor() -> Self {
        TaskWatch::default()
    }

    /// Checks one view of a task (`Task` fields, flat) seen at harness time `now`.
    /// `now` is the session's clock; `fresh` marks a view that must be a brand-new task.
    pub fn observe(&mut self, task: &Value, now: u64, fresh: bool) -> Result<(), String> {
        self.views += 1;
        let obj = task.as_object().ok_or("task is not an object")?;
        let id = obj
            .get("taskId")
            .and_then(Value::as_str)
            .ok_or("task without a string taskId")?
            .to_owned();
        let status = obj.get("status").and_then(Value::as_str).unwrap_or("");
        if ![
            "working",
            "input_required",
            "completed",
            "failed",
            "cancelled",
        ]
        .contains(&status)
        {
            return Err(format!("task {id:?} has status {status:?}"));
        }
        let created = obj.get("createdAt").and_then(Value::as_str).unwrap_or("");
        let updated = obj
            .get("lastUpdatedAt")
            .and_then(Value::as_str)
            .unwrap_or("");
        if !is_timestamp(created) || !is_timestamp(updated) {
            return Err(format!("task {id:?} has malformed timestamps: {task}"));
        }
        if created > updated {
            return Err(format!("task {id:?}: createdAt > lastUpdatedAt: {task}"));
        }
        if !obj.contains_key("ttl") {
            return Err(format!("task {id:?} without ttl: {task}"));
        }
        let ttl = match &obj["ttl"] {
            Value::Null => None,
            v => Some(
                v.as_u64()
                    .ok_or(format!("task {id:?}: ttl {v} is not ms"))?,
            ),
        };
        let now = now.min(MAX_MILLIS.0);
        if self.check_clock && timestamp_ms(updated).is_some_and(|u| u > now) {
            return Err(format!(
                "task {id:?} updated in the future ({}): {task}",
                Millis(now).to_rfc3339()
            ));
        }
        let born = timestamp_ms(created).ok_or(format!("task {id:?}: bad createdAt"))?;
        let previous = self.seen.get(&id);
        if previous.is_some_and(|p| p.view == *task) && !fresh {
            // The same view again (a repeated `tasks/get`): nothing new to check.
            return Ok(());
        }
        let reborn = match previous {
            // The id of an expired task may be reused within the same millisecond.
            Some(prev)
                if self.check_clock
                    && expired(prev.born, prev.ttl, now)
                    && (fresh || prev.view != *task) =>
            {
                true
            }
            Some(prev) if prev.view["createdAt"] != obj["createdAt"] => {
                // A new task may reuse the id of one that expired; nothing else may.
                if self.check_clock && !expired(prev.born, prev.ttl, now) {
                    return Err(format!(
                        "task {id:?} changed createdAt while alive: {} then {task}",
                        prev.view
                    ));
                }
                true
            }
            Some(_) => false,
            None => true,
        };
        if fresh && !reborn {
            return Err(format!("task {id:?} created twice: {task}"));
        }
        if reborn {
            if self.check_clock
                && fresh
                && (status != "working" || born != now || timestamp_ms(updated) != Some(now))
            {
                return Err(format!(
                    "task {id:?} not born working now ({}): {task}",
                    Millis(now).to_rfc3339()
                ));
            }
            self.seen.insert(
                id,
                Seen {
                    view: task.clone(),
                    born,
                    ttl,
                },
            );
            return Ok(());
        }
        let prev = previous.expect("not reborn");
        let before = prev.view["status"].as_str().unwrap_or("");
        if terminal(before) && !eq_without_meta(&prev.view, task) {
            return Err(format!(
                "task {id:?} changed after terminal: {} then {task}",
                prev.view
            ));
        }
        let prev_updated = prev.view["lastUpdatedAt"].as_str().unwrap_or("");
        if updated < prev_updated {
            return Err(format!(
                "task {id:?}: lastUpdatedAt went back: {} then {task}",
                prev.view
            ));
        }
        if before != status && !allowed(before, status) {
            return Err(format!(
                "task {id:?}: {before} -> {status} is not in the transition table"
            ));
        }
        if prev.view.get("ttl") != obj.get("ttl") {
            return Err(format!(
                "task {id:?}: ttl changed: {} then {task}",
                prev.view
            ));
        }
        let entry = self.seen.get_mut(&id).expect("seen");
        entry.view = task.clone();
        Ok(())
    }

    /// Takes in a brand-new task's view without checking it (the lean runs, see
    /// [`Schema::Lean`](super::Schema::Lean)): the watch then knows its id, as
    /// [`TaskWatch::observe`] would have made it.
    pub fn admit(&mut self, task: &Value) {
        let Some(id) = task.get("taskId").and_then(Value::as_str) else {
            return;
        };
        let born = task
            .get("createdAt")
            .and_then(Value::as_str)
            .and_then(timestamp_ms)
            .unwrap_or(0);
        let ttl = task.get("ttl").and_then(Value::as_u64);
        self.seen.insert(
            id.to_owned(),
            Seen {
                view: task.clone(),
                born,
                ttl,
            },
        );
    }

    /// Whether the task the watch knows as `id` has outlived its ttl at `now`.
    pub fn is_expired(&self, id: &str, now: u64) -> bool {
        self.seen
            .get(id)
            .is_some_and(|s| expired(s.born, s.ttl, now))
    }

    /// Whether the watch has seen a task with this id.
    pub fn knows(&self, id: &str) -> bool {
        self.seen.contains_key(id)
    }

    /// The last view of a task.
    pub fn last(&self, id: &str) -> Option<&Value> {
        self.seen.get(id).map(|s| &s.view)
    }

    /// Number of task ids seen.
    pub fn len(&self) -> usize {
        self.seen.len()
    }

    /// Whether no task was seen.
    pub fn is_empty(&self) -> bool {
        self.seen.is_empty()
    }

    /// The `i`-th task id seen, in sorted order (`i` below [`TaskWatch::len`]).
    pub fn nth(&self, i: usize) -> &str {
        self.seen.keys().nth(i).expect("an index below len")
    }

    /// Every task id seen, sorted.
    pub fn ids(&self) -> Vec<String> {
        self.seen.keys().cloned().collect()
    }

    /// Forgets every task.
    pub fn clear(&mut self) {
        self.seen.clear();
    }

    /// Forgets one task (the application removed it; its id may come back).
    pub fn forget(&mut self, id: &str) {
        self.seen.remove(id);
    }
}

/// `born + ttl ≤ now`, saturating like the engine's clock.
pub fn expired(born: u64, ttl: Option<u64>, now: u64) -> bool {
    ttl.is_some_and(|ttl| born.saturating_add(ttl).min(MAX_MILLIS.0) <= now)
}

/// Whether two task views are equal, `_meta` aside.
pub(super) fn eq_without_meta(a: &Value, b: &Value) -> bool {
    match (a.as_object(), b.as_object()) {
        (Some(a), Some(b)) => {
            let real = |o: &Map<String, Value>| o.keys().filter(|k| *k != "_meta").count();
            real(a) == real(b)
                && a.iter()
                    .filter(|(k, _)| *k != "_meta")
                    .all(|(k, v)| b.get(k) == Some(v))
        }
        _ => a == b,
    }
}

/// A task view without its `_meta`.
pub fn strip_meta(task: &Value) -> Value {
    let mut task = task.clone();
    if let Value::Object(obj) = &mut task {
        obj.remove("_meta");
    }
    task
}

/// Every `Task` a message carries, with whether it announces a brand-new task. A
/// `CreateTaskResult` is recognised by its shape (`result.task` an object), so a task
/// created by a request the harness did not account for is still seen.
pub fn tasks_in(msg: &Msg, answered_method: Option<&str>) -> Vec<(Value, bool)> {
    if msg.is_notification("notifications/tasks/status") {
        return msg
            .params()
            .map(|p| vec![(strip_meta(p), false)])
            .unwrap_or_default();
    }
    let Some(result) = msg.result() else {
        return Vec::new();
    };
    if let Some(task) = result.get("task").filter(|t| t.is_object()) {
        return vec![(task.clone(), true)];
    }
    match answered_method {
        Some("tasks/get" | "tasks/cancel") => vec![(strip_meta(result), false)],
        Some("tasks/list") => result
            .get("tasks")
            .and_then(Value::as_array)
            .map(|ts| ts.iter().map(|t| (t.clone(), false)).collect())
            .unwrap_or_default(),
        _ => Vec::new(),
    }
}

/// Every task id a compact line names as a `"taskId"` member, wherever it is: the cheap
/// isolation check of the lean runs (it reads no JSON but those strings).
pub fn named_ids(line: &str) -> Vec<String> {
    const KEY: &str = "\"taskId\":\"";
    let mut ids = Vec::new();
    let mut rest = line;
    while let Some(at) = rest.find(KEY) {
        // The string starts at its opening quote; it ends at the first quote that no
        // backslash escapes.
        let start = at + KEY.len() - 1;
        let bytes = rest.as_bytes();
        let mut end = start + 1;
        let mut escaped = false;
        while end < bytes.len() {
            match bytes[end] {
                b'\\' => escaped = !escaped,
                b'"' if !escaped => break,
                _ => escaped = false,
            }
            end += 1;
        }
        let Some(quoted) = rest.get(start..=end) else {
            break;
        };
        if let Ok(id) = serde_json::from_str::<String>(quoted) {
            ids.push(id);
        }
        rest = &rest[(end + 1).min(rest.len())..];
    }
    ids
}

/// Every task id a message names: a flat task (`tasks/get`, `tasks/cancel`, status
/// notifications, `taskId` params), a created task, a listed task, related-task `_meta`
/// in params or result, and `data.taskId` of an error.
pub fn mentioned_tasks(msg: &Msg) -> Vec<&str> {
    fn id_of(v: Option<&Value>) -> Option<&str> {
        v?.get("taskId")?.as_str()
    }
    fn related(v: Option<&Value>) -> Option<&Value> {
        v?.get("_meta")?.get(RELATED_TASK)
    }
    let mut ids = Vec::new();
    for part in [msg.params(), msg.result()] {
        ids.extend(id_of(part));
        ids.extend(id_of(related(part)));
    }
    if let Some(result) = msg.result() {
        ids.extend(id_of(result.get("task")));
        if let Some(tasks) = result.get("tasks").and_then(Value::as_array) {
            ids.extend(tasks.iter().filter_map(|t| id_of(Some(t))));
        }
    }
    ids.extend(id_of(msg.error().and_then(|e| e.get("data"))));
    ids
}

/// The status 2025-11-25 shows for a stored task: a result with `isError: true` reads as
/// `failed` (the era's rule), every other status as stored.
pub fn shown_status(snapshot: &TaskSnapshot) -> TaskStatus {
    match (&snapshot.info.status, &snapshot.outcome) {
        (TaskStatus::Completed, Some(Outcome::Result { is_error: true, .. })) => TaskStatus::Failed,
        (status, _) => *status,
    }
}

/// A task in the flat 2025-11-25 `Task` shape, with `status` as given: `ttl` always
/// written (`null` for unlimited), optional members left out when unset.
pub fn wire_task(info: &TaskInfo, status: TaskStatus) -> Value {
    let mut task = Map::new();
    task.insert("taskId".into(), json!(info.id.as_str()));
    task.insert("status".into(), json!(status.as_str()));
    if let Some(message) = &info.status_message {
        task.insert("statusMessage".into(), json!(message));
    }
    task.insert("createdAt".into(), json!(info.created_at.to_rfc3339()));
    task.insert(
        "lastUpdatedAt".into(),
        json!(info.last_updated_at.to_rfc3339()),
    );
    task.insert("ttl".into(), json!(info.ttl_ms));
    if let Some(poll) = info.poll_interval_ms {
        task.insert("pollInterval".into(), json!(poll));
    }
    Value::Object(task)
}

/// How a hosted task reads on the 2025-11-25 wire.
pub fn wire_snapshot(snapshot: &TaskSnapshot) -> Value {
    wire_task(&snapshot.info, shown_status(snapshot))
}

/// How a requestor's view of a peer task (already in the peer's era) reads on the wire.
pub fn wire_info(info: &TaskInfo) -> Value {
    wire_task(info, info.status)
}
