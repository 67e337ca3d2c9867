//! The server side: a host with tools as typed async functions, served over one connection
//! or many.

mod app;
mod context;
#[cfg(feature = "schemars")]
mod form;
mod live_tools;
mod notifier;
mod subscriptions;
mod tool;

use std::future::Future;
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use async_channel::Sender;
use futures::channel::oneshot;
use serde::de::DeserializeOwned;
use serde_json::Value;
use taskwire_engine::{
    Check, Config, Host, Millis, Notice, Owner, RpcError, TaskSnapshot, Tool, UsageError,
};

pub use context::ToolContext;
#[cfg(feature = "schemars")]
pub use form::Elicited;
pub use live_tools::LiveTools;
pub use notifier::Notifier;
pub use tool::{NoArgs, ToolOutcome};

use crate::driver::{Command, Commands, Driver, Inbound, MessageLinks, MessageSession, Until};
use crate::error::Error;
use crate::ids::new_task_id;
use crate::observe::metrics::Families;
use crate::observe::TaskFeed;
use crate::runtime::{BoxFuture, Reader, Runtime, Writer};
use crate::store::{RoleError, ServerRole, TaskStore};
use prometheus_client::registry::Registry;
use tool::{Handler, ToolSet};

/// A server's own command (its tools' contexts and its connections' handles send the
/// driver's).
pub(crate) enum ServerCommand {
    /// Send this notice to every session that can take it.
    Notify(Notice),
    /// Add (or replace) this tool.
    AddTool(Tool, Handler),
    /// Remove the tool of this name.
    RemoveTool(String),
}

/// The owner of a stdio connection's tasks: the one peer on the other end of the pipe.
pub const STDIO_OWNER: &str = "stdio";

/// [`Server::concurrency`]'s default.
const DEFAULT_CONCURRENCY: usize = 32;
/// [`Server::keep_finished`]'s default.
const DEFAULT_KEEP_FINISHED: usize = 10_000;

/// A server: configuration, tools, and a host prepared before it starts serving.
pub struct Server {
    host: Host,
    tools: ToolSet,
    store: Option<Arc<dyn TaskStore>>,
    /// What it does among processes sharing its store.
    role: ServerRole,
    /// How many tools run at once with work taken from a shared store.
    concurrency: usize,
    /// How many finished tasks it holds with a shared store.
    keep_finished: usize,
    /// The driver's commands, made before it runs so that [`Notifier`]s can be handed out.
    commands: Commands<ServerCommand>,
    /// Keeps the operator's view ([`Server::observe`]).
    observed: bool,
    /// Its metrics, once registered ([`Server::metrics`]).
    metrics: Option<Families>,
}

impl Server {
    /// A server whose task ids are UUIDv7 ([`new_task_id`](crate::new_task_id): time-ordered,
    /// with 74 bits from the OS random number generator), its tasks in memory until
    /// [`Server::with_store`] gives it one.
    pub fn new(config: Config) -> Self {
        let host = Host::new(config, Box::new(new_task_id), crate::runtime::now());
        Server {
            host,
            tools: ToolSet::new(),
            store: None,
            role: ServerRole::Both,
            concurrency: DEFAULT_CONCURRENCY,
            keep_finished: DEFAULT_KEEP_FINISHED,
            commands: async_channel::unbounded(),
            observed: false,
            metrics: None,
        }
    }

    /// Adds a tool. Its arguments are decoded into `A` before it runs (a mismatch answers
    /// -32602 naming the field, e.g. "url: invalid type: integer 5, expected a string"); it
    /// returns a [`CallToolResult`](crate::CallToolResult) or a JSON-RPC error.
    /// A call the client asks to run as a task becomes one when `tool.execution.taskSupport`
    /// allows it. `tools/list` advertises `tool.input_schema` as it is: [`Tool::new`]'s takes
    /// any object, however strictly `A` reads the arguments; give the tool a schema
    /// ([`Tool::with_input_schema`]), or, with the `schemars` feature, add it with
    /// `Server::tool_with_schema`, which derives one from `A`.
    pub fn tool<A, F, Fut>(mut self, tool: Tool, handler: F) -> Self
    where
        A: DeserializeOwned + Send + 'static,
        F: Fn(ToolContext, A) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ToolOutcome> + Send + 'static,
    {
        let handler = tool::handler(&tool.name, handler);
        self.tools.insert(tool.name.clone(), handler);
        self.host.add_tool(tool::app_def(tool));
        self
    }

