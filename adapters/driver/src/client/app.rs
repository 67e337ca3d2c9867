//! A client on the driver: the calls of its [`Client`](super::Client) handles go to its one
//! session, the engine's events complete them, and the server's requests go to its handlers.

use std::sync::Arc;

use async_channel::Sender;
use taskwire_engine::{Era, Event, Notice, RequestId, Role, SessionId};

use super::command::{Caller, ClientCommand};
use super::waits::Waits;
use super::Notified;
use crate::driver::{App, Command, Ctx, Work};
use crate::error::Error;
use crate::handler::{request_work, Handlers};
use crate::runtime::{now, Runtime};

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
            return command.refuse(Error::Closed);
        };
        let now = now();
        match command {
            ClientCommand::Initialize(reply) => match host.initialize(now, session) {
                Ok(_) => waits.initialized = Some(reply),
                Err(e) => {
                    let _ = reply.send(Err(Error::Usage(e)));
                }
            },
            ClientCommand::Send {
                request,
                meta,
                answer,
                caller,
            } => {
                let sent = match meta {
                    Some(meta) => host.send_with_meta(now, session, request, meta),
                    None => host.send(now, session, request),
                };
                if let (Ok(request), Some(caller)) = (&sent, caller) {
                    give_up_when_gone(ctx.commands, ctx.runtime, request.clone(), caller);
                }
                waits.expect(sent, answer);
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
