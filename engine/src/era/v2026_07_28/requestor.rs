//! The requestor role in 2026-07-28: opening with `server/discover` (falling back to
//! `initialize` for a 2025-11-25 server), the `_meta` every request of ours carries,
//! `tools/call` answers read by `resultType`, and MRTR rounds, whose input the
//! application's handlers give.

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use super::meta::{
    CAPABILITIES_KEY, CLIENT_INFO_KEY, SERVER_INFO_KEY, UNSUPPORTED_VERSION, VERSION_KEY,
};
use super::{EXTENSION, VERSION};
use crate::era::v2025_11_25::{PlainReason, Task};
use crate::event::{AppRequest, Event};
use crate::host::{Answer, Call, Host, Timer};
use crate::ids::{CallId, SessionId, TaskId};
use crate::jsonrpc::{code, RequestId, RpcError};
use crate::session::{Phase, Purpose, Session};
use crate::{Implementation, Millis, UsageError};

/// MRTR rounds one call may take before it fails (a server that never stops asking).
const MAX_ROUNDS: u8 = 16;

/// A `tools/call` of ours in this era.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ModernCall {
    /// The call's first request, which the application waits on; `None` while that is this
    /// request.
    pub original: Option<RequestId>,
    pub name: String,
    /// An object, or `null` for none.
    pub arguments: Value,
    /// It declares the tasks extension: the application asked for a task.
    pub as_task: bool,
    /// MRTR rounds answered so far.
    pub round: u8,
}

impl Eq for ModernCall {}

/// A call waiting for the application's answers to the server's `InputRequiredResult`.
#[derive(Debug)]
pub(crate) struct Retry {
    call: ModernCall,
    request_state: Option<String>,
    /// Keys still unanswered, with the call that answers each.
    waiting: Vec<(String, CallId)>,
    responses: Map<String, Value>,
}

/// The server's input request an application call answers (client role).
#[derive(Debug)]
pub(crate) enum Answering {
    /// An `inputRequests` entry of a task the server runs for us: `tasks/update` carries it.
    Task { task: TaskId, key: String },
    /// An MRTR `inputRequests` entry: the retry of the call `original` carries it.
    Retry { original: RequestId, key: String },
}

/// One entry of `inputRequests`.
#[derive(Deserialize)]
pub(super) struct InputRequest {
    pub method: String,
    #[serde(default)]
    pub params: Option<Value>,
}

/// An `InputRequiredResult`.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct InputRequired {
    #[serde(default)]
    input_requests: Option<Map<String, Value>>,
    #[serde(default)]
    request_state: Option<String>,
}

/// The part of a `DiscoverResult` the client reads.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Discovered {
    supported_versions: Vec<String>,
    #[serde(default)]
    capabilities: Value,
    #[serde(rename = "_meta", default)]
    meta: Option<Map<String, Value>>,
}

/// `params` with `meta` added to its `_meta` (keys already there, e.g. `progressToken`,
/// stay).
pub(crate) fn with_meta<P: Serialize>(params: Option<P>, meta: Value) -> Value {
    let params = params.map(|p| serde_json::to_value(p).expect("params serialize"));
    let mut params = match params {
        None | Some(Value::Null) => json!({}),
        Some(p) => p,
    };
    if let (Value::Object(map), Value::Object(meta)) = (&mut params, meta) {
        match map.entry("_meta").or_insert_with(|| json!({})) {
            Value::Object(existing) => {
                for (key, value) in meta {
                    existing.entry(key).or_insert(value);
                }
            }
            other => *other = Value::Object(meta),
        }
    }
    params
}

/// An answer the client cannot accept.
fn invalid(message: String) -> RpcError {
    RpcError::internal(format!("Invalid response: {message}"))
}

impl Host {
    /// Client: opens the session with `server/discover`.
    pub(crate) fn discover(&mut self, session: SessionId, fallback: bool) -> Option<RequestId> {
        self.session_mut(session)?.phase = Phase::Initializing;
        let purpose = Purpose::Discover { fallback };
        let id = self.send_request(session, "server/discover", Some(json!({})), purpose, None)?;
        let at = self.now.plus(self.config.discover_timeout_ms);
        self.timers.set(Timer::Request(session, id.clone()), at);
        Some(id)
    }

