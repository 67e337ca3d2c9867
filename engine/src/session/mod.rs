//! One MCP connection as a sans-IO state machine.
//!
//! Inputs (`handle_*`) take the caller's time and never fail on peer bytes; commands return
//! `Err` only for misuse of this API; outputs are drained with [`Session::poll_output`], and
//! [`Session::poll_timeout`] says when to call [`Session::handle_timeout`] next.

mod dispatch;
mod lifecycle;
mod outbound;
mod receiver;
mod requestor;
mod tools;

use std::collections::{HashMap, VecDeque};

use serde::Serialize;
use serde_json::Value;

use crate::config::Config;
use crate::deadlines::Deadlines;
use crate::event::{Event, Output};
use crate::framing::{Frame, LineFramer};
use crate::jsonrpc::{self, RequestId, RpcError};
use crate::store::TaskStore;
use crate::time::{Millis, MAX_MILLIS};
use crate::UsageError;

pub use receiver::ProgressTarget;
pub use tools::ToolDef;

use outbound::Outbound;
use receiver::Hosted;
use requestor::RemoteTask;
use tools::Tools;

/// Which end of the connection this session is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// Answers `initialize`, hosts `tools/call` tasks, polls client-hosted tasks.
    Server,
    /// Sends `initialize`, polls `tools/call` tasks, hosts sampling/elicitation tasks.
    Client,
}

#[derive(Debug, PartialEq, Eq)]
enum Phase {
    New,
    Initializing,
    Ready { version: String },
    Closed,
}

/// A request from the peer that still awaits our answer.
#[derive(Debug)]
enum InboundRequest {
    /// Answered by the application through `respond`; the answer carries the
    /// related-task `_meta` when the request served a peer's task.
    App {
        progress_token: Option<Value>,
        related_task: Option<String>,
    },
    /// A `tasks/result` parked until its task is terminal.
    Parked { task: String },
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum Timer {
    Poll(String),
    Request(RequestId),
}

/// Source of task ids for tasks this session creates; ids must be unique and unguessable.
pub type TaskIdSource = Box<dyn FnMut() -> String + Send>;

/// One MCP connection, either role, with no IO of its own.
pub struct Session {
    role: Role,
    config: Config,
    new_task_id: TaskIdSource,
    now: Millis,
    framer: LineFramer,
    out: VecDeque<Output>,
    phase: Phase,
    peer_capabilities: Value,
    tools: Tools,
    inbound: HashMap<RequestId, InboundRequest>,
    outbound: Outbound,
    store: TaskStore,
    hosted: HashMap<String, Hosted>,
    remote: HashMap<String, RemoteTask>,
    timers: Deadlines<Timer>,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("role", &self.role)
            .field("phase", &self.phase)
            .field("now", &self.now)
            .field("tasks", &self.store.len())
            .field("remote_tasks", &self.remote.len())
            .finish_non_exhaustive()
    }
}

impl Session {
    /// A server session. `task_ids` supplies ids for the tasks it creates.
    pub fn server(config: Config, task_ids: TaskIdSource, now: Millis) -> Self {
        Session::new(Role::Server, config, task_ids, now)
    }

    /// A client session; call [`Session::initialize`] to start the handshake.
    pub fn client(config: Config, task_ids: TaskIdSource, now: Millis) -> Self {
        Session::new(Role::Client, config, task_ids, now)
    }

    fn new(role: Role, config: Config, new_task_id: TaskIdSource, now: Millis) -> Self {
        Session {
            role,
            framer: LineFramer::new(config.max_line_bytes),
            store: TaskStore::new(config.tasks.max_tasks),
            config,
            new_task_id,
            now: now.min(MAX_MILLIS),
            out: VecDeque::new(),
            phase: Phase::New,
            peer_capabilities: Value::Null,
            tools: Tools::default(),
            inbound: HashMap::new(),
            outbound: Outbound::default(),
            hosted: HashMap::new(),
            remote: HashMap::new(),
            timers: Deadlines::new(),
        }
    }

    // ---- inputs -------------------------------------------------------------------------

    /// Feeds bytes from a newline-delimited stream (stdio). Partial lines are buffered.
    pub fn handle_bytes(&mut self, now: Millis, bytes: &[u8]) {
        self.advance(now);
        let mut framer = std::mem::take(&mut self.framer);
        framer.push(bytes, |frame| self.handle_frame(frame));
        self.framer = framer;
    }

    /// The byte stream ended: handles a final unterminated line, then closes the session.
    pub fn handle_eof(&mut self, now: Millis) {
        self.advance(now);
        let mut framer = std::mem::take(&mut self.framer);
        framer.finish(|frame| self.handle_frame(frame));
        self.framer = framer;
        self.close(now);
    }

