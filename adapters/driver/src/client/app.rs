//! A client on the driver: the calls of its [`Client`](super::Client) handles go to its one
//! session, the engine's events complete them, and the server's requests go to its handlers.

use serde_json::Value;
use taskwire_engine::{Event, Role, SessionId, TaskInfo};

use super::waits::{refuse, Waits};
use super::{Initialized, TaskCall};
use crate::driver::{App, Ctx, Reply, Work};
use crate::error::Error;
use crate::handler::{request_work, Handlers};
use crate::runtime::now;
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
    },
    CallToolAsTask {
        name: String,
        arguments: Value,
        ttl_ms: Option<u64>,
        reply: Reply<TaskCall>,
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
}

/// A client's side of its driver: its session, its handlers, and who waits for what.
pub(crate) struct ClientApp {
    pub handlers: Handlers,
    session: Option<SessionId>,
    waits: Waits,
}

impl ClientApp {
    pub fn new(handlers: Handlers) -> Self {
        ClientApp {
            handlers,
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

    fn on_event(&mut self, event: Event, _: Ctx<'_, ClientCommand>) -> Option<Work> {
        match event {
            Event::Request(request) => {
                let handler = self.handlers.get(&request.method)?;
                Some(request_work(handler, request))
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
            } => waits.tool(host.call_tool(now, session, &name, arguments), reply),
            ClientCommand::CallToolAsTask {
                name,
                arguments,
                ttl_ms,
                reply,
            } => {
                let sent = host.call_tool_as_task(now, session, &name, arguments, ttl_ms);
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
        }
    }
}
