//! What an operator's view of a server reads ([`ServerHandle::watch`](crate::ServerHandle::watch)):
//! the tasks this process holds, one row each, and their changes as they happen.

use taskwire_engine::{Era, Millis, Owner, StopReason, TaskId, TaskProgress, TaskStatus};

/// One task as an operator sees it: what it runs, whose it is, where it stands.
#[derive(Clone, Debug, PartialEq)]
pub struct TaskRow {
    /// The task.
    pub id: TaskId,
    /// The tool it runs, when this process knows it (it learns it from the task's request,
    /// kept while the task runs).
    pub tool: Option<String>,
    /// Who made it (for HTTP with OAuth, `["issuer","subject","client"]`).
    pub owner: Owner,
    /// The era of the request that made it.
    pub era: Era,
    /// Its status now.
    pub status: TaskStatus,
    /// Its status message now.
    pub message: Option<String>,
    /// The newest progress its work reported, if any.
    pub progress: Option<TaskProgress>,
    /// When it was made (wall clock, milliseconds since the Unix epoch).
    pub created_at: Millis,
    /// When it last changed.
    pub updated_at: Millis,
    /// Whether its work runs in this process (a front of a fleet shows tasks whose work runs
    /// on a worker).
    pub runs_here: bool,
}

/// A change of the tasks this process holds.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum TaskChange {
    /// A task appeared or changed: its row as it stands now.
    Row(TaskRow),
    /// The task's work asked its requestor for input (`method`: `elicitation/create`,
    /// `sampling/createMessage`, …).
    Asked {
        /// The task.
        task: TaskId,
        /// What it asked.
        method: String,
    },
    /// The requestor answered (`accepted`: with a result rather than an error).
    Answered {
        /// The task.
        task: TaskId,
        /// Whether the answer was a result (not an error).
        accepted: bool,
    },
    /// The task is gone from this process: its retention ran out, or it was removed (also
    /// [`StopReason::Removed`] for a finished task that a host on a shared store let go, the
    /// store keeping it).
    Gone {
        /// The task.
        task: TaskId,
        /// Why.
        reason: StopReason,
    },
}

/// The tasks a process holds and their changes from then on
/// ([`ServerHandle::watch`](crate::ServerHandle::watch)).
#[derive(Debug)]
pub struct TaskFeed {
    /// The tasks held when the feed started, oldest first.
    pub rows: Vec<TaskRow>,
    /// Every change after that, in order. A reader that falls behind by
    /// [`TaskFeed::CAPACITY`] changes is dropped (the channel closes): watch again.
    pub changes: async_channel::Receiver<TaskChange>,
}

impl TaskFeed {
    /// How many changes wait for a slow reader before its feed is closed.
    pub const CAPACITY: usize = 4096;
}
