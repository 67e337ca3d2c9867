//! The task host: the public face of the engine. One [`Host`] holds every hosted task and
//! every session; its methods are grouped by what they act on, one file each:
//!
//! | file | owns |
//! | --- | --- |
//! | `mod.rs` | [`Host::new`], the clock and the state getters |
//! | `inputs.rs` | feeding input and draining output: `handle_*`, `poll_*` |
//! | `dispatch.rs` | routing one inbound message to what answers it |
//! | `sessions.rs` | opening and closing sessions, [`Host::shutdown`], a client's handshake |
//! | `serving.rs` | what a server offers: tools, the application's methods and capabilities |
//! | `calls.rs` | the application answering and reporting on calls (`respond`, `request_input`, …) |
//! | `tasks.rs` | hosted tasks as the application sees them (create, remove, restore, confirm, sync) |
//! | `requests.rs` | our requests to a session's peer (`call_tool`, `get_task`, …) and its tasks |
//!
//! Inputs take the caller's time and never fail on peer bytes; commands return `Err` only
//! for misuse of this API and then change nothing; outputs are drained with
//! [`Host::poll_output`], and [`Host::poll_timeout`] says when to call
//! [`Host::handle_timeout`] next. The era-neutral machinery is in `state/`; every wire shape
//! is an era's (`era/`).

mod calls;
mod dispatch;
mod inputs;
mod requests;
mod serving;
mod sessions;
mod tasks;

use crate::config::Config;
use crate::era::State;
use crate::error::UsageError;
use crate::event::RequestRead;
use crate::ids::{CallId, Owner, SessionId, TaskId};
use crate::model::{Role, TaskBrief, TaskSnapshot};
use crate::state::TaskIdSource;
use crate::time::Millis;

/// How much a [`Host`] holds now ([`Host::footprint`]): what grows with load and must come
/// back down when the load goes. A host serving sessions that come and go holds, once they
/// are gone, only their tasks until those expire.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Footprint {
    /// Sessions open.
    pub sessions: usize,
    /// Owners known: those with a session open, a task held, or a recently expired task
    /// remembered (so that asking for it says it expired). Others are forgotten.
    pub owners: usize,
    /// Hosted tasks, every status.
    pub tasks: usize,
    /// Calls in progress: hosted work and requests awaiting the application.
    pub calls: usize,
}

/// Hosts tasks for any number of sessions (connections), in one thread, with no IO.
///
/// See the [crate documentation](crate) for the run loop and an example.
pub struct Host {
    state: State,
    /// Whether the caller asked for the requests each input reads ([`Host::report_requests`]).
    report_requests: bool,
    /// The requests the last input read, when reported.
    reads: Vec<RequestRead>,
}

impl std::fmt::Debug for Host {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let st = &self.state;
        f.debug_struct("Host")
            .field("now", &st.now)
            .field("sessions", &st.sessions.len())
            .field("tasks", &st.tasks.len())
            .field("calls", &st.calls.len())
            .field("shut_down", &st.shut_down)
            .finish_non_exhaustive()
    }
}

impl Host {
    /// A host with no sessions yet. `task_ids` supplies the ids of the tasks it creates.
    pub fn new(config: Config, task_ids: TaskIdSource, now: Millis) -> Self {
        Host {
            state: State::new(config, task_ids, now),
            report_requests: false,
            reads: Vec::new(),
        }
    }

    /// The latest time the host has seen.
    pub fn now(&self) -> Millis {
        self.state.now
    }

    /// A session's role, while it is open.
    pub fn role(&self, session: SessionId) -> Option<Role> {
        self.state.session(session).map(|s| s.role)
    }

    /// The session's negotiated protocol version, once its handshake is done.
    pub fn protocol_version(&self, session: SessionId) -> Option<&str> {
        self.state.session(session)?.version()
    }

    /// Whether the session is closed (or was never opened here).
    pub fn is_closed(&self, session: SessionId) -> bool {
        self.state.session(session).is_none()
    }

    /// The peer's capabilities as declared in the handshake (`null` before it, or when closed).
    pub fn peer_capabilities(&self, session: SessionId) -> &serde_json::Value {
        static NULL: serde_json::Value = serde_json::Value::Null;
        self.state
            .session(session)
            .map_or(&NULL, |s| &s.peer_capabilities)
    }

    /// Whether the peer of `session` has a request in progress here: one whose answer is
    /// still to come, or is held until the store confirms what it says (a transport that
    /// serves one message per session closes it when not).
    pub fn answering(&self, session: SessionId) -> bool {
        self.state
            .session(session)
            .is_some_and(|s| !s.requests.is_empty() || !s.held.is_empty())
    }

    /// The configuration the host runs with.
    pub fn config(&self) -> &Config {
        &self.state.config
    }

    /// The owner a session acts for.
    pub fn owner(&self, session: SessionId) -> Option<&Owner> {
        let s = self.state.session(session)?;
        Some(self.state.tasks.owner_name(s.owner))
    }

    /// A hosted task as stored, whoever owns it.
    pub fn task(&self, task: &str) -> Option<TaskSnapshot> {
        self.state.tasks.get(task).map(|r| self.state.snapshot(r))
    }

    /// A hosted task's status as its requestor sees it and its times, whoever owns it
    /// (cheaper than [`Host::task`]: nothing is copied).
    pub fn task_brief(&self, task: &str) -> Option<TaskBrief> {
        let record = self.state.tasks.get(task)?;
        Some(TaskBrief {
            status: (record.era).shown_status(record.status, record.is_error_result()),
            created_at: record.created_at,
            expires_at: record.expires_at(),
        })
    }

    /// Whether the host holds task `task` (cheaper than [`Host::task`]: nothing is copied).
    pub fn has_task(&self, task: &str) -> bool {
        self.state.tasks.contains(task)
    }

    /// Number of hosted tasks (every status, until they expire or are removed).
    pub fn task_count(&self) -> usize {
        self.state.tasks.len()
    }

    /// How much the host holds now: sessions, owners, tasks and calls.
    pub fn footprint(&self) -> Footprint {
        let st = &self.state;
        Footprint {
            sessions: st.sessions.len(),
            owners: st.tasks.owner_count(),
            tasks: st.tasks.len(),
            calls: st.calls.len(),
        }
    }

    /// Number of hosted tasks `owner` holds.
    pub fn owner_task_count(&self, owner: &Owner) -> usize {
        self.state.tasks.owner_len(owner)
    }

    /// The call doing a task's work, until the application answers it.
    pub fn task_call(&self, task: &str) -> Option<CallId> {
        self.state.work.get(task).copied()
    }

    /// Whether task `task`'s work runs on this host: it is unfinished, and was not added by
    /// [`Host::sync`] from another host's change.
    pub fn runs_here(&self, task: &str) -> bool {
        self.state
            .work
            .get(task)
            .and_then(|&call| self.state.call(call))
            .is_some_and(|call| !call.shadow)
    }

    /// The task a call runs as, if it became one.
    pub fn call_task(&self, call: CallId) -> Option<&TaskId> {
        self.state.call(call)?.task.as_ref()
    }

    /// Moves the clock to `now` (never back) and fires what is due, unless the host was shut
    /// down: every input and command that can change the host starts here.
    fn enter(&mut self, now: Millis) -> Result<(), UsageError> {
        if self.state.shut_down {
            return Err(UsageError::ShutDown);
        }
        self.reads.clear();
        self.state.advance(now);
        Ok(())
    }
}