    /// [`Server::tool`], with the JSON Schema of `A` as the tool's `inputSchema` when the tool
    /// has none of its own ([`Tool::takes_any_object`]), so that `tools/list` says what the
    /// tool accepts. Feature `schemars`.
    #[cfg(feature = "schemars")]
    pub fn tool_with_schema<A, F, Fut>(self, mut tool: Tool, handler: F) -> Self
    where
        A: DeserializeOwned + schemars::JsonSchema + Send + 'static,
        F: Fn(ToolContext, A) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ToolOutcome> + Send + 'static,
    {
        if tool.takes_any_object() {
            tool.input_schema = crate::schema_for::<A>();
        }
        self.tool(tool, handler)
    }

    /// Adds a tool like [`Server::tool`] whose task, when the client asks for one, does not
    /// start at once: the tool runs first as a plain call, may ask for input
    /// ([`ToolContext::elicit`]; in 2026-07-28 by MRTR, the call running again with the
    /// answers), and becomes the task when it calls [`ToolContext::start_task`]. A call that
    /// never does answers plainly.
    pub fn tool_asking_first<A, F, Fut>(mut self, tool: Tool, handler: F) -> Self
    where
        A: DeserializeOwned + Send + 'static,
        F: Fn(ToolContext, A) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ToolOutcome> + Send + 'static,
    {
        self.tools.ask_first(tool.name.clone());
        self.tool(tool, handler)
    }

    /// Resumes the tasks of tool `name` whose work stopped with the process running it: after
    /// a restart on a store ([`Server::with_store`]), or, on a store shared by replicas, on
    /// the replica that takes over a task whose runner's lease ran out. `handler` runs with
    /// the arguments of the call that created each one, under the task's context, and its
    /// outcome finishes the task as the tool's would. It may be the tool's own function (the
    /// work starts over) or one that picks up where the work left off. Arguments that no
    /// longer decode into `A` fail the task with -32602. Without a hook, such a task fails,
    /// saying that its work was lost.
    ///
    /// The work runs at least once, not exactly once: a run that stopped may have done some
    /// of its effects, or all of them if the process stopped after them but before the
    /// outcome was stored (and a replica cut off from the database keeps running while
    /// another takes its task over). Make the hook safe to repeat, for example by keying its
    /// effects on the task id ([`ToolContext::task_id`]). The client sees the task stay
    /// `working` until the new run ends it. Each run is an attempt ([`ToolContext::attempt`]);
    /// a task whose work already ran [`Server::max_attempts`] times fails instead of resuming.
    pub fn resume<A, F, Fut>(mut self, name: &str, handler: F) -> Self
    where
        A: DeserializeOwned + Send + 'static,
        F: Fn(ToolContext, A) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ToolOutcome> + Send + 'static,
    {
        self.tools
            .insert_resumer(name.to_owned(), tool::handler(name, handler));
        self
    }

    /// How many times a task's work may run in all, its first run included, before a
    /// restart or a failover fails the task instead of resuming it (saying so): a bound on
    /// work that keeps stopping its process. Default: 3. At least 1.
    pub fn max_attempts(mut self, attempts: u32) -> Self {
        self.tools.max_attempts = attempts.max(1);
        self
    }

