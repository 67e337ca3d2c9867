//! The driver: one future owns the host and does, in turns, what the host needs: read each
//! connection, take commands, fire the deadline, route outputs, write. Tools that finish
//! without waiting complete inline; the others run as spawned futures and report back over
//! a channel. Each turn takes a bounded amount from every source, so none starves another.

use std::collections::HashMap;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use async_channel::{Receiver, Sender};
use futures::future::{AbortHandle, Abortable};
use futures::FutureExt;
use serde_json::value::RawValue;
use serde_json::Value;
use taskwire_engine::{
    AppRequest, CallId, Event, Host, Millis, Output, Owner, Role, RpcError, ToolCall,
};

use crate::client::Waits;
use crate::command::Command;
use crate::error::Error;
use crate::handler::Handlers;
use crate::link::{Link, Read};
use crate::runtime::{instant_of, now, BoxFuture, Reader, Runtime, Timer, Writer};
use crate::server::{CallToolResult, ToolContext, ToolOutcome, ToolSet};

/// Commands taken per turn. Each connection gets one read per turn (up to 16 KiB, many
/// messages): what a chunk asks for is routed before the next read, so an end of input right
/// behind a request never overtakes that request's answer.
const COMMANDS_PER_TURN: usize = 64;
/// Turns in one poll before the driver yields to the executor.
const TURNS_PER_POLL: usize = 16;

/// The application side: tools for a server, request handlers for a client.
pub(crate) enum App {
    Server(Arc<ToolSet>),
    Client(Arc<Handlers>),
}

/// When the driver stops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Until {
    /// When every connection has ended (one stdio connection; one client connection).
    LinksEnd,
    /// When told to ([`Command::Shutdown`]).
    Shutdown,
}

pub(crate) struct Driver {
    host: Host,
    runtime: Arc<dyn Runtime>,
    app: App,
    links: Vec<Link>,
    commands: Pin<Box<Receiver<Command>>>,
    tx: Sender<Command>,
    timer: Box<dyn Timer>,
    armed: Option<Millis>,
    timer_fired: bool,
    terminated: Option<BoxFuture<()>>,
    workers: HashMap<CallId, AbortHandle>,
    pub(crate) waits: Waits,
    until: Until,
    stopping: bool,
}

impl Driver {
    /// A driver for `host`, and the sender of its commands.
    pub fn new(
        host: Host,
        runtime: Arc<dyn Runtime>,
        app: App,
        until: Until,
    ) -> (Driver, Sender<Command>) {
        let (tx, commands) = async_channel::unbounded();
        let driver = Driver {
            host,
            timer: runtime.timer(),
            runtime,
            app,
            links: Vec::new(),
            commands: Box::pin(commands),
            tx: tx.clone(),
            armed: None,
            timer_fired: false,
            terminated: None,
            workers: HashMap::new(),
            waits: Waits::default(),
            until,
            stopping: false,
        };
        (driver, tx)
    }

    /// Serves one more connection for `owner`; a driver that is stopping takes none (the
    /// connection is dropped and `done` fires at once).
    pub fn attach(
        &mut self,
        owner: Owner,
        reader: Reader,
        writer: Writer,
        done: Option<futures::channel::oneshot::Sender<()>>,
    ) {
        let role = match self.app {
            App::Server(_) => Role::Server,
            App::Client(_) => Role::Client,
        };
        let Ok(session) = self.host.open(now(), role, owner) else {
            return;
        };
        let mut link = Link::new(session, reader, writer);
        link.done = done;
        self.links.push(link);
    }

    /// Ends every connection's input when `signal` completes (SIGTERM).
    pub fn stop_on(&mut self, signal: BoxFuture<()>) {
        self.terminated = Some(signal);
    }

