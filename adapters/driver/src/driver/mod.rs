//! The driver: one future owns the host and does, in turns, what the host needs: read each
//! connection, take commands, fire the deadline, route outputs, write. What runs on the
//! sessions (a server's tools, a client's callers) is an [`App`]; connections are byte
//! streams ([`bytes`]: stdio, child processes) or message links ([`messages`]: Streamable
//! HTTP), and outgoing messages reach either by their session. Each turn takes a bounded
//! amount from every source, so none starves another.

mod app;
mod bytes;
mod command;
mod journal;
mod messages;
mod replicas;
mod work;

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use async_channel::{Receiver, Sender};
use futures::future::AbortHandle;
use serde_json::Value;
use taskwire_engine::{
    CallId, Durability, Event, Host, InputId, MessageKind, Millis, Output, Owner, RpcError,
    SessionId, StopReason,
};

use crate::error::Error;
use crate::observe::board::{Board, KnownTool};
use crate::observe::metrics::Families;
use crate::observe::trace::{self, TaskSpans};
use crate::observe::Observer;
use crate::runtime::{instant_of, now, BoxFuture, Reader, Runtime, Timer, Writer};
use crate::store::TaskStore;
pub(crate) use app::{App, Ctx, Work};
use bytes::{ByteLink, Read};
pub(crate) use command::{Command, Reply};
use journal::StoreLink;
pub(crate) use messages::Inbound;
pub(crate) use messages::MessageLinks;
use messages::{LinkInput, MessageOut};
pub use messages::{MessageSession, Outgoing};
pub(crate) use work::Outcome;

/// Commands, and message-link inputs, taken per turn. Each byte stream gets one read per
/// turn (up to 16 KiB, many messages): what a chunk asks for is routed before the next
/// read, so an end of input right behind a request never overtakes that request's answer.
const COMMANDS_PER_TURN: usize = 64;
/// Turns in one poll before the driver yields to the executor.
const TURNS_PER_POLL: usize = 16;

/// When the driver stops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Until {
    /// When every connection has ended (one stdio connection; one client connection).
    LinksEnd,
    /// When told to ([`Command::Shutdown`]).
    Shutdown,
}

pub(crate) struct Driver<A: App> {
    host: Host,
    runtime: Arc<dyn Runtime>,
    app: A,
    /// Byte-stream connections.
    links: Vec<ByteLink>,
    /// Message-link connections: where each session's messages go, and how many may wait.
    messages: HashMap<SessionId, MessageOut>,
    commands: Pin<Box<Receiver<Command<A::Command>>>>,
    tx: Sender<Command<A::Command>>,
    link_inputs: Pin<Box<Receiver<LinkInput>>>,
    link_tx: Sender<LinkInput>,
    timer: Box<dyn Timer>,
    armed: Option<Millis>,
    timer_fired: bool,
    terminated: Option<BoxFuture<()>>,
    /// The work running apart, and its span.
    workers: HashMap<CallId, (AbortHandle, tracing::Span)>,
    /// Input requests of running calls, by input, with the call that asked.
    inputs: HashMap<InputId, (CallId, Reply<Value>)>,
    until: Until,
    stopping: bool,
    /// The durable store, if any.
    store: Option<StoreLink>,
    /// What operators see, when the server is observed.
    observer: Option<Observer>,
    /// The spans of the tasks this process writes, when traced.
    spans: TaskSpans,
}

/// A driver's command channel, both ends.
pub(crate) type Commands<X> = (Sender<Command<X>>, Receiver<Command<X>>);

impl<A: App> Driver<A> {
    /// A driver for `host` taking its commands from `commands` (made with
    /// [`async_channel::unbounded`]; its sender may have been handed out before).
    pub fn new(
        host: Host,
        runtime: Arc<dyn Runtime>,
        app: A,
        until: Until,
        commands: Commands<A::Command>,
    ) -> Self {
        let (tx, commands) = commands;
        let (link_tx, link_inputs) = async_channel::unbounded();
        Driver {
            host,
            timer: runtime.timer(),
            runtime,
            app,
            links: Vec::new(),
            messages: HashMap::new(),
            commands: Box::pin(commands),
            tx: tx.clone(),
            link_inputs: Box::pin(link_inputs),
            link_tx,
            armed: None,
            timer_fired: false,
            terminated: None,
            workers: HashMap::new(),
            inputs: HashMap::new(),
            until,
            stopping: false,
            store: None,
            observer: None,
            spans: TaskSpans::default(),
        }
    }

