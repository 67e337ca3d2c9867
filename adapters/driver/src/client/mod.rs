//! The client side: an async handle over a client session whose driver runs in the
//! background, and the server-to-client requests the application answers.

mod app;
mod command;
mod elicitation;
mod sampling;
mod waits;

use std::future::Future;
use std::io;
use std::sync::Arc;

use async_channel::{Receiver, Sender};
use futures::channel::oneshot;
use serde_json::{json, Value};
use taskwire_engine::{
    ClientFeatures, Config, Host, LogMessage, Owner, PlainReason, Request, RpcError, TaskInfo, Tool,
};
use tracing::Instrument;

use crate::driver::{Command, Driver, MessageSession, Reply, Until};
use crate::error::Error;
use crate::handler::Handlers;
use crate::ids::new_task_id;
use crate::observe::trace;
use crate::runtime::{now, ChildProcess, Reader, Runtime, Writer};
use crate::tool_result::CallToolResult;
use app::ClientApp;
use command::{Answer, Caller, ClientCommand};
pub use elicitation::{ElicitationAnswer, ElicitationMode, ElicitationRequest};
pub use sampling::{MessageRole, SamplingAnswer, SamplingMessage, SamplingRequest};

/// The owner of the tasks a client hosts for its server (sampling, elicitation tasks).
const SERVER_OWNER: &str = "server";

/// The handshake's outcome, as a client sees it.
#[derive(Clone, Debug)]
pub struct Initialized {
    /// Negotiated protocol version.
    pub protocol_version: String,
    /// The server's name and version.
    pub server: taskwire_engine::Implementation,
    /// The server's capabilities as sent.
    pub capabilities: Value,
}

/// One step of a call made with [`Client::call_tool_as_task`], in the order they happened.
#[derive(Debug)]
#[non_exhaustive]
pub enum TaskUpdate {
    /// The task's status changed (its message may have too).
    Status(TaskInfo),
    /// The task's status message changed, and nothing else.
    Message(TaskInfo),
    /// The server reported progress on the call: on a task too in 2025-11-25 (2026-07-28
    /// has no task progress: its tasks report by status message).
    Progress(Progress),
    /// A log message about the task (2025-11-25: the server marks it with the task; a plain
    /// call's log messages cannot be told from the session's, and 2026-07-28 tasks have
    /// none).
    Log(LogMessage),
    /// The outcome, always the last update: the tool's result (a tool error is a result
    /// with [`CallToolResult::is_error`]), or the error the call or task ended with.
    Result(Result<CallToolResult, Error>),
}

/// Progress a server reported (`notifications/progress`).
#[derive(Clone, Debug, PartialEq)]
pub struct Progress {
    /// Progress so far; grows with each report.
    pub progress: f64,
    /// The total, when the server knows it.
    pub total: Option<f64>,
    /// What is being done, for people.
    pub message: Option<String>,
}

/// A call made with [`Client::call_tool_as_task`], in progress.
#[derive(Debug)]
pub struct TaskCall {
    /// The task as created; `None` when the call runs without a task.
    pub task: Option<TaskInfo>,
    /// Why the call runs without a task, when the client decided so (the server did not
    /// offer tasks, the tool forbids them, or refused one); `None` for a task, or when the
    /// server chose to answer plainly.
    pub plain: Option<PlainReason>,
    /// What happens to the call, then its outcome.
    pub updates: Receiver<TaskUpdate>,
    /// Dropped with the call: a call running without a task is given up then.
    gone: Option<oneshot::Sender<()>>,
}

impl TaskCall {
    /// A call in progress (`gone`: set by the client that made it).
    pub(crate) fn new(
        task: Option<TaskInfo>,
        plain: Option<PlainReason>,
        updates: Receiver<TaskUpdate>,
    ) -> Self {
        TaskCall {
            task,
            plain,
            updates,
            gone: None,
        }
    }

    /// Waits for the outcome, skipping the other updates.
    pub async fn result(mut self) -> Result<CallToolResult, Error> {
        let mut outcome = Err(Error::Closed);
        while let Ok(update) = self.updates.recv().await {
            if let TaskUpdate::Result(result) = update {
                outcome = result;
                break;
            }
        }
        if let Some(gone) = self.gone.take() {
            let _ = gone.send(());
        }
        outcome
    }
}

/// Builds a client: configuration and the server-to-client requests it answers.
pub struct ClientBuilder {
    config: Config,
    handlers: Handlers,
    notified: Option<Notified>,
}

