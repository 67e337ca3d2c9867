//! Client side: an async handle over a session whose driver runs in the background.

use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;

use async_channel::{Receiver, Sender};
use futures::channel::oneshot;
use serde::de::DeserializeOwned;
use serde_json::{json, Value};
use taskwire_engine::{
    ClientFeatures, Config, Host, Millis, RequestId, Role, RpcError, SessionId, TaskInfo, Tool,
    UsageError,
};

use crate::command::{closed, task_from, Command, Initialized, Reply, SessionOp};
use crate::driver::{App, Driver, Input};
use crate::runtime::{random_task_id, BoxFuture, Runtime};

/// A handler for a server-to-client request (`elicitation/create`, `sampling/createMessage`,
/// `roots/list`): params in, result out.
pub type Handler = Arc<dyn Fn(Value) -> BoxFuture<Result<Value, RpcError>> + Send + Sync>;

/// One step of a task-augmented call.
#[derive(Debug)]
pub enum TaskUpdate {
    /// The task's status or message changed.
    Status(TaskInfo),
    /// The outcome (always the last update).
    Result(Result<Value, RpcError>),
}

/// A task-augmented call in progress.
#[derive(Debug)]
pub struct TaskCall {
    /// The task as created; `None` when the server answered the call plainly.
    pub task: Option<TaskInfo>,
    /// Status changes, then the result.
    pub updates: Receiver<TaskUpdate>,
}

impl TaskCall {
    /// Waits for the outcome, skipping status updates.
    pub async fn result(self) -> Result<Value, RpcError> {
        while let Ok(update) = self.updates.recv().await {
            if let TaskUpdate::Result(outcome) = update {
                return outcome;
            }
        }
        Err(closed())
    }
}

/// Builds a client: configuration and the server-to-client requests it answers.
pub struct ClientBuilder {
    config: Config,
    handlers: HashMap<String, Handler>,
}

impl ClientBuilder {
    /// A client with this configuration.
    pub fn new(config: Config) -> Self {
        ClientBuilder {
            config,
            handlers: HashMap::new(),
        }
    }

    /// Answers `elicitation/create` (declares the capability, and task hosting for it).
    pub fn on_elicitation<F, Fut>(self, handler: F) -> Self
    where
        F: Fn(Value) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Value, RpcError>> + Send + 'static,
    {
        self.handle("elicitation/create", handler)
    }

    /// Answers `sampling/createMessage` (declares the capability, and task hosting for it).
    pub fn on_sampling<F, Fut>(self, handler: F) -> Self
    where
        F: Fn(Value) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Value, RpcError>> + Send + 'static,
    {
        self.handle("sampling/createMessage", handler)
    }

    /// Answers `roots/list`.
    pub fn on_roots<F, Fut>(self, handler: F) -> Self
    where
        F: Fn(Value) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Value, RpcError>> + Send + 'static,
    {
        self.handle("roots/list", handler)
    }

    fn handle<F, Fut>(mut self, method: &str, handler: F) -> Self
    where
        F: Fn(Value) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Value, RpcError>> + Send + 'static,
    {
        self.handlers.insert(
            method.to_owned(),
            Arc::new(move |params| Box::pin(handler(params))),
        );
        self
    }

    /// Starts the driver on `runtime` over the given transport channels and returns the handle.
    /// Call [`Client::initialize`] first.
    pub fn start(
        self,
        runtime: Arc<dyn Runtime>,
        input: Receiver<Input>,
        output: Sender<String>,
    ) -> Client {
        let mut config = self.config;
        config.client = ClientFeatures {
            sampling: self.handlers.contains_key("sampling/createMessage"),
            elicitation: self.handlers.contains_key("elicitation/create"),
            roots: self.handlers.contains_key("roots/list"),
        };
        let mut host = Host::new(config, Box::new(random_task_id), crate::runtime::now());
        let session = host.open(crate::runtime::now(), Role::Client, "server");
        let (commands_tx, commands_rx) = async_channel::unbounded();
        let driver = Driver::new(
            host,
            session,
            runtime.clone(),
            App::Client(self.handlers),
            commands_tx.clone(),
        );
        runtime.spawn(Box::pin(driver.run(input, output, commands_rx)));
        Client {
            commands: commands_tx,
        }
    }
}

/// An MCP client connection. Cheap to clone; every method fails with a "Connection closed"
/// error (code -32000) once the server is gone, and never hangs on a dead peer.
#[derive(Clone, Debug)]
pub struct Client {
    commands: Sender<Command>,
}

