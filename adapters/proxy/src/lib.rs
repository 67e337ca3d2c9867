//! `taskwire-proxy`: an MCP server in front of another, on one taskwire host.
//!
//! In front it serves both task eras at once (2025-11-25 and 2026-07-28 with the tasks
//! extension), as `task-server` does; behind, its client speaks the era of the server there.
//! Each tool of the server behind is a tool in front:
//!
//! - a front task runs as a task behind when the server behind takes one: its status
//!   messages, progress and logs become the front task's, its questions
//!   (`elicitation/create`, `sampling/createMessage`: 2025-11-25 requests or 2026-07-28
//!   `inputRequests`) are put to the front client in the front client's era and the answers
//!   go back, its outcome is the front task's, and a front `tasks/cancel` cancels it behind;
//! - a plain front call is a plain call behind a 2025-11-25 server, unless the tool there
//!   requires a task (`taskSupport: required`; `optional` in front); behind a 2026-07-28
//!   server, which decides per call, it is offered as a task. When a task is made behind,
//!   it is followed to its outcome, which answers the front call: its status messages and
//!   progress reach the front call as progress (when it gave a `progressToken`), its
//!   questions are put to the front client in its era, and a front `notifications/cancelled`
//!   cancels it. This is how clients that make no task calls (most hosts) use tools that
//!   require tasks. With stdio on both sides and 2025-11-25 on both, [`Proxy::relay`] carries
//!   the other plain calls straight through (ids renamed, with their progress, questions and
//!   cancels), past both drivers;
//! - a tool named by [`AsTask`] (or, behind a 2026-07-28 server, which decides per call, any
//!   tool) is offered as a task in front even when the server behind runs it plainly: the
//!   plain call behind is the front task's work;
//! - resources, prompts and completion requests are forwarded unchanged, and the server
//!   behind's notices about them (a list changed, a subscribed resource updated) reach the
//!   front's clients (2026-07-28 ones on the `subscriptions/listen` streams that asked);
//!   the resources the front's clients subscribe to, in either era (`resources/subscribe`,
//!   a listen stream's `resourceSubscriptions`), are asked of the server behind as one set
//!   in its era, each once however many clients want it;
//! - behind a server whose tools change (`tools.listChanged`; a 2026-07-28 one tells on the
//!   listen stream the proxy's client opens), the front lists them again, serves them as
//!   listed, and tells its clients;
//! - behind a server that logs, the front declares `logging` too: log messages about a
//!   task behind are the front task's, those about none reach the front's 2025-11-25
//!   clients, each filtered by the level its own `logging/setLevel` named (a 2025-11-25
//!   server behind is asked for every level, once, at the start).
//!
//! ```no_run
//! # async fn run(runtime: std::sync::Arc<dyn taskwire_driver::Runtime>) -> Result<(), taskwire_driver::Error> {
//! use taskwire_driver::engine::Config;
//! use taskwire_proxy::{AsTask, Proxy};
//!
//! let proxy = Proxy::new(runtime.clone(), AsTask::All, Config::new("taskwire-proxy", "0.1.0"));
//! let behind = std::process::Command::new("my-mcp-server");
//! let builder = proxy.client_builder();
//! let (client, _child) = taskwire_driver::spawn_server(runtime.clone(), behind, builder)
//!     .map_err(|e| taskwire_driver::Error::Malformed(e.to_string()))?;
//! let opened = client.initialize().await?;
//! let server = proxy.server(client, &opened, Config::new("taskwire-proxy", "0.1.0")).await?;
//! taskwire_driver::serve_stdio(server, runtime).await.ok();
//! # Ok(()) }
//! ```

mod backend;
mod forward;
mod front;
mod passthrough;
mod progress;
mod relay;
mod required;
mod routes;
mod subscriptions;

use std::future::Future;
use std::sync::{Arc, OnceLock};

use taskwire_driver::engine::Config;
use taskwire_driver::{Client, ClientBuilder, Error, Initialized, Runtime, Server};

use backend::{restarter, Backend, Restarter};
use forward::Behind;
use front::Front;
use required::RequiredTools;
use routes::Routes;

pub use relay::{Relay, Relayed};

/// Which tools of the server behind are offered as tasks in front although the server
/// behind runs them plainly (`taskSupport: optional`; the plain call behind is the task's
/// work).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum AsTask {
    /// None: each tool keeps the task support the server behind lists.
    #[default]
    None,
    /// These tools.
    Tools(Vec<String>),
    /// Every tool.
    All,
}

impl AsTask {
    fn covers(&self, tool: &str) -> bool {
        match self {
            AsTask::None => false,
            AsTask::Tools(tools) => tools.iter().any(|t| t == tool),
            AsTask::All => true,
        }
    }
}