/// What hears the server's notifications the client does not act on itself.
pub(crate) type Notified = Arc<dyn Fn(&str, Option<Value>) + Send + Sync>;

impl ClientBuilder {
    /// A client with this configuration.
    pub fn new(config: Config) -> Self {
        ClientBuilder {
            config,
            handlers: Handlers::default(),
            notified: None,
        }
    }

    /// Answers `elicitation/create` (declares the capability, and task hosting for it): in
    /// 2025-11-25 the server's request; in 2026-07-28 each such entry of its `inputRequests`
    /// (an MRTR round or a task's), whose answer the engine sends back. The handler gets the
    /// question as an [`ElicitationRequest`] (a request it cannot be read as is answered
    /// -32602 without calling it) and answers [`ElicitationAnswer`]
    /// ([`ElicitationRequest::accept`] builds one from a struct); an `Err` goes to the
    /// server as the JSON-RPC error. An accepted answer that does not fit the requested form
    /// ([`ElicitationRequest::check`]) is not sent: the server gets -32603 saying why.
    /// Without this handler, a tool of ours that asks fails with -32021 naming
    /// `elicitation` ([`Error::required_capabilities`]), whose text says to add it.
    ///
    /// ```
    /// use taskwire_driver::{ClientBuilder, Config, ElicitationAnswer, ElicitationMode};
    ///
    /// #[derive(serde::Serialize)]
    /// struct Confirm {
    ///     confirm: bool,
    /// }
    ///
    /// let builder = ClientBuilder::new(Config::new("my-client", "1.0")).on_elicitation(
    ///     |request| async move {
    ///         match request.mode {
    ///             ElicitationMode::Form { .. } if request.message.starts_with("Ship") => {
    ///                 request.accept(&Confirm { confirm: true })
    ///             }
    ///             _ => Ok(ElicitationAnswer::Decline),
    ///         }
    ///     },
    /// );
    /// ```
    pub fn on_elicitation<F, Fut>(self, handler: F) -> Self
    where
        F: Fn(ElicitationRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ElicitationAnswer, RpcError>> + Send + 'static,
    {
        let handler = Arc::new(handler);
        self.on_request("elicitation/create", move |params| {
            let handler = handler.clone();
            async move {
                let request = ElicitationRequest::from_params(params)?;
                let answer = handler(request.clone()).await?;
                if let Err(unfit) = request.check(&answer) {
                    tracing::warn!(error = %unfit.message, "elicitation answer not sent");
                    return Err(unfit);
                }
                Ok(answer.into_result())
            }
        })
    }

    /// Answers `sampling/createMessage` (declares the capability, and task hosting for it),
    /// in both eras like [`ClientBuilder::on_elicitation`]: the handler gets a
    /// [`SamplingRequest`] and answers a [`SamplingAnswer`].
    ///
    /// ```
    /// use taskwire_driver::{ClientBuilder, Config, SamplingAnswer};
    ///
    /// let builder = ClientBuilder::new(Config::new("my-client", "1.0")).on_sampling(
    ///     |request| async move {
    ///         let last = request.messages.last().map(|m| m.text()).unwrap_or_default();
    ///         Ok(SamplingAnswer::text("echo-model", format!("You said: {last}")))
    ///     },
    /// );
    /// ```
    pub fn on_sampling<F, Fut>(self, handler: F) -> Self
    where
        F: Fn(SamplingRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<SamplingAnswer, RpcError>> + Send + 'static,
    {
        let handler = Arc::new(handler);
        self.on_request("sampling/createMessage", move |params| {
            let handler = handler.clone();
            async move {
                let request = SamplingRequest::from_params(params)?;
                handler(request).await?.into_result()
            }
        })
    }

    /// Answers `roots/list`: the handler returns the result (`{"roots": [...]}`).
    pub fn on_roots<F, Fut>(self, handler: F) -> Self
    where
        F: Fn(Value) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Value, RpcError>> + Send + 'static,
    {
        self.on_request("roots/list", handler)
    }

    /// Answers the server's requests of `method` with JSON as sent: params in (`null` when
    /// none; a request about a task names it in the related-task `_meta` entry in both eras,
    /// added for a 2026-07-28 task's input request), the result object out (anything else is -32603 for the server). For what the
    /// typed handlers do not cover; for `elicitation/create`, `sampling/createMessage` or
    /// `roots/list` it takes their place (and declares the capability the same way).
    pub fn on_request<F, Fut>(mut self, method: &str, handler: F) -> Self
    where
        F: Fn(Value) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Value, RpcError>> + Send + 'static,
    {
        self.handlers.insert(method, handler);
        self
    }

    /// Hears each notification of the server that the client does not act on itself (task
    /// status, progress and log messages of calls are [`TaskCall`] updates): its method and
    /// params as sent, e.g. `notifications/resources/updated`, a list change, or a log
    /// message about no task (`notifications/message`; see
    /// [`Notice::from_notification`](taskwire_engine::Notice::from_notification)). A
    /// 2026-07-28 server sends its list changes only on a `subscriptions/listen` stream:
    /// with this handler the client opens one at [`Client::initialize`] for those it
    /// declares ([`Host::listen_for_notices`](taskwire_engine::Host::listen_for_notices)).
    /// It runs on the client's driver: keep it short, and do not block.
    pub fn on_notification(
        mut self,
        handler: impl Fn(&str, Option<Value>) + Send + Sync + 'static,
    ) -> Self {
        self.notified = Some(Arc::new(handler));
        self
    }

    /// Starts the client's driver on `runtime` over a connection to a server, and returns
    /// the handle. Call [`Client::initialize`] first.
    pub fn connect(self, runtime: Arc<dyn Runtime>, reader: Reader, writer: Writer) -> Client {
        let (mut driver, client) = self.driver(runtime.clone());
        driver.attach(Owner::from(SERVER_OWNER), reader, writer, None);
        runtime.spawn(Box::pin(driver));
        client
    }

    /// Starts the client's driver on `runtime` over a transport that frames each message
    /// itself (Streamable HTTP: `taskwire_http::HttpClient`): the transport delivers what the
    /// returned [`MessageSession`] yields (each naming what it is) and hands back, with
    /// [`MessageSession::send`], every message the server sends. Up to `capacity` messages
    /// wait for the transport. Call [`Client::initialize`] first.
    pub fn connect_messages(
        self,
        runtime: Arc<dyn Runtime>,
        capacity: usize,
    ) -> (Client, MessageSession) {
        let (mut driver, client) = self.driver(runtime.clone());
        let link = driver
            .attach_messages(Owner::from(SERVER_OWNER), capacity)
            .expect("a new driver opens sessions");
        runtime.spawn(Box::pin(driver));
        (client, link)
    }

    fn driver(self, runtime: Arc<dyn Runtime>) -> (Driver<ClientApp>, Client) {
        let mut config = self.config;
        // The client declares what it answers, and hosts tasks only for those.
        config.client = ClientFeatures {
            sampling: self.handlers.contains("sampling/createMessage"),
            elicitation: self.handlers.contains("elicitation/create"),
            roots: self.handlers.contains("roots/list"),
        };
        let host = Host::new(config, Box::new(new_task_id), now());
        let app = ClientApp::new(self.handlers, self.notified);
        let (commands, queue) = async_channel::unbounded();
        let driver = Driver::new(
            host,
            runtime,
            app,
            Until::LinksEnd,
            (commands.clone(), queue),
        );
        let client = Client {
            inner: Arc::new(Inner {
                commands,
                resources: Default::default(),
            }),
        };
        (driver, client)
    }
}

/// Starts `command` as a stdio MCP server (its stderr goes to ours) and connects a client.
/// If the child exits or closes its stdout, every pending call fails at once.
pub fn spawn_server(
    runtime: Arc<dyn Runtime>,
    command: std::process::Command,
    client: ClientBuilder,
) -> io::Result<(Client, Box<dyn ChildProcess>)> {
    let child = runtime.spawn_child(command)?;
    let client = client.connect(runtime, child.stdout, child.stdin);
    Ok((client, child.process))
}

/// An MCP client connection. Cheap to clone; every method fails with [`Error::Closed`] once
/// the server is gone, and never hangs on a dead peer. When the
/// last clone is dropped, the connection closes.
#[derive(Clone, Debug)]
pub struct Client {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    commands: Sender<Command<ClientCommand>>,
    /// The resources [`Client::subscribe_resources`] asked updates of; held while it asks.
    resources: futures::lock::Mutex<Vec<String>>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        let _ = self.commands.try_send(Command::Shutdown);
    }
}

impl Client {
    /// Opens the connection in the era [`Config::client_era`] chooses (by default the
    /// server's: `server/discover` for 2026-07-28, falling back to `initialize` and
    /// `notifications/initialized` for 2025-11-25); [`Initialized::protocol_version`] says
    /// which. Call it first.
    pub async fn initialize(&self) -> Result<Initialized, Error> {
        self.ask(ClientCommand::Initialize).await
    }

