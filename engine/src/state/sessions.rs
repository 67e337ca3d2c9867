//! Sessions: one connection's protocol state (its handshake, the peer's requests awaiting
//! our answer, our requests awaiting the peer's, the peer's tasks we follow, its framer),
//! opening, closing, and shutting the host down. Tasks belong to the host, not to a session.

use std::collections::{HashMap, HashSet, VecDeque};
use std::hash::BuildHasherDefault;

use serde_json::Value;

use super::following::RemoteTask;
use super::outbound::Outbound;
use super::output::Held;
use super::tasks::{IdHasher, OwnerIdx};
use super::{Kept, Sent, State, Timer};
use crate::event::{Event, StopReason};
use crate::framing::LineFramer;
use crate::ids::{CallId, Owner, SessionId, TaskId};
use crate::jsonrpc::{code, RequestId, RpcError};
use crate::model::{Era, Role};

/// Where the handshake stands.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Phase {
    New,
    Initializing,
    Ready { version: String },
}

/// A peer request that still awaits our answer.
#[derive(Debug)]
pub(crate) enum PeerRequest {
    /// Answered by the application through its call.
    Call(CallId),
    /// Held open by an era (a parked result, a stream) until it answers it.
    Held(Era),
}

/// One session.
#[derive(Debug)]
pub(crate) struct Session<K: Kept> {
    pub role: Role,
    pub owner: OwnerIdx,
    /// The era a client session speaks, once it opens; a server session reads each request
    /// in its own era and has none.
    pub era: Option<Era>,
    pub phase: Phase,
    pub peer_capabilities: Value,
    pub framer: LineFramer,
    /// The peer's requests awaiting our answer.
    pub requests: HashMap<RequestId, PeerRequest>,
    /// Our requests awaiting the peer's answer.
    pub outbound: Outbound<K>,
    /// Tasks the peer hosts that we follow (the requestor role).
    pub remote: HashMap<TaskId, RemoteTask>,
    /// Messages waiting for the journal (each with the entry it waits for), in order.
    pub held: VecDeque<Held>,
    /// Hosted tasks whose changes this session hears (so closing it costs only its own).
    pub following: HashSet<TaskId, BuildHasherDefault<IdHasher>>,
    /// Closing: nothing more is sent to it.
    pub closing: bool,
    /// What each era keeps on it.
    pub kept: K::Session,
}

impl<K: Kept> Session<K> {
    fn new(role: Role, owner: OwnerIdx, max_line_bytes: usize) -> Self {
        Session {
            role,
            owner,
            era: None,
            phase: Phase::New,
            peer_capabilities: Value::Null,
            framer: LineFramer::new(max_line_bytes),
            requests: HashMap::new(),
            outbound: Outbound::default(),
            remote: HashMap::new(),
            held: VecDeque::new(),
            following: HashSet::default(),
            closing: false,
            kept: K::Session::default(),
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
}

impl<K: Kept> State<K> {
    /// Opens a session for `owner`.
    pub fn open_session(&mut self, role: Role, owner: &Owner) -> SessionId {
        let owner = self.tasks.hold(owner);
        let session = Session::new(role, owner, self.config.limits.max_line_bytes);
        let (index, generation) = self.sessions.insert(session);
        SessionId { index, generation }
    }

    /// The index of the owner a session acts for (none: an owner that holds no task).
    pub fn owner_of(&self, session: SessionId) -> OwnerIdx {
        self.session(session).map_or(OwnerIdx::MAX, |s| s.owner)
    }

    /// Ends a session: our pending requests fail, the peer's tasks we follow end, its plain
    /// calls stop, parked results are dropped, and it is forgotten. Its tasks live on.
    pub fn close_session(&mut self, session: SessionId) {
        let Some(s) = self.session_mut(session) else {
            return;
        };
        s.closing = true;
        let pending = s.outbound.drain_sorted();
        let closed = RpcError::new(code::CONNECTION_CLOSED, "Connection closed");
        for (id, sent) in pending {
            self.clear_timer(&Timer::Request(session, id.clone()));
            match sent {
                Sent::App => self.event(Event::Response {
                    session,
                    request: id,
                    outcome: Err(closed.clone()),
                }),
                Sent::Era(purpose) => K::protocol(K::era_of(&purpose))
                    .closed_pending(self, session, id, purpose, &closed),
            }
        }
        for era in Era::ALL {
            self.protocol(era).closed(self, session, &closed);
        }
        self.end_following(session, &closed);
        let Some(s) = self.sessions.remove(session.index, session.generation) else {
            return;
        };
        self.tasks.release(s.owner);
        let mut requests: Vec<_> = s.requests.into_iter().collect();
        requests.sort_by(|a, b| a.0.cmp(&b.0));
        for (_, request) in requests {
            if let PeerRequest::Call(call) = request {
                if self.remove_call(call).is_some() {
                    self.stop(call, StopReason::Closed, Some("Connection closed".into()));
                }
            }
        }
        for task in &s.following {
            let call = self.work.get(task).copied();
            if let Some(state) = call.and_then(|c| self.call_mut(c)) {
                state.followers.retain(|f| f.session != session);
            }
        }
        self.event(Event::Closed { session });
    }

    /// A client session's era could not open it (its server speaks an older one): the next
    /// older era opens it, or the session fails when there is none.
    pub fn fall_back(&mut self, session: SessionId) {
        let Some(s) = self.session_mut(session) else {
            return;
        };
        let older = s
            .era
            .and_then(|era| Era::ALL.iter().position(|&e| e == era))
            .and_then(|at| Era::ALL.get(at + 1).copied());
        s.phase = Phase::New;
        s.era = older;
        match older {
            Some(era) => {
                self.protocol(era).open(self, session, true);
            }
            None => {
                let error =
                    RpcError::new(code::INVALID_PARAMS, "The server speaks no era we speak");
                self.event(Event::InitializeFailed { session, error });
                self.close_session(session);
            }
        }
    }

    /// Closes every session and stops all work ([`StopReason::Closed`]); afterwards nothing
    /// is scheduled and nothing accepted.
    pub fn shutdown(&mut self) {
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
            let Some(state) = self.remove_call(call) else {
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
        self.clear_all_timers();
        self.shut_down = true;
    }
}
