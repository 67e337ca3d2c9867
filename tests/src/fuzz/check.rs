//! Invariant checkers shared by the fuzz bodies: message validity, request/response
//! accounting, task-status monotonicity, expiry and output bounds.
//!
//! Every checker is written from the spec, not from the engine: the transition table and
//! the JSON-RPC rules below are independent copies, so an engine bug cannot hide behind
//! its own logic. A violation panics with a message naming the invariant.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};
use taskwire_engine::time::MAX_MILLIS;
use taskwire_engine::{Millis, RequestId};

/// Whether `line` may be schema-validated (the validator costs time; bodies can turn it off).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Schema {
    /// Validate against the 2025-11-25 JSON Schema (envelope and, where known, the payload).
    Full,
    /// Structural JSON-RPC 2.0 checks only.
    Structural,
}

/// A request id as a canonical map key: `n:5` or `s:abc`.
pub type IdKey = String;

/// The key of a JSON id value (`None` unless it is a string or an `i64` integer).
pub fn id_key(id: &Value) -> Option<IdKey> {
    match id {
        Value::String(s) => Some(format!("s:{s}")),
        Value::Number(n) => n.as_i64().map(|i| format!("n:{i}")),
        _ => None,
    }
}

/// The key of an engine request id.
pub fn request_id_key(id: &RequestId) -> IdKey {
    match id {
        RequestId::Number(n) => format!("n:{n}"),
        RequestId::String(s) => format!("s:{s}"),
    }
}

/// One emitted message, classified.
#[derive(Clone, Debug)]
pub enum Msg {
    /// A request.
    Request {
        /// Its id.
        id: Value,
        /// Its method.
        method: String,
        /// Its params object, if any.
        params: Option<Value>,
    },
    /// A notification.
    Notification {
        /// Its method.
        method: String,
        /// Its params object, if any.
        params: Option<Value>,
    },
    /// A success response.
    Result {
        /// The id answered.
        id: Value,
        /// The result object.
        result: Value,
    },
    /// An error response.
    Error {
        /// The id answered; absent when the input's id could not be read.
        id: Option<Value>,
        /// The error code.
        code: i64,
        /// The whole error object.
        error: Value,
    },
}

impl Msg {
    /// The id of a response (`None` for requests, notifications and id-less errors).
    pub fn response_id(&self) -> Option<&Value> {
        match self {
            Msg::Result { id, .. } => Some(id),
            Msg::Error { id, .. } => id.as_ref(),
            _ => None,
        }
    }
}

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

/// Validates one line the engine emitted: compact, JSON-RPC 2.0, and (with
/// [`Schema::Full`]) valid against the 2025-11-25 schema's `JSONRPCMessage`.
pub fn parse_output(line: &str, schema: Schema) -> Result<Msg, String> {
    if line.contains('\n') || line.contains('\r') {
        return Err(format!("message spans lines: {line:?}"));
    }
    let value: Value = serde_json::from_str(line).map_err(|e| format!("not JSON ({e}): {line}"))?;
    let Value::Object(obj) = &value else {
        return Err(format!("not a JSON object: {line}"));
    };
    if obj.get("jsonrpc") != Some(&Value::String("2.0".into())) {
        return Err(format!("\"jsonrpc\" is not \"2.0\": {line}"));
    }
    let keys: BTreeSet<&str> = obj.keys().map(String::as_str).collect();
    let only = |allowed: &[&str]| keys.iter().all(|k| allowed.contains(k));
    let id_ok = |id: &Value| id_key(id).is_some();
    let params = obj.get("params").cloned();
    if params.as_ref().is_some_and(|p| !p.is_object()) {
        return Err(format!("params is not an object: {line}"));
    }
    let msg = if let Some(method) = obj.get("method") {
        let Value::String(method) = method else {
            return Err(format!("method is not a string: {line}"));
        };
        match obj.get("id") {
            Some(id) => {
                if !id_ok(id) || !only(&["jsonrpc", "id", "method", "params"]) {
                    return Err(format!("malformed request: {line}"));
                }
                Msg::Request {
                    id: id.clone(),
                    method: method.clone(),
                    params,
                }
            }
            None => {
                if !only(&["jsonrpc", "method", "params"]) {
                    return Err(format!("malformed notification: {line}"));
                }
                Msg::Notification {
                    method: method.clone(),
                    params,
                }
            }
        }
    } else if let Some(result) = obj.get("result") {
        let id = obj.get("id").filter(|id| id_ok(id));
        if id.is_none() || !result.is_object() || !only(&["jsonrpc", "id", "result"]) {
            return Err(format!("malformed result response: {line}"));
        }
        Msg::Result {
            id: id.cloned().expect("checked"),
            result: result.clone(),
        }
    } else if let Some(error) = obj.get("error") {
        if obj.get("id").is_some_and(|id| !id_ok(id)) || !only(&["jsonrpc", "id", "error"]) {
            return Err(format!("malformed error response: {line}"));
        }
        let eobj = error
            .as_object()
            .ok_or_else(|| format!("error is not an object: {line}"))?;
        let code = eobj.get("code").and_then(Value::as_i64);
        let message_ok = eobj.get("message").is_some_and(Value::is_string);
        let keys_ok = eobj
            .keys()
            .all(|k| ["code", "message", "data"].contains(&k.as_str()));
        let Some(code) = code.filter(|_| message_ok && keys_ok) else {
            return Err(format!("malformed error object: {line}"));
        };
        Msg::Error {
            id: obj.get("id").cloned(),
            code,
            error: error.clone(),
        }
    } else {
        return Err(format!(
            "neither request, notification nor response: {line}"
        ));
    };
    if schema == Schema::Full {
        crate::schema::check("JSONRPCMessage", &value)?;
        let specific = match &msg {
            Msg::Request { method, .. } => crate::schema::request_definition(method),
            Msg::Notification { method, .. } => crate::schema::notification_definition(method),
            _ => None,
        };
        if let Some(definition) = specific {
            crate::schema::check(definition, &value)?;
        }
    }
    Ok(msg)
}

