//! A client on the driver: the calls of its [`Client`](super::Client) handles go to its one
//! session, the engine's events complete them, and the server's requests go to its handlers.

use std::sync::Arc;

use async_channel::Sender;
use futures::channel::oneshot;
use serde_json::Value;
use taskwire_engine::{Era, Event, Notice, RequestId, Role, SessionId, TaskInfo};

use super::waits::{refuse, Waits};
use super::{Initialized, Notified, TaskCall};
use crate::driver::{App, Command, Ctx, Reply, Work};
use crate::error::Error;
use crate::handler::{request_work, Handlers};
use crate::runtime::{now, Runtime};
use crate::tool_result::CallToolResult;

/// What a [`Client`](super::Client) handle asks of its driver.
pub(crate) enum ClientCommand {
    Initialize(Reply<Initialized>),
    /// Any request; the raw result comes back.
    Request {
        method: String,
        params: Option<Value>,
        reply: Reply<Value>,
    },
    /// One `tools/list` page (the engine remembers each tool's task support).
    ListTools {
        cursor: Option<String>,
        reply: Reply<Value>,
    },
    CallTool {
        name: String,
        arguments: Value,
        reply: Reply<CallToolResult>,
        /// Ends without a value when the caller's future is dropped before the answer.
        caller: Caller,
    },
    CallToolAsTask {
        name: String,
        arguments: Value,
        ttl_ms: Option<u64>,
        reply: Reply<TaskCall>,
        /// As for `CallTool`; a call that made a task has nothing to give up.
        caller: Caller,
    },
    GetTask {
        task: String,
        reply: Reply<TaskInfo>,
    },
    FollowTask {
        task: String,
        reply: Reply<TaskCall>,
    },
    TaskResult {
        task: String,
        reply: Reply<CallToolResult>,
    },
    CancelTask {
        task: String,
        reply: Reply<TaskInfo>,
    },
    /// Opens the listen stream again for updates of `uris` when the server speaks
    /// 2026-07-28; answers whether it does.
    ListenForResources {
        uris: Vec<String>,
        reply: Reply<bool>,
    },
    /// The caller of this request went away: give it up.
    GiveUp(RequestId),
}

/// Completes with `()` when the caller has its answer; cancelled when the caller went away
/// first.
pub(crate) type Caller = oneshot::Receiver<()>;

/// A client's side of its driver: its session, its handlers, and who waits for what.
pub(crate) struct ClientApp {
    pub handlers: Handlers,
    notified: Option<Notified>,
    session: Option<SessionId>,
    waits: Waits,
}

impl ClientApp {
    pub fn new(handlers: Handlers, notified: Option<Notified>) -> Self {
        ClientApp {
            handlers,
            notified,
            session: None,
            waits: Waits::default(),
        }
    }
}

impl App for ClientApp {
    type Command = ClientCommand;
    const ROLE: Role = Role::Client;

    fn opened(&mut self, session: SessionId) {
        self.session.get_or_insert(session);
    }

    fn on_event(&mut self, event: Event, ctx: Ctx<'_, ClientCommand>) -> Option<Work> {
        match event {
            Event::Initialized { session, .. } if self.notified.is_some() => {
                // A 2026-07-28 server tells of its list changes only when asked.
                if let Err(e) = ctx.host.listen_for_notices(now(), session, &[]) {
                    tracing::debug!(error = %e, "not listening for the server's notices");
                }
                self.waits.on_event(event);
                None
            }
            Event::Request(request) => {
                let handler = self.handlers.get(&request.method)?;
                Some(request_work(handler, request))
            }
            Event::Notification { method, params, .. } => {
                if let Some(notified) = &self.notified {
                    let params = params.and_then(|p| serde_json::from_str(p.get()).ok());
                    notified(&method, params);
                }
                None
            }
            Event::Log {
                message,
                task: None,
                ..
            } => {
                if let Some(notified) = &self.notified {
                    notified("notifications/message", Notice::Log(message).params());
                }
                None
            }
            other => {
                self.waits.on_event(other);
                None
            }
        }
    }

    fn on_command(&mut self, command: ClientCommand, ctx: Ctx<'_, ClientCommand>) {
        let host = ctx.host;
        let waits = &mut self.waits;
        let Some(session) = self.session.filter(|s| !host.is_closed(*s)) else {
            return refuse(command, Error::Closed);
        };
        let now = now();
        match command {
            ClientCommand::Initialize(reply) => match host.initialize(now, session) {
                Ok(_) => waits.initialized = Some(reply),
                Err(e) => {
                    let _ = reply.send(Err(Error::Usage(e)));
                }
            },
            ClientCommand::Request {
                method,
                params,
                reply,
            } => waits.value(host.request(now, session, &method, params), reply),
            ClientCommand::ListTools { cursor, reply } => {
                waits.value(host.list_tools(now, session, cursor), reply)
            }
            ClientCommand::CallTool {
                name,
                arguments,
                reply,
                caller,
            } => {
                let sent = host.call_tool(now, session, &name, arguments);
                if let Ok(request) = &sent {
                    give_up_when_gone(ctx.commands, ctx.runtime, request.clone(), caller);
                }
                waits.tool(sent, reply);
            }
            ClientCommand::CallToolAsTask {
                name,
                arguments,
                ttl_ms,
                reply,
                caller,
            } => {
                let sent = host.call_tool_as_task(now, session, &name, arguments, ttl_ms);
                if let Ok(request) = &sent {
                    give_up_when_gone(ctx.commands, ctx.runtime, request.clone(), caller);
                }
                waits.task(sent, reply);
            }
            ClientCommand::GetTask { task, reply } => {
                waits.info(host.get_task(now, session, &task), reply)
            }
            ClientCommand::FollowTask { task, reply } => {
                waits.task(host.follow_task(now, session, &task), reply)
            }
            ClientCommand::TaskResult { task, reply } => {
                waits.tool(host.task_result(now, session, &task), reply)
            }
            ClientCommand::CancelTask { task, reply } => {
                waits.info(host.cancel_task(now, session, &task), reply)
            }
            ClientCommand::ListenForResources { uris, reply } => {
                let listens = host.protocol_version(session) == Some(Era::V2026_07_28.as_str());
                let opened = match listens {
                    true => host.listen_for_notices(now, session, &uris).map(|_| true),
                    false => Ok(false),
                };
                let _ = reply.send(opened.map_err(Error::Usage));
            }
            ClientCommand::GiveUp(request) => {
                waits.forget(&request);
                if let Ok(true) = host.cancel_request(now, session, &request) {
                    tracing::debug!(%request, "request given up: its caller went away");
                }
            }
        }
    }
}

/// Gives `request` up if its caller goes away before its answer.
fn give_up_when_gone(
    commands: &Sender<Command<ClientCommand>>,
    runtime: &Arc<dyn Runtime>,
    request: RequestId,
    caller: Caller,
) {
    let commands = commands.clone();
    runtime.spawn(Box::pin(async move {
        if caller.await.is_err() {
            let _ = commands
                .send(Command::App(ClientCommand::GiveUp(request)))
                .await;
        }
    }));
}