    /// One turn over every source. Returns whether anything happened.
    fn turn(&mut self, cx: &mut Context<'_>) -> bool {
        let mut busy = self.take_commands(cx);
        busy |= self.read_links(cx);
        if let Some(signal) = self.terminated.as_mut() {
            if signal.as_mut().poll(cx).is_ready() {
                self.terminated = None;
                self.stop();
                busy = true;
            }
        }
        // The deadline is the engine's: past it, the engine fires what is due (spurious
        // calls are harmless), and the timer is re-armed for the next one. What fired shows
        // up as outputs.
        if self.armed.is_some_and(|at| at <= now()) || self.timer_fired {
            self.timer_fired = false;
            self.armed = None;
            // Refused only once the host is shut down, when nothing is scheduled any more.
            let _ = self.host.handle_timeout(now());
        }
        busy |= self.route_outputs(cx);
        self.write_links(cx);
        busy
    }

    fn take_commands(&mut self, cx: &mut Context<'_>) -> bool {
        let mut busy = false;
        for _ in 0..COMMANDS_PER_TURN {
            match self.commands.as_mut().poll_next_command(cx) {
                Poll::Ready(command) => {
                    self.on_command(command);
                    busy = true;
                }
                Poll::Pending => break,
            }
        }
        busy
    }

    fn read_links(&mut self, cx: &mut Context<'_>) -> bool {
        let mut busy = false;
        let Driver { host, links, .. } = self;
        for link in links.iter_mut() {
            if link.input_ended() {
                continue;
            }
            let session = link.session;
            match link.poll_read(cx) {
                Poll::Pending => {}
                // Input is refused only once the host is shut down, when every session is
                // closed and its input no longer matters.
                Poll::Ready(Read::Bytes(bytes)) => {
                    busy = true;
                    let _ = host.handle_bytes(now(), session, bytes);
                }
                Poll::Ready(Read::Eof) => {
                    busy = true;
                    let _ = host.handle_eof(now(), session);
                }
            }
        }
        busy
    }

    /// Drains the host: messages to their connection, events to the application.
    fn route_outputs(&mut self, cx: &mut Context<'_>) -> bool {
        let mut busy = false;
        while let Some(output) = self.host.poll_output() {
            busy = true;
            match output {
                Output::Send(t) => {
                    if let Some(link) = self.links.iter_mut().find(|l| l.session == t.session) {
                        link.queue(&t.message);
                    }
                }
                Output::Event(event) => self.on_event(event, cx),
                _ => {}
            }
        }
        busy
    }

    fn write_links(&mut self, cx: &mut Context<'_>) {
        for link in &mut self.links {
            if link.has_output() {
                let _ = link.poll_write(cx);
            }
        }
    }

    /// Ends what has ended: connections whose output broke or whose input and output are
    /// done; the whole driver when its purpose is over. Returns whether it is over.
    fn settle(&mut self, cx: &mut Context<'_>) -> bool {
        let mut ended = Vec::new();
        for link in &self.links {
            if link.output_gone() && !self.host.is_closed(link.session) {
                // Nobody reads our output any more (broken pipe): as at end of input.
                ended.push(link.session);
            }
        }
        for session in ended {
            let _ = self.host.handle_eof(now(), session);
        }
        if self.until == Until::LinksEnd
            && !self.stopping
            && self.links.iter().all(Link::input_ended)
        {
            self.stop();
        }
        if self.stopping {
            self.route_outputs(cx);
        }
        let host = &self.host;
        let stopping = self.stopping;
        self.links.retain_mut(|link| {
            let closed = host.is_closed(link.session);
            let done =
                (closed || stopping) && (link.output_gone() || link.poll_close(cx).is_ready());
            !done
        });
        self.stopping && self.links.is_empty()
    }

    /// Closes every session and stops all work.
    fn stop(&mut self) {
        self.stopping = true;
        self.host.shutdown(now());
    }

    fn arm_timer(&mut self) {
        let next = self.host.poll_timeout();
        if next != self.armed {
            if let Some(at) = next {
                self.timer.reset(instant_of(at));
            }
            self.armed = next;
        }
    }

    // ---- commands ---------------------------------------------------------------------------