    /// The `_meta` a request of ours carries, when `session` speaks this era (or opens with
    /// it): every request declares the tasks extension except a plain `tools/call`.
    pub(crate) fn outbound_meta(&self, session: SessionId, purpose: &Purpose) -> Option<Value> {
        let s = self.session(session)?;
        if !(matches!(purpose, Purpose::Discover { .. }) || s.is_modern()) {
            return None;
        }
        let declare = !matches!(purpose, Purpose::ModernCall(c) if !c.as_task);
        let features = self.config.client;
        let mut caps = self.config.app_capabilities.clone();
        if features.elicitation {
            caps.insert("elicitation".into(), json!({ "form": {} }));
        }
        if features.sampling {
            caps.insert("sampling".into(), json!({}));
        }
        if features.roots {
            caps.insert("roots".into(), json!({}));
        }
        if declare {
            let extensions = caps.entry("extensions").or_insert_with(|| json!({}));
            if let Value::Object(extensions) = extensions {
                extensions.insert(EXTENSION.into(), json!({}));
            }
        }
        Some(json!({
            VERSION_KEY: VERSION,
            CLIENT_INFO_KEY: self.config.info,
            CAPABILITIES_KEY: caps,
        }))
    }

    /// The answer to `server/discover`: a `DiscoverResult` naming our version opens the
    /// session; -32022 or a result without our version fails it; anything else falls back to
    /// `initialize` when allowed.
    pub(super) fn on_discover_answer(
        &mut self,
        session: SessionId,
        fallback: bool,
        outcome: Result<Value, RpcError>,
    ) {
        let discovered = match outcome {
            Ok(result) => serde_json::from_value::<Discovered>(result).map_err(|e| {
                RpcError::new(
                    code::INVALID_PARAMS,
                    format!("Malformed DiscoverResult: {e}"),
                )
            }),
            Err(e) => Err(e),
        };
        let opened = match discovered {
            Ok(d) if d.supported_versions.iter().any(|v| v == VERSION) => Ok(d),
            Ok(d) => Err(RpcError::new(
                UNSUPPORTED_VERSION,
                format!(
                    "The server speaks protocol versions {:?}, not {VERSION}",
                    d.supported_versions
                ),
            )),
            Err(e) if e.code == UNSUPPORTED_VERSION => Err(e),
            Err(_) if fallback => return self.fall_back(session),
            Err(e) => Err(e),
        };
        match opened {
            Ok(d) => {
                let server = d
                    .meta
                    .and_then(|mut m| m.remove(SERVER_INFO_KEY))
                    .and_then(|info| serde_json::from_value(info).ok())
                    .unwrap_or_else(|| Implementation::new("unknown", ""));
                if let Some(s) = self.session_mut(session) {
                    s.phase = Phase::Ready {
                        version: VERSION.to_owned(),
                    };
                    s.peer_capabilities = d.capabilities.clone();
                }
                self.event(Event::Initialized {
                    session,
                    protocol_version: VERSION.to_owned(),
                    peer: server,
                    capabilities: d.capabilities,
                });
            }
            Err(error) => {
                self.event(Event::InitializeFailed { session, error });
                self.close(self.now, session);
            }
        }
    }

    /// `server/discover` went unanswered.
    pub(crate) fn discover_timed_out(
        &mut self,
        session: SessionId,
        id: &RequestId,
        fallback: bool,
    ) {
        self.abandon_request(session, id, "Request timed out");
        if fallback {
            return self.fall_back(session);
        }
        let ms = self.config.discover_timeout_ms;
        let error = RpcError::new(
            code::REQUEST_TIMEOUT,
            format!("server/discover was not answered within {ms} ms"),
        );
        self.event(Event::InitializeFailed { session, error });
        self.close(self.now, session);
    }

    /// The server is not a 2026-07-28 one: open in 2025-11-25.
    fn fall_back(&mut self, session: SessionId) {
        if let Some(s) = self.session_mut(session) {
            s.phase = Phase::New;
        }
        self.send_initialize(session);
    }

