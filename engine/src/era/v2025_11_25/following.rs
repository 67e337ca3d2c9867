//! Following a task the peer hosts for us, in this era: `tasks/get` polls, and
//! `tasks/result` fetches the outcome once the task needs input or is terminal.

use serde_json::Value;

use super::state::Asked;
use super::types::{Task, TaskIdParams};
use crate::era::kept::{Sent, State};
use crate::event::Event;
use crate::ids::{SessionId, TaskId};
use crate::jsonrpc::{code, RequestId, RpcError};
use crate::model::Era;
use crate::state::{answered_task, Timer};
use crate::status::TaskStatus;

/// Fetches the result when the task needs input or is terminal; forgets a task whose
/// result was reported.
pub(super) fn follow_up(st: &mut State, session: SessionId, id: &TaskId) {
    let timeout = st.config.request_timeout_ms;
    let now = st.now;
    let Some(s) = st.session_mut(session) else {
        return;
    };
    let Some(entry) = s.remote.get_mut(id) else {
        return;
    };
    let Some(status) = entry.status() else {
        return;
    };
    if !entry.ours || !entry.auto_poll {
        return;
    }
    let fetch =
        (status == TaskStatus::InputRequired || status.is_terminal()) && entry.fetch.is_none();
    if status.is_terminal() && entry.result_reported {
        s.remote.remove(id);
    }
    if status.is_terminal() {
        st.clear_timer(&Timer::Poll(session, id.clone()));
    }
    let request = if fetch {
        let asked = Asked::TaskResult {
            task: id.clone(),
            auto: true,
        };
        let sent = Sent::Era(asked.into());
        let params = Some(TaskIdParams::new(id));
        let request = st.send_request(session, None, "tasks/result", params, sent, false, None);
        if let Some(entry) = st.session_mut(session).and_then(|s| s.remote.get_mut(id)) {
            entry.fetch = request.clone();
        }
        request
    } else {
        st.session(session)
            .and_then(|s| s.remote.get(id))
            .and_then(|e| e.fetch.clone())
    };
    // A task that is terminal has its result ready: waiting for it is bounded.
    if let (true, Some(request), Some(ms)) = (status.is_terminal(), request, timeout) {
        let key = Timer::Request(session, request);
        if !st.has_timer(&key) {
            st.set_timer(key, now.plus(ms));
        }
    }
}

/// The answer to the `tasks/get` that starts following `task`: the task is followed as if
/// `request` had created it (its outcome fetched by `tasks/result` once it has one); an
/// error, or an answer about another task, answers `request`.
pub(super) fn on_followed(
    st: &mut State,
    session: SessionId,
    request: RequestId,
    task: &TaskId,
    outcome: Result<Value, RpcError>,
) {
    let read = answered_task(task, outcome, Task::info_of);
    match read {
        Ok(info) => st.track_created(session, Era::V2025_11_25, request, info),
        Err(error) => st.event(Event::Response {
            session,
            request,
            outcome: Err(error),
        }),
    }
}

/// Sends the engine's own `tasks/get`.
pub(super) fn poll(st: &mut State, session: SessionId, id: &TaskId) {
    let asked = Asked::TaskGet {
        task: id.clone(),
        auto: true,
    };
    let sent = Sent::Era(asked.into());
    st.send_request(
        session,
        None,
        "tasks/get",
        Some(TaskIdParams::new(id)),
        sent,
        true,
        None,
    );
}

/// Our `tasks/result` for a terminal task timed out.
pub(super) fn result_timed_out(st: &mut State, session: SessionId, id: &TaskId) {
    let status = st
        .session(session)
        .and_then(|s| s.remote.get(id))
        .and_then(|t| t.status())
        .map_or("terminal", TaskStatus::as_str);
    let ms = st.config.request_timeout_ms.unwrap_or_default();
    let error = RpcError::new(
        code::REQUEST_TIMEOUT,
        format!("Task {id} is {status}, but the server did not answer tasks/result within {ms} ms"),
    );
    st.give_up(session, id, error);
}
