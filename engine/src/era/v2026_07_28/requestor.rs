//! The requestor role in this era: opening with `server/discover`, the `_meta` every
//! request of ours carries, `tools/call` answers read by `resultType`, and MRTR rounds,
//! whose input the application's handlers give.

use serde::Deserialize;
use serde_json::{json, Map, Value};

use super::following;
use super::meta::{SERVER_INFO_KEY, UNSUPPORTED_VERSION};
use super::outgoing::{answerable, answering_call, input_event, invalid, respond_to, send};
use super::state::{self as kept, Answering, Asked, Calling, Retry};
use super::types::Task;
use super::{EXTENSION, VERSION};
use crate::era::kept::{Purpose, State};
use crate::error::UsageError;
use crate::event::Event;
use crate::ids::SessionId;
use crate::jsonrpc::{code, RequestId, RpcError};
use crate::model::{Era, Implementation, PlainReason, ToolPage};
use crate::state::{progress_meta, Phase, Timer};

/// MRTR rounds one call may take before it fails (a server that never stops asking).
const MAX_ROUNDS: u8 = 16;

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

// ---- opening ----------------------------------------------------------------------------------

/// Client: opens the session with `server/discover`; `fallback` lets an older era open it
/// when the server does not speak this one.
pub(super) fn discover(st: &mut State, session: SessionId, fallback: bool) -> Option<RequestId> {
    let s = st.session_mut(session)?;
    s.phase = Phase::Initializing;
    s.era = Some(Era::V2026_07_28);
    send_discover(st, session, fallback, false)
}

/// Sends `server/discover` and arms its timeout.
fn send_discover(
    st: &mut State,
    session: SessionId,
    fallback: bool,
    retried: bool,
) -> Option<RequestId> {
    let asked = Asked::Discover { fallback, retried };
    let id = send(st, session, "server/discover", Some(json!({})), asked)?;
    let at = st.now.plus(st.config.discover_timeout_ms);
    st.set_timer(Timer::Request(session, id.clone()), at);
    Some(id)
}

/// The answer to `server/discover`: a `DiscoverResult` naming our version opens the
/// session; -32022 listing our version among `data.supported` is retried once (the spec's
/// "retry with a mutually supported version": ours is the only one); -32022 otherwise, or a
/// result without our version, fails it; anything else falls back to an older era when
/// allowed.
fn on_discover_answer(
    st: &mut State,
    session: SessionId,
    (fallback, retried): (bool, bool),
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
        Err(e) if e.code == UNSUPPORTED_VERSION && !retried && lists_our_version(&e) => {
            send_discover(st, session, fallback, true);
            return;
        }
        Err(e) if e.code == UNSUPPORTED_VERSION => Err(e),
        Err(_) if fallback => return st.fall_back(session),
        Err(e) => Err(e),
    };
    match opened {
        Ok(d) => {
            let server = d
                .meta
                .and_then(|mut m| m.remove(SERVER_INFO_KEY))
                .and_then(|info| serde_json::from_value(info).ok())
                .unwrap_or_else(|| Implementation::new("unknown", ""));
            if let Some(s) = st.session_mut(session) {
                s.phase = Phase::Ready {
                    version: VERSION.to_owned(),
                };
                s.peer_capabilities = d.capabilities.clone();
            }
            st.event(Event::Initialized {
                session,
                protocol_version: VERSION.to_owned(),
                peer: server,
                capabilities: d.capabilities,
            });
        }
        Err(error) => {
            st.event(Event::InitializeFailed { session, error });
            st.close_session(session);
        }
    }
}

/// A -32022 whose `data.supported` names our version.
fn lists_our_version(error: &RpcError) -> bool {
    let supported = error.data.as_ref().and_then(|d| d.get("supported"));
    supported
        .and_then(Value::as_array)
        .is_some_and(|versions| versions.iter().any(|v| v == VERSION))
}