    /// Keeps the operator's view ([`Observer`]), counting in `metrics` if given: the host
    /// journals the tasks held now (rows, not news), then every change when a store is
    /// attached ([`Driver::with_store`] first); without one, the driver feeds the view
    /// itself ([`Driver::feed_board`]). `role` names this process's part in a fleet.
    pub fn observe(&mut self, metrics: Option<Families>, role: &'static str) {
        // Without a store, the driver feeds the view itself once the tasks held now are
        // rows (a journal would copy each task at each change for nobody).
        let driven = self.store.is_none() && self.host.config().durability == Durability::Volatile;
        if self.host.config().durability == Durability::Volatile {
            // Refused only by a host shut down, which serves nothing anyway.
            let _ = self.host.set_durability(now(), Durability::Journal);
        }
        if let Some(families) = &metrics {
            families.role(role);
        }
        // The host names each request it reads, for the requests' latency.
        self.host.report_requests(metrics.is_some());
        self.observer = Some(Observer::new(metrics, driven));
    }

    /// Tells a driver-fed board ([`Board::driven`]) that call `call`'s task may have changed
    /// (`work`: its work changed it; `stopped`: the call stopped for that reason).
    fn call_changed(&mut self, call: CallId, work: bool, stopped: Option<StopReason>) {
        self.feed_board(|board, host, now, _| {
            board.call_changed(call, host, now, work, stopped);
        });
    }

