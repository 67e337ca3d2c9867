//! Invariant checkers shared by the fuzz bodies: message validity and labels, the schema
//! oracle and its sampling, request/response accounting, task-status monotonicity, expiry,
//! owner isolation and output bounds.
//!
//! Every checker is written from the spec, not from the engine: the transition table, the
//! 2025-11-25 task shape and the JSON-RPC rules below are independent copies, so an engine
//! bug cannot hide behind its own logic. A violation panics with a message naming the
//! invariant.

use std::collections::{BTreeMap, BTreeSet};

use std::borrow::Cow;
use std::cell::OnceCell;

use serde_json::value::RawValue;
use serde_json::{json, Map, Value};
use taskwire_engine::era::v2025_11_25::RELATED_TASK;
use taskwire_engine::time::MAX_MILLIS;
use taskwire_engine::{
    MessageKind, Millis, Outcome, RequestId, TaskInfo, TaskSnapshot, TaskStatus,
};

/// Which messages the JSON-Schema oracle validates (see the [module docs](super) for the
/// exact sampling).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Schema {
    /// Every message: the envelope, the request or notification definition, the result
    /// definition of what it answers. Every input also runs twice.
    Full,
    /// Every message of one input in [`FULL_ONE_IN`] (by the input's hash); otherwise, on
    /// one input in [`KINDS_ONE_IN`], the first [`PER_KIND`] messages of each kind in the
    /// run; otherwise none.
    Sampled,
    /// Structural JSON-RPC 2.0 checks only.
    Structural,
}

/// With [`Schema::Sampled`], one input in this many (by FNV-1a hash) is validated fully.
pub const FULL_ONE_IN: u64 = 64;

/// With [`Schema::Sampled`], one input in this many (by FNV-1a hash) validates the first
/// [`PER_KIND`] messages of each kind; the others get no schema validation.
pub const KINDS_ONE_IN: u64 = 8;

/// With [`Schema::Sampled`], the first this many messages of each kind are validated.
pub const PER_KIND: u8 = 1;

/// The JSON-Schema oracle of one run, with its sample.
#[derive(Debug)]
pub struct Oracle {
    every: bool,
    /// Nothing is validated (structural, or a sampled input outside the sample).
    none: bool,
    seen: Vec<(&'static str, Option<&'static str>, u8)>,
    /// Messages validated so far.
    pub validated: usize,
}

impl Oracle {
    /// The oracle for one run on `input`.
    pub fn new(schema: Schema, input: &[u8]) -> Self {
        Oracle {
            every: match schema {
                Schema::Full => true,
                Schema::Sampled => super::fnv(input) % FULL_ONE_IN == 0,
                Schema::Structural => false,
            },
            none: match schema {
                Schema::Full => false,
                Schema::Sampled => super::fnv(input) % KINDS_ONE_IN != 0,
                Schema::Structural => true,
            },
            seen: Vec::new(),
            validated: 0,
        }
    }

    /// Whether this run validates every message.
    pub fn validates_everything(&self) -> bool {
        self.every
    }

    fn wants(&mut self, kind: (&'static str, Option<&'static str>)) -> bool {
        if self.none {
            return false;
        }
        if self.every {
            return true;
        }
        match self.seen.iter_mut().find(|(a, b, _)| (*a, *b) == kind) {
            Some((_, _, n)) if *n >= PER_KIND => false,
            Some((_, _, n)) => {
                *n += 1;
                true
            }
            None => {
                self.seen.push((kind.0, kind.1, 1));
                true
            }
        }
    }