/// `server/discover` went unanswered.
fn discover_timed_out(st: &mut State, session: SessionId, id: &RequestId, fallback: bool) {
    st.abandoned(session, None, id, "Request timed out");
    if fallback {
        return st.fall_back(session);
    }
    let ms = st.config.discover_timeout_ms;
    let error = RpcError::new(
        code::REQUEST_TIMEOUT,
        format!("server/discover was not answered within {ms} ms"),
    );
    st.event(Event::InitializeFailed { session, error });
    st.close_session(session);
}

// ---- tools/call -------------------------------------------------------------------------------

/// Client: a `tools/call`; `as_task` declares the tasks extension when the server's
/// `server/discover` listed it (else the call goes plainly, and [`Event::RanPlainly`] says
/// why).
pub(super) fn call_tool(
    st: &mut State,
    session: SessionId,
    name: &str,
    arguments: Value,
    as_task: bool,
) -> Result<RequestId, UsageError> {
    if !(arguments.is_null() || arguments.is_object()) {
        return Err(UsageError::NotAnObject("tool arguments"));
    }
    let s = st.ready(session)?;
    let offered = s
        .peer_capabilities
        .get("extensions")
        .and_then(|e| e.get(EXTENSION))
        .is_some_and(Value::is_object);
    let call = Calling {
        original: None,
        name: name.to_owned(),
        arguments,
        as_task: as_task && offered,
        progress: st.next_request_id(session).filter(|_| as_task),
        round: 0,
    };
    let params = call_params(&call, None);
    let request = send(
        st,
        session,
        "tools/call",
        Some(params),
        Asked::Call(Box::new(call)),
    )
    .ok_or(UsageError::UnknownSession(session))?;
    if as_task && !offered {
        st.event(Event::RanPlainly {
            session,
            request: request.clone(),
            reason: PlainReason::NoTaskCapability,
        });
    }
    Ok(request)
}

/// The server answered one round of a `tools/call` of ours.
fn on_call_answer(
    st: &mut State,
    session: SessionId,
    id: RequestId,
    mut call: Calling,
    outcome: Result<Value, RpcError>,
) {
    let original = call.original.take().unwrap_or(id);
    let result = match outcome {
        Ok(result) => result,
        Err(e) => return respond_to(st, session, original, Err(e)),
    };
    let kind = match result.get("resultType") {
        None => Some("complete"),
        Some(kind) => kind.as_str(),
    };
    match kind {
        Some("complete") => respond_to(st, session, original, Ok(result)),
        Some("task") if call.as_task => task_created(st, session, original, result),
        Some("input_required") => begin_round(st, session, original, call, result),
        Some("task") => {
            let error = invalid(
                "a task answered a tools/call that did not declare the tasks extension".into(),
            );
            respond_to(st, session, original, Err(error))
        }
        other => {
            let error = invalid(format!(
                "unknown resultType {other:?} in a tools/call result"
            ));
            respond_to(st, session, original, Err(error))
        }
    }
}

/// A flat `CreateTaskResult`: the task is followed, and listened to.
fn task_created(st: &mut State, session: SessionId, request: RequestId, result: Value) {
    let task = Task::deserialize(&result)
        .map_err(|e| invalid(format!("malformed CreateTaskResult: {e}")))
        .and_then(|t| {
            t.to_info()
                .ok_or_else(|| invalid("malformed CreateTaskResult: a time is not RFC 3339".into()))
        });
    match task {
        Ok(task) => following::adopt(st, session, request, task),
        Err(error) => respond_to(st, session, request, Err(error)),
    }
}