    fn on_command(&mut self, command: Command) {
        let now = now();
        match command {
            Command::Finished { call, outcome } => {
                self.workers.remove(&call);
                self.finish(call, outcome);
            }
            Command::TaskMessage { call, message } => {
                // A finished or unknown call is a race with a cancel or expiry: nothing to do.
                let _ = self.host.set_task_message(now, call, Some(message));
            }
            Command::Progress {
                call,
                progress,
                total,
                message,
            } => {
                let _ = self
                    .host
                    .notify_progress(now, call, progress, total, message);
            }
            Command::Log {
                call,
                level,
                logger,
                data,
                reply,
            } => {
                let sent = self.host.log(now, call, level, logger.as_deref(), data);
                let _ = reply.send(sent.map_err(Error::Usage));
            }
            Command::Input {
                call,
                method,
                params,
                reply,
            } => match self.host.request_input(now, call, method, params) {
                Ok(input) => {
                    self.waits.inputs.insert(input, (call, reply));
                }
                Err(e) => {
                    let _ = reply.send(Err(Error::Usage(e)));
                }
            },
            Command::StartTask { call, reply } => {
                let started = self.host.start_task(now, call).map_err(Error::Usage);
                let _ = reply.send(started);
            }
            Command::Attach {
                owner,
                reader,
                writer,
                done,
            } => {
                self.attach(owner, reader, writer, Some(done));
            }
            Command::Shutdown => self.stop(),
            client => {
                let session = self.links.first().map(|l| l.session);
                crate::client::on_command(&mut self.host, session, &mut self.waits, client);
            }
        }
    }

    /// Answers a call with its work's outcome (always an object: [`CallToolResult`] and
    /// [`object_result`] check). The engine refuses only a call that has already ended
    /// (cancelled, expired, closed), whose outcome nobody waits for.
    fn finish(&mut self, call: CallId, outcome: Outcome) {
        let _ = self.host.respond_raw(now(), call, outcome);
    }

    // ---- events -----------------------------------------------------------------------------

    fn on_event(&mut self, event: Event, cx: &mut Context<'_>) {
        match event {
            Event::ToolCall(call) => self.on_tool_call(call, cx),
            Event::Request(request) => self.on_app_request(request, cx),
            Event::Stop { call, .. } => {
                if let Some(worker) = self.workers.remove(&call) {
                    worker.abort();
                }
                // Its input requests will get no answer (the call is over).
                self.waits.inputs.retain(|_, (asker, _)| *asker != call);
            }
            Event::InputResponse { input, outcome, .. } => {
                if let Some((_, reply)) = self.waits.inputs.remove(&input) {
                    let _ = reply.send(outcome.map_err(Error::Rpc));
                }
            }
            other => self.waits.on_event(other),
        }
    }

    fn on_tool_call(&mut self, call: ToolCall, cx: &mut Context<'_>) {
        let App::Server(tools) = &self.app else {
            return;
        };
        let Some(handler) = tools.handler(&call.name).cloned() else {
            return;
        };
        // Arguments first: a mismatch is a -32602 answer, and no task is created for it.
        let start = match handler(call.arguments.as_deref()) {
            Ok(start) => start,
            Err(error) => return self.finish(call.call, Err(error)),
        };
        let task = match (call.task_offered, call.task) {
            (true, _) if tools.asks_first(&call.name) => Err(true),
            (true, _) => match self.host.start_task(now(), call.call) {
                Ok(id) => Ok(id),
                // The requestor's session went away meanwhile: nothing to run for.
                Err(_) => return,
            },
            (false, Some(task)) => Ok(task),
            (false, None) => Err(false),
        };
        let ctx = ToolContext::new(
            call.name,
            task,
            call.call,
            self.tx.clone(),
            self.runtime.clone(),
        );
        let work =
            start(ctx).map(|outcome: ToolOutcome| outcome.and_then(CallToolResult::into_raw));
        self.run(call.call, work, cx);
    }

