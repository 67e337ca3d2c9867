//! Log messages in this era: `logging/setLevel` sets the least severe level a session wants
//! from then on (every level until it does), and a task's messages carry related-task
//! `_meta`.

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;

use super::state as kept;
use super::types::related_task_meta;
use crate::era::kept::State;
use crate::ids::{CallId, SessionId};
use crate::jsonrpc::{self, Reject, RequestId};
use crate::log_level::LogLevel;

#[derive(Deserialize)]
struct SetLevelParams {
    level: LogLevel,
}

/// Records the session's level and answers `{}`.
pub(super) fn on_set_level(
    st: &mut State,
    session: SessionId,
    id: &RequestId,
    params: Option<&RawValue>,
) -> Result<(), Reject> {
    let SetLevelParams { level } = jsonrpc::params(params)?;
    if let Some(s) = kept::session_mut(st, session) {
        s.log_level = Some(level);
    }
    let line = jsonrpc::reply_with(id, 48, |buf| buf.push_str("{}"));
    st.reply(session, id, None, line);
    Ok(())
}

/// Whether the session wants messages of `level` (every level until its
/// `logging/setLevel`).
pub(super) fn wants(st: &State, session: SessionId, level: LogLevel) -> bool {
    let minimum = st
        .session(session)
        .and_then(|s| s.kept.v2025_11_25.as_deref())
        .and_then(|s| s.log_level);
    minimum.is_none_or(|min| level >= min)
}

/// Sends a log message about a call on its session, unless the session asked for more
/// severe ones only.
pub(super) fn log(
    st: &mut State,
    call: CallId,
    level: LogLevel,
    logger: Option<&str>,
    data: &Value,
) {
    let Some(state) = st.call(call) else {
        return;
    };
    let (Some(session), task) = (state.session, state.task.clone()) else {
        return;
    };
    if !wants(st, session, level) {
        return;
    }
    let meta = task.as_ref().map(|t| related_task_meta(t.as_str()));
    let stream = kept::call_stream(st, session, call);
    st.send_log(session, stream, task.as_ref(), level, logger, data, meta);
}
