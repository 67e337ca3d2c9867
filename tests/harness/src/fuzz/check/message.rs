//! One message a host wrote, parsed and classified: valid JSON, JSON-RPC 2.0 structure, its
//! ids, and the [`MessageKind`](taskwire_engine::MessageKind) the host gave it matching its
//! content.

use std::borrow::Cow;
use std::cell::OnceCell;

use serde_json::value::RawValue;
use serde_json::Value;
use taskwire_engine::era::v2025_11_25::RELATED_TASK;
use taskwire_engine::{MessageKind, RequestId};

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

/// One emitted message: the line, what kind of message it is, and its members.
///
/// A message read by [`parse_output`] is checked: its envelope is read at once (cheaply,
/// as raw slices). A message built by [`Msg::labelled`] is taken at its
/// [`MessageKind`]'s word (its class and id come from the label) and its envelope is read
/// only when a member past the id is asked for. Either way `params`, `result` and the
/// whole message are parsed into [`Value`]s only when a check asks for them.
#[derive(Clone, Debug)]
pub struct Msg {
    /// The line as sent.
    pub line: String,
    /// Its kind.
    pub class: Class,
    id: Option<Value>,
    /// A notification's method, from its label.
    labelled_method: Option<&'static str>,
    rest: OnceCell<Rest>,
    params: OnceCell<Option<Value>>,
    result: OnceCell<Option<Value>>,
    value: OnceCell<Value>,
}

/// The members of a message past its class and id.
#[derive(Clone, Debug)]
struct Rest {
    method: Option<String>,
    error: Option<Value>,
    params_at: Option<(usize, usize)>,
    result_at: Option<(usize, usize)>,
}

impl Msg {
    /// A message as its label says it is, unchecked (the runs that check everything use
    /// [`parse_output`] and [`check_kind`]).
    pub fn labelled(line: String, kind: &MessageKind) -> Msg {
        let id = |id: &RequestId| match id {
            RequestId::Number(n) => Value::from(*n),
            RequestId::String(s) => Value::String(s.clone()),
        };
        let (class, id, labelled_method) = match kind {
            MessageKind::Reply { to, error } => (
                match error {
                    Some(code) => Class::Error { code: *code },
                    None => Class::Result,
                },
                to.as_ref().map(id),
                None,
            ),
            MessageKind::Notification { method, .. } => (Class::Notification, None, Some(*method)),
            MessageKind::Request { id: request, .. } => (Class::Request, Some(id(request)), None),
            other => panic!("a message kind this harness does not know: {other:?}"),
        };
        Msg {
            line,
            class,
            id,
            labelled_method,
            rest: OnceCell::new(),
            params: OnceCell::new(),
            result: OnceCell::new(),
            value: OnceCell::new(),
        }
    }

    /// The whole message, parsed.
    pub fn value(&self) -> &Value {
        self.value
            .get_or_init(|| serde_json::from_str(&self.line).expect("checked JSON"))
    }

    fn rest(&self) -> &Rest {
        self.rest.get_or_init(|| {
            let members = envelope(&self.line)
                .unwrap_or_else(|e| panic!("invariant: an invalid message: {e}"));
            read_rest(&self.line, &members)
                .unwrap_or_else(|e| panic!("invariant: an invalid message: {e}"))
        })
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
        match self.class {
            Class::Result | Class::Error { .. } => None,
            _ => self
                .labelled_method
                .or_else(|| self.rest().method.as_deref()),
        }
    }

    /// The method when it is known without reading the line: a checked message's, or a
    /// labelled notification's (a labelled request's is `None` until its envelope is read).
    pub fn known_method(&self) -> Option<&str> {
        match self.class {
            Class::Result | Class::Error { .. } => None,
            _ => self
                .labelled_method
                .or_else(|| self.rest.get().and_then(|r| r.method.as_deref())),
        }
    }

    /// The `params` object, if any.
    pub fn params(&self) -> Option<&Value> {
        match self.class {
            Class::Result | Class::Error { .. } => None,
            _ => self.member(self.rest().params_at, &self.params),
        }
    }

    /// The `result` object of a success response.
    pub fn result(&self) -> Option<&Value> {
        match self.class {
            Class::Result => self.member(self.rest().result_at, &self.result),
            _ => None,
        }
    }

    /// The `error` object of an error response.
    pub fn error(&self) -> Option<&Value> {
        match self.class {
            Class::Error { .. } => self.rest().error.as_ref(),
            _ => None,
        }
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

/// Checks one line the engine emitted structurally: compact, JSON-RPC 2.0, one of
/// request, notification, result or error with exactly the members each allows, an id
/// that is a string or an integer, object `params`/`result`/`error`, an error with an
/// integer code and a string message (schema validation is the [`Oracle`](super::Oracle)'s).
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
    let rest = Rest {
        method,
        error,
        params_at: get("params").map(at),
        result_at: get("result").map(at),
    };
    drop(members);
    Ok(Msg {
        line,
        class,
        id,
        labelled_method: None,
        rest: OnceCell::from(rest),
        params: OnceCell::new(),
        result: OnceCell::new(),
        value: OnceCell::new(),
    })
}

/// The members past the id of a message read without checking it ([`Msg::labelled`]).
fn read_rest(line: &str, members: &[(Cow<'_, str>, &RawValue)]) -> Result<Rest, String> {
    let at = |raw: &RawValue| {
        let start = raw.get().as_ptr() as usize - line.as_ptr() as usize;
        (start, start + raw.get().len())
    };
    let get = |key: &str| members.iter().find(|(k, _)| k == key).map(|(_, v)| *v);
    let method = match get("method") {
        Some(m) => Some(serde_json::from_str(m.get()).map_err(|e| e.to_string())?),
        None => None,
    };
    let error = match get("error") {
        Some(e) => Some(serde_json::from_str(e.get()).map_err(|e| e.to_string())?),
        None => None,
    };
    Ok(Rest {
        method,
        error,
        params_at: get("params").map(at),
        result_at: get("result").map(at),
    })
}

/// The members of one compact JSON object, as raw slices (duplicates kept, so that they
/// are caught).
pub(super) fn envelope(line: &str) -> Result<Vec<(Cow<'_, str>, &RawValue)>, String> {
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
        (MessageKind::Notification { method, task, .. }, Class::Notification) => {
            let params = msg.params();
            let named = params
                .and_then(|p| p.get("taskId"))
                .or_else(|| params.and_then(|p| p.get("_meta")?.get(RELATED_TASK)?.get("taskId")))
                .and_then(Value::as_str);
            msg.method() == Some(*method) && task.as_deref() == named
        }
        (MessageKind::Request { id, .. }, Class::Request) => same_id(Some(id), msg.id()),
        _ => false,
    };
    if ok {
        Ok(())
    } else {
        Err(format!("labelled {kind:?}"))
    }
}