    /// Client: a `tools/call` in this era; `as_task` declares the tasks extension, when the
    /// server's `server/discover` listed it (else the call goes plainly, and
    /// [`Event::RanPlainly`] says why).
    pub(crate) fn modern_call_tool(
        &mut self,
        now: Millis,
        session: SessionId,
        name: &str,
        arguments: Value,
        as_task: bool,
    ) -> Result<RequestId, UsageError> {
        let s = self.ready(session)?;
        let offered = s
            .peer_capabilities
            .get("extensions")
            .and_then(|e| e.get(EXTENSION))
            .is_some_and(Value::is_object);
        self.advance(now);
        let call = ModernCall {
            original: None,
            name: name.to_owned(),
            arguments,
            as_task: as_task && offered,
            round: 0,
        };
        let params = call_params(&call, None);
        let purpose = Purpose::ModernCall(Box::new(call));
        let request = self
            .send_request(session, "tools/call", Some(params), purpose, None)
            .ok_or(UsageError::UnknownSession(session))?;
        if as_task && !offered {
            self.event(Event::RanPlainly {
                session,
                request: request.clone(),
                reason: PlainReason::NoTaskCapability,
            });
        }
        Ok(request)
    }

    /// The server answered one round of a `tools/call` of ours.
    pub(super) fn on_modern_call_answer(
        &mut self,
        session: SessionId,
        id: RequestId,
        mut call: ModernCall,
        outcome: Result<Value, RpcError>,
    ) {
        let original = call.original.take().unwrap_or(id);
        let result = match outcome {
            Ok(result) => result,
            Err(e) => return self.respond_to(session, original, Err(e)),
        };
        let kind = match result.get("resultType") {
            None => Some("complete"),
            Some(kind) => kind.as_str(),
        };
        match kind {
            Some("complete") => self.respond_to(session, original, Ok(result)),
            Some("task") if call.as_task => self.modern_task_created(session, original, result),
            Some("input_required") => self.begin_round(session, original, call, result),
            Some("task") => {
                let error = invalid(
                    "a task answered a tools/call that did not declare the tasks extension".into(),
                );
                self.respond_to(session, original, Err(error))
            }
            other => {
                let error = invalid(format!(
                    "unknown resultType {other:?} in a tools/call result"
                ));
                self.respond_to(session, original, Err(error))
            }
        }
    }

    fn respond_to(
        &mut self,
        session: SessionId,
        request: RequestId,
        outcome: Result<Value, RpcError>,
    ) {
        self.event(Event::Response {
            session,
            request,
            outcome,
        });
    }

    /// A flat `CreateTaskResult`: the task is followed like a 2025-11-25 one.
    fn modern_task_created(&mut self, session: SessionId, request: RequestId, result: Value) {
        let task = Task::deserialize(&result)
            .map_err(|e| invalid(format!("malformed CreateTaskResult: {e}")))
            .and_then(|t| {
                t.to_info().ok_or_else(|| {
                    invalid("malformed CreateTaskResult: a time is not RFC 3339".into())
                })
            });
        match task {
            Ok(task) => {
                let id = task.id.clone();
                self.track_created(session, request, task);
                self.listen_to(session, &id);
            }
            Err(error) => self.respond_to(session, request, Err(error)),
        }
    }

    /// An `InputRequiredResult`: each input goes to the application as a request; the call
    /// is sent again once every one is answered.
    fn begin_round(
        &mut self,
        session: SessionId,
        original: RequestId,
        mut call: ModernCall,
        result: Value,
    ) {
        let asked = match serde_json::from_value::<InputRequired>(result) {
            Ok(asked) if asked.input_requests.is_some() || asked.request_state.is_some() => asked,
            Ok(_) => {
                let error = invalid(
                    "an InputRequiredResult with neither inputRequests nor requestState".into(),
                );
                return self.respond_to(session, original, Err(error));
            }
            Err(e) => {
                let error = invalid(format!("malformed InputRequiredResult: {e}"));
                return self.respond_to(session, original, Err(error));
            }
        };
        if call.round >= MAX_ROUNDS {
            let error = invalid(format!(
                "the server asked for input {MAX_ROUNDS} times in a row"
            ));
            return self.respond_to(session, original, Err(error));
        }
        let mut requests = Vec::new();
        for (key, request) in asked.input_requests.unwrap_or_default() {
            match self.answerable(request) {
                Ok(request) => requests.push((key, request)),
                Err(error) => return self.respond_to(session, original, Err(error)),
            }
        }
        call.round += 1;
        call.original = Some(original.clone());
        let mut retry = Box::new(Retry {
            call,
            request_state: asked.request_state,
            waiting: Vec::new(),
            responses: Map::new(),
        });
        let mut events = Vec::new();
        for (key, request) in requests {
            let answering = Answering::Retry {
                original: original.clone(),
                key: key.clone(),
            };
            let call = self.add_call(Call::answering(session, answering));
            retry.waiting.push((key.clone(), call));
            events.push(input_event(call, session, key, request, None));
        }
        if retry.waiting.is_empty() {
            return self.send_retry(session, *retry);
        }
        if let Some(s) = self.session_mut(session) {
            s.retries.insert(original, retry);
        }
        for event in events {
            self.event(event);
        }
    }

