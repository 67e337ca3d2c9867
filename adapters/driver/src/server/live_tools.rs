//! A server's tools, changed while it serves.

use std::future::Future;

use async_channel::Sender;
use serde::de::DeserializeOwned;
use taskwire_engine::Tool;

use super::context::ToolContext;
use super::tool::{self, ToolOutcome};
use super::ServerCommand;
use crate::driver::Command;

/// Adds and removes a server's tools while it serves; from
/// [`Server::live_tools`](super::Server::live_tools). Cheap to clone. Each change holds from
/// the next message the server reads on; tell the clients with
/// [`Notifier::notify`](super::Notifier::notify)`(`[`Notice::ToolsListChanged`]`)` after
/// the changes (it goes after them), which needs
/// [`Config::tools_list_changed`](taskwire_engine::Config::tools_list_changed). A change made
/// after the server stopped is dropped.
///
/// ```
/// use taskwire_driver::engine::{Config, TaskSupport};
/// use taskwire_driver::{CallToolResult, NoArgs, Notice, Server, Tool, ToolContext, ToolOutcome};
///
/// async fn hello(_: ToolContext, _: NoArgs) -> ToolOutcome {
///     Ok(CallToolResult::text("hello"))
/// }
///
/// let mut config = Config::new("changing", "0.1.0");
/// config.tools_list_changed = true;
/// let server = Server::new(config).tool(Tool::new("hello", TaskSupport::Forbidden), hello);
/// let (tools, notifier) = (server.live_tools(), server.notifier());
/// // Later, while it serves (e.g. from a task spawned before serving):
/// tools.remove("hello");
/// tools.add(Tool::new("hello_again", TaskSupport::Optional), hello);
/// notifier.notify(Notice::ToolsListChanged);
/// ```
///
/// [`Notice::ToolsListChanged`]: taskwire_engine::Notice::ToolsListChanged
#[derive(Clone, Debug)]
pub struct LiveTools(pub(super) Sender<Command<ServerCommand>>);

impl LiveTools {
    /// Adds a tool, or replaces the one of that name, as
    /// [`Server::tool`](super::Server::tool) does.
    pub fn add<A, F, Fut>(&self, tool: Tool, handler: F)
    where
        A: DeserializeOwned + Send + 'static,
        F: Fn(ToolContext, A) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ToolOutcome> + Send + 'static,
    {
        let handler = tool::handler(&tool.name, handler);
        self.send(ServerCommand::AddTool(tool, handler));
    }

    /// Removes the tool `name`: its calls that are running go on; a new call gets -32602.
    pub fn remove(&self, name: &str) {
        self.send(ServerCommand::RemoveTool(name.to_owned()));
    }

    fn send(&self, command: ServerCommand) {
        let _ = self.0.try_send(Command::App(command));
    }
}
