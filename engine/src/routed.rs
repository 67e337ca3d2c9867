//! What a request says about itself, as the engine reads it, shown to a check the caller
//! hands in with the message ([`Host::handle_checked`](crate::Host::handle_checked)): a
//! transport that routed the request on its headers checks them against the request in the
//! engine's one read of it, before the request is served.

use serde_json::value::RawValue;

use crate::jsonrpc::RpcError;
use crate::model::Tool;

/// The methods whose request names a task in `params.taskId`.
pub(crate) const TASK_METHODS: [&str; 4] =
    ["tasks/get", "tasks/update", "tasks/cancel", "tasks/result"];

/// A request as read, before it is served.
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub struct Routed<'a> {
    /// Its method.
    pub method: &'a str,
    /// The protocol version it names in
    /// `params._meta["io.modelcontextprotocol/protocolVersion"]` (2026-07-28); `None` for a
    /// request that names none, whose other fields are not read (`None` below).
    pub protocol_version: Option<&'a str>,
    /// What it names, which the 2026-07-28 `Mcp-Name` header repeats: `params.name`
    /// (`tools/call`, `prompts/get`), `params.uri` (`resources/read`), `params.taskId`
    /// (`tasks/*`); `None` when absent or not a string.
    pub name: Option<&'a str>,
    /// The tool a `tools/call` names, as listed now (`None` for no such tool).
    pub tool: Option<&'a Tool>,
    /// A `tools/call`'s `arguments`, as sent.
    pub arguments: Option<&'a RawValue>,
}

impl<'a> Routed<'a> {
    /// A request of which only the method is read.
    pub(crate) fn method(method: &'a str) -> Self {
        Routed {
            method,
            protocol_version: None,
            name: None,
            tool: None,
            arguments: None,
        }
    }

    /// Whether a 2026-07-28 request of this method must name something in `Mcp-Name`
    /// (`tools/call`, `prompts/get`, `resources/read`, `tasks/get`, `tasks/update`,
    /// `tasks/cancel`).
    pub fn names_something(&self) -> bool {
        matches!(
            self.method,
            "tools/call"
                | "prompts/get"
                | "resources/read"
                | "tasks/get"
                | "tasks/update"
                | "tasks/cancel"
        )
    }

    /// Whether the method is one whose request names a task (`tasks/*`).
    pub fn names_a_task(&self) -> bool {
        TASK_METHODS.contains(&self.method)
    }
}

/// A caller's check of each request of one message, after the engine reads it and before it
/// is served: `Err` is the error the request is answered with instead (for example `-32020`,
/// a routing header that does not say what the body says).
pub type Check = Box<dyn FnMut(&Routed<'_>) -> Result<(), RpcError> + Send>;
