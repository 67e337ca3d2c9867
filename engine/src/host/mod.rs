//! The task host: every hosted task, every session, one output queue.
//!
//! Inputs (`handle_*`) take the caller's time and never fail on peer bytes; commands return
//! `Err` only for misuse of this API and then change nothing; outputs are drained with
//! [`Host::poll_output`], and [`Host::poll_timeout`] says when to call
//! [`Host::handle_timeout`] next.

mod calls;
pub(crate) mod commands;
mod dispatch;
mod journal;
mod logging;
pub(crate) mod tasks;

use std::collections::{HashMap, VecDeque};

use serde_json::Value;

use crate::config::Config;
use crate::deadlines::Deadlines;
use crate::era::v2025_11_25::Tools;
use crate::event::{Change, Event, JournalEntry, MessageKind, Output, StopReason, Transmit};
use crate::ids::{CallId, Owner, SessionId, Slab, TaskId};
use crate::jsonrpc::{self, RequestId, RpcError};
use crate::session::{Phase, Role, Session};
use crate::task::TaskSnapshot;
use crate::time::{Millis, MAX_MILLIS};
use crate::UsageError;

pub(crate) use calls::{Ask, Call, PendingInput, Rounds};
pub(crate) use commands::Answer;
use journal::Journal;
use tasks::{Record, StoredOutcome, TaskTable};

/// Source of ids for the tasks the host creates; ids must be unique and unguessable
/// (the adapters draw 128 bits from the OS; tests count).
pub type TaskIdSource = Box<dyn FnMut() -> String + Send>;

/// Deadlines of the sessions' protocol state (task expiry lives in the task table).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Timer {
    /// Poll a peer task of ours.
    Poll(SessionId, TaskId),
    /// Our request's local timeout.
    Request(SessionId, RequestId),
}

/// Hosts tasks for any number of sessions (connections), in one thread, with no IO.
///
/// See the [crate documentation](crate) for the run loop and an example.
pub struct Host {
    pub(crate) config: Config,
    /// `config.info` as JSON text, written into every 2026-07-28 result's `_meta`.
    pub(crate) info_json: Box<str>,
    pub(crate) tools: Tools,
    new_task_id: TaskIdSource,
    pub(crate) now: Millis,
    shut_down: bool,
    pub(crate) sessions: Slab<Session>,
    pub(crate) tasks: TaskTable,
    pub(crate) calls: Slab<Call>,
    /// The call doing each task's work, until the application answers it or the task goes.
    pub(crate) work: HashMap<TaskId, CallId>,
    pub(crate) timers: Deadlines<Timer>,
    out: VecDeque<Output>,
    journal: Journal,
    next_input: u64,
}

impl std::fmt::Debug for Host {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Host")
            .field("now", &self.now)
            .field("sessions", &self.sessions.len())
            .field("tasks", &self.tasks.len())
            .field("calls", &self.calls.len())
            .finish_non_exhaustive()
    }
}

impl Host {
    /// A host with no sessions yet. `task_ids` supplies the ids of the tasks it creates.
    pub fn new(config: Config, task_ids: TaskIdSource, now: Millis) -> Self {
        Host {
            info_json: serde_json::to_string(&config.info)
                .expect("an Implementation serializes")
                .into_boxed_str(),
            tools: Tools::default(),
            tasks: TaskTable::new(config.tasks.max_tasks, config.tasks.max_tasks_per_owner),
            journal: Journal::new(config.durability),
            config,
            new_task_id: task_ids,
            now: now.min(MAX_MILLIS),
            shut_down: false,
            sessions: Slab::default(),
            calls: Slab::default(),
            work: HashMap::new(),
            timers: Deadlines::new(),
            out: VecDeque::new(),
            next_input: 0,
        }
    }

    /// Opens a session for `owner`: a server session waits for the peer's `initialize`; a
    /// client session starts its handshake with [`Host::initialize`].
    pub fn open(&mut self, now: Millis, role: Role, owner: impl Into<Owner>) -> SessionId {
        self.advance(now);
        let owner = owner.into();
        let idx = self.tasks.owner(&owner);
        let session = Session::new(role, idx, owner, self.config.limits.max_line_bytes);
        let (index, generation) = self.sessions.insert(session);
        SessionId { index, generation }
    }