    /// Answers requests for `method` (an exact name, or a prefix ending in `*`, e.g.
    /// `"resources/*"`) with `handler`: params in (`null` when none), result out. The engine
    /// keeps the methods it owns (the handshake, `ping`, `tools/*`, `tasks/*`; resource
    /// subscriptions when `resources` declares `subscribe`, see
    /// [`Server::on_resource_subscriptions`]); anything else unhandled is -32601. Both eras reach it (a 2026-07-28 answer gets `resultType`).
    pub fn handle<F, Fut>(mut self, method: &str, handler: F) -> Self
    where
        F: Fn(Value) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Value, RpcError>> + Send + 'static,
    {
        self.tools.requests.insert(method, handler);
        self.host.serve_app_method(method);
        self
    }

    /// Declares a capability the server serves through [`Server::handle`] (e.g.
    /// `"resources"` with `{"subscribe": true}`, whose subscriptions the engine then keeps),
    /// in `initialize` and `server/discover`.
    pub fn capability(mut self, key: &str, value: Value) -> Self {
        self.host.declare_capability(key, value);
        self
    }

    /// Handles calls to names no tool has, instead of the engine's -32602;
    /// [`ToolContext::tool_name`] tells which name was called.
    pub fn fallback<A, F, Fut>(mut self, handler: F) -> Self
    where
        A: DeserializeOwned + Send + 'static,
        F: Fn(ToolContext, A) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ToolOutcome> + Send + 'static,
    {
        self.tools.set_fallback(tool::handler("(any)", handler));
        self.host.accept_unknown_tools(true);
        self
    }

    /// Sends notices (a resource updated, a list changed) to this server's clients, before
    /// or while it serves.
    pub fn notifier(&self) -> Notifier {
        Notifier(self.commands.0.clone())
    }

    /// Tells `hook` every resource this server's clients want updates of, over all sessions
    /// and sorted, each time that set changes: those a 2025-11-25 client subscribed to
    /// (`resources/subscribe`, answered by the engine) and a 2026-07-28 client's open listen
    /// streams were granted (`resourceSubscriptions`); a client gone wants nothing more.
    /// Clients subscribe only when the server declares `resources` with
    /// `{"subscribe": true}` ([`Server::capability`]). Send the updates with
    /// [`Notifier::notify`]: each reaches only the clients that want that resource.
    pub fn on_resource_subscriptions(
        mut self,
        hook: impl Fn(Vec<String>) + Send + Sync + 'static,
    ) -> Self {
        self.tools.subscriptions.hook = Some(Box::new(hook));
        self
    }