impl Client {
    /// The handshake: `initialize`, then `notifications/initialized`.
    pub async fn initialize(&self) -> Result<Initialized, RpcError> {
        let (tx, rx) = oneshot::channel();
        self.send(Command::Ask(
            Box::new(|h: &mut Host, s, now| h.initialize(now, s)),
            Reply::Initialized(tx),
        ))
        .await?;
        rx.await.unwrap_or_else(|_| Err(closed()))
    }

    /// Every tool, following `nextCursor` pages.
    pub async fn list_tools(&self) -> Result<Vec<Tool>, RpcError> {
        self.all_pages("tools/list", "tools").await
    }

    /// A plain `tools/call`; returns the `CallToolResult`.
    pub async fn call_tool(&self, name: &str, arguments: Value) -> Result<Value, RpcError> {
        let name = name.to_owned();
        self.ask(move |h, s, now| h.call_tool(now, s, &name, arguments))
            .await
    }

    /// A task-augmented `tools/call` (whatever the tool advertises); the engine polls for you.
    pub async fn call_tool_as_task(
        &self,
        name: &str,
        arguments: Value,
        ttl_ms: Option<u64>,
    ) -> Result<TaskCall, RpcError> {
        let name = name.to_owned();
        let (tx, rx) = oneshot::channel();
        let op: SessionOp<RequestId> =
            Box::new(move |h, s, now| h.call_tool_as_task(now, s, &name, arguments, ttl_ms));
        self.send(Command::Ask(op, Reply::Task(tx))).await?;
        rx.await.unwrap_or_else(|_| Err(closed()))
    }

    /// `tasks/get`.
    pub async fn get_task(&self, task: &str) -> Result<TaskInfo, RpcError> {
        let task = task.to_owned();
        task_from(self.ask(move |h, s, now| h.get_task(now, s, &task)).await?)
    }

    /// `tasks/result`: waits until the task is terminal.
    pub async fn task_result(&self, task: &str) -> Result<Value, RpcError> {
        let task = task.to_owned();
        self.ask(move |h, s, now| h.task_result(now, s, &task))
            .await
    }

    /// `tasks/cancel`.
    pub async fn cancel_task(&self, task: &str) -> Result<TaskInfo, RpcError> {
        let task = task.to_owned();
        task_from(
            self.ask(move |h, s, now| h.cancel_task(now, s, &task))
                .await?,
        )
    }

    /// Every task, following `nextCursor` pages.
    pub async fn list_tasks(&self) -> Result<Vec<TaskInfo>, RpcError> {
        let tasks: Vec<taskwire_engine::Task> = self.all_pages("tasks/list", "tasks").await?;
        tasks
            .iter()
            .map(|t| t.to_info().ok_or_else(|| malformed_time(&t.task_id)))
            .collect()
    }

    /// Follows `nextCursor` through a paginated method, collecting the `key` arrays.
    async fn all_pages<T: DeserializeOwned>(
        &self,
        method: &str,
        key: &str,
    ) -> Result<Vec<T>, RpcError> {
        let mut items = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let params = cursor
                .take()
                .map_or_else(|| json!({}), |c| json!({ "cursor": c }));
            let mut page = self.request(method, Some(params)).await?;
            let page_items = page
                .get_mut(key)
                .map(Value::take)
                .unwrap_or_else(|| json!([]));
            items.extend(serde_json::from_value::<Vec<T>>(page_items).map_err(malformed)?);
            match page.get("nextCursor").and_then(Value::as_str) {
                Some(next) => cursor = Some(next.to_owned()),
                None => return Ok(items),
            }
        }
    }

    /// Any request; returns the raw result.
    pub async fn request(&self, method: &str, params: Option<Value>) -> Result<Value, RpcError> {
        let method = method.to_owned();
        self.ask(move |h, s, now| h.request(now, s, &method, params))
            .await
    }

    /// Closes the session: pending calls fail, the driver stops.
    pub async fn close(&self) {
        let _ = self.commands.send(Command::Close).await;
    }

    async fn ask(
        &self,
        op: impl FnOnce(&mut Host, SessionId, Millis) -> Result<RequestId, UsageError> + Send + 'static,
    ) -> Result<Value, RpcError> {
        let (tx, rx) = oneshot::channel();
        self.send(Command::Ask(Box::new(op), Reply::Value(tx)))
            .await?;
        rx.await.unwrap_or_else(|_| Err(closed()))
    }

    async fn send(&self, command: Command) -> Result<(), RpcError> {
        self.commands.send(command).await.map_err(|_| closed())
    }
}

fn malformed(e: serde_json::Error) -> RpcError {
    RpcError::internal(format!("malformed answer: {e}"))
}

fn malformed_time(task: &str) -> RpcError {
    RpcError::internal(format!("malformed task {task:?}: a time is not RFC 3339"))
}