    /// Feeds a driver-fed board ([`Board::driven`]), if kept: `feed` gets it, the host, the
    /// time and which tools are the server's.
    fn feed_board(&mut self, feed: impl FnOnce(&mut Board, &Host, Millis, KnownTool<'_>)) {
        let Some(observer) = self.observer.as_mut().filter(|o| o.board.driven()) else {
            return;
        };
        let host = &self.host;
        // The host's clock, as the driver last moved it.
        feed(&mut observer.board, host, host.now(), &|tool| {
            host.tool(tool).is_some()
        });
    }

    /// Keeps the host's tasks in `store`: its tasks are loaded before the first turn (with
    /// `reads_back`, only those whose work ran here: the others are read as requests name
    /// them), and from then on every message revealing a change waits until it is stored.
    pub fn with_store(&mut self, store: Arc<dyn TaskStore>, reads_back: bool) {
        self.store = Some(StoreLink::new(store, reads_back));
        self.spans.writing();
    }

    /// Runs up to `slots` tools at once with work claimed from the shared store (see
    /// [`TaskStore::claim`]); without a call, this process claims none.
    pub fn claim_work(&mut self, slots: usize) {
        if let Some(link) = self.store.as_mut().filter(|l| l.news.is_some()) {
            link.claims = Some(journal::Claims {
                slots: slots.max(1),
                asking: false,
                more: true,
            });
        }
    }

    /// Opens message sessions on this driver (see [`MessageLinks`]).
    pub fn message_links(&self) -> MessageLinks {
        MessageLinks {
            inputs: self.link_tx.clone(),
        }
    }

    /// Serves one more byte-stream connection for `owner`; a driver that is stopping takes
    /// none (the connection is dropped and `done` fires at once).
    pub fn attach(
        &mut self,
        owner: Owner,
        reader: Reader,
        writer: Writer,
        done: Option<futures::channel::oneshot::Sender<()>>,
    ) {
        let Some(session) = self.open(owner) else {
            return;
        };
        tracing::debug!(?session, "byte-stream connection attached");
        let mut link = ByteLink::new(session, reader, writer);
        link.done = done;
        self.links.push(link);
    }

    /// Serves one message-link connection for `owner`, opened before the driver runs (a
    /// client's one connection); up to `capacity` outgoing messages wait for its transport.
    pub fn attach_messages(&mut self, owner: Owner, capacity: usize) -> Option<MessageSession> {
        let (tx, outgoing) = async_channel::unbounded();
        let session = self.open(owner)?;
        let out = MessageOut {
            outgoing: tx,
            capacity: capacity.max(1),
            one_request: false,
        };
        self.messages.insert(session, out);
        Some(MessageSession::new(session, self.link_tx.clone(), outgoing))
    }

    fn open(&mut self, owner: Owner) -> Option<SessionId> {
        let session = self.host.open(now(), A::ROLE, owner).ok()?;
        self.app.opened(session);
        Some(session)
    }

    /// Ends every connection's input when `signal` completes (SIGTERM).
    pub fn stop_on(&mut self, signal: BoxFuture<()>) {
        self.terminated = Some(signal);
    }

    /// One turn over every source. Returns whether anything happened.
    fn turn(&mut self, cx: &mut Context<'_>) -> bool {
        let mut busy = self.take_commands(cx);
        busy |= self.take_store_news(cx);
        busy |= self.take_link_inputs(cx);
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
        if let Some(observer) = self.observer.as_mut() {
            let host = &self.host;
            // The host's clock, as the turn moved it.
            observer.board.expire(host.now(), host);
            observer.board.prune(|task| host.has_task(task));
        }
        self.claim();
        self.write_store();
        self.write_links(cx);
        busy
    }

    /// Starts the next write to the store, when one may go.
    fn write_store(&mut self) {
        let Some(link) = self.store.as_mut() else {
            return;
        };
        let Some(batch) = link.next_batch() else {
            return;
        };
        let host = &self.host;
        let spans = (self.spans).writes(link.store.name(), &batch, |task| host.runs_here(task));
        let write = link.store.write(batch.clone());
        let tx = self.tx.clone();
        let timed = (self.observer.as_ref())
            .and_then(|o| o.families.clone())
            .map(|families| (families, link.store.name().to_owned()));
        self.runtime.spawn(Box::pin(async move {
            let started = std::time::Instant::now();
            let result = write.await;
            if let Err(error) = &result {
                for span in &spans {
                    span.record("error", tracing::field::display(error));
                }
            }
            drop(spans);
            if let Some((families, store)) = timed {
                let outcome = result.as_ref().map(Vec::len).map_err(|_| ());
                let seconds = started.elapsed().as_secs_f64();
                families.store_wrote(&store, batch.len(), seconds, outcome);
            }
            let _ = tx.send(Command::Stored { batch, result }).await;
        }));
    }

    /// A write returned: what waited for it goes out (a reply waiting for an entry the store
    /// refused for good as an error), or it is written again later.
    fn stored(
        &mut self,
        batch: &[taskwire_engine::JournalEntry],
        result: Result<Vec<crate::store::Refused>, crate::StoreError>,
    ) {
        let Some(link) = self.store.as_mut() else {
            return;
        };
        match result {
            Ok(refused) => {
                link.writing = false;
                link.failures = 0;
                let Some(last) = batch.last() else {
                    return;
                };
                if refused.is_empty() {
                    self.host.confirm(now(), last.seq);
                } else {
                    let errors = journal::refusals(link.store.name(), batch, &refused);
                    let stored = journal::superseded(refused);
                    for task in &stored {
                        if self.host.runs_here(&task.info.id) {
                            tracing::warn!(task = %task.info.id, "this process's claim on a task ran out and another runs it now; its work here stops");
                        }
                    }
                    self.host.refuse_journal(now(), last.seq, &errors, stored);
                }
            }
            Err(error) => {
                let wait = link.failed(batch);
                tracing::error!(
                    store = link.store.name(),
                    %error,
                    retry_in = ?wait,
                    "a task store write failed; the replies that depend on it fail, and the write is retried"
                );
                let failed = RpcError::internal(format!(
                    "The task store {} could not save the change this answer depends on ({error}); \
                     it may not survive a restart. The server retries the write; ask again.",
                    link.store.name()
                ));
                if let Some(last) = batch.last() {
                    self.host.fail_journal(now(), last.seq, &failed);
                }
                let tx = self.tx.clone();
                let sleep = self.runtime.sleep(wait);
                self.runtime.spawn(Box::pin(async move {
                    sleep.await;
                    let _ = tx.send(Command::StoreRetry).await;
                }));
            }
        }
    }

    /// Loads the store's tasks into the host before the first turn; `Pending` until then.
    /// A store that cannot load stops the driver (serving without its tasks would lose them).
    fn load_store(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        let Some(link) = self.store.as_mut() else {
            return Poll::Ready(());
        };
        let Some(loading) = link.loading.as_mut() else {
            return Poll::Ready(());
        };
        let Poll::Ready(loaded) = loading.as_mut().poll(cx) else {
            return Poll::Pending;
        };
        link.loading = None;
        let name = link.store.name().to_owned();
        let restored = loaded.map_err(|e| e.to_string()).and_then(|tasks| {
            // A task the server made in its setup gives way to the stored one of that id
            // (the same task, from an earlier run).
            for task in &tasks {
                let _ = self.host.remove_task(now(), &task.info.id);
            }
            // From here on every change is stored (the tasks held now first), the deletion
            // of stored tasks whose retention ran out while the server was down included.
            let _ = self.host.set_durability(now(), Durability::Confirmed);
            if self.observer.is_some() {
                // The operator's view: what was journaled so far first (the tasks made in
                // the setup, those given way), then the stored tasks, which their restore
                // does not journal.
                self.route_outputs(cx);
                for task in &tasks {
                    self.show_synced(task, false);
                }
            }
            self.host
                .restore(now(), tasks)
                .map_err(|e| format!("cannot restore its tasks: {e}"))
        });
        match restored {
            Ok(count) => tracing::info!(store = name, tasks = count, "tasks restored"),
            Err(error) => {
                tracing::error!(store = name, %error, "the task store cannot load; stopping");
                self.stop();
            }
        }
        Poll::Ready(())
    }

    fn take_commands(&mut self, cx: &mut Context<'_>) -> bool {
        let mut busy = false;
        for _ in 0..COMMANDS_PER_TURN {
            match poll_next(self.commands.as_mut(), cx) {
                Poll::Ready(command) => {
                    self.on_command(command);
                    busy = true;
                }
                Poll::Pending => break,
            }
        }
        busy
    }

    /// What message-link handles sent: opens, messages, closes.
    fn take_link_inputs(&mut self, cx: &mut Context<'_>) -> bool {
        let mut busy = false;
        // Only the driver's own sender and nothing queued (a handle's last words included):
        // no message link can send, so a byte-stream-only driver (stdio) does not register
        // for input that cannot come.
        if self.link_tx.sender_count() == 1 && self.link_inputs.is_empty() {
            return false;
        }
        for _ in 0..COMMANDS_PER_TURN {
            let Poll::Ready(input) = poll_next(self.link_inputs.as_mut(), cx) else {
                break;
            };
            busy = true;
            // Input is refused only once the host is shut down, when every session is
            // closed and its input no longer matters.
            match input {
                LinkInput::Open {
                    owner,
                    outgoing,
                    capacity,
                    first,
                    reply,
                } => {
                    let session = if self.stopping {
                        None
                    } else {
                        self.open(owner)
                    };
                    if let Some(session) = session {
                        tracing::debug!(?session, "message session opened");
                        let out = MessageOut {
                            outgoing,
                            capacity,
                            one_request: first.is_some(),
                        };
                        self.messages.insert(session, out);
                        if let Some(first) = first {
                            self.deliver(session, first);
                            self.route_outputs(cx);
                            self.close_unless_answering(session);
                        }
                    }
                    let _ = reply.send(session);
                }
                LinkInput::Message { session, message } => self.deliver(session, message.into()),
                LinkInput::Close { session } => self.host.close(now(), session),
            }
        }
        busy
    }

    /// Closes a session opened for one message once that message needs no answer (a
    /// notification or a response, or a request answered at once, which closed it already):
    /// its transport sees the session's messages end.
    fn close_unless_answering(&mut self, session: SessionId) {
        let parked = self
            .store
            .as_ref()
            .is_some_and(|link| link.parked.contains_key(&session));
        if !parked && !self.host.answering(session) && self.messages.remove(&session).is_some() {
            self.host.close(now(), session);
        }
    }

    fn read_links(&mut self, cx: &mut Context<'_>) -> bool {
        let mut busy = false;
        let Driver {
            host,
            links,
            observer,
            ..
        } = self;
        for link in links.iter_mut() {
            if link.input_ended() {
                continue;
            }
            let session = link.session;
            match link.poll_read(cx) {
                Poll::Pending => {}
                // Refused only once the host is shut down (see above).
                Poll::Ready(Read::Bytes(bytes)) => {
                    busy = true;
                    let timed = observer.as_mut().and_then(|o| o.requests.as_mut());
                    let since = timed.as_ref().map(|requests| requests.now());
                    let _ = host.handle_bytes(now(), session, bytes);
                    if let (Some(requests), Some(since)) = (timed, since) {
                        requests.received(host.requests_read(), since);
                    }
                }
                Poll::Ready(Read::Eof) => {
                    busy = true;
                    let _ = host.handle_eof(now(), session);
                }
            }
        }
        busy
    }

    /// Drains the host: messages to their connection, events to the application. A message
    /// link whose transport cannot take a message (too slow, or gone) loses its session.
    fn route_outputs(&mut self, cx: &mut Context<'_>) -> bool {
        let mut busy = false;
        let mut sent_at = None;
        while let Some(output) = self.host.poll_output() {
            busy = true;
            match output {
                Output::Send(t) => {
                    if let (
                        Some(requests),
                        MessageKind::Reply {
                            to: Some(to),
                            error,
                        },
                    ) = (
                        self.observer.as_mut().and_then(|o| o.requests.as_mut()),
                        &t.kind,
                    ) {
                        // One clock read for the answers routed together.
                        let at = *sent_at.get_or_insert_with(|| requests.now());
                        let version = self.host.protocol_version(t.session);
                        requests.answered(t.session, to, *error, version, at);
                    }
                    if let Some(out) = self.messages.get(&t.session) {
                        let replied =
                            out.one_request && matches!(t.kind, MessageKind::Reply { .. });
                        let message = Outgoing {
                            kind: t.kind,
                            message: t.message,
                        };
                        let fell_behind = out.outgoing.len() >= out.capacity
                            || out.outgoing.try_send(Box::new(message)).is_err();
                        if fell_behind {
                            tracing::warn!(
                                session = ?t.session,
                                "a message session's transport fell behind or left; closing it"
                            );
                        }
                        if fell_behind || replied {
                            self.messages.remove(&t.session);
                            self.host.close(now(), t.session);
                        }
                    } else if let Some(link) =
                        self.links.iter_mut().find(|l| l.session == t.session)
                    {
                        link.queue(&t.message);
                    }
                }
                Output::Event(event) => self.on_event(event, cx),
                Output::Journal(entry) => {
                    if let Some(observer) = self.observer.as_mut() {
                        let host = &self.host;
                        let runs_here = || host.runs_here(entry.change.task());
                        let known = |tool: &str| host.tool(tool).is_some();
                        observer.board.journaled(&entry.change, &runs_here, &known);
                    }
                    match self.store.as_mut() {
                        Some(link) => link.pending.push(entry),
                        // No store keeps the entry: it is as stored as it will be. Confirming
                        // it at once releases what a host configured with
                        // `Durability::Confirmed` holds for it (it would wait forever).
                        None => self.host.confirm(now(), entry.seq),
                    }
                }
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
                tracing::debug!(session = ?link.session, "the peer stopped reading");
                ended.push(link.session);
            }
        }
        for session in ended {
            let _ = self.host.handle_eof(now(), session);
        }
        if self.until == Until::LinksEnd
            && !self.stopping
            && self.links.iter().all(ByteLink::input_ended)
            && self.messages.is_empty()
        {
            self.stop();
        }
        if self.stopping {
            self.route_outputs(cx);
            self.write_store();
            self.messages.clear();
        }
        let host = &self.host;
        let stopping = self.stopping;
        self.links.retain_mut(|link| {
            let closed = host.is_closed(link.session);
            let done =
                (closed || stopping) && (link.output_gone() || link.poll_close(cx).is_ready());
            !done
        });
        if !(self.stopping
            && self.links.is_empty()
            && self.store.as_ref().is_none_or(StoreLink::idle))
        {
            return false;
        }
        self.store
            .as_mut()
            .is_none_or(|link| link.poll_hand_back(cx).is_ready())
    }

    /// Closes every session and stops all work.
    fn stop(&mut self) {
        tracing::debug!("stopping: every session closes and all work stops");
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

    fn ctx(&mut self) -> (&mut A, Ctx<'_, A::Command>) {
        let ctx = Ctx {
            host: &mut self.host,
            commands: &self.tx,
            runtime: &self.runtime,
            spans: &mut self.spans,
        };
        (&mut self.app, ctx)
    }

    // ---- commands ---------------------------------------------------------------------------

    fn on_command(&mut self, command: Command<A::Command>) {
        let now = now();
        match command {
            Command::Finished { call, outcome } => {
                self.workers.remove(&call);
                self.finish(call, outcome);
            }
            Command::TaskMessage { call, message } => {
                // A finished or unknown call is a race with a cancel or expiry: nothing to do.
                let _ = self.host.set_task_message(now, call, message);
                self.call_changed(call, true, None);
            }
            Command::CancelTask {
                call,
                message,
                reply,
            } => {
                let cancelled = self.host.cancel_work(now, call, message);
                if cancelled.is_ok() {
                    tracing::info!(%call, "task cancelled by its tool");
                }
                self.call_changed(call, false, None);
                let _ = reply.send(cancelled.map_err(Error::Usage));
            }
            Command::Progress {
                call,
                progress,
                total,
                message,
            } => {
                if let (Some(observer), Some(task)) =
                    (self.observer.as_mut(), self.host.call_task(call))
                {
                    let reported = taskwire_engine::TaskProgress {
                        progress,
                        total,
                        message: message.clone(),
                    };
                    observer.board.progress(task, reported);
                }
                let _ = self
                    .host
                    .notify_progress(now, call, progress, total, message);
                self.call_changed(call, true, None);
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
                    if let (Some(observer), Some(task)) =
                        (self.observer.as_mut(), self.host.call_task(call))
                    {
                        observer.board.asked(task, method);
                    }
                    self.call_changed(call, false, None);
                    self.inputs.insert(input, (call, reply));
                }
                Err(e) => {
                    let _ = reply.send(Err(Error::Usage(e)));
                }
            },
            Command::StartTask { call, reply } => {
                let started = self.host.start_task(now, call).map_err(Error::Usage);
                self.call_changed(call, false, None);
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
            Command::Watch { reply } => {
                let host = &self.host;
                let feed = self.observer.as_mut().map(|o| {
                    o.board.refresh(host);
                    o.board.watch()
                });
                let _ = reply.send(Ok(feed));
            }
            Command::Task { task, reply } => {
                let _ = reply.send(Ok(self.host.task(&task)));
            }
            Command::Cancel { task, by, reply } => {
                let _ = reply.send(self.cancel_by_operator(&task, &by));
            }
            Command::Stored { batch, result } => self.stored(&batch, result),
            Command::StoreRetry => {
                if let Some(link) = self.store.as_mut() {
                    link.waiting = false;
                }
            }
            Command::Fetched { session, found } => self.fetched(session, found),
            Command::Claimed { asked, found } => self.claimed(asked, found),
            Command::App(command) => {
                let (app, ctx) = self.ctx();
                app.on_command(command, ctx);
            }
        }
    }

    /// Shows a task another process changed, or one read from the store, in the operator's
    /// view (if kept).
    fn show_synced(&mut self, task: &taskwire_engine::TaskSnapshot, runs_here: bool) {
        if let Some(observer) = self.observer.as_mut() {
            let host = &self.host;
            observer
                .board
                .synced(task, runs_here, &|tool| host.tool(tool).is_some());
        }
    }

    /// An operator cancels `task` (a dashboard's button): as its tool would, with a status
    /// message naming `by`; logged.
    fn cancel_by_operator(&mut self, task: &str, by: &str) -> Result<(), Error> {
        let message = Some(format!("Cancelled by {by}"));
        self.host
            .cancel_hosted(now(), task, message)
            .map_err(Error::Usage)?;
        tracing::info!(%task, operator = by, "task cancelled by an operator");
        Ok(())
    }

    // ---- events -----------------------------------------------------------------------------

    fn on_event(&mut self, event: Event, cx: &mut Context<'_>) {
        match event {
            Event::Stop { call, reason, .. } => {
                tracing::debug!(?call, ?reason, "call stopped");
                if let Some((worker, span)) = self.workers.remove(&call) {
                    span.in_scope(|| trace::stopped(Some(reason)));
                    worker.abort();
                }
                self.call_changed(call, false, Some(reason));

                // Its input requests will get no answer (the call is over).
                self.inputs.retain(|_, (asker, _)| *asker != call);
            }
            Event::InputResponse { input, outcome, .. } => {
                if let Some((call, reply)) = self.inputs.remove(&input) {
                    if let (Some(observer), Some(task)) =
                        (self.observer.as_mut(), self.host.call_task(call))
                    {
                        observer.board.answered(task, outcome.is_ok());
                    }
                    self.call_changed(call, false, None);
                    let _ = reply.send(outcome.map_err(Error::from_outcome));
                }
            }
            event => {
                if let Event::Closed { session } = &event {
                    tracing::debug!(?session, "session closed");
                    if let Some(requests) = self.observer.as_mut().and_then(|o| o.requests.as_mut())
                    {
                        requests.closed(*session);
                    }
                    // A message link's transport sees its channel end.
                    self.messages.remove(session);
                }
                // A call that runs as a task (or was offered one) goes on a driver-fed board.
                let task_call = match &event {
                    Event::ToolCall(c) if c.task.is_some() || c.task_offered => {
                        self.feed_board(|board, host, now, known| {
                            board.call(c.call, &c.name, c.task.as_ref(), host, now, known);
                        });
                        Some((c.call, c.task.is_none()))
                    }
                    _ => None,
                };
                let (app, ctx) = self.ctx();
                let work = app.on_event(event, ctx);
                match task_call {
                    // The application answered already (its task, if made, may have ended).
                    Some((call, _)) if work.is_none() => self.call_changed(call, false, None),
                    // It may have made the offered task; the task's work has not run yet.
                    Some((call, true)) => self.feed_board(|board, host, now, _| {
                        board.offer_taken(call, host, now);
                    }),
                    _ => {}
                }
                if let Some(work) = work {
                    self.run(work, cx);
                }
            }
        }
    }
}

impl<A: App> Future for Driver<A> {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = &mut *self;
        if this.load_store(cx).is_pending() {
            return Poll::Pending;
        }
        if this.observer.as_ref().is_some_and(|o| o.board.loading) {
            // What the host held before (loaded, or made in its setup) becomes rows.
            this.route_outputs(cx);
            if let Some(observer) = this.observer.as_mut() {
                observer.board.loading = false;
                if observer.board.driven() {
                    let _ = this.host.set_durability(now(), Durability::Volatile);
                }
            }
        }
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

impl<A: App> Drop for Driver<A> {
    fn drop(&mut self) {
        for (_, (worker, span)) in self.workers.drain() {
            span.in_scope(|| trace::stopped(None));
            worker.abort();
        }
        // A command queued after the last turn would keep its caller waiting forever (the
        // caller's handle keeps the channel alive): closed, then dropped, each caller's reply
        // fails at once ("Connection closed").
        self.commands.close();
        while let Ok(command) = self.commands.try_recv() {
            drop(command);
        }
        self.link_inputs.close();
        while let Ok(input) = self.link_inputs.try_recv() {
            drop(input);
        }
    }
}

/// The next item of a channel the driver keeps a sender of (so it never ends while the
/// driver runs); `Pending` registers `cx`.
fn poll_next<T>(receiver: Pin<&mut Receiver<T>>, cx: &mut Context<'_>) -> Poll<T> {
    use futures::Stream;
    match receiver.poll_next(cx) {
        Poll::Ready(Some(item)) => Poll::Ready(item),
        Poll::Ready(None) | Poll::Pending => Poll::Pending,
    }
}
