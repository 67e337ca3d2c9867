//! What a server offers: its tools and the methods and capabilities of the application's,
//! and its notices about them.

use super::Host;
use crate::era::v2025_11_25::logging;
use crate::error::UsageError;
use crate::event::MessageKind;
use crate::ids::SessionId;
use crate::jsonrpc;
use crate::model::{Notice, Role, ToolDef};
use crate::time::Millis;

impl Host {
    /// Adds (or replaces) a tool.
    pub fn add_tool(&mut self, def: impl Into<ToolDef>) {
        self.state.tools.add(def.into());
    }

    /// Removes a tool (calls to it that are running go on); whether it was there. Tell the
    /// clients with [`Notice::ToolsListChanged`].
    pub fn remove_tool(&mut self, name: &str) -> bool {
        self.state.tools.remove(name)
    }

    /// When set, calls to unregistered tool names reach the application (as if their
    /// task support were "optional") instead of getting -32602.
    pub fn accept_unknown_tools(&mut self, accept: bool) {
        self.state.tools.accept_unknown = accept;
    }

    /// Hands requests for `method` (an exact name, or a prefix ending in `*`) to the
    /// application as [`Event::Request`](crate::Event::Request), like
    /// [`Config::app_methods`](crate::Config); the methods the engine owns (the handshake,
    /// `ping`, `tools/*`, `tasks/*`) stay its own.
    pub fn serve_app_method(&mut self, method: impl Into<String>) {
        let method = method.into();
        let methods = &mut self.state.config.app_methods;
        if !methods.contains(&method) {
            methods.push(method);
        }
    }

    /// Declares a capability the application serves (e.g. `"resources"` with
    /// `{"subscribe": true}`) in the handshake and in `server/discover`, like
    /// [`Config::app_capabilities`](crate::Config); the engine's own keys win.
    pub fn declare_capability(&mut self, key: impl Into<String>, value: serde_json::Value) {
        self.state.config.app_capabilities.insert(key.into(), value);
    }

    /// Sends `notice` to the client of the server session `session` (a list changed, a
    /// subscribed resource updated, a log message about no call), once it has completed the
    /// 2025-11-25 handshake ([`UsageError::NotInitialized`] before; a 2026-07-28 session
    /// never does: that era sends such notifications only on a `subscriptions/listen`
    /// stream that asked for them, which this engine opens for tasks only, and log messages
    /// only on a request that named a level). A log message needs
    /// [`Config::logging`](crate::Config::logging) ([`UsageError::LoggingOff`]) and is
    /// dropped, which is no error, when the session's `logging/setLevel` named a more
    /// severe level. [`Notice::ToolsListChanged`] needs
    /// [`Config::tools_list_changed`](crate::Config::tools_list_changed)
    /// ([`UsageError::ToolsListChangedOff`]).
    pub fn notify(
        &mut self,
        now: Millis,
        session: SessionId,
        notice: &Notice,
    ) -> Result<(), UsageError> {
        let config = &self.state.config;
        match notice {
            Notice::Log(_) if !config.logging => return Err(UsageError::LoggingOff),
            Notice::ToolsListChanged if !config.tools_list_changed => {
                return Err(UsageError::ToolsListChangedOff)
            }
            _ => {}
        }
        self.enter(now)?;
        if self.state.ready(session)?.role != Role::Server {
            return Err(UsageError::WrongRole {
                needs: Role::Server,
            });
        }
        if let Notice::Log(message) = notice {
            if !logging::wants(&self.state, session, message.level) {
                return Ok(());
            }
        }
        let line = jsonrpc::notification_line(notice.method(), notice.params());
        let kind = MessageKind::Notification {
            method: notice.method(),
            task: None,
            stream: None,
        };
        self.state.send(session, kind, None, line);
        Ok(())
    }
}
