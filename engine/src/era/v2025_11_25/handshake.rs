//! The handshake: `initialize` and version negotiation, for either role.

use serde_json::value::RawValue;
use serde_json::{json, Map, Value};

use super::state::Asked;
use super::types::{
    version_has_tasks, InitializeParams, InitializeResult, LATEST_VERSION, SUPPORTED_VERSIONS,
};
use crate::era::kept::{Sent, State};
use crate::event::{Event, MessageKind};
use crate::ids::SessionId;
use crate::jsonrpc::{self, code, Reject, RequestId, RpcError};
use crate::model::{Era, Role};
use crate::state::Phase;

/// Server: answers the client's `initialize`.
pub(super) fn on_initialize(
    st: &mut State,
    session: SessionId,
    id: &RequestId,
    params: Option<&RawValue>,
) -> Result<(), Reject> {
    if st.session(session).is_some_and(|s| s.phase != Phase::New) {
        return Err(RpcError::invalid_request("Invalid Request: already initialized").into());
    }
    let p: InitializeParams = jsonrpc::params(params)?;
    let version = SUPPORTED_VERSIONS
        .into_iter()
        .find(|v| *v == p.protocol_version)
        .unwrap_or(LATEST_VERSION);
    let result = InitializeResult {
        protocol_version: version.to_owned(),
        capabilities: server_capabilities(st, version),
        server_info: st.config.info.clone(),
        instructions: st.config.instructions.clone(),
    };
    if let Some(s) = st.session_mut(session) {
        s.phase = Phase::Ready {
            version: version.to_owned(),
        };
        s.peer_capabilities = p.capabilities.clone();
    }
    st.reply(session, id, None, jsonrpc::result_line(id, &result));
    st.event(Event::Initialized {
        session,
        protocol_version: version.to_owned(),
        peer: p.client_info,
        capabilities: p.capabilities,
    });
    Ok(())
}

fn server_capabilities(st: &State, version: &str) -> Value {
    let mut caps = Map::new();
    let list_changed = st.config.tools_list_changed;
    caps.insert("tools".into(), json!({ "listChanged": list_changed }));
    if st.config.tasks.enabled && version_has_tasks(version) {
        caps.insert(
            "tasks".into(),
            tasks_capability(st, json!({ "tools": { "call": {} } })),
        );
    }
    if st.config.logging {
        caps.insert("logging".into(), json!({}));
    }
    with_app_capabilities(st, caps)
}

fn client_capabilities(st: &State) -> Value {
    let features = st.config.client;
    let mut caps = Map::new();
    let mut task_requests = Map::new();
    if features.sampling {
        caps.insert("sampling".into(), json!({}));
        task_requests.insert("sampling".into(), json!({ "createMessage": {} }));
    }
    if features.elicitation {
        caps.insert("elicitation".into(), json!({ "form": {} }));
        task_requests.insert("elicitation".into(), json!({ "create": {} }));
    }
    if features.roots {
        caps.insert("roots".into(), json!({ "listChanged": false }));
    }
    if st.config.tasks.enabled && !task_requests.is_empty() {
        caps.insert(
            "tasks".into(),
            tasks_capability(st, Value::Object(task_requests)),
        );
    }
    with_app_capabilities(st, caps)
}

/// The engine's capabilities plus the application's; the engine's keys win.
fn with_app_capabilities(st: &State, mut caps: Map<String, Value>) -> Value {
    for (key, value) in &st.config.app_capabilities {
        caps.entry(key.clone()).or_insert_with(|| value.clone());
    }
    Value::Object(caps)
}

/// `tasks: {list?, cancel?, requests}` as configured.
fn tasks_capability(st: &State, requests: Value) -> Value {
    let mut tasks = json!({ "requests": requests });
    if st.config.tasks.list {
        tasks["list"] = json!({});
    }
    if st.config.tasks.cancel {
        tasks["cancel"] = json!({});
    }
    tasks
}

/// Client: sends `initialize`; the session speaks this era from now on.
pub(super) fn send_initialize(st: &mut State, session: SessionId) -> Option<RequestId> {
    let params = InitializeParams {
        protocol_version: LATEST_VERSION.to_owned(),
        capabilities: client_capabilities(st),
        client_info: st.config.info.clone(),
    };
    let s = st.session_mut(session)?;
    s.phase = Phase::Initializing;
    s.era = Some(Era::V2025_11_25);
    let sent = Sent::Era(Asked::Initialize.into());
    st.send_request(session, None, "initialize", Some(params), sent, true, None)
}

/// Client: the server answered `initialize`.
pub(super) fn on_initialize_response(
    st: &mut State,
    session: SessionId,
    outcome: Result<Value, RpcError>,
) {
    let accepted = outcome.and_then(|v| {
        let result: InitializeResult = serde_json::from_value(v).map_err(|e| {
            RpcError::new(
                code::INVALID_PARAMS,
                format!("Malformed initialize result: {e}"),
            )
        })?;
        if SUPPORTED_VERSIONS.contains(&result.protocol_version.as_str()) {
            Ok(result)
        } else {
            Err(RpcError::new(
                code::INVALID_PARAMS,
                format!(
                    "Server chose protocol version {:?}, which we do not speak",
                    result.protocol_version
                ),
            )
            .with_data(
                json!({ "supported": SUPPORTED_VERSIONS, "requested": result.protocol_version }),
            ))
        }
    });
    match accepted {
        Ok(result) => {
            if let Some(s) = st.session_mut(session) {
                s.phase = Phase::Ready {
                    version: result.protocol_version.clone(),
                };
                s.peer_capabilities = result.capabilities.clone();
            }
            let line = jsonrpc::notification_line::<()>("notifications/initialized", None);
            let kind = MessageKind::Notification {
                method: "notifications/initialized",
                task: None,
                stream: None,
            };
            st.send(session, kind, None, line);
            st.event(Event::Initialized {
                session,
                protocol_version: result.protocol_version,
                peer: result.server_info,
                capabilities: result.capabilities,
            });
        }
        Err(error) => {
            st.event(Event::InitializeFailed { session, error });
            st.close_session(session);
        }
    }
}

/// Tasks are live on this session: its version has them and we declared hosting them
/// (a client only hosts sampling and elicitation tasks).
pub(super) fn hosts_tasks(st: &State, session: SessionId) -> bool {
    let Some(s) = st.session(session) else {
        return false;
    };
    let declared = s.role == Role::Server || st.config.client.hosts_tasks();
    st.config.tasks.enabled && declared && s.version().is_some_and(version_has_tasks)
}