    /// Validates one message (when the sample takes it): as a `JSONRPCMessage`, as its
    /// request or notification definition, and a result as what it answers (`answered`:
    /// the method of the request, when known).
    pub fn check(&mut self, msg: &Msg, answered: Option<&str>) -> Result<(), String> {
        let method = msg.method().unwrap_or("");
        let (envelope, specific) = match msg.class {
            Class::Request => ("request", crate::schema::request_definition(method)),
            Class::Notification => (
                "notification",
                crate::schema::notification_definition(method),
            ),
            Class::Result => (
                "result",
                answered.and_then(|m| result_definition(m, msg.result().expect("a result"))),
            ),
            Class::Error { .. } => ("error", None),
        };
        if !self.wants((envelope, specific)) {
            return Ok(());
        }
        self.validated += 1;
        crate::schema::check("JSONRPCMessage", msg.value())?;
        match (msg.result(), specific) {
            (Some(result), Some(definition)) => {
                crate::schema::check(definition, result)
                    .map_err(|e| format!("{} answer: {e}", answered.unwrap_or("?")))?;
            }
            (None, Some(definition)) => crate::schema::check(definition, msg.value())?,
            (_, None) => {}
        }
        Ok(())
    }
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

/// What kind of JSON-RPC message a line is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    /// A request (`id` and `method`).
    Request,
    /// A notification (`method`, no `id`).
    Notification,
    /// A success response.
    Result,
    /// An error response (its `id` may be absent when the input's could not be read).
    Error {
        /// The error code.
        code: i64,
    },
}

/// One emitted message: the line, what kind of message it is, and its members. The
/// envelope is read once (cheaply, as raw slices); `params`, `result` and the whole
/// message are parsed into [`Value`]s only when a check asks for them.
#[derive(Clone, Debug)]
pub struct Msg {
    /// The line as sent.
    pub line: String,
    /// Its kind.
    pub class: Class,
    id: Option<Value>,
    method: Option<String>,
    error: Option<Value>,
    params_at: Option<(usize, usize)>,
    result_at: Option<(usize, usize)>,
    params: OnceCell<Option<Value>>,
    result: OnceCell<Option<Value>>,
    value: OnceCell<Value>,
}

impl Msg {
    /// The whole message, parsed.
    pub fn value(&self) -> &Value {
        self.value
            .get_or_init(|| serde_json::from_str(&self.line).expect("checked JSON"))
    }