    // ---- inputs -------------------------------------------------------------------------

    /// Feeds bytes of a newline-delimited stream (stdio). Partial lines are buffered.
    /// Input for a closed or unknown session is ignored.
    pub fn handle_bytes(&mut self, now: Millis, session: SessionId, bytes: &[u8]) {
        self.advance(now);
        let Some(s) = self.session_mut(session) else {
            return;
        };
        let mut framer = std::mem::take(&mut s.framer);
        framer.push(bytes, |frame| self.handle_frame(session, frame));
        if let Some(s) = self.session_mut(session) {
            s.framer = framer;
        }
    }

    /// The byte stream ended: handles a final unterminated line, then closes the session.
    pub fn handle_eof(&mut self, now: Millis, session: SessionId) {
        self.advance(now);
        let Some(s) = self.session_mut(session) else {
            return;
        };
        let mut framer = std::mem::take(&mut s.framer);
        framer.finish(|frame| self.handle_frame(session, frame));
        self.close(now, session);
    }

    /// Feeds one complete JSON-RPC message (for transports that frame messages themselves).
    pub fn handle_message(&mut self, now: Millis, session: SessionId, message: &[u8]) {
        self.advance(now);
        if self.session(session).is_some() {
            self.handle_frame(session, crate::framing::Frame::Line(message));
        }
    }

    /// Fires every deadline due at `now`. Spurious calls do nothing. (Every other input
    /// fires due deadlines too, so they are never late while input keeps arriving.)
    pub fn handle_timeout(&mut self, now: Millis) {
        self.advance(now);
    }

    // ---- outputs ------------------------------------------------------------------------

    /// The next message to send, event to handle or change to store. Drain to `None` after
    /// every call that takes `&mut self`, then read [`Host::poll_timeout`].
    pub fn poll_output(&mut self) -> Option<Output> {
        self.out.pop_front()
    }

