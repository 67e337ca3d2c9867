//! What every request of ours in this era shares: sending it with our `_meta`, and
//! handing the application what comes back (answers, and the server's input requests).

use serde::Serialize;
use serde_json::{json, Value};

use super::meta::{CAPABILITIES_KEY, CLIENT_INFO_KEY};
use super::state::{self as kept, Answering, Asked};
use super::types::InputRequest;
use super::{EXTENSION, VERSION, VERSION_KEY};
use crate::era::kept::{Call, Sent, State};
use crate::event::{AppRequest, Event};
use crate::ids::{CallId, SessionId, TaskId};
use crate::jsonrpc::{RequestId, RpcError};
use crate::model::Era;

/// An answer the client cannot accept.
pub(super) fn invalid(message: String) -> RpcError {
    RpcError::internal(format!("Invalid response: {message}"))
}

/// Sends a request of this era: its params carry the `_meta` of every request of ours.
pub(super) fn send(
    st: &mut State,
    session: SessionId,
    method: &str,
    params: Option<impl Serialize>,
    asked: Asked,
) -> Option<RequestId> {
    let declare = !matches!(&asked, Asked::Call(c) if !c.as_task);
    let params = with_meta(params, request_meta(st, declare));
    let times_out = asked.times_out();
    let sent = Sent::Era(asked.into());
    st.send_request(session, None, method, Some(params), sent, times_out, None)
}

/// A request of the application's, with our `_meta`; its answer is `Event::Response`.
pub(super) fn app_request(
    st: &mut State,
    session: SessionId,
    method: &str,
    params: Option<Value>,
) -> Option<RequestId> {
    let params = with_meta(params, request_meta(st, true));
    st.send_request(session, None, method, Some(params), Sent::App, true, None)
}

/// The `_meta` a request of ours carries: our version, identity and capabilities, which
/// declare the tasks extension unless `declare` is off (a plain `tools/call`).
fn request_meta(st: &State, declare: bool) -> Value {
    let features = st.config.client;
    let mut caps = st.config.app_capabilities.clone();
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
    json!({
        VERSION_KEY: VERSION,
        CLIENT_INFO_KEY: st.config.info,
        CAPABILITIES_KEY: caps,
    })
}

/// `params` with `meta` added to its `_meta` (keys already there, e.g. `progressToken`,
/// stay).
fn with_meta<P: Serialize>(params: Option<P>, meta: Value) -> Value {
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

/// Hands the application the outcome of its request `request`.
pub(super) fn respond_to(
    st: &mut State,
    session: SessionId,
    request: RequestId,
    outcome: Result<Value, RpcError>,
) {
    st.event(Event::Response {
        session,
        request,
        outcome,
    });
}

/// An input request the application can answer: one whose capability we declare.
pub(super) fn answerable(st: &State, request: Value) -> Result<InputRequest, RpcError> {
    let request: InputRequest = serde_json::from_value(request)
        .map_err(|e| invalid(format!("malformed input request: {e}")))?;
    let features = st.config.client;
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

/// The application's answer to the server's input request `answering`: it replies to
/// nothing on the wire by itself.
pub(super) fn answering_call(session: SessionId, answering: Answering) -> Call {
    let mut call = Call::plain(Era::V2026_07_28, session, RequestId::Number(0), None);
    call.reply_to = None;
    kept::of_call(&mut call).answering = Some(answering);
    call
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