    /// Every tool, following `nextCursor` pages until the server gives none. Each tool's
    /// task support is `tool.execution.task_support` ([`TaskSupport`](crate::TaskSupport);
    /// `Forbidden` when the listing has none or cannot be read, as a 2026-07-28 listing,
    /// where the server decides per call); the engine remembers it and
    /// [`Client::call_tool_as_task`] honours it.
    pub async fn list_tools(&self) -> Result<Vec<Tool>, Error> {
        let mut tools = Vec::new();
        let mut cursor = None;
        loop {
            let page = self
                .send(Request::ListTools { cursor }, Answer::Tools, None)
                .await?;
            tools.extend(page.tools);
            match page.next_cursor {
                Some(next) => cursor = Some(next),
                None => return Ok(tools),
            }
        }
    }

    /// A plain `tools/call`; returns its result, the same in both eras (see
    /// [`CallToolResult::from_value`]); a tool error is a result with
    /// [`CallToolResult::is_error`]. In 2026-07-28, input the server asks for by MRTR
    /// (`InputRequiredResult`) is answered by this client's handlers and the call sent
    /// again, transparently. Dropping the future before its answer gives the call up: the
    /// server is told (`notifications/cancelled`) and its late answer is ignored. A tool that
    /// runs only as a task is refused (2025-11-25: -32601; 2026-07-28: -32021, whose text
    /// says to call it with [`Client::call_tool_as_task`]).
    pub async fn call_tool(&self, name: &str, arguments: Value) -> Result<CallToolResult, Error> {
        let span = trace::client_span(name);
        let name = name.to_owned();
        let (answered, caller) = oneshot::channel();
        let call = Request::CallTool { name, arguments };
        let result = (self.send(call, Answer::Tool, Some(caller)))
            .instrument(span)
            .await;
        let _ = answered.send(());
        result
    }