/// The schema definition of a success result: `CreateTaskResult` for an accepted
/// task-augmented request, otherwise by the method of the request it answers.
pub fn result_definition(method: &str, result: &Value) -> Option<&'static str> {
    let augmentable = matches!(
        method,
        "tools/call" | "elicitation/create" | "sampling/createMessage"
    );
    if augmentable && result.get("task").is_some_and(Value::is_object) {
        return Some("CreateTaskResult");
    }
    crate::schema::result_definition(method)
}

/// Exactly-one-response accounting for the requests one session received.
///
/// Requests the harness built itself are *trusted*: each must get exactly one response
/// (or none after the peer cancelled it). Lines that are garbage or whose envelope was
/// mutated are *untrusted*: any id they mention is exempt from the accounting, and they
/// may draw at most one id-less error each.
#[derive(Debug, Default)]
pub struct Ledger {
    /// Trusted requests still owed a response: id → (count, method).
    pending: BTreeMap<IdKey, (usize, String)>,
    /// Ids that untrusted input mentioned.
    exempt: BTreeSet<IdKey>,
    /// Responses seen, by method, for reporting.
    answered: usize,
}

/// What the ledger learned about one inbound line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Inbound {
    /// A trusted request with this id and method.
    Request(IdKey, String),
    /// A trusted notification (cancelled: the request it names, if pending).
    Notification(String),
    /// A trusted response to the session's own request.
    Response,
    /// Untrusted input.
    Untrusted,
}

impl Ledger {
    /// Records a line about to be fed to the session.
    pub fn inbound(&mut self, line: &[u8], trusted: bool) -> Inbound {
        let value: Option<Value> = serde_json::from_slice(line).ok();
        if !trusted {
            if let Some(Value::Object(obj)) = &value {
                self.exempt_mentions(obj);
            }
            return Inbound::Untrusted;
        }
        let Some(Value::Object(obj)) = value else {
            panic!("harness bug: trusted line is not a JSON object");
        };
        let method = obj.get("method").and_then(Value::as_str);
        let id = obj.get("id").and_then(id_key);
        match (method, id) {
            (Some(method), Some(id)) => {
                let entry = self
                    .pending
                    .entry(id.clone())
                    .or_insert((0, method.to_owned()));
                entry.0 += 1;
                if entry.0 == 1 {
                    entry.1 = method.to_owned();
                }
                Inbound::Request(id, method.to_owned())
            }
            (Some(method), None) => {
                if method == "notifications/cancelled" {
                    // Only well-formed params cancel anything (`reason` must be a string).
                    let params = obj.get("params");
                    let reason_ok = params
                        .and_then(|p| p.get("reason"))
                        .is_none_or(|r| r.is_string() || r.is_null());
                    let cancelled = params
                        .filter(|_| reason_ok)
                        .and_then(|p| p.get("requestId"))
                        .and_then(id_key);
                    if let Some(id) = cancelled {
                        // Only a request still in progress can be cancelled; the engine
                        // answers duplicates at once, so at most one is outstanding.
                        if let Some(entry) = self.pending.get_mut(&id) {
                            entry.0 = 0;
                        }
                    }
                }
                Inbound::Notification(method.to_owned())
            }
            (None, _) => Inbound::Response,
        }
    }

