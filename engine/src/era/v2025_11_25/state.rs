//! This era's part of what the host keeps on sessions and calls, reached.

pub(super) use super::kept::*;
use crate::era::kept::{Call, Session, State};
use crate::ids::{CallId, SessionId};
use crate::jsonrpc::RequestId;

/// This era's state on a session, created when first needed.
pub(super) fn of_session(s: &mut Session) -> &mut SessionState {
    s.kept.v2025_11_25.get_or_insert_default()
}

/// This era's state on a session, to change.
pub(super) fn session_mut(st: &mut State, session: SessionId) -> Option<&mut SessionState> {
    Some(of_session(st.session_mut(session)?))
}

/// This era's state on a call, created when first needed.
pub(super) fn of_call(call: &mut Call) -> &mut CallState {
    call.kept.v2025_11_25.get_or_insert_default()
}

/// The stream ([`MessageKind::stream`]) of what a call sends on `session` before its
/// answer: its request's while it is a plain call; for a task, a `tasks/result` of that
/// session waiting for it (over HTTP, the stream the requestor opened to hear the task's
/// requests), else the session's (`None`).
pub(super) fn call_stream(st: &State, session: SessionId, call: CallId) -> Option<RequestId> {
    let state = st.call(call)?;
    if let (Some(to), Some(from)) = (&state.reply_to, state.session) {
        if from == session {
            return Some(to.clone());
        }
    }
    state.task.as_ref().and_then(|task| {
        let s = st.session(session)?.kept.v2025_11_25.as_deref()?;
        s.parked.get(task)?.first().cloned()
    })
}