    fn on_app_request(&mut self, request: AppRequest, cx: &mut Context<'_>) {
        let handler = match &self.app {
            App::Client(handlers) => handlers.get(&request.method),
            App::Server(tools) => tools.request_handler(&request.method),
        };
        let Some(handler) = handler else {
            return;
        };
        let params = request
            .params
            .and_then(|raw| serde_json::from_str(raw.get()).ok())
            .unwrap_or(Value::Null);
        let method = request.method;
        let work = handler(params).map(move |answer| object_result(&method, answer?));
        self.run(request.call, work, cx);
    }

    /// Runs a call's work: polled once here, so work that does not wait completes at once
    /// (after the commands it queued, so that their order holds); otherwise spawned. A panic
    /// fails the call with an internal error; an abort drops it silently.
    fn run(
        &mut self,
        call: CallId,
        work: impl Future<Output = Outcome> + Send + 'static,
        cx: &mut Context<'_>,
    ) {
        let mut guarded = Box::pin(AssertUnwindSafe(work).catch_unwind());
        if let Poll::Ready(result) = guarded.as_mut().poll(cx) {
            while let Ok(command) = self.commands.try_recv() {
                self.on_command(command);
            }
            return self.finish(call, result.unwrap_or_else(panicked));
        }
        let (handle, registration) = AbortHandle::new_pair();
        let commands = self.tx.clone();
        let abortable = Abortable::new(guarded, registration);
        self.runtime.spawn(Box::pin(async move {
            if let Ok(result) = abortable.await {
                let outcome = result.unwrap_or_else(panicked);
                let _ = commands.send(Command::Finished { call, outcome }).await;
            }
        }));
        self.workers.insert(call, handle);
    }
}

/// How a call's work ends: its result object as JSON text, or an error.
type Outcome = Result<Box<RawValue>, RpcError>;

/// A client handler's answer, which must be an object; anything else is -32603 for the
/// server instead of a reply the spec forbids.
fn object_result(method: &str, answer: Value) -> Outcome {
    match answer {
        Value::Object(_) => {
            Ok(serde_json::value::to_raw_value(&answer).expect("JSON values serialize"))
        }
        _ => Err(RpcError::internal(format!(
            "Internal error: the {method} handler answered {answer}, not a JSON object"
        ))),
    }
}

/// A tool's panic as the internal error its caller gets.
fn panicked(panic: Box<dyn std::any::Any + Send>) -> Outcome {
    let what = panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into());
    Err(RpcError::internal(format!(
        "Internal error: the tool panicked: {what}"
    )))
}

impl Future for Driver {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = &mut *self;
        for _ in 0..TURNS_PER_POLL {
            let busy = this.turn(cx);
            if this.settle(cx) {
                return Poll::Ready(());
            }
            if !busy {
                this.arm_timer();
                if this.armed.is_some() && this.timer.poll_fired(cx).is_ready() {
                    // The monotonic timer may fire a little before the wall clock reads the
                    // deadline: the next turn fires the engine anyway.
                    this.timer_fired = true;
                    continue;
                }
                return Poll::Pending;
            }
        }
        // Still busy: let the executor run the spawned work too.
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        for (_, worker) in self.workers.drain() {
            worker.abort();
        }
        // A command queued after the last turn would keep its caller waiting forever (the
        // caller's handle keeps the channel alive): closed, then dropped, each caller's reply
        // fails at once ("Connection closed").
        self.commands.close();
        while let Ok(command) = self.commands.try_recv() {
            drop(command);
        }
    }
}

/// `poll_next` for the command receiver without the `Stream` import dance.
trait PollCommand {
    fn poll_next_command(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Command>;
}

impl PollCommand for Receiver<Command> {
    fn poll_next_command(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Command> {
        use futures::Stream;
        match self.poll_next(cx) {
            Poll::Ready(Some(command)) => Poll::Ready(command),
            // The driver keeps a sender itself, so the channel never ends while it runs.
            Poll::Ready(None) | Poll::Pending => Poll::Pending,
        }
    }
}