/// A proxy being set up: first its client of the server behind
/// ([`Proxy::client_builder`]), then, that client connected and initialized, its server in
/// front ([`Proxy::server`]).
pub struct Proxy {
    runtime: Arc<dyn Runtime>,
    as_task: AsTask,
    routes: Routes,
    /// The tools behind that require a task (the relay leaves their plain calls to the
    /// proxy's client, which runs them as tasks).
    required: RequiredTools,
    /// The front, once its server exists (the notifications behind go to it).
    front: Arc<OnceLock<Front>>,
    client: Config,
    restart: Option<Restarter>,
}

impl Proxy {
    /// A proxy whose work (cancels sent behind) runs on `runtime`, offering `as_task`'s
    /// tools as tasks, its client of the server behind configured by `client`.
    pub fn new(runtime: Arc<dyn Runtime>, as_task: AsTask, client: Config) -> Self {
        Proxy {
            runtime,
            as_task,
            routes: Routes::default(),
            required: RequiredTools::default(),
            front: Arc::default(),
            client,
            restart: None,
        }
    }

    /// Starts the server behind again when it has gone: the first call after its
    /// connection ended runs `start` with a client builder like
    /// [`Proxy::client_builder`]'s, and `start` returns that client connected and
    /// initialized (or why it could not; the call then fails saying so, and the next one
    /// tries again). Calls that were in flight when the server went fail. The new server's
    /// tools are listed and served (the front's clients told when it declares
    /// `tools.listChanged`).
    pub fn restart_with<F, Fut>(mut self, start: F) -> Self
    where
        F: Fn(ClientBuilder) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Client, String>> + Send + 'static,
    {
        self.restart = Some(restarter(start));
        self
    }

    /// The client of the server behind: it answers that server's elicitation and sampling
    /// requests (declaring both) by putting each to the front client whose call it belongs
    /// to; one that belongs to no waiting call gets -32603 saying so.
    pub fn client_builder(&self) -> ClientBuilder {
        client_builder(&self.routes, &self.front, self.client.clone())
    }

    /// The server in front of `client` (connected with [`Proxy::client_builder`]; `opened`:
    /// its handshake): each tool `client` lists, forwarded, and the requests of the
    /// capabilities it declares; its [`Config::logging`] is whether `client`'s server
    /// declares `logging`, its [`Config::tools_list_changed`] whether it declares
    /// `tools.listChanged` (its tools are then listed again when it says they changed, and
    /// the front's clients told). Serve it as any [`Server`] (stdio, Streamable HTTP).
    pub async fn server(
        &self,
        client: Client,
        opened: &Initialized,
        mut config: Config,
    ) -> Result<Server, Error> {
        // A 2026-07-28 server decides per call whether a call is a task: any may be one.
        let decides = opened.protocol_version == "2026-07-28";
        config.logging = opened.capabilities.get("logging").is_some();
        // Every level comes, and the front filters it for each client.
        let every_level = config.logging && !decides;
        if every_level {
            backend::ask_every_level(&client).await?;
        }
        config.tools_list_changed = opened.capabilities["tools"]["listChanged"] == true;
        let builder = {
            let (routes, front) = (self.routes.clone(), self.front.clone());
            let config = self.client.clone();
            move || client_builder(&routes, &front, config.clone())
        };
        // A server started again may serve other tools.
        let restarted = {
            let front = self.front.clone();
            move || front.get().into_iter().for_each(Front::restarted)
        };
        let backend = Backend::new(
            client.clone(),
            self.restart.clone(),
            builder,
            every_level,
            restarted,
        );
        let behind = Behind {
            backend,
            routes: self.routes.clone(),
            runtime: self.runtime.clone(),
            decides,
        };
        let backend = behind.backend.clone();
        let as_task = self.as_task.clone();
        let announce = config.tools_list_changed;
        let server = Server::new(config);
        let required = self.required.clone();
        let (server, front) =
            Front::serve(server, &client, behind, as_task, announce, required).await?;
        let server = passthrough::serve(server, &backend, &front, &opened.capabilities);
        let _ = self.front.set(front);
        Ok(server)
    }
}

/// A client builder answering the server behind's questions through `routes`, its
/// notifications (tools changed, notices about resources and prompts, logs) heard by the
/// `front`.
fn client_builder(routes: &Routes, front: &Arc<OnceLock<Front>>, config: Config) -> ClientBuilder {
    let front = front.clone();
    let mut builder =
        ClientBuilder::new(config).on_notification(move |method, params| match front.get() {
            Some(front) => front.heard(method, params.as_ref()),
            None => tracing::debug!(method, "a notification before the front serves, dropped"),
        });
    for method in ["elicitation/create", "sampling/createMessage"] {
        let routes = routes.clone();
        builder = builder.on_request(method, move |params| {
            let routes = routes.clone();
            async move { routes.ask(method, params).await }
        });
    }
    builder
}