    /// Feeds one complete JSON-RPC message (a transport that frames messages itself).
    pub fn handle_message(&mut self, now: Millis, message: &[u8]) {
        self.advance(now);
        self.handle_frame(Frame::Line(message));
    }

    /// Fires every deadline due at `now`. Spurious calls do nothing.
    pub fn handle_timeout(&mut self, now: Millis) {
        self.advance(now);
        while let Some(timer) = self.timers.pop_due(self.now) {
            match timer {
                Timer::Poll(task) => self.poll_remote_task(&task),
                Timer::Request(id) => self.time_out(id),
            }
        }
    }

    // ---- outputs ------------------------------------------------------------------------

    /// The next message to send or event to handle. Drain to `None` after every call
    /// that takes `&mut self`, then read [`Session::poll_timeout`].
    pub fn poll_output(&mut self) -> Option<Output> {
        self.out.pop_front()
    }

    /// When [`Session::handle_timeout`] must be called next; `None` when nothing is scheduled.
    pub fn poll_timeout(&self) -> Option<Millis> {
        if self.phase == Phase::Closed {
            return None;
        }
        match (self.timers.next(), self.store.next_expiry()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    // ---- getters ------------------------------------------------------------------------

    /// This session's role.
    pub fn role(&self) -> Role {
        self.role
    }

    /// The negotiated protocol version, once the handshake is done.
    pub fn protocol_version(&self) -> Option<&str> {
        match &self.phase {
            Phase::Ready { version } => Some(version),
            _ => None,
        }
    }

    /// Whether the session has been closed.
    pub fn is_closed(&self) -> bool {
        self.phase == Phase::Closed
    }

    /// The peer's capabilities as declared in the handshake (`null` before it).
    pub fn peer_capabilities(&self) -> &Value {
        &self.peer_capabilities
    }

    /// The latest time the session has seen.
    pub fn now(&self) -> Millis {
        self.now
    }

    // ---- shared plumbing ----------------------------------------------------------------

    /// Moves the clock forward (never back) and applies the expiry rule while open
    /// (a closed session says nothing more, not even about expiry).
    fn advance(&mut self, now: Millis) {
        self.now = self.now.max(now.min(MAX_MILLIS));
        if self.phase == Phase::Closed {
            return;
        }
        while let Some((id, record)) = self.store.pop_expired(self.now) {
            self.on_task_expired(id, record);
        }
    }

    fn handle_frame(&mut self, frame: Frame<'_>) {
        if self.phase == Phase::Closed {
            return;
        }
        match frame {
            Frame::Line(line) => self.handle_line(line),
            Frame::TooLong => {
                let error = RpcError::invalid_request(format!(
                    "Invalid Request: message exceeds {} bytes",
                    self.config.max_line_bytes
                ));
                self.send(jsonrpc::error_line(None, &error));
                self.event(Event::PeerError {
                    message: error.message,
                });
            }
        }
    }

    fn send(&mut self, line: String) {
        self.out.push_back(Output::Send(line));
    }

    fn event(&mut self, event: Event) {
        self.out.push_back(Output::Event(event));
    }

    fn reply<T: Serialize + ?Sized>(&mut self, id: &RequestId, result: &T) {
        self.send(jsonrpc::result_line(id, result));
    }

    fn reply_error(&mut self, id: &RequestId, error: &RpcError) {
        self.send(jsonrpc::error_line(Some(id), error));
    }

    fn notify<P: Serialize>(&mut self, method: &str, params: P) {
        self.send(jsonrpc::notification_line(method, Some(params)));
    }

    fn ready_version(&self) -> Option<&str> {
        self.protocol_version()
    }

    /// Tasks are live in this session: negotiated version has them and we declared hosting
    /// them (a client only hosts sampling and elicitation tasks).
    fn hosts_tasks(&self) -> bool {
        let declared = self.role == Role::Server || self.config.client.hosts_tasks();
        self.config.tasks.enabled
            && declared
            && self
                .ready_version()
                .is_some_and(crate::wire::v2025_11_25::version_has_tasks)
    }

    fn check_open(&self) -> Result<(), UsageError> {
        match self.phase {
            Phase::Closed => Err(UsageError::Closed),
            _ => Ok(()),
        }
    }

    /// Task-augmented requests need a negotiated version that has tasks.
    fn check_tasks_negotiated(&self) -> Result<(), UsageError> {
        self.check_ready()?;
        match self.protocol_version() {
            Some(v) if crate::wire::v2025_11_25::version_has_tasks(v) => Ok(()),
            _ => Err(UsageError::NotNegotiated(
                "tasks (the negotiated protocol version has none)",
            )),
        }
    }

    fn check_ready(&self) -> Result<(), UsageError> {
        match self.phase {
            Phase::Closed => Err(UsageError::Closed),
            Phase::Ready { .. } => Ok(()),
            _ => Err(UsageError::NotInitialized),
        }
    }
}