    /// Adds and removes this server's tools while it serves.
    pub fn live_tools(&self) -> LiveTools {
        LiveTools(self.commands.0.clone())
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

    /// Serves one connection (e.g. this process's stdio) in the calling task until its input
    /// ends, then stops every tool and flushes what is left. The reading, the engine and the
    /// writing all run in this task; tools that wait are spawned on `runtime`.
    pub async fn serve(self, runtime: Arc<dyn Runtime>, reader: Reader, writer: Writer) {
        self.serve_until(runtime, reader, writer, None).await;
    }

    /// [`Server::serve`], ending the connection's input early when `stop` completes.
    async fn serve_until(
        self,
        runtime: Arc<dyn Runtime>,
        reader: Reader,
        writer: Writer,
        stop: Option<BoxFuture<()>>,
    ) {
        let (mut driver, _) = self.driver(runtime, Until::LinksEnd);
        driver.attach(Owner::from(STDIO_OWNER), reader, writer, None);
        if let Some(stop) = stop {
            driver.stop_on(stop);
        }
        driver.await;
    }

    /// Starts serving in the background; connections are added with [`ServerHandle::connect`].
    pub fn start(self, runtime: Arc<dyn Runtime>) -> ServerHandle {
        let (driver, commands) = self.driver(runtime.clone(), Until::Shutdown);
        let links = driver.message_links();
        let (ended, stopped) = async_channel::bounded::<()>(1);
        runtime.spawn(Box::pin(async move {
            driver.await;
            drop(ended);
        }));
        ServerHandle {
            commands,
            links,
            stopping: Arc::default(),
            stopped,
        }
    }

    /// Keeps the tasks in `store` (SQLite, PostgreSQL, …): at start the server loads them
    /// (a task that was running when the process stopped resumes with its tool's
    /// [`Server::resume`] hook, or else becomes `failed`, saying that its work was lost),
    /// and from then on a reply that reveals a change of a task (a `CreateTaskResult`, a
    /// `tasks/cancel` answer, a status notification) is sent only once the store holds the
    /// change. A failed write is logged and retried in the background (100 ms, doubling up
    /// to 5 s); the replies that waited for it fail with -32603 naming the store, and a
    /// task whose `CreateTaskResult` failed so is dropped. A store that cannot load stops
    /// the server. A task made in
    /// [`Server::setup`] whose id is stored gives way to the stored one. Without a store,
    /// tasks live in memory.
    pub fn with_store(mut self, store: impl TaskStore) -> Self {
        self.store = Some(Arc::new(store));
        self
    }

    /// What this server does among processes sharing its store (see [`ServerRole`];
    /// default [`ServerRole::Both`]): a [`ServerRole::Front`] takes requests and stores each
    /// task's work as queued for a worker, a [`ServerRole::Worker`] runs that work and takes
    /// no requests. A front or a worker needs a store shared by several processes
    /// ([`TaskStore::watch`], e.g. `taskwire_postgres::PostgresStore`), given first with
    /// [`Server::with_store`]; without one this fails. Give every worker the front's tools
    /// (the same `Server` definition): a worker runs the tool a task names, with the
    /// arguments the front stored.
    pub fn role(mut self, role: ServerRole) -> Result<Self, RoleError> {
        let shared = self.store.as_ref().is_some_and(|s| s.watch().is_some());
        if role != ServerRole::Both && !shared {
            return Err(RoleError { role });
        }
        self.role = role;
        self.tools.hand_off = role == ServerRole::Front;
        Ok(self)
    }

    /// How many tools run here at once before this server takes no more work waiting in a
    /// shared store (handed off by fronts, or left by a process that stopped; see
    /// [`Server::role`]). Tasks made by this server's own requests are not counted against
    /// it, and it has no effect on a front or without a shared store. Default: 32. At least 1.
    pub fn concurrency(mut self, tools: usize) -> Self {
        self.concurrency = tools.max(1);
        self
    }

    /// With a store shared by several processes ([`TaskStore::watch`], e.g. PostgreSQL), a
    /// server started with [`Server::start`] (as Streamable HTTP serves it) holds the live
    /// tasks and at most this many finished ones (the newest) in memory: it loads only the
    /// unfinished tasks it ran at start, an older finished task is read from the store when
    /// a request names it, and each `tasks/list` page is read from the store, so that memory
    /// follows the live tasks, not the history (the store keeps every task until it
    /// expires). A live task's `tasks/get` needs no round trip. A server on byte streams
    /// ([`Server::serve`], stdio), or without a shared store, holds every task. Default: 10,000.
    pub fn keep_finished(mut self, tasks: usize) -> Self {
        self.keep_finished = tasks;
        self
    }

    /// Keeps an operator's view of this server: the tasks it holds, whoever owns them, as
    /// rows that change live ([`ServerHandle::watch`], what a dashboard shows), each task's
    /// snapshot ([`ServerHandle::task`]) and an operator's cancel ([`ServerHandle::cancel`]).
    /// Without a store, the driver follows its tools' tasks itself (a few words per task;
    /// rows only while someone watches), not a task the application makes with the host's
    /// own calls after the server starts; with a store, the host's journal. Off by default.
    pub fn observe(mut self) -> Self {
        self.observed = true;
        self
    }

    /// Registers this server's metrics in `registry` (names under `taskwire_`; each name and
    /// label is in taskwire-http's README) and keeps them from the start: tasks made and
    /// ended per tool, tasks by status, task durations and time to first update, requests
    /// per method and era with their latency and error codes, the store's writes, and, on a
    /// shared store, this process's role and the work waiting for a process. Implies
    /// [`Server::observe`]. Each request is timed from the read that brought it to its
    /// answer (the host names the requests each read held:
    /// [`Host::report_requests`](taskwire_engine::Host::report_requests)). Serve `registry`
    /// with `taskwire_http::Metrics` or your own exporter.
    pub fn metrics(mut self, registry: &mut Registry) -> Self {
        self.observed = true;
        self.metrics = Some(Families::register(registry));
        self
    }

    fn driver(
        self,
        runtime: Arc<dyn Runtime>,
        until: Until,
    ) -> (Driver<ToolSet>, Sender<Command<ServerCommand>>) {
        let tx = self.commands.0.clone();
        let mut host = self.host;
        // Message links (Streamable HTTP) read a task back from a shared store when a
        // request names one this process let go; a byte stream (stdio) is served from memory.
        let reads_back =
            until == Until::Shutdown && self.store.as_ref().is_some_and(|s| s.watch().is_some());
        if reads_back {
            // Refused only by a host shut down, which serves nothing anyway.
            let _ = host.set_keep_finished(crate::runtime::now(), Some(self.keep_finished));
        }
        let mut driver = Driver::new(host, runtime, self.tools, until, self.commands);
        if let Some(store) = self.store {
            driver.with_store(store, reads_back);
            if self.role != ServerRole::Front {
                driver.claim_work(self.concurrency);
            }
        }
        // After the store: without one, the driver feeds the operator's view itself.
        if self.observed {
            driver.observe(self.metrics, self.role.as_str());
        }
        (driver, tx)
    }
}

/// Serves `server` on this process's stdio until stdin ends or the process is asked to
/// terminate (SIGTERM); running tools are dropped and pending output is flushed first.
pub async fn serve_stdio(server: Server, runtime: Arc<dyn Runtime>) -> io::Result<()> {
    let stdio = runtime.stdio()?;
    // SIGTERM: the session ends as at end of input.
    let terminated = runtime.terminated();
    server
        .serve_until(runtime, stdio.input, stdio.output, Some(terminated))
        .await;
    Ok(())
}

/// A running server; cheap to clone. It serves until [`ServerHandle::shutdown`].
#[derive(Clone, Debug)]
pub struct ServerHandle {
    commands: Sender<Command<ServerCommand>>,
    links: MessageLinks,
    /// Set by [`ServerHandle::shutdown`].
    stopping: Arc<AtomicBool>,
    /// Closed once the server has stopped.
    stopped: async_channel::Receiver<()>,
}

impl ServerHandle {
    /// Serves one more connection for `owner` (tasks are shared by the owner's connections);
    /// completes when that connection ends.
    pub async fn connect(&self, owner: impl Into<Owner>, reader: Reader, writer: Writer) {
        let (done, ended) = oneshot::channel();
        let attach = Command::Attach {
            owner: owner.into(),
            reader,
            writer,
            done,
        };
        if self.commands.send(attach).await.is_ok() {
            let _ = ended.await;
        }
    }