    fn member<'a>(
        &'a self,
        at: Option<(usize, usize)>,
        cell: &'a OnceCell<Option<Value>>,
    ) -> Option<&'a Value> {
        cell.get_or_init(|| {
            at.map(|(a, b)| serde_json::from_str(&self.line[a..b]).expect("checked JSON"))
        })
        .as_ref()
    }

    /// Whether the line names a task at all (`"taskId"` appears): checks about tasks
    /// skip the rest.
    pub fn names_tasks(&self) -> bool {
        self.line.contains("\"taskId\"")
    }

    /// The `id` member (requests and responses).
    pub fn id(&self) -> Option<&Value> {
        self.id.as_ref()
    }

    /// The id of a response (`None` for requests, notifications and id-less errors).
    pub fn response_id(&self) -> Option<&Value> {
        match self.class {
            Class::Result | Class::Error { .. } => self.id(),
            _ => None,
        }
    }

    /// The method of a request or notification.
    pub fn method(&self) -> Option<&str> {
        self.method.as_deref()
    }

    /// The `params` object, if any.
    pub fn params(&self) -> Option<&Value> {
        self.member(self.params_at, &self.params)
    }

    /// The `result` object of a success response.
    pub fn result(&self) -> Option<&Value> {
        self.member(self.result_at, &self.result)
    }

    /// The `error` object of an error response.
    pub fn error(&self) -> Option<&Value> {
        self.error.as_ref()
    }

    /// The code of an error response.
    pub fn code(&self) -> Option<i64> {
        match self.class {
            Class::Error { code } => Some(code),
            _ => None,
        }
    }

    /// Whether this is a request.
    pub fn is_request(&self) -> bool {
        self.class == Class::Request
    }

    /// Whether this is a notification of `method`.
    pub fn is_notification(&self, method: &str) -> bool {
        self.class == Class::Notification && self.method() == Some(method)
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

/// Checks one line the engine emitted structurally: compact, JSON-RPC 2.0, one of
/// request, notification, result or error with exactly the members each allows, an id
/// that is a string or an integer, object `params`/`result`/`error`, an error with an
/// integer code and a string message (schema validation is the [`Oracle`]'s).
pub fn parse_output(line: String) -> Result<Msg, String> {
    let members = envelope(&line)?;
    let at = |raw: &RawValue| {
        let start = raw.get().as_ptr() as usize - line.as_ptr() as usize;
        (start, start + raw.get().len())
    };
    let get = |key: &str| members.iter().find(|(k, _)| k == key).map(|(_, v)| *v);
    let only = |allowed: &[&str]| members.iter().all(|(k, _)| allowed.contains(&k.as_ref()));
    if get("jsonrpc").map(RawValue::get) != Some("\"2.0\"") {
        return Err(format!("\"jsonrpc\" is not \"2.0\": {line}"));
    }
    let id = match get("id") {
        Some(raw) => {
            let id: Value = serde_json::from_str(raw.get()).map_err(|e| e.to_string())?;
            if id_key(&id).is_none() {
                return Err(format!("id is neither a string nor an integer: {line}"));
            }
            Some(id)
        }
        None => None,
    };
    let object = |raw: Option<&RawValue>, what: &str| match raw {
        Some(r) if !r.get().starts_with('{') => Err(format!("{what} is not an object: {line}")),
        _ => Ok(()),
    };
    object(get("params"), "params")?;
    let mut method = None;
    let mut error = None;
    let class = if let Some(m) = get("method") {
        let m: String =
            serde_json::from_str(m.get()).map_err(|_| format!("method is not a string: {line}"))?;
        method = Some(m);
        if id.is_some() {
            if !only(&["jsonrpc", "id", "method", "params"]) {
                return Err(format!("malformed request: {line}"));
            }
            Class::Request
        } else {
            if !only(&["jsonrpc", "method", "params"]) {
                return Err(format!("malformed notification: {line}"));
            }
            Class::Notification
        }
    } else if let Some(result) = get("result") {
        object(Some(result), "result")?;
        if id.is_none() || !only(&["jsonrpc", "id", "result"]) {
            return Err(format!("malformed result response: {line}"));
        }
        Class::Result
    } else if let Some(raw) = get("error") {
        if !only(&["jsonrpc", "id", "error"]) {
            return Err(format!("malformed error response: {line}"));
        }
        let e: Value = serde_json::from_str(raw.get()).map_err(|e| e.to_string())?;
        let eobj = e
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
        error = Some(e);
        Class::Error { code }
    } else {
        return Err(format!(
            "neither request, notification nor response: {line}"
        ));
    };
    let params_at = get("params").map(at);
    let result_at = get("result").map(at);
    drop(members);
    Ok(Msg {
        line,
        class,
        id,
        method,
        error,
        params_at,
        result_at,
        params: OnceCell::new(),
        result: OnceCell::new(),
        value: OnceCell::new(),
    })
}

/// The members of one compact JSON object, as raw slices (duplicates kept, so that they
/// are caught).
fn envelope(line: &str) -> Result<Vec<(Cow<'_, str>, &RawValue)>, String> {
    if line.contains('\n') || line.contains('\r') {
        return Err(format!("message spans lines: {line:?}"));
    }
    struct Members<'a>(Vec<(Cow<'a, str>, &'a RawValue)>);
    impl<'de> serde::Deserialize<'de> for Members<'de> {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct V;
            impl<'de> serde::de::Visitor<'de> for V {
                type Value = Members<'de>;
                fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                    f.write_str("a JSON object")
                }
                fn visit_map<A: serde::de::MapAccess<'de>>(
                    self,
                    mut map: A,
                ) -> Result<Members<'de>, A::Error> {
                    let mut out = Vec::with_capacity(4);
                    while let Some(key) = map.next_key::<Cow<'de, str>>()? {
                        out.push((key, map.next_value::<&'de RawValue>()?));
                    }
                    Ok(Members(out))
                }
            }
            d.deserialize_map(V)
        }
    }
    let members: Members<'_> =
        serde_json::from_str(line).map_err(|e| format!("not a JSON object ({e}): {line}"))?;
    let mut keys: Vec<&str> = members.0.iter().map(|(k, _)| k.as_ref()).collect();
    keys.sort_unstable();
    if keys.windows(2).any(|w| w[0] == w[1]) {
        return Err(format!("a member appears twice: {line}"));
    }
    Ok(members.0)
}

