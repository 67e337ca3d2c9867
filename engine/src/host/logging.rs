//! Log messages from the application's work to its requestor (`notifications/message`).

use serde::Serialize;
use serde_json::Value;

use super::Host;
use crate::era::v2025_11_25::related_task_meta;
use crate::error::UsageError;
use crate::event::MessageKind;
use crate::ids::CallId;
use crate::jsonrpc;
use crate::log_level::LogLevel;
use crate::session::Role;
use crate::task::Era;
use crate::time::Millis;

/// `params` of `notifications/message`.
#[derive(Serialize)]
struct LogParams<'a> {
    level: LogLevel,
    #[serde(skip_serializing_if = "Option::is_none")]
    logger: Option<&'a str>,
    data: &'a Value,
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    meta: Option<Value>,
}

impl Host {
    /// Sends a log message about a call (`notifications/message`, `logger` naming its
    /// source) on the session of its request, when the requestor wants it; a message it
    /// does not want is dropped, which is no error. In 2025-11-25 the requestor wants every
    /// level until its session's `logging/setLevel` names the least severe one it wants,
    /// and a task's messages carry related-task `_meta`. In 2026-07-28 only a plain call
    /// whose request named a level (`_meta["io.modelcontextprotocol/logLevel"]`) gets them,
    /// and a task never does.
    ///
    /// Needs [`Config::logging`](crate::Config::logging) ([`UsageError::LoggingOff`]) and a
    /// call a client made ([`UsageError::WrongRole`] on a client session).
    pub fn log(
        &mut self,
        now: Millis,
        call: CallId,
        level: LogLevel,
        logger: Option<&str>,
        data: Value,
    ) -> Result<(), UsageError> {
        if !self.config.logging {
            return Err(UsageError::LoggingOff);
        }
        self.advance(now);
        let state = self.call(call).ok_or(UsageError::UnknownCall(call))?;
        let (era, task, call_level) = (state.era, state.task.clone(), state.log_level);
        let session = state.session;
        if task.is_some() {
            self.running_task(call)?;
        }
        let Some((session, s)) = session.and_then(|id| Some((id, self.session(id)?))) else {
            return Ok(());
        };
        if s.role != Role::Server {
            return Err(UsageError::WrongRole {
                needs: Role::Server,
            });
        }
        let wanted = match era {
            Era::V2026_07_28 => task.is_none() && call_level.is_some_and(|min| level >= min),
            Era::V2025_11_25 => s.log_level.is_none_or(|min| level >= min),
        };
        if !wanted {
            return Ok(());
        }
        let params = LogParams {
            level,
            logger,
            data: &data,
            meta: task.as_ref().map(|t| related_task_meta(t.as_str())),
        };
        let line = jsonrpc::notification_line("notifications/message", Some(params));
        let kind = MessageKind::Notification {
            method: "notifications/message",
            task: task.clone(),
        };
        self.send(session, kind, task.as_ref(), line);
        Ok(())
    }
}
