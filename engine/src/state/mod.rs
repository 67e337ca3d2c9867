//! The era-neutral state every protocol era works on, and its mechanisms: hosted tasks and
//! their lifecycle, calls, sessions, our requests, deadlines, the journal and the output
//! queue. No wire shape lives here: the eras read and write messages, and this layer
//! reaches them only through [`Protocol`].
//!
//! - `mod.rs`: [`State`], handles, ids, the clock and deadlines.
//! - `tasks.rs`: the task table (records, listing order, expiry, quotas).
//! - `lifecycle.rs`: creating, settling and losing tasks, and who hears of it.
//! - `calls.rs`, `sessions.rs`: the work the application answers; one connection each.
//! - `outbound.rs`: our requests; `following.rs`: the peer's tasks we follow.
//! - `output.rs`: messages, events and the messages that wait for the journal
//!   (`journal.rs`).
//! - `tools.rs`: the tools we serve; `kept.rs`: the types each era keeps on sessions, calls
//!   and our requests.
//! - `protocol.rs`: what an era provides; `replicas.rs`: changes another host sharing the
//!   store made.

mod calls;
mod deadlines;
mod following;
mod journal;
mod kept;
mod lifecycle;
mod outbound;
mod output;
mod protocol;
mod replicas;
mod sessions;
pub(crate) mod tasks;
mod tools;

use std::collections::HashMap;
use std::hash::BuildHasherDefault;

use serde_json::value::RawValue;

use crate::config::Config;
use crate::error::UsageError;
use crate::ids::{CallId, InputId, SessionId, Slab, TaskId};
use crate::jsonrpc::{Reject, RequestId, RpcError};
use crate::model::Era;
use crate::routed::{Check, Routed};
use crate::time::{Millis, MAX_MILLIS};
use deadlines::Deadlines;
use journal::Journal;
use output::Queue;

pub(crate) use calls::Call;
pub(crate) use following::{answered_task, Source};
pub(crate) use kept::Kept;
pub(crate) use lifecycle::Begin;
pub(crate) use outbound::{progress_meta, CancelledParams};
pub(crate) use output::{AnswerAgain, TaskVerb};
pub(crate) use protocol::Protocol;
pub(crate) use sessions::{PeerRequest, Phase, Session};
use tasks::IdHasher;
pub(crate) use tasks::{CreateError, NewTask, Record, StoredOutcome};
pub(crate) use tools::ToolRegistry;

/// Source of ids for the tasks the host creates; ids must be unique and unguessable
/// (the adapters draw 128 bits from the OS; tests count).
pub type TaskIdSource = Box<dyn FnMut() -> String + Send>;

/// How a call ends: a result object (as JSON text on one line) or a JSON-RPC error.
pub(crate) type Answer = Result<Box<RawValue>, RpcError>;

/// Who sent one of our requests, and why.
#[derive(Debug)]
pub(crate) enum Sent<K: Kept> {
    /// The application: its answer is `Event::Response`.
    App,
    /// An era, for a reason only it reads.
    Era(K::Purpose),
}

/// Deadlines of the sessions' protocol state (task expiry lives in the task table).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Timer {
    /// Poll a peer task of ours.
    Poll(SessionId, TaskId),
    /// Our request's local timeout.
    Request(SessionId, RequestId),
}

impl Timer {
    /// The session it belongs to.
    fn session(&self) -> SessionId {
        match self {
            Timer::Poll(session, _) | Timer::Request(session, _) => *session,
        }
    }
}

/// Everything a host holds, in one thread, with no IO.
pub(crate) struct State<K: Kept> {
    pub config: Config,
    /// `config.info` as JSON text, written into every 2026-07-28 result's `_meta`.
    pub info_json: Box<str>,
    pub tools: ToolRegistry,
    pub now: Millis,
    /// After `Host::shutdown` nothing is scheduled or accepted.
    pub shut_down: bool,
    pub sessions: Slab<Session<K>>,
    pub tasks: TaskTable,
    pub calls: Slab<Call<K>>,
    /// The call doing each task's work, until the application answers it or the task goes
    /// (keyed by hosted task ids, which are ours or the application's: hashed cheaply).
    pub work: HashMap<TaskId, CallId, BuildHasherDefault<IdHasher>>,
    /// What the eras keep for the whole host.
    pub kept: K::Host,
    /// The caller's check of the requests of the message being handled, if it gave one.
    pub check: Option<Check>,
    /// Members the application adds to the `_meta` of the requests it is sending now
    /// ([`Host::send_with_meta`](crate::Host::send_with_meta)).
    pub request_meta: Option<serde_json::Map<String, serde_json::Value>>,
    timers: Deadlines<Timer>,
    out: Queue,
    journal: Journal,
    next_input: u64,
    new_task_id: TaskIdSource,
}

pub(crate) use tasks::TaskTable;

impl<K: Kept> State<K> {
    /// An empty state at `now`.
    pub fn new(config: Config, task_ids: TaskIdSource, now: Millis) -> Self {
        let mut tasks = TaskTable::new(config.tasks.max_tasks, config.tasks.max_tasks_per_owner);
        if config.tasks.keep_finished.is_some() {
            tasks.track_finished();
        }
        State {
            info_json: serde_json::to_string(&config.info)
                .expect("an Implementation serializes")
                .into_boxed_str(),
            tools: ToolRegistry::default(),
            request_meta: None,
            tasks,
            journal: Journal::new(config.durability),
            config,
            now: now.min(MAX_MILLIS),
            shut_down: false,
            sessions: Slab::default(),
            calls: Slab::default(),
            work: HashMap::default(),
            check: None,
            kept: K::Host::default(),
            timers: Deadlines::new(),
            out: Queue::default(),
            next_input: 0,
            new_task_id: task_ids,
        }
    }