    /// Opens a session for `owner` served over messages its transport frames (Streamable
    /// HTTP): hand it the peer's messages and read back what the server sends, each naming
    /// its stream. Up to `capacity` outgoing messages wait for the transport; one more
    /// closes the session (a reader that slow is gone). Errors once the server has stopped.
    pub async fn open(
        &self,
        owner: impl Into<Owner>,
        capacity: usize,
    ) -> Result<MessageSession, Error> {
        self.links.open(owner.into(), capacity, None).await
    }

    /// [`ServerHandle::open`] for one request (a 2026-07-28 POST): `message` is served as the
    /// session opens, with no round trip between. Read the session's messages up to the
    /// reply: the session closes with it (its stream ends; a notification or a response,
    /// which get no reply, close it at once). A 2026-07-28 request names its era in `params._meta`:
    /// `"io.modelcontextprotocol/protocolVersion": "2026-07-28"` and
    /// `"io.modelcontextprotocol/clientCapabilities": {…}` (without them it is answered -32602).
    pub async fn request(
        &self,
        owner: impl Into<Owner>,
        capacity: usize,
        message: impl Into<Vec<u8>>,
    ) -> Result<MessageSession, Error> {
        let first = Some(message.into().into());
        self.links.open(owner.into(), capacity, first).await
    }

