//! The requests and notifications this era reads, and where each goes.

use serde_json::value::RawValue;

use super::types::Task;
use super::{handshake, logging, receiver, resources, tools};
use crate::era::kept::State;
use crate::ids::SessionId;
use crate::jsonrpc::{self, Reject, RequestId, RpcError};
use crate::model::{Era, Role};
use crate::peer_error::PeerErrorKind;
use crate::state::Source;

/// A request of this era (`ping` is answered before it gets here): on a server session,
/// `initialize` and whatever follows it; `None` for anything else there.
pub(super) fn serve(
    st: &mut State,
    session: SessionId,
    id: &RequestId,
    method: &str,
    params: Option<&RawValue>,
) -> Option<Result<(), Reject>> {
    let s = st.session(session)?;
    let (role, ready) = (s.role, s.is_ready());
    match role {
        Role::Server if method == "initialize" => {
            Some(handshake::on_initialize(st, session, id, params))
        }
        Role::Server if !ready => None,
        _ => Some(serve_ready(st, session, id, method, params, role, ready)),
    }
}

fn serve_ready(
    st: &mut State,
    session: SessionId,
    id: &RequestId,
    method: &str,
    params: Option<&RawValue>,
    role: Role,
    ready: bool,
) -> Result<(), Reject> {
    if !ready {
        return Err(Reject::peer(
            PeerErrorKind::BeforeInitialize,
            RpcError::invalid_request(format!(
                "Invalid Request: {method} before initialization completed"
            )),
        ));
    }
    let hosts_tasks = handshake::hosts_tasks(st, session);
    let features = st.config.client;
    match (role, method) {
        (Role::Server, "tools/list") => tools::on_tools_list(st, session, id, params),
        (Role::Server, "tools/call") => tools::on_tools_call(st, session, id, params),
        (Role::Server, "logging/setLevel") if st.config.logging => {
            logging::on_set_level(st, session, id, params)
        }
        (Role::Server, "resources/subscribe" | "resources/unsubscribe")
            if resources::kept_by_engine(st) =>
        {
            let subscribe = method == "resources/subscribe";
            resources::on_subscribe(st, session, id, params, subscribe)
        }
        (_, "tasks/get") if hosts_tasks => receiver::on_tasks_get(st, session, id, params),
        (_, "tasks/result") if hosts_tasks => receiver::on_tasks_result(st, session, id, params),
        (_, "tasks/list") if hosts_tasks && st.config.tasks.list => {
            receiver::on_tasks_list(st, session, id, params)
        }
        (_, "tasks/cancel") if hosts_tasks && st.config.tasks.cancel => {
            receiver::on_tasks_cancel(st, session, id, params)
        }
        (Role::Client, "sampling/createMessage") if features.sampling => {
            receiver::on_peer_request(st, session, id, method, params, true)
        }
        (Role::Client, "elicitation/create") if features.elicitation => {
            receiver::on_peer_request(st, session, id, method, params, true)
        }
        (Role::Client, "roots/list") if features.roots => {
            receiver::on_peer_request(st, session, id, method, params, false)
        }
        _ if !owned_by_engine(method) && st.config.app_serves(method) => {
            st.app_request(Era::V2025_11_25, session, id, method, params);
            Ok(())
        }
        _ => Err(Reject::peer(
            PeerErrorKind::UnknownMethod(method.to_owned()),
            RpcError::method_not_found(method),
        )),
    }
}

/// A notification of this era: `notifications/initialized` and status notifications of
/// the peer's tasks. Whether it was one of those.
pub(super) fn notify(
    st: &mut State,
    session: SessionId,
    method: &str,
    params: Option<&RawValue>,
) -> bool {
    match method {
        "notifications/initialized" => true,
        "notifications/tasks/status" => {
            match jsonrpc::params::<Task>(params) {
                Ok(task) => observe(st, session, task, Source::Notification),
                Err(reject) => st.peer_error(
                    session,
                    PeerErrorKind::Malformed,
                    format!("{method}: {}", reject.error.message),
                ),
            }
            true
        }
        _ => false,
    }
}

/// A view of a peer task from its wire shape, or the peer's mistake reported.
pub(super) fn observe(st: &mut State, session: SessionId, task: Task, source: Source) {
    match task.to_info() {
        Some(info) => st.observe_remote_task(session, Era::V2025_11_25, info, source),
        None => st.peer_error(
            session,
            PeerErrorKind::Malformed,
            format!("task {:?}: a time is not RFC 3339", task.task_id),
        ),
    }
}

/// Methods the engine answers itself in this era, whatever the application lists.
fn owned_by_engine(method: &str) -> bool {
    matches!(method, "initialize" | "ping")
        || method.starts_with("tools/")
        || method.starts_with("tasks/")
}