    /// A `tools/call` as a task, when the server and the tool allow it (see
    /// [`Host::call_tool_as_task`](taskwire_engine::Host::call_tool_as_task)); otherwise a
    /// plain call, with [`TaskCall::plain`] saying why. The engine polls at the server's
    /// `pollInterval` and fetches the result. In 2026-07-28 the server decides (`ttl_ms` is
    /// not sent): the request declares the tasks extension, the task's status also arrives
    /// on a `subscriptions/listen` stream, its input requests go to this client's handlers
    /// and back by `tasks/update`, and the outcome comes inline with `tasks/get`.
    ///
    /// A call that runs without a task is given up like [`Client::call_tool`]'s when its
    /// [`TaskCall`] is dropped before the outcome (the server is told); a task is not: it
    /// runs on, to be followed again or cancelled with [`Client::cancel_task`].
    pub async fn call_tool_as_task(
        &self,
        name: &str,
        arguments: Value,
        ttl_ms: Option<u64>,
    ) -> Result<TaskCall, Error> {
        let span = trace::client_span(name);
        let name = name.to_owned();
        let (gone, caller) = oneshot::channel();
        let call = Request::CallToolAsTask {
            name,
            arguments,
            ttl_ms,
        };
        let mut call = (self.send(call, Answer::Task, Some(caller)))
            .instrument(span)
            .await?;
        call.gone = Some(gone);
        Ok(call)
    }

    /// `tasks/get`.
    pub async fn get_task(&self, task: &str) -> Result<TaskInfo, Error> {
        let task = task.to_owned();
        self.send(Request::GetTask { task }, Answer::Info, None)
            .await
    }

    /// Follows a tool call's task made earlier (by another client of the same owner, or
    /// before this one reconnected) as [`Client::call_tool_as_task`] follows its own: the
    /// returned [`TaskCall`] holds the task as it stands, then its status changes, its
    /// input requests (to this client's handlers) and its outcome, in both eras
    /// (2025-11-25: `tasks/get` polls and `tasks/result`; 2026-07-28: `tasks/get` until
    /// the outcome comes inline). Its progress is not seen (the creator's token). The
    /// server's error when it does not know the task (-32602: gone, expired, or another
    /// owner's), [`Error::Usage`] when this client follows it already.
    ///
    /// ```no_run
    /// # async fn wait(client: taskwire_driver::Client) -> Result<(), taskwire_driver::Error> {
    /// let call = client.follow_task("0192f0c1-5c4e-7c1a-9d2b-3a4b5c6d7e8f").await?;
    /// let result = call.result().await?;
    /// println!("{}", result.all_text());
    /// # Ok(()) }
    /// ```
    pub async fn follow_task(&self, task: &str) -> Result<TaskCall, Error> {
        let task = task.to_owned();
        self.send(Request::FollowTask { task }, Answer::Task, None)
            .await
    }

