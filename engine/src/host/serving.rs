//! What a server offers: its tools and the methods and capabilities of the application's,
//! and its notices about them.

use super::Host;
use crate::error::UsageError;
use crate::ids::SessionId;
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

    /// The tool `name` as `tools/list` lists it now.
    pub fn tool(&self, name: &str) -> Option<&crate::model::Tool> {
        self.state.tools.get(name)
    }

    /// Every tool, as `tools/list` lists them now, in order.
    pub fn tools(&self) -> impl Iterator<Item = &crate::model::Tool> {
        self.state.tools.iter()
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

    /// Sends `notice` (a list changed, a subscribed resource updated, a log message about
    /// no call) to the client of the server session `session`. In 2025-11-25, once the
    /// handshake is done ([`UsageError::NotInitialized`] while it runs), a log message only
    /// when the session's `logging/setLevel` did not name a more severe level, a resource's
    /// update only when the session subscribed to it (`resources/subscribe`, which the
    /// engine answers when the application's `resources` declares `subscribe`). In
    /// 2026-07-28 (a session without the handshake), on each of its `subscriptions/listen`
    /// streams that asked for this notice and was granted it (the ack names what the server
    /// sends: tools' list changes with [`Config::tools_list_changed`], prompts' and
    /// resources' with the application's capability declaring `listChanged`, resource
    /// updates with `resources.subscribe`); none there, nothing is sent, which is no error;
    /// log messages never go on a stream. A log message needs
    /// [`Config::logging`](crate::Config::logging) ([`UsageError::LoggingOff`]),
    /// [`Notice::ToolsListChanged`] needs [`Config::tools_list_changed`]
    /// ([`UsageError::ToolsListChangedOff`]).
    ///
    /// [`Config::tools_list_changed`]: crate::Config::tools_list_changed
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
        let s = (self.state.session(session)).ok_or(UsageError::UnknownSession(session))?;
        if s.role != Role::Server {
            return Err(UsageError::WrongRole {
                needs: Role::Server,
            });
        }
        crate::era::send_notice(&mut self.state, session, notice)
    }
}
