//! Tools as typed async functions, erased to one handler type the driver calls.

use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::value::RawValue;
use taskwire_engine::{RpcError, SessionId, TaskDecision, Tool, ToolDef};

use super::context::ToolContext;
use super::subscriptions::Subscriptions;
use crate::handler::Handlers;
use crate::runtime::BoxFuture;
use crate::tool_result::CallToolResult;

/// What a tool's work resolves to.
pub type ToolOutcome = Result<CallToolResult, RpcError>;

/// A tool's work, its arguments decoded, waiting for its context.
pub(crate) type Start = Box<dyn FnOnce(ToolContext) -> BoxFuture<ToolOutcome> + Send>;

/// A tool implementation: decodes the arguments (`Err`, -32602, when they do not fit the
/// tool's type) into the work to start.
pub(crate) type Handler = Arc<dyn Fn(Option<&RawValue>) -> Result<Start, RpcError> + Send + Sync>;

/// Arguments of a tool that takes none (any object, or none at all, is accepted).
#[derive(Clone, Copy, Debug, Default, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct NoArgs {}

/// How many times a task's work may run in all, by default ([`crate::Server::max_attempts`]).
const DEFAULT_MAX_ATTEMPTS: u32 = 3;

/// The tools a server runs, by name, plus an optional handler for unknown names, and the
/// handlers of its other methods.
#[derive(Default)]
pub(crate) struct ToolSet {
    handlers: HashMap<String, Handler>,
    fallback: Option<Handler>,
    /// Tools that start their task themselves, after asking for input.
    asking_first: HashSet<String>,
    /// What resumes a tool's tasks that were running when the server stopped, by tool.
    resumers: HashMap<String, Handler>,
    /// How many times a task's work may run in all (its resumes fail past it).
    pub max_attempts: u32,
    /// Tasks' work is handed off to workers through the store ([`ServerRole::Front`]).
    ///
    /// [`ServerRole::Front`]: crate::ServerRole::Front
    pub hand_off: bool,
    /// Requests the application answers besides `tools/call` (`resources/read`, …).
    pub requests: Handlers,
    /// The sessions open, for notices.
    pub sessions: HashSet<SessionId>,
    /// The resources the sessions want updates of, as the engine reports them.
    pub subscriptions: Subscriptions,
}

impl ToolSet {
    pub fn new() -> Self {
        ToolSet {
            max_attempts: DEFAULT_MAX_ATTEMPTS,
            ..ToolSet::default()
        }
    }

    pub fn handler(&self, name: &str) -> Option<&Handler> {
        self.handlers.get(name).or(self.fallback.as_ref())
    }

    pub fn asks_first(&self, name: &str) -> bool {
        self.asking_first.contains(name)
    }

    pub fn ask_first(&mut self, name: String) {
        self.asking_first.insert(name);
    }

    pub fn insert(&mut self, name: String, handler: Handler) {
        self.handlers.insert(name, handler);
    }

    pub fn remove(&mut self, name: &str) {
        self.handlers.remove(name);
        self.asking_first.remove(name);
    }

    pub fn resumer(&self, tool: &str) -> Option<&Handler> {
        self.resumers.get(tool)
    }

    pub fn insert_resumer(&mut self, tool: String, handler: Handler) {
        self.resumers.insert(tool, handler);
    }

    pub fn set_fallback(&mut self, handler: Handler) {
        self.fallback = Some(handler);
    }
}

/// The engine's definition of a tool of the driver's. The driver decodes the arguments
/// first, then starts the task: bad arguments are a -32602 answer, never a task that fails
/// at once.
pub(crate) fn app_def(tool: Tool) -> ToolDef {
    ToolDef {
        decision: TaskDecision::App,
        ..ToolDef::from(tool)
    }
}

/// Erases a typed tool function: decodes `A` from the arguments, then calls it.
pub(crate) fn handler<A, F, Fut>(name: &str, f: F) -> Handler
where
    A: DeserializeOwned + Send + 'static,
    F: Fn(ToolContext, A) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = ToolOutcome> + Send + 'static,
{
    let name = name.to_owned();
    let f = Arc::new(f);
    Arc::new(move |arguments| {
        let text = arguments.map_or("{}", RawValue::get);
        // Read plainly first: finding the field at fault costs on every field, so only
        // arguments that fail are read again for it.
        let args: A = serde_json::from_str(text)
            .or_else(|_| crate::error::decode(&mut serde_json::Deserializer::from_str(text)))
            .map_err(|why| {
                RpcError::invalid_params(format!("Invalid arguments for tool {name}: {why}"))
            })?;
        let f = f.clone();
        Ok(Box::new(move |ctx| Box::pin(f(ctx, args)) as BoxFuture<ToolOutcome>) as Start)
    })
}
