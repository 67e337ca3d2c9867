//! `logging/setLevel`: the least severe log message a session wants from now on.

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::host::Host;
use crate::ids::SessionId;
use crate::jsonrpc::{self, Reject, RequestId};
use crate::log_level::LogLevel;

#[derive(Deserialize)]
struct SetLevelParams {
    level: LogLevel,
}

impl Host {
    /// Records the session's level for [`Host::log`] and answers `{}`.
    pub(super) fn on_set_level(
        &mut self,
        session: SessionId,
        id: &RequestId,
        params: Option<&RawValue>,
    ) -> Result<(), Reject> {
        let SetLevelParams { level } = jsonrpc::params(params)?;
        if let Some(s) = self.session_mut(session) {
            s.log_level = Some(level);
        }
        let line = jsonrpc::reply_with(id, 48, |buf| buf.extend_from_slice(b"{}"));
        self.reply(session, id, None, line);
        Ok(())
    }
}