    fn exempt_mentions(&mut self, obj: &Map<String, Value>) {
        if let Some(id) = obj.get("id").and_then(id_key) {
            self.exempt.insert(id);
        }
        if let Some(id) = obj
            .get("params")
            .and_then(|p| p.get("requestId"))
            .and_then(id_key)
        {
            self.exempt.insert(id);
        }
    }

    /// Records a response the session emitted. Returns the answered request's method when
    /// the accounting knows it. Panics on a response nobody is owed.
    pub fn outbound(&mut self, msg: &Msg) -> Option<String> {
        let id = msg.response_id()?;
        let key = id_key(id).expect("validated id");
        self.answered += 1;
        match self.pending.get_mut(&key) {
            Some(entry) if entry.0 > 0 => {
                entry.0 -= 1;
                Some(entry.1.clone())
            }
            _ if self.exempt.contains(&key) => None,
            _ => panic!("invariant: a response to {key} that no pending request is owed"),
        }
    }

    /// Whether a trusted request with this id still awaits its answer.
    pub fn is_pending(&self, key: &str) -> bool {
        self.pending.get(key).is_some_and(|e| e.0 > 0)
    }

    /// Whether untrusted input mentioned this id (its state is then unknown to the harness).
    pub fn is_exempt(&self, key: &str) -> bool {
        self.exempt.contains(key)
    }

    /// Requests still owed a response, with their methods.
    pub fn outstanding(&self) -> Vec<(IdKey, String)> {
        self.pending
            .iter()
            .filter(|(k, e)| e.0 > 0 && !self.exempt.contains(*k))
            .map(|(k, e)| (k.clone(), e.1.clone()))
            .collect()
    }

    /// Number of requests still owed a response.
    pub fn outstanding_count(&self) -> usize {
        self.pending.values().map(|e| e.0).sum()
    }

    /// Forgets every outstanding request (the connection closed: none will be answered).
    pub fn connection_closed(&mut self) {
        self.pending.clear();
    }

    /// Panics unless every trusted request got exactly one answer.
    pub fn assert_all_answered(&self, context: &str) {
        let owed = self.outstanding();
        assert!(
            owed.is_empty(),
            "invariant: requests never answered ({context}): {owed:?}"
        );
    }