    /// An input request the application can answer: one whose capability we declare.
    pub(super) fn answerable(&self, request: Value) -> Result<InputRequest, RpcError> {
        let request: InputRequest = serde_json::from_value(request)
            .map_err(|e| invalid(format!("malformed input request: {e}")))?;
        let features = self.config.client;
        let declared = match request.method.as_str() {
            "elicitation/create" => features.elicitation,
            "sampling/createMessage" => features.sampling,
            "roots/list" => features.roots,
            _ => false,
        };
        if declared {
            Ok(request)
        } else {
            Err(invalid(format!(
                "the server asked for {:?}, which this client did not declare",
                request.method
            )))
        }
    }

    /// The application answered one of the server's input requests.
    pub(crate) fn answer_server_input(&mut self, call: CallId, outcome: Answer) {
        let Some(state) = self.remove_call(call) else {
            return;
        };
        let (Some(session), Some(answering)) = (state.session, state.answering) else {
            return;
        };
        let outcome = outcome
            .map(|raw| serde_json::from_str::<Value>(raw.get()).expect("answers are JSON objects"));
        match *answering {
            Answering::Retry { original, key } => {
                self.answer_retry_input(session, original, key, outcome)
            }
            Answering::Task { task, key } => self.answer_task_input(session, task, key, outcome),
        }
    }

    fn answer_retry_input(
        &mut self,
        session: SessionId,
        original: RequestId,
        key: String,
        outcome: Result<Value, RpcError>,
    ) {
        let Some(s) = self.session_mut(session) else {
            return;
        };
        let Some(retry) = s.retries.get_mut(&original) else {
            return;
        };
        retry.waiting.retain(|(k, _)| *k != key);
        match outcome {
            Ok(value) => {
                retry.responses.insert(key, value);
                if retry.waiting.is_empty() {
                    let retry = s.retries.remove(&original).expect("just found");
                    self.send_retry(session, *retry);
                }
            }
            // The application could not give the input: the call fails with its reason.
            Err(error) => {
                let retry = s.retries.remove(&original).expect("just found");
                for (_, call) in retry.waiting {
                    self.remove_call(call);
                }
                self.respond_to(session, original, Err(error));
            }
        }
    }

    /// The call again, with a new id, carrying the answers and the state byte for byte.
    fn send_retry(&mut self, session: SessionId, retry: Retry) {
        let params = call_params(
            &retry.call,
            Some((retry.responses, retry.request_state.as_deref())),
        );
        let purpose = Purpose::ModernCall(Box::new(retry.call));
        self.send_request(session, "tools/call", Some(params), purpose, None);
    }

    /// A session closes: calls waiting for input fail.
    pub(crate) fn fail_retries(&mut self, session: SessionId, s: &mut Session, error: &RpcError) {
        let mut retries: Vec<_> = s.retries.drain().collect();
        retries.sort_by(|a, b| a.0.cmp(&b.0));
        for (original, retry) in retries {
            for (_, call) in retry.waiting {
                self.remove_call(call);
            }
            self.respond_to(session, original, Err(error.clone()));
        }
    }
}

/// `tools/call` params: name, arguments, and a retry's answers and state.
fn call_params(call: &ModernCall, retry: Option<(Map<String, Value>, Option<&str>)>) -> Value {
    let mut params = Map::new();
    params.insert("name".into(), call.name.clone().into());
    if !call.arguments.is_null() {
        params.insert("arguments".into(), call.arguments.clone());
    }
    if let Some((responses, state)) = retry {
        if !responses.is_empty() {
            params.insert("inputResponses".into(), Value::Object(responses));
        }
        if let Some(state) = state {
            params.insert("requestState".into(), state.into());
        }
    }
    Value::Object(params)
}

/// The application's request for one input: `request` is its key.
pub(super) fn input_event(
    call: CallId,
    session: SessionId,
    key: String,
    request: InputRequest,
    task: Option<TaskId>,
) -> Event {
    let params = request
        .params
        .map(|p| serde_json::value::to_raw_value(&p).expect("JSON values serialize"));
    Event::Request(AppRequest {
        call,
        session,
        request: RequestId::String(key),
        method: request.method,
        params,
        task: None,
        related_task: task,
    })
}