/// Checks that a message's [`MessageKind`] says what it is: the reply to the request it
/// answers (with its error code), the notification it is (and the task it is about), or
/// our request with its id.
pub fn check_kind(kind: &MessageKind, msg: &Msg) -> Result<(), String> {
    let same_id = |want: Option<&RequestId>, got: Option<&Value>| match (want, got) {
        (Some(w), Some(g)) => id_key(g).as_deref() == Some(request_id_key(w).as_str()),
        (None, None) => true,
        _ => false,
    };
    let ok = match (kind, msg.class) {
        (MessageKind::Reply { to, error }, Class::Result) => {
            error.is_none() && same_id(to.as_ref(), msg.id())
        }
        (MessageKind::Reply { to, error }, Class::Error { code }) => {
            *error == Some(code) && same_id(to.as_ref(), msg.id())
        }
        (MessageKind::Notification { method, task }, Class::Notification) => {
            let params = msg.params();
            let named = params
                .and_then(|p| p.get("taskId"))
                .or_else(|| params.and_then(|p| p.get("_meta")?.get(RELATED_TASK)?.get("taskId")))
                .and_then(Value::as_str);
            msg.method() == Some(*method) && task.as_deref() == named
        }
        (MessageKind::Request { id }, Class::Request) => same_id(Some(id), msg.id()),
        _ => false,
    };
    if ok {
        Ok(())
    } else {
        Err(format!("labelled {kind:?}"))
    }
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
        match serde_json::from_slice::<Value>(line) {
            Ok(value) => self.inbound_value(&value, trusted),
            Err(_) if !trusted => Inbound::Untrusted,
            Err(_) => panic!("harness bug: trusted line is not JSON"),
        }
    }

    /// Records a message (already parsed) about to be fed to the session.
    pub fn inbound_value(&mut self, value: &Value, trusted: bool) -> Inbound {
        if !trusted {
            if let Value::Object(obj) = value {
                self.exempt_mentions(obj);
            }
            return Inbound::Untrusted;
        }
        let Value::Object(obj) = value else {
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
                        self.pending.remove(&id);
                    }
                }
                Inbound::Notification(method.to_owned())
            }
            (None, _) => Inbound::Response,
        }
    }

    /// Records a message another engine emitted (trusted, already checked) about to be
    /// fed to the session.
    pub fn inbound_msg(&mut self, msg: &Msg) -> Inbound {
        match (msg.method(), msg.id().and_then(id_key)) {
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
                    let params = msg.params();
                    let reason_ok = params
                        .and_then(|p| p.get("reason"))
                        .is_none_or(|r| r.is_string() || r.is_null());
                    let cancelled = params
                        .filter(|_| reason_ok)
                        .and_then(|p| p.get("requestId"))
                        .and_then(id_key);
                    if let Some(id) = cancelled {
                        self.pending.remove(&id);
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
            Some(entry) if entry.0 > 1 => {
                entry.0 -= 1;
                Some(entry.1.clone())
            }
            Some(_) => self.pending.remove(&key).map(|(_, method)| method),
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
fn eq_without_meta(a: &Value, b: &Value) -> bool {
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
        let m = parse_output(r#"{"jsonrpc":"2.0","id":1,"result":{}}"#.into()).unwrap();
        assert_eq!(m.class, Class::Result);
        let m = parse_output(r#"{"jsonrpc":"2.0","error":{"code":-32700,"message":"x"}}"#.into())
            .unwrap();
        assert_eq!(
            (m.class, m.response_id()),
            (Class::Error { code: -32700 }, None)
        );
        for bad in [
            r#"{"jsonrpc":"2.0","id":null,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":[]}"#,
            r#"{"jsonrpc":"2.0","id":1.5,"method":"x"}"#,
            r#"{"jsonrpc":"2.0","method":"x","params":[]}"#,
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":"x","message":"m"}}"#,
            "{\"jsonrpc\":\"2.0\",\n\"method\":\"x\"}",
            r#"{"id":1,"result":{}}"#,
        ] {
            assert!(parse_output(bad.into()).is_err(), "{bad}");
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
        let reply = parse_output(r#"{"jsonrpc":"2.0","id":1,"result":{}}"#.into()).unwrap();
        assert_eq!(l.outbound(&reply).as_deref(), Some("ping"));
        l.assert_all_answered("test");
        let extra = std::panic::catch_unwind(move || {
            l.outbound(&reply);
        });
        assert!(extra.is_err());
    }
}
