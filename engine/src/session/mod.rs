//! One session's protocol state: its handshake, the peer's requests awaiting our answer
//! (including parked `tasks/result`), our requests awaiting the peer's, the peer's tasks we
//! follow, and its framer. Tasks themselves belong to the host, not to a session.

mod outbound;

use std::collections::{HashMap, VecDeque};

use serde_json::Value;

use crate::era::v2025_11_25::{RemoteTask, ToolCatalog};
use crate::era::v2026_07_28::Retry;
use crate::event::Transmit;
use crate::framing::LineFramer;
use crate::host::tasks::OwnerIdx;
use crate::ids::{CallId, Owner, TaskId};
use crate::jsonrpc::RequestId;
use crate::log_level::LogLevel;

pub(crate) use outbound::{Outbound, PlainCall, Purpose};

/// Which end of the connection a session is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// Answers `initialize`, hosts `tools/call` tasks, polls client-hosted tasks.
    Server,
    /// Sends `initialize`, polls `tools/call` tasks, hosts sampling/elicitation tasks.
    Client,
}

/// Where the handshake stands.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Phase {
    New,
    Initializing,
    Ready { version: String },
}

/// A peer request that still awaits our answer.
#[derive(Debug)]
pub(crate) enum Inbound {
    /// Answered by the application through its call.
    App(CallId),
    /// A `tasks/result` parked until its task is terminal.
    Parked(TaskId),
    /// A 2026-07-28 `subscriptions/listen` stream, open until the client cancels it or
    /// every task it follows is terminal.
    Listen,
}

/// One session.
#[derive(Debug)]
pub(crate) struct Session {
    pub role: Role,
    pub owner: OwnerIdx,
    pub owner_name: Owner,
    pub phase: Phase,
    pub peer_capabilities: Value,
    pub framer: LineFramer,
    pub inbound: HashMap<RequestId, Inbound>,
    /// Parked `tasks/result` requests per task, in arrival order.
    pub parked: HashMap<TaskId, Vec<RequestId>>,
    pub outbound: Outbound,
    /// Tasks the peer hosts that we follow (the requestor role).
    pub remote: HashMap<TaskId, RemoteTask>,
    /// What the peer's `tools/list` said about each tool's task support.
    pub tools: ToolCatalog,
    /// Messages waiting for the journal (each with the entry it waits for), in order.
    pub held: VecDeque<(u64, Transmit)>,
    /// Open `subscriptions/listen` streams (2026-07-28): the listen request and the tasks
    /// it still reports on.
    pub listens: Vec<(RequestId, Vec<TaskId>)>,
    /// Our 2026-07-28 `tools/call`s waiting for the application's answers to the server's
    /// MRTR `inputRequests`, by the call's first request.
    pub retries: HashMap<RequestId, Box<Retry>>,
    /// 2025-11-25: the least severe log message the peer wants (`logging/setLevel`); none
    /// sends every level.
    pub log_level: Option<LogLevel>,
}

impl Session {
    pub fn new(role: Role, owner: OwnerIdx, owner_name: Owner, max_line_bytes: usize) -> Self {
        Session {
            role,
            owner,
            owner_name,
            phase: Phase::New,
            peer_capabilities: Value::Null,
            framer: LineFramer::new(max_line_bytes),
            inbound: HashMap::new(),
            parked: HashMap::new(),
            outbound: Outbound::default(),
            remote: HashMap::new(),
            tools: ToolCatalog::default(),
            listens: Vec::new(),
            retries: HashMap::new(),
            held: VecDeque::new(),
            log_level: None,
        }
    }

    /// The negotiated protocol version, once the handshake is done.
    pub fn version(&self) -> Option<&str> {
        match &self.phase {
            Phase::Ready { version } => Some(version),
            _ => None,
        }
    }

    pub fn is_ready(&self) -> bool {
        matches!(self.phase, Phase::Ready { .. })
    }

    /// A client session opened in 2026-07-28 (with `server/discover`).
    pub fn is_modern(&self) -> bool {
        self.role == Role::Client && self.version() == Some(crate::era::v2026_07_28::VERSION)
    }
}