    /// The rules of `era`.
    pub fn protocol(&self, era: Era) -> &'static dyn Protocol<K> {
        K::protocol(era)
    }

    // ---- handles ------------------------------------------------------------------------

    pub fn session(&self, id: SessionId) -> Option<&Session<K>> {
        self.sessions.get(id.index, id.generation)
    }

    pub fn session_mut(&mut self, id: SessionId) -> Option<&mut Session<K>> {
        self.sessions.get_mut(id.index, id.generation)
    }

    pub fn call(&self, id: CallId) -> Option<&Call<K>> {
        self.calls.get(id.index, id.generation)
    }

    pub fn call_mut(&mut self, id: CallId) -> Option<&mut Call<K>> {
        self.calls.get_mut(id.index, id.generation)
    }

    pub fn add_call(&mut self, call: Call<K>) -> CallId {
        let (index, generation) = self.calls.insert(call);
        CallId { index, generation }
    }

    pub fn remove_call(&mut self, id: CallId) -> Option<Call<K>> {
        self.calls.remove(id.index, id.generation)
    }

    /// The session, open and past its handshake.
    pub fn ready(&self, session: SessionId) -> Result<&Session<K>, UsageError> {
        let s = self
            .session(session)
            .ok_or(UsageError::UnknownSession(session))?;
        match s.phase {
            Phase::Ready { .. } => Ok(s),
            _ => Err(UsageError::NotInitialized(session)),
        }
    }

    /// The caller's check of a request of which only the method is read
    /// ([`Host::handle_checked`](crate::Host::handle_checked)); `Ok` without one.
    pub fn check_method(&mut self, method: &str) -> Result<(), Reject> {
        match self.check.as_mut() {
            Some(check) => check(&Routed::method(method)).map_err(Reject::from),
            None => Ok(()),
        }
    }

    // ---- ids ----------------------------------------------------------------------------

    pub fn fresh_input(&mut self) -> InputId {
        self.next_input += 1;
        InputId(self.next_input)
    }

    /// A new task id that no task has (the source gets four tries).
    pub fn fresh_task_id(&mut self) -> Result<TaskId, RpcError> {
        for _ in 0..4 {
            let id = (self.new_task_id)();
            if !self.tasks.contains(&id) {
                return Ok(TaskId::from(id));
            }
        }
        Err(RpcError::internal("Task id source keeps repeating ids"))
    }

    // ---- the clock and deadlines --------------------------------------------------------

    /// Moves the clock forward (never back) and fires every deadline now due, in order.
    pub fn advance(&mut self, now: Millis) {
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
                        self.task_expired(record);
                    }
                }
                (None, Some(_)) => self.fire_timer(),
                (None, None) => break,
            }
        }
    }

    /// Holds at most `keep` finished tasks from now on (see
    /// [`TaskConfig::keep_finished`](crate::TaskConfig)).
    pub fn keep_finished(&mut self, keep: Option<usize>) {
        self.config.tasks.keep_finished = keep;
        if keep.is_some() {
            self.tasks.track_finished();
        }
        self.forget_finished();
    }

    /// Whether finished tasks are due to be let go ([`State::forget_finished`]): more are
    /// held than kept, and the store holds the oldest one's last change.
    fn finished_due(&self) -> bool {
        let over = self
            .config
            .tasks
            .keep_finished
            .is_some_and(|keep| self.tasks.finished_held() > keep);
        over && self
            .tasks
            .peek_oldest_finished()
            .is_some_and(|task| self.journal.wait_for(Some(task)).is_none())
    }

    /// Lets the oldest finished tasks go past [`TaskConfig::keep_finished`](crate::TaskConfig)
    /// (the store keeps them), once the store holds their last change. Done when the host's
    /// deadline fires ([`State::next_deadline`] says when), never in the middle of an input:
    /// a task read back for a request stays until that request is answered.
    pub fn forget_finished(&mut self) {
        let Some(keep) = self.config.tasks.keep_finished else {
            return;
        };
        while self.tasks.finished_held() > keep {
            let Some(task) = self.tasks.oldest_finished() else {
                break;
            };
            if self.journal.wait_for(Some(&task)).is_some() {
                self.tasks.keep_oldest_finished(task);
                break;
            }
            self.tasks.remove(&task);
        }
    }

    /// The next deadline: a timer or a task's expiry.
    pub fn next_deadline(&self) -> Option<Millis> {
        if self.shut_down {
            return None;
        }
        if self.finished_due() {
            return Some(self.now);
        }
        match (self.timers.next(), self.tasks.next_expiry()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    fn fire_timer(&mut self) {
        let Some(timer) = self.timers.pop_due(self.now) else {
            return;
        };
        match timer {
            Timer::Poll(session, task) => self.poll_remote_task(session, &task),
            Timer::Request(session, id) => self.time_out(session, id),
        }
    }

    /// Sets (or moves) a session's deadline. Closing the session clears its deadlines as it
    /// ends its requests and the tasks it follows (its own work, no walk of every timer).
    pub fn set_timer(&mut self, timer: Timer, at: Millis) {
        if self.session(timer.session()).is_some() {
            self.timers.set(timer, at);
        }
    }

    /// Clears a session's deadline, if set.
    pub fn clear_timer(&mut self, timer: &Timer) {
        self.timers.clear(timer);
    }

    pub fn has_timer(&self, timer: &Timer) -> bool {
        self.timers.contains(timer)
    }

    /// Forgets every deadline (the host shut down).
    fn clear_all_timers(&mut self) {
        self.timers = Deadlines::new();
    }
}
