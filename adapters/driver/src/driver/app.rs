//! The seam between the driver and what runs on its sessions: a server's tools, a client's
//! callers. The driver owns the host, the connections, the timer and the running work; an
//! [`App`] decides what work an event starts and takes the commands only it knows.

use std::future::Future;
use std::sync::Arc;

use async_channel::Sender;
use futures::FutureExt;
use taskwire_engine::{CallId, Event, Host, Role, SessionId};
use tracing::Span;

use super::{Command, Outcome};
use crate::observe::trace::{self, TaskSpans};
use crate::runtime::{BoxFuture, Runtime};

/// What runs on a driver's sessions.
pub(crate) trait App: Send + Unpin + 'static {
    /// The commands only this application takes (a client's calls); the driver's own are
    /// [`Command`]'s other variants.
    type Command: Send + 'static;

    /// The role of every session the driver opens for it.
    const ROLE: Role;

    /// A session was opened for a connection.
    fn opened(&mut self, _session: SessionId) {}

    /// An event the driver does not handle itself; returns the work it starts, if any.
    fn on_event(&mut self, event: Event, ctx: Ctx<'_, Self::Command>) -> Option<Work>;

    /// One of the application's own commands.
    fn on_command(&mut self, command: Self::Command, ctx: Ctx<'_, Self::Command>);
}

/// What an application may use while it handles an event or a command.
pub(crate) struct Ctx<'a, X> {
    /// The host.
    pub host: &'a mut Host,
    /// The driver's command channel (for tool contexts).
    pub commands: &'a Sender<Command<X>>,
    /// The runtime (for tool contexts).
    pub runtime: &'a Arc<dyn Runtime>,
    /// The spans the store writes of each task go under.
    pub spans: &'a mut TaskSpans,
}

/// The work of one call: its outcome answers the call.
pub(crate) struct Work {
    pub call: CallId,
    pub future: BoxFuture<Outcome>,
    /// The span it runs in (disabled when it is not traced).
    pub span: Span,
}

impl Work {
    /// Work that runs `future` for `call`.
    pub fn new(call: CallId, future: impl Future<Output = Outcome> + Send + 'static) -> Self {
        Work {
            call,
            future: future.boxed(),
            span: Span::none(),
        }
    }

    /// Work that runs `future` for `call` in `span`, which tells how it ends.
    pub fn traced(
        call: CallId,
        span: Span,
        future: impl Future<Output = Outcome> + Send + 'static,
    ) -> Self {
        Work {
            call,
            future: trace::traced(span.clone(), future).boxed(),
            span,
        }
    }

    /// A call answered at once with `outcome`.
    pub fn done(call: CallId, outcome: Outcome) -> Self {
        Work::new(call, futures::future::ready(outcome))
    }
}