    /// Responses seen so far.
    pub fn answered(&self) -> usize {
        self.answered
    }
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
struct Seen {
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
        if self.check_clock {
            let now_text = Millis(now).to_rfc3339();
            if updated > now_text.as_str() {
                return Err(format!(
                    "task {id:?} updated in the future ({now_text}): {task}"
                ));
            }
        }
        let born = timestamp_ms(created).ok_or(format!("task {id:?}: bad createdAt"))?;
        let previous = self.seen.get(&id).cloned();
        let reborn = match &previous {
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
            if self.check_clock && fresh {
                let now_text = Millis(now).to_rfc3339();
                if status != "working" || created != now_text || updated != now_text {
                    return Err(format!(
                        "task {id:?} not born working now ({now_text}): {task}"
                    ));
                }
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
        let prev_updated = prev.view["lastUpdatedAt"].as_str().unwrap_or("");
        if updated < prev_updated {
            return Err(format!(
                "task {id:?}: lastUpdatedAt went back: {} then {task}",
                prev.view
            ));
        }
        if terminal(before) && strip_meta(&prev.view) != strip_meta(task) {
            return Err(format!(
                "task {id:?} changed after terminal: {} then {task}",
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

    /// Every task id seen, sorted.
    pub fn ids(&self) -> Vec<String> {
        self.seen.keys().cloned().collect()
    }

    /// Forgets a task (after its id was reused by a new incarnation of the session).
    pub fn clear(&mut self) {
        self.seen.clear();
    }
}

/// `born + ttl ≤ now`, saturating like the engine's clock.
pub fn expired(born: u64, ttl: Option<u64>, now: u64) -> bool {
    ttl.is_some_and(|ttl| born.saturating_add(ttl).min(MAX_MILLIS.0) <= now)
}

fn strip_meta(task: &Value) -> Value {
    let mut task = task.clone();
    if let Value::Object(obj) = &mut task {
        obj.remove("_meta");
    }
    task
}

/// Every `Task` a message carries, with whether it announces a brand-new task.
pub fn tasks_in(msg: &Msg, answered_method: Option<&str>) -> Vec<(Value, bool)> {
    let strip = |v: &Value| strip_meta(v);
    match msg {
        Msg::Notification { method, params } if method == "notifications/tasks/status" => {
            params.iter().map(|p| (strip(p), false)).collect()
        }
        Msg::Result { result, .. } => match answered_method {
            Some("tasks/get" | "tasks/cancel") => vec![(strip(result), false)],
            Some("tasks/list") => result
                .get("tasks")
                .and_then(Value::as_array)
                .map(|ts| ts.iter().map(|t| (t.clone(), false)).collect())
                .unwrap_or_default(),
            Some("tools/call" | "elicitation/create" | "sampling/createMessage") => result
                .get("task")
                .filter(|t| t.is_object())
                .map(|t| vec![(t.clone(), true)])
                .unwrap_or_default(),
            _ => Vec::new(),
        },
        _ => Vec::new(),
    }
}

/// A bound on the outputs one input may produce, given how much state it could flush.
pub fn output_bound(state: usize) -> usize {
    16 + 4 * state
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn table_is_the_spec_table() {
        let all = [
            "working",
            "input_required",
            "completed",
            "failed",
            "cancelled",
        ];
        let n = all
            .iter()
            .flat_map(|a| all.iter().map(move |b| (a, b)))
            .filter(|(a, b)| allowed(a, b))
            .count();
        assert_eq!(n, 8);
        assert!(all
            .iter()
            .all(|t| !terminal(t) || all.iter().all(|n| !allowed(t, n))));
    }

    #[test]
    fn classifies_and_rejects() {
        let s = Schema::Structural;
        assert!(matches!(
            parse_output(r#"{"jsonrpc":"2.0","id":1,"result":{}}"#, s),
            Ok(Msg::Result { .. })
        ));
        assert!(matches!(
            parse_output(
                r#"{"jsonrpc":"2.0","error":{"code":-32700,"message":"x"}}"#,
                s
            ),
            Ok(Msg::Error { id: None, .. })
        ));
        for bad in [
            r#"{"jsonrpc":"2.0","id":null,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":[]}"#,
            r#"{"jsonrpc":"2.0","id":1.5,"method":"x"}"#,
            r#"{"jsonrpc":"2.0","method":"x","params":[]}"#,
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":"x","message":"m"}}"#,
            "{\"jsonrpc\":\"2.0\",\n\"method\":\"x\"}",
            r#"{"id":1,"result":{}}"#,
        ] {
            assert!(parse_output(bad, s).is_err(), "{bad}");
        }
    }

    #[test]
    fn watch_rejects_leaving_terminal_and_time_going_back() {
        let t = |status: &str, updated: &str| {
            json!({"taskId":"a","status":status,"createdAt":"2026-01-15T09:00:00.000Z",
                   "lastUpdatedAt":updated,"ttl":null})
        };
        let mut w = TaskWatch::requestor();
        w.observe(&t("working", "2026-01-15T09:00:00.000Z"), 0, true)
            .unwrap();
        w.observe(&t("completed", "2026-01-15T09:00:01.000Z"), 0, false)
            .unwrap();
        assert!(w
            .observe(&t("working", "2026-01-15T09:00:02.000Z"), 0, false)
            .is_err());
        let mut w = TaskWatch::requestor();
        w.observe(&t("working", "2026-01-15T09:00:05.000Z"), 0, true)
            .unwrap();
        assert!(w
            .observe(&t("working", "2026-01-15T09:00:04.000Z"), 0, false)
            .is_err());
    }

    #[test]
    fn timestamps_parse() {
        for ms in [0, 951_782_400_000, 1_768_467_600_123, MAX_MILLIS.0] {
            assert_eq!(timestamp_ms(&Millis(ms).to_rfc3339()), Some(ms));
        }
    }

    #[test]
    fn ledger_counts_exactly_one() {
        let mut l = Ledger::default();
        l.inbound(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#, true);
        l.inbound(
            br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            true,
        );
        let reply = parse_output(
            r#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
            Schema::Structural,
        )
        .unwrap();
        assert_eq!(l.outbound(&reply).as_deref(), Some("ping"));
        l.assert_all_answered("test");
        let extra = std::panic::catch_unwind(move || {
            l.outbound(&reply);
        });
        assert!(extra.is_err());
    }
}