    /// `tasks/result` of a tool call's task: waits until the task is terminal. 2025-11-25
    /// only (2026-07-28 has none: [`Client::get_task`] and [`TaskCall`] carry the outcome).
    pub async fn task_result(&self, task: &str) -> Result<CallToolResult, Error> {
        let task = task.to_owned();
        self.send(Request::TaskResult { task }, Answer::Tool, None)
            .await
    }

    /// `tasks/cancel`: the task as it stands after the cancel (in 2026-07-28, where the
    /// cancel is an ack, as a `tasks/get` right after it shows it).
    pub async fn cancel_task(&self, task: &str) -> Result<TaskInfo, Error> {
        let task = task.to_owned();
        self.send(Request::CancelTask { task }, Answer::Info, None)
            .await
    }

    /// Every task, following `nextCursor` pages (2025-11-25 only; 2026-07-28 has no
    /// `tasks/list`).
    pub async fn list_tasks(&self) -> Result<Vec<TaskInfo>, Error> {
        let mut tasks = Vec::new();
        let mut cursor = None;
        loop {
            let page = self
                .send(Request::ListTasks { cursor }, Answer::Page, None)
                .await?;
            tasks.extend(page.tasks);
            match page.next_cursor {
                Some(next) => cursor = Some(next),
                None => return Ok(tasks),
            }
        }
    }

    /// Any request; returns the raw result.
    pub async fn request(&self, method: &str, params: Option<Value>) -> Result<Value, Error> {
        let method = method.to_owned();
        self.send(Request::Any { method, params }, Answer::Value, None)
            .await
    }

    /// Asks for `notifications/resources/updated` of `uris`, the whole set wanted now (one
    /// asked for before and not named is dropped); each arrives at the
    /// [`ClientBuilder::on_notification`] handler. A 2026-07-28 server is asked on the
    /// listen stream for its notices, opened again for the new set (it sends updates only
    /// when it declares `resources.subscribe`); a 2025-11-25 server gets
    /// `resources/unsubscribe` for each resource dropped and `resources/subscribe` for each
    /// one new. The first refusal is returned once every request was sent; a refused
    /// resource is not kept (name it again to retry).
    pub async fn subscribe_resources(&self, uris: Vec<String>) -> Result<(), Error> {
        let mut subscribed = self.inner.resources.lock().await;
        let listened = self
            .ask(|reply| ClientCommand::ListenForResources {
                uris: uris.clone(),
                reply,
            })
            .await?;
        if listened {
            *subscribed = uris;
            return Ok(());
        }
        let mut refusal = None;
        for uri in subscribed.iter().filter(|u| !uris.contains(u)) {
            let params = json!({ "uri": uri });
            let unsubscribed = self.request("resources/unsubscribe", Some(params)).await;
            refusal = refusal.or(unsubscribed.err());
        }
        let mut kept = Vec::new();
        for uri in uris {
            if !subscribed.contains(&uri) {
                let params = json!({ "uri": uri });
                if let Err(e) = self.request("resources/subscribe", Some(params)).await {
                    refusal = refusal.or(Some(e));
                    continue;
                }
            }
            kept.push(uri);
        }
        *subscribed = kept;
        refusal.map_or(Ok(()), Err)
    }

    /// Whether the connection has ended (the server exited or closed its side, or
    /// [`Client::close`]): every call fails at once with [`Error::Closed`].
    pub fn is_closed(&self) -> bool {
        self.inner.commands.is_closed()
    }

    /// Closes the connection: pending calls fail, the driver stops.
    pub async fn close(&self) {
        let _ = self.inner.commands.send(Command::Shutdown).await;
    }

    /// Sends `request`; `answer` says what its answer becomes (`caller`: see
    /// [`ClientCommand::Send`]).
    async fn send<T>(
        &self,
        request: Request,
        answer: fn(Reply<T>) -> Answer,
        caller: Option<Caller>,
    ) -> Result<T, Error> {
        let meta = trace::current_context();
        self.ask(|reply| ClientCommand::Send {
            request,
            meta,
            answer: answer(reply),
            caller,
        })
        .await
    }

    async fn ask<T>(&self, command: impl FnOnce(Reply<T>) -> ClientCommand) -> Result<T, Error> {
        let (reply, answer) = oneshot::channel();
        self.inner
            .commands
            .send(Command::App(command(reply)))
            .await
            .map_err(|_| Error::Closed)?;
        answer.await.unwrap_or(Err(Error::Closed))
    }
}
