//! The front's tools and notices: each tool of the server behind served in front (its call
//! forwarded), listed again when that server says its tools changed or was started again;
//! that server's notices passed on to the front's clients, and the resources they subscribe
//! to asked of it again when it was started again.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use serde_json::Value;
use taskwire_driver::engine::TaskSupport;
use taskwire_driver::{Client, Error, LiveTools, Notice, Notifier, Server, Tool};

use crate::forward::{Behind, Forward};
use crate::required::{requires_task, RequiredTools};
use crate::subscriptions::Subscriptions;
use crate::AsTask;

/// The front server's handles, and what its tools are made of. Cheap to clone.
#[derive(Clone)]
pub(crate) struct Front {
    behind: Behind,
    as_task: AsTask,
    notifier: Notifier,
    live: LiveTools,
    /// The front declares `tools.listChanged`: its clients are told of changes.
    announce: bool,
    /// The tools behind that require a task, as last listed.
    required: RequiredTools,
    listing: Arc<Mutex<Listing>>,
    /// The resources the front's clients want updates of.
    pub subscriptions: Subscriptions,
}

/// The tools served as listed behind, and whether a listing behind runs (and is due again
/// after it).
#[derive(Default)]
struct Listing {
    served: Vec<Tool>,
    running: bool,
    again: bool,
}

impl Front {
    /// `server` with each tool `client` lists, forwarded to `behind`; and the front that
    /// keeps them so (telling its clients of changes when it `announce`s them, and `required`
    /// which of them require a task).
    pub async fn serve(
        mut server: Server,
        client: &Client,
        behind: Behind,
        as_task: AsTask,
        announce: bool,
        required: RequiredTools,
    ) -> Result<(Server, Front), Error> {
        let subscriptions = Subscriptions::new(behind.backend.clone(), behind.runtime.clone());
        let front = Front {
            subscriptions,
            behind,
            as_task,
            notifier: server.notifier(),
            live: server.live_tools(),
            announce,
            required,
            listing: Arc::default(),
        };
        let tools = client.list_tools().await?;
        front.required.listed(&tools);
        front.lock().served.clone_from(&tools);
        for tool in tools {
            let (tool, forward) = front.offered(tool);
            server = server.tool(tool, move |ctx, arguments: Value| {
                forward.clone().call(ctx, arguments)
            });
        }
        Ok((server, front))
    }

    /// A notification of the server behind that the client does not act on itself: a
    /// change of its tools is served in front and announced; its notices about resources,
    /// prompts and logs go to the front's clients.
    pub fn heard(&self, method: &str, params: Option<&Value>) {
        match Notice::from_notification(method, params) {
            Some(Notice::ToolsListChanged) => self.list_again(),
            Some(notice) => self.notifier.notify(notice),
            None => tracing::debug!(method, "a notification behind not passed on"),
        }
    }

    /// `tool` as offered in front (a task where the server behind decides per call, or
    /// where `--as-task` names it; a tool that requires a task behind is `optional` in front,
    /// its plain calls run as tasks there), and what forwards its calls.
    fn offered(&self, mut tool: Tool) -> (Tool, Forward) {
        let task_only = requires_task(&tool);
        let support = &mut tool.execution.task_support;
        if task_only
            || *support == TaskSupport::Forbidden
                && (self.behind.decides || self.as_task.covers(&tool.name))
        {
            *support = TaskSupport::Optional;
        }
        let forward = Forward {
            behind: self.behind.clone(),
            tool: tool.name.clone(),
            task_only,
        };
        (tool, forward)
    }

    /// The server behind was started again: its tools are listed, and the resources
    /// subscribed to asked of it.
    pub fn restarted(&self) {
        self.list_again();
        self.subscriptions.again();
    }

    /// Lists the tools behind again in the background and serves them (once more after a
    /// listing that runs already, for the changes it may have missed).
    pub fn list_again(&self) {
        let mut listing = self.lock();
        if listing.running {
            listing.again = true;
            return;
        }
        listing.running = true;
        let front = self.clone();
        self.behind.runtime.spawn(Box::pin(async move {
            loop {
                front.relist().await;
                let mut listing = front.lock();
                if !std::mem::take(&mut listing.again) {
                    listing.running = false;
                    return;
                }
            }
        }));
    }

    async fn relist(&self) {
        let listed = match self.behind.backend.client().await {
            Ok(client) => client.list_tools().await.map_err(|e| e.to_string()),
            Err(e) => Err(e.message),
        };
        let tools = match listed {
            Ok(tools) => tools,
            Err(e) => {
                tracing::warn!(error = %e, "the server behind's tools changed, but listing them failed");
                return;
            }
        };
        self.required.listed(&tools);
        let gone: Vec<String> = {
            let mut listing = self.lock();
            if listing.served == tools {
                tracing::debug!("the server behind's tools are as they were");
                return;
            }
            let names: HashSet<&str> = tools.iter().map(|t| t.name.as_str()).collect();
            let gone = listing.served.iter().map(|t| &t.name);
            let gone = gone
                .filter(|n| !names.contains(n.as_str()))
                .cloned()
                .collect();
            listing.served.clone_from(&tools);
            gone
        };
        for name in &gone {
            self.live.remove(name);
        }
        let count = tools.len();
        for tool in tools {
            let (tool, forward) = self.offered(tool);
            self.live.add(tool, move |ctx, arguments: Value| {
                forward.clone().call(ctx, arguments)
            });
        }
        if self.announce {
            self.notifier.notify(Notice::ToolsListChanged);
        }
        tracing::info!(
            tools = count,
            removed = gone.len(),
            "the server behind's tools changed; serving them as listed now"
        );
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Listing> {
        self.listing.lock().unwrap_or_else(|e| e.into_inner())
    }
}