/// An `InputRequiredResult`: each input goes to the application as a request; the call is
/// sent again once every one is answered.
fn begin_round(
    st: &mut State,
    session: SessionId,
    original: RequestId,
    mut call: Calling,
    result: Value,
) {
    let asked = match serde_json::from_value::<InputRequired>(result) {
        Ok(asked) if asked.input_requests.is_some() || asked.request_state.is_some() => asked,
        Ok(_) => {
            let error = invalid(
                "an InputRequiredResult with neither inputRequests nor requestState".into(),
            );
            return respond_to(st, session, original, Err(error));
        }
        Err(e) => {
            let error = invalid(format!("malformed InputRequiredResult: {e}"));
            return respond_to(st, session, original, Err(error));
        }
    };
    if call.round >= MAX_ROUNDS {
        let error = invalid(format!(
            "the server asked for input {MAX_ROUNDS} times in a row"
        ));
        return respond_to(st, session, original, Err(error));
    }
    let mut requests = Vec::new();
    for (key, request) in asked.input_requests.unwrap_or_default() {
        match answerable(st, request) {
            Ok(request) => requests.push((key, request)),
            Err(error) => return respond_to(st, session, original, Err(error)),
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
        let call = st.add_call(answering_call(session, answering));
        retry.waiting.push((key.clone(), call));
        events.push(input_event(call, session, key, request, None));
    }
    if retry.waiting.is_empty() {
        return send_retry(st, session, *retry);
    }
    if let Some(k) = kept::session_mut(st, session) {
        k.retries.insert(original, retry);
    }
    for event in events {
        st.event(event);
    }
}

/// The application answered one input of an MRTR round.
pub(super) fn answer_retry_input(
    st: &mut State,
    session: SessionId,
    original: RequestId,
    key: String,
    outcome: Result<Value, RpcError>,
) {
    let Some(k) = kept::session_mut(st, session) else {
        return;
    };
    let Some(retry) = k.retries.get_mut(&original) else {
        return;
    };
    retry.waiting.retain(|(k, _)| *k != key);
    match outcome {
        Ok(value) => {
            retry.responses.insert(key, value);
            if retry.waiting.is_empty() {
                let retry = k.retries.remove(&original).expect("just found");
                send_retry(st, session, *retry);
            }
        }
        // The application could not give the input: the call fails with its reason.
        Err(error) => {
            let retry = k.retries.remove(&original).expect("just found");
            for (_, call) in retry.waiting {
                st.remove_call(call);
            }
            respond_to(st, session, original, Err(error));
        }
    }
}

/// The call again, with a new id, carrying the answers and the state byte for byte.
fn send_retry(st: &mut State, session: SessionId, retry: Retry) {
    let params = call_params(
        &retry.call,
        Some((retry.responses, retry.request_state.as_deref())),
    );
    send(
        st,
        session,
        "tools/call",
        Some(params),
        Asked::Call(Box::new(retry.call)),
    );
}

/// The application gave up its request `key`: a call between MRTR rounds forgets the inputs
/// it waits for; the request on the wire (a later round of a call goes by a new id) is
/// cancelled. Whether anything of it was pending.
pub(super) fn give_up(st: &mut State, session: SessionId, key: &RequestId) -> bool {
    let retry = kept::session_mut(st, session).and_then(|k| k.retries.remove(key));
    if let Some(retry) = retry {
        for (_, call) in retry.waiting {
            st.remove_call(call);
        }
        return true;
    }
    st.give_up_request(
        session,
        key,
        |purpose| matches!(purpose, Purpose::V2026_07_28(Asked::Call(call)) if call.original.as_ref() == Some(key)),
    )
}

/// A session closes: calls waiting for input fail.
pub(super) fn fail_retries(st: &mut State, session: SessionId, error: &RpcError) {
    let Some(k) = kept::session_mut(st, session) else {
        return;
    };
    let mut retries: Vec<_> = k.retries.drain().collect();
    retries.sort_by(|a, b| a.0.cmp(&b.0));
    for (original, retry) in retries {
        for (_, call) in retry.waiting {
            st.remove_call(call);
        }
        respond_to(st, session, original, Err(error.clone()));
    }
}

/// `tools/call` params: name, arguments, and a retry's answers and state.
fn call_params(call: &Calling, retry: Option<(Map<String, Value>, Option<&str>)>) -> Value {
    let mut params = Map::new();
    params.insert("name".into(), call.name.clone().into());
    if !call.arguments.is_null() {
        params.insert("arguments".into(), call.arguments.clone());
    }
    if let Some(id) = &call.progress {
        params.insert("_meta".into(), progress_meta(id));
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

// ---- answers, timeouts, closing -----------------------------------------------------------

/// The peer answered our request `id`, sent for `asked`.
pub(super) fn answered(
    st: &mut State,
    session: SessionId,
    id: RequestId,
    asked: Asked,
    outcome: Result<Value, RpcError>,
) {
    match asked {
        Asked::Discover { fallback, retried } => {
            on_discover_answer(st, session, (fallback, retried), outcome)
        }
        Asked::Call(call) => on_call_answer(st, session, id, *call, outcome),
        Asked::ToolsList => st.event(Event::ToolPage {
            session,
            request: id,
            outcome: outcome.and_then(|page| ToolPage::read(&page)),
        }),
        Asked::TaskGet { task, auto } => {
            let report = (!auto).then(|| id.clone());
            following::on_detailed_task(st, session, id, task, report, outcome)
        }
        Asked::AfterCancel { task, original } => {
            following::on_detailed_task(st, session, id, task, Some(original), outcome)
        }
        Asked::Follow { task } => following::on_followed(st, session, id, &task, outcome),
        Asked::TaskCancel { task } => match outcome {
            Ok(_) => following::after_cancel_ack(st, session, task, id),
            Err(error) => st.answer_task(session, id, &task, Err(error), Task::info_of),
        },
        Asked::Ack { task } => {
            // An error ends the task with it (the server will not take its input).
            if let Err(error) = outcome {
                st.give_up(session, &task, error);
            }
        }
        Asked::Listen { task } => following::listen_ended(st, session, &task, &id),
        Asked::Notices => following::notices_ended(st, session, &id),
    }
}

/// A request of ours timed out locally.
pub(super) fn timed_out(st: &mut State, session: SessionId, id: RequestId, asked: Asked) {
    if let Asked::Discover { fallback, .. } = asked {
        return discover_timed_out(st, session, &id, fallback);
    }
    st.abandoned(session, None, &id, "Request timed out");
    let request = match &asked {
        // The engine's own requests are not the application's business.
        Asked::TaskGet { auto: true, .. }
        | Asked::Ack { .. }
        | Asked::Listen { .. }
        | Asked::Notices => None,
        Asked::AfterCancel { original, .. } => Some(original.clone()),
        Asked::Call(call) => Some(call.original.clone().unwrap_or(id)),
        _ => Some(id),
    };
    if let Some(request) = request {
        st.event(Event::TimedOut { session, request });
    }
    if let Asked::TaskGet { task, .. } = asked {
        st.after_poll(session, &task);
    }
}

/// The session closed before the peer answered.
pub(super) fn closed_pending(
    st: &mut State,
    session: SessionId,
    id: RequestId,
    asked: Asked,
    error: &RpcError,
) {
    let request = match asked {
        Asked::Discover { .. } => {
            return st.event(Event::InitializeFailed {
                session,
                error: error.clone(),
            })
        }
        Asked::TaskCancel { task } | Asked::TaskGet { task, auto: false } => {
            return st.answer_task(session, id, &task, Err(error.clone()), Task::info_of)
        }
        Asked::AfterCancel { task, original } => {
            return st.answer_task(session, original, &task, Err(error.clone()), Task::info_of)
        }
        Asked::ToolsList => {
            return st.event(Event::ToolPage {
                session,
                request: id,
                outcome: Err(error.clone()),
            })
        }
        Asked::Follow { .. } => id,
        Asked::Call(call) => call.original.unwrap_or(id),
        Asked::TaskGet { .. } | Asked::Ack { .. } | Asked::Listen { .. } | Asked::Notices => return,
    };
    respond_to(st, session, request, Err(error.clone()));
}