    /// [`ServerHandle::request`], with the transport's `check` of the request, run as the
    /// engine reads it and before it is served (see
    /// [`Host::handle_checked`](taskwire_engine::Host::handle_checked)): Streamable HTTP
    /// checks its routing headers against the body here, so that the body is read once.
    /// A message that needs no answer (a notification, a response) closes the session at
    /// once: its messages end with none.
    pub async fn request_checked(
        &self,
        owner: impl Into<Owner>,
        capacity: usize,
        message: impl Into<Vec<u8>>,
        check: Check,
    ) -> Result<MessageSession, Error> {
        let first = Inbound {
            message: message.into(),
            check: Some(check),
        };
        self.links.open(owner.into(), capacity, Some(first)).await
    }

    /// The tasks this server holds, one [`TaskRow`](crate::TaskRow) each, and their changes from now on (what
    /// an operator's dashboard shows); `None` unless the server was started with
    /// [`Server::observe`] or [`Server::metrics`] (or once it has stopped). Every task is there whoever owns it:
    /// show the feed to operators only.
    pub async fn watch(&self) -> Option<TaskFeed> {
        let (reply, answer) = oneshot::channel();
        self.commands.send(Command::Watch { reply }).await.ok()?;
        answer.await.ok()?.ok()?
    }

    /// Task `task` as this server holds it, whoever owns it (`None`: not held here, or the
    /// server has stopped).
    pub async fn task(&self, task: &str) -> Option<TaskSnapshot> {
        let (reply, answer) = oneshot::channel();
        let command = Command::Task {
            task: task.into(),
            reply,
        };
        self.commands.send(command).await.ok()?;
        answer.await.ok()?.ok()?
    }

    /// Cancels task `task` on an operator's word, whoever owns it and wherever its work runs:
    /// as its tool would ([`ToolContext::cancel_task`]), its status message `Cancelled by
    /// <operator>`, its work stopped (on a front of a fleet, the worker running it stops it
    /// when the store tells it); logged with the operator's name. [`Error::Usage`] when the task has ended
    /// ([`UsageError::TaskFinished`]) or is not held here ([`UsageError::UnknownTask`]);
    /// [`Error::Closed`] once the server has stopped.
    pub async fn cancel(&self, task: &str, operator: &str) -> Result<(), Error> {
        let (reply, answer) = oneshot::channel();
        let command = Command::Cancel {
            task: task.into(),
            by: operator.to_owned(),
            reply,
        };
        self.commands
            .send(command)
            .await
            .map_err(|_| Error::Closed)?;
        answer.await.map_err(|_| Error::Closed)?
    }

    /// Whether [`ServerHandle::shutdown`] was called (on this handle or a clone): a session
    /// whose messages end without a reply to its request ended with the server.
    pub fn is_stopping(&self) -> bool {
        self.stopping.load(Ordering::Relaxed)
    }

    /// Closes every connection and stops all work; returns once the server has stopped:
    /// its last changes written to its store (unless the store keeps failing), and, on a
    /// shared store, the work it ran given back for other processes to take at once
    /// ([`TaskStore::hand_back`](crate::TaskStore::hand_back)).
    pub async fn shutdown(&self) {
        self.stopping.store(true, Ordering::Relaxed);
        let _ = self.commands.send(Command::Shutdown).await;
        // Closed, never sent to: returns when the server's driver has ended.
        let _ = self.stopped.recv().await;
    }
}
