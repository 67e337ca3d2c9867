//! This era's part of what the host keeps on sessions and calls, reached.

pub(super) use super::kept::*;
use crate::era::kept::{Call, Session, State};
use crate::ids::{CallId, SessionId, TaskId};

/// This era's state on a session, created when first needed.
pub(super) fn of_session(s: &mut Session) -> &mut SessionState {
    s.kept.v2026_07_28.get_or_insert_default()
}

/// This era's state on a session, to change.
pub(super) fn session_mut(st: &mut State, session: SessionId) -> Option<&mut SessionState> {
    Some(of_session(st.session_mut(session)?))
}

/// This era's state on a session, to read.
pub(super) fn session(st: &State, session: SessionId) -> Option<&SessionState> {
    st.session(session)?.kept.v2026_07_28.as_deref()
}

/// This era's state on a call, created when first needed.
pub(super) fn of_call(call: &mut Call) -> &mut CallState {
    call.kept.v2026_07_28.get_or_insert_default()
}

/// This era's state on a call, to read.
pub(super) fn call(st: &State, call: CallId) -> Option<&CallState> {
    st.call(call)?.kept.v2026_07_28.as_deref()
}

/// What we keep for a followed task, to change.
pub(super) fn following<'a>(
    st: &'a mut State,
    session: SessionId,
    task: &TaskId,
) -> Option<&'a mut Following> {
    if !st.is_our_remote_task(session, task) {
        return None;
    }
    Some(
        session_mut(st, session)?
            .following
            .entry(task.clone())
            .or_default(),
    )
}
