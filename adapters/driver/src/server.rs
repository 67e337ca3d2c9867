//! Server side: tools as async functions, and the context they run with.

use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use async_channel::Sender;
use futures::channel::oneshot;
use serde_json::Value;
use taskwire_engine::{
    CallId, Config, Host, Millis, Owner, Role, RpcError, TaskId, ToolDef, UsageError,
};

use crate::command::{closed, Command, Reply, SessionOp};
use crate::driver::{App, Driver, Input};
use crate::runtime::{random_task_id, BoxFuture, Runtime};

/// A tool implementation: arguments in, `CallToolResult` (or a JSON-RPC error) out.
pub type ToolFn =
    Arc<dyn Fn(ToolContext, Value) -> BoxFuture<Result<Value, RpcError>> + Send + Sync>;

/// The tools a server runs, by name, plus an optional handler for unknown names.
#[derive(Default)]
pub(crate) struct ToolSet {
    handlers: HashMap<String, ToolFn>,
    fallback: Option<ToolFn>,
}

impl ToolSet {
    pub fn handler(&self, name: &str) -> Option<ToolFn> {
        self.handlers.get(name).or(self.fallback.as_ref()).cloned()
    }
}

/// What a running tool can do: report status and progress, ask the client for input, sleep.
/// Cancellation (tasks/cancel, expiry, shutdown) drops the tool's future.
pub struct ToolContext {
    name: String,
    task: Option<TaskId>,
    call: CallId,
    commands: Sender<Command>,
    runtime: Arc<dyn Runtime>,
}

impl ToolContext {
    pub(crate) fn new(
        name: String,
        task: Option<TaskId>,
        call: CallId,
        commands: Sender<Command>,
        runtime: Arc<dyn Runtime>,
    ) -> Self {
        ToolContext {
            name,
            task,
            call,
            commands,
            runtime,
        }
    }

    /// The name of the tool that was called.
    pub fn tool_name(&self) -> &str {
        &self.name
    }

    /// The task this call runs as, if it was task-augmented.
    pub fn task_id(&self) -> Option<&str> {
        self.task.as_deref()
    }

    /// Sets the task's status message (no-op for a plain call).
    pub async fn set_status(&self, message: impl Into<String>) {
        if self.task.is_none() {
            return;
        }
        let (call, message) = (self.call, message.into());
        self.run(Box::new(move |h: &mut Host, _, now| {
            h.set_task_message(now, call, Some(message))
        }))
        .await;
    }

    /// Reports progress, if the caller asked for it with a progress token.
    pub async fn progress(&self, progress: f64, total: Option<f64>, message: Option<String>) {
        let call = self.call;
        self.run(Box::new(move |h: &mut Host, _, now| {
            h.notify_progress(now, call, progress, total, message)
        }))
        .await;
    }

    /// Asks the client for input with `elicitation/create` (the task shows `input_required`).
    pub async fn elicit(&self, params: Value) -> Result<Value, RpcError> {
        self.ask_input("elicitation/create", params).await
    }

    /// Asks the client's model with `sampling/createMessage` (the task shows `input_required`).
    pub async fn create_message(&self, params: Value) -> Result<Value, RpcError> {
        self.ask_input("sampling/createMessage", params).await
    }

    /// Sleeps on the runtime's timer.
    pub async fn sleep(&self, duration: Duration) {
        self.runtime.sleep(duration).await;
    }

    async fn ask_input(&self, method: &'static str, params: Value) -> Result<Value, RpcError> {
        let call = self.call;
        let op: SessionOp<taskwire_engine::InputId> =
            Box::new(move |h: &mut Host, _, now| h.request_input(now, call, method, params));
        let (tx, rx) = oneshot::channel();
        if self
            .commands
            .send(Command::AskInput(op, Reply::Value(tx)))
            .await
            .is_err()
        {
            return Err(closed());
        }
        rx.await.unwrap_or_else(|_| Err(closed()))
    }

    async fn run(&self, op: SessionOp<()>) {
        let _ = self.commands.send(Command::Do(op)).await;
    }
}

/// The owner of a stdio connection's tasks: the one peer on the other end of the pipe.
pub const STDIO_OWNER: &str = "stdio";

/// A server: configuration, tools, and a host prepared before it starts serving.
pub struct Server {
    host: Host,
    tools: ToolSet,
}

impl Server {
    /// A server with random 128-bit task ids.
    pub fn new(config: Config) -> Self {
        let host = Host::new(config, Box::new(random_task_id), crate::runtime::now());
        Server {
            host,
            tools: ToolSet::default(),
        }
    }

    /// Adds a tool and its async implementation.
    pub fn tool<F, Fut>(mut self, def: impl Into<ToolDef>, handler: F) -> Self
    where
        F: Fn(ToolContext, Value) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Value, RpcError>> + Send + 'static,
    {
        let def = def.into();
        self.tools
            .handlers
            .insert(def.tool.name.clone(), boxed(handler));
        self.host.add_tool(def);
        self
    }

    /// Handles calls to names no tool has, instead of the engine's -32602;
    /// [`ToolContext::tool_name`] tells which name was called.
    pub fn fallback<F, Fut>(mut self, handler: F) -> Self
    where
        F: Fn(ToolContext, Value) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Value, RpcError>> + Send + 'static,
    {
        self.tools.fallback = Some(boxed(handler));
        self.host.accept_unknown_tools(true);
        self
    }

    /// Prepares the host before serving (e.g. pre-creating a finished task of
    /// [`STDIO_OWNER`]).
    pub fn setup(
        mut self,
        f: impl FnOnce(&mut Host, Millis) -> Result<(), UsageError>,
    ) -> Result<Self, UsageError> {
        f(&mut self.host, crate::runtime::now())?;
        Ok(self)
    }

    /// Serves one connection until the peer's EOF (or the output closing). Every running
    /// tool is dropped on the way out.
    pub async fn run(
        self,
        runtime: Arc<dyn Runtime>,
        input: async_channel::Receiver<Input>,
        output: Sender<String>,
    ) {
        let (commands_tx, commands_rx) = async_channel::unbounded();
        let mut host = self.host;
        let session = host.open(
            crate::runtime::now(),
            Role::Server,
            Owner::from(STDIO_OWNER),
        );
        let driver = Driver::new(
            host,
            session,
            runtime,
            App::Server(Arc::new(self.tools)),
            commands_tx,
        );
        driver.run(input, output, commands_rx).await;
    }
}

fn boxed<F, Fut>(handler: F) -> ToolFn
where
    F: Fn(ToolContext, Value) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Value, RpcError>> + Send + 'static,
{
    Arc::new(move |ctx, args| Box::pin(handler(ctx, args)))
}