    /// When [`Host::handle_timeout`] must be called next; `None` when nothing is scheduled.
    pub fn poll_timeout(&self) -> Option<Millis> {
        if self.shut_down {
            return None;
        }
        match (self.timers.next(), self.tasks.next_expiry()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    // ---- getters ------------------------------------------------------------------------

    /// The latest time the host has seen.
    pub fn now(&self) -> Millis {
        self.now
    }

    /// A session's role, while it is open.
    pub fn role(&self, session: SessionId) -> Option<Role> {
        self.session(session).map(|s| s.role)
    }

    /// Hands requests for `method` (an exact name, or a prefix ending in `*`) to the
    /// application as [`Event::Request`], like [`Config::app_methods`](crate::Config); the
    /// methods the engine owns (the handshake, `ping`, `tools/*`, `tasks/*`) stay its own.
    pub fn serve_app_method(&mut self, method: impl Into<String>) {
        let method = method.into();
        if !self.config.app_methods.contains(&method) {
            self.config.app_methods.push(method);
        }
    }

    /// Declares a capability the application serves (e.g. `"resources"` with
    /// `{"subscribe": true}`) in the handshake and in `server/discover`, like
    /// [`Config::app_capabilities`](crate::Config); the engine's own keys win.
    pub fn declare_capability(&mut self, key: impl Into<String>, value: Value) {
        self.config.app_capabilities.insert(key.into(), value);
    }

    /// The session's negotiated protocol version, once its handshake is done.
    pub fn protocol_version(&self, session: SessionId) -> Option<&str> {
        self.session(session)?.version()
    }

    /// Whether the session is closed (or was never opened here).
    pub fn is_closed(&self, session: SessionId) -> bool {
        self.session(session).is_none()
    }

    /// The peer's capabilities as declared in the handshake (`null` before it, or when closed).
    pub fn peer_capabilities(&self, session: SessionId) -> &Value {
        static NULL: Value = Value::Null;
        self.session(session)
            .map_or(&NULL, |s| &s.peer_capabilities)
    }

    /// The owner a session acts for.
    pub fn owner(&self, session: SessionId) -> Option<&Owner> {
        self.session(session).map(|s| &s.owner_name)
    }

    /// A hosted task as stored, whoever owns it.
    pub fn task(&self, task: &str) -> Option<TaskSnapshot> {
        self.tasks.get(task).map(|r| self.snapshot(r))
    }

    /// Number of hosted tasks (every status, until they expire or are removed).
    pub fn task_count(&self) -> usize {
        self.tasks.len()
    }

    /// Number of hosted tasks `owner` holds.
    pub fn owner_task_count(&self, owner: &Owner) -> usize {
        self.tasks.owner_len(owner)
    }

    /// The call doing a task's work, until the application answers it.
    pub fn task_call(&self, task: &str) -> Option<CallId> {
        self.work.get(task).copied()
    }

    /// The task a call runs as, if it became one.
    pub fn call_task(&self, call: CallId) -> Option<&TaskId> {
        self.call(call)?.task.as_ref()
    }

    // ---- closing ------------------------------------------------------------------------

    /// Closes a session: its pending requests fail, its plain calls stop, and it is
    /// forgotten. Its tasks live on (another session of the same owner can pick them up).
    pub fn close(&mut self, now: Millis, session: SessionId) {
        self.advance(now);
        if self.session(session).is_none() {
            return;
        }
        self.close_session(session);
    }

    /// Closes every session and stops all work ([`StopReason::Closed`]); afterwards the
    /// host schedules nothing. For a process that ends (stdio at end of input).
    pub fn shutdown(&mut self, now: Millis) {
        self.advance(now);
        let open: Vec<SessionId> = self
            .sessions
            .iter()
            .map(|(index, generation, _)| SessionId { index, generation })
            .collect();
        for session in open {
            self.close_session(session);
        }
        let mut work: Vec<CallId> = self
            .calls
            .iter()
            .map(|(index, generation, _)| CallId { index, generation })
            .collect();
        work.sort();
        for call in work {
            let Some(state) = self.calls.remove(call.index, call.generation) else {
                continue;
            };
            let running = state
                .task
                .as_ref()
                .and_then(|t| self.tasks.get(t))
                .is_some_and(|r| !r.status.is_terminal());
            if let Some(task) = &state.task {
                self.work.remove(task);
            }
            if running || state.task.is_none() {
                self.stop(call, StopReason::Closed, None);
            }
        }
        self.timers = Deadlines::new();
        self.shut_down = true;
    }

    // ---- plumbing -----------------------------------------------------------------------

    pub(crate) fn session(&self, id: SessionId) -> Option<&Session> {
        self.sessions.get(id.index, id.generation)
    }

    pub(crate) fn session_mut(&mut self, id: SessionId) -> Option<&mut Session> {
        self.sessions.get_mut(id.index, id.generation)
    }

    pub(crate) fn call(&self, id: CallId) -> Option<&Call> {
        self.calls.get(id.index, id.generation)
    }

    pub(crate) fn call_mut(&mut self, id: CallId) -> Option<&mut Call> {
        self.calls.get_mut(id.index, id.generation)
    }

    pub(crate) fn add_call(&mut self, call: Call) -> CallId {
        let (index, generation) = self.calls.insert(call);
        CallId { index, generation }
    }

    pub(crate) fn remove_call(&mut self, id: CallId) -> Option<Call> {
        self.calls.remove(id.index, id.generation)
    }

    pub(crate) fn fresh_input(&mut self) -> crate::InputId {
        self.next_input += 1;
        crate::InputId(self.next_input)
    }

    /// A new task id that no task has (the source gets four tries).
    pub(crate) fn fresh_task_id(&mut self) -> Result<TaskId, RpcError> {
        for _ in 0..4 {
            let id = (self.new_task_id)();
            if !self.tasks.contains(&id) {
                return Ok(TaskId::from(id));
            }
        }
        Err(RpcError::internal("Task id source keeps repeating ids"))
    }

    /// Moves the clock forward (never back) and fires every deadline now due, in order.
    pub(crate) fn advance(&mut self, now: Millis) {
        self.now = self.now.max(now.min(MAX_MILLIS));
        if self.shut_down {
            return;
        }
        loop {
            let expiry = self.tasks.next_expiry().filter(|&at| at <= self.now);
            let timer = self.timers.next().filter(|&at| at <= self.now);
            match (expiry, timer) {
                (Some(e), Some(t)) if t < e => self.fire_timer(),
                (Some(_), _) => {
                    if let Some(record) = self.tasks.pop_expired(self.now) {
                        self.on_task_expired(record);
                    }
                }
                (None, Some(_)) => self.fire_timer(),
                (None, None) => break,
            }
        }
    }

    fn fire_timer(&mut self) {
        match self.timers.pop_due(self.now) {
            Some(Timer::Poll(session, task)) => self.poll_remote_task(session, &task),
            Some(Timer::Request(session, id)) => self.time_out(session, id),
            None => {}
        }
    }

    pub(crate) fn event(&mut self, event: Event) {
        self.out.push_back(Output::Event(event));
    }

    /// Queues a message for a session's peer. A message `about` a task with a change the
    /// store has not confirmed waits for it, and later messages of that session queue
    /// behind it so that the order holds.
    pub(crate) fn send(
        &mut self,
        session: SessionId,
        kind: MessageKind,
        about: Option<&TaskId>,
        message: String,
    ) {
        let wait = self.journal.wait_for(about);
        let Some(s) = self.sessions.get_mut(session.index, session.generation) else {
            return;
        };
        let transmit = Transmit {
            session,
            kind,
            message,
        };
        match (wait, s.held.back()) {
            (None, None) => self.out.push_back(Output::Send(transmit)),
            (wait, last) => {
                let after = last.map_or(0, |(seq, _)| *seq);
                s.held.push_back((wait.unwrap_or(0).max(after), transmit));
            }
        }
    }

    /// The answer to the peer's request `id`.
    pub(crate) fn reply(
        &mut self,
        session: SessionId,
        id: &RequestId,
        about: Option<&TaskId>,
        message: String,
    ) {
        let kind = MessageKind::Reply {
            to: Some(id.clone()),
            error: None,
        };
        self.send(session, kind, about, message);
    }

    /// An error answer (`id` omitted when it could not be read).
    pub(crate) fn reply_error(
        &mut self,
        session: SessionId,
        id: Option<&RequestId>,
        error: &RpcError,
    ) {
        let kind = MessageKind::Reply {
            to: id.cloned(),
            error: Some(error.code),
        };
        self.send(session, kind, None, jsonrpc::error_line(id, error));
    }

    /// Sends a request of ours and remembers why; a request that times out gets a timer.
    pub(crate) fn send_request<P: serde::Serialize>(
        &mut self,
        session: SessionId,
        method: &str,
        params: Option<P>,
        purpose: crate::session::Purpose,
        about: Option<&TaskId>,
    ) -> Option<RequestId> {
        let times_out = purpose.times_out();
        let meta = self.outbound_meta(session, &purpose);
        let s = self.session_mut(session)?;
        let id = s.outbound.start(purpose);
        let line = match meta {
            Some(meta) => {
                let params = crate::era::v2026_07_28::with_meta(params, meta);
                jsonrpc::request_line(&id, method, Some(params))
            }
            None => jsonrpc::request_line(&id, method, params),
        };
        if let (true, Some(ms)) = (times_out, self.config.request_timeout_ms) {
            self.timers
                .set(Timer::Request(session, id.clone()), self.now.plus(ms));
        }
        self.send(
            session,
            MessageKind::Request { id: id.clone() },
            about,
            line,
        );
        Some(id)
    }

    // ---- the journal ----------------------------------------------------------------------

    /// Reports a task's current state to the store (when journaling).
    pub(crate) fn journal_put(&mut self, task: &TaskId) {
        if !self.journal.enabled() {
            return;
        }
        let Some(record) = self.tasks.get(task) else {
            return;
        };
        let snapshot = self.snapshot(record);
        let seq = self.journal.next(task);
        self.out.push_back(Output::Journal(JournalEntry {
            seq,
            change: Change::Put(snapshot),
        }));
    }

    /// Reports a task's deletion to the store (when journaling).
    pub(crate) fn journal_delete(&mut self, task: &TaskId, reason: StopReason) {
        if !self.journal.enabled() {
            return;
        }
        let seq = self.journal.next(task);
        self.out.push_back(Output::Journal(JournalEntry {
            seq,
            change: Change::Delete {
                task: task.clone(),
                reason,
            },
        }));
    }

    /// The store holds every journal entry up to `seq`: messages waiting for them go out.
    pub fn confirm(&mut self, now: Millis, seq: u64) {
        self.journal.confirm(seq);
        let confirmed = self.journal.confirmed();
        let mut released = Vec::new();
        let ids: Vec<(u32, u32)> = self
            .sessions
            .iter()
            .filter(|(_, _, s)| !s.held.is_empty())
            .map(|(i, g, _)| (i, g))
            .collect();
        for (index, generation) in ids {
            if let Some(s) = self.sessions.get_mut(index, generation) {
                while s.held.front().is_some_and(|(seq, _)| *seq <= confirmed) {
                    if let Some((_, t)) = s.held.pop_front() {
                        released.push(t);
                    }
                }
            }
        }
        self.out.extend(released.into_iter().map(Output::Send));
        self.advance(now);
    }

    pub(crate) fn snapshot(&self, record: &Record) -> TaskSnapshot {
        let outcome = record.outcome().map(|o| match o {
            StoredOutcome::Result { raw, is_error } => crate::Outcome::Result {
                value: raw.to_owned(),
                is_error,
            },
            StoredOutcome::Error(raw) => {
                crate::Outcome::Error(serde_json::from_str(raw.get()).unwrap_or_else(|e| {
                    RpcError::internal(format!("unreadable stored error: {e}"))
                }))
            }
        });
        TaskSnapshot {
            info: record.info(),
            owner: self.tasks.owner_name(record.owner).clone(),
            era: record.era,
            input_kinds: record.input_kinds(),
            outcome,
        }
    }

    // ---- sessions closing ----------------------------------------------------------------

    /// Ends a session: our pending requests fail, its plain calls stop, parked results are
    /// dropped, and it is forgotten.
    fn close_session(&mut self, session: SessionId) {
        let Some(mut s) = self.sessions.remove(session.index, session.generation) else {
            return;
        };
        self.timers.retain(|t| match t {
            Timer::Poll(sid, _) | Timer::Request(sid, _) => *sid != session,
        });
        self.fail_outbound(session, &mut s);
        let mut inbound: Vec<_> = s.inbound.drain().collect();
        inbound.sort_by(|a, b| a.0.cmp(&b.0));
        for (_, kind) in inbound {
            if let crate::session::Inbound::App(call) = kind {
                if self.remove_call(call).is_some() {
                    self.stop(call, StopReason::Closed, Some("Connection closed".into()));
                }
            }
        }
        let follower_calls: Vec<CallId> = self.work.values().copied().collect();
        for call in follower_calls {
            if let Some(state) = self.call_mut(call) {
                state.followers.retain(|f| *f != session);
            }
        }
        self.event(Event::Closed { session });
    }

    pub(crate) fn stop(&mut self, call: CallId, reason: StopReason, message: Option<String>) {
        self.event(Event::Stop {
            call,
            reason,
            message,
        });
    }

    /// Whether the session is open and past its handshake.
    pub(crate) fn ready(&self, session: SessionId) -> Result<&Session, UsageError> {
        let s = self
            .session(session)
            .ok_or(UsageError::UnknownSession(session))?;
        match s.phase {
            Phase::Ready { .. } => Ok(s),
            _ => Err(UsageError::NotInitialized(session)),
        }
    }
}
