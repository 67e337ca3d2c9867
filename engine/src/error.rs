//! [`UsageError`]: misuse of the engine's own API, the only `Err` the engine returns (what
//! a peer gets wrong is a [`PeerErrorKind`](crate::PeerErrorKind) instead).

use std::fmt;

use crate::ids::{CallId, SessionId, TaskId};
use crate::model::Role;
use crate::status::TaskStatus;

/// A command the engine refused; nothing changed.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum UsageError {
    /// No open session has this id (it was never opened here, or it closed).
    UnknownSession(SessionId),
    /// No work awaits an answer under this call (already answered, stopped or expired).
    UnknownCall(CallId),
    /// No task has this id for this owner (it may have expired or been removed).
    UnknownTask(TaskId),
    /// The task is terminal: it takes no more changes. This is the one answer for every
    /// command on a finished task (a common race after a cancel; nothing was changed).
    TaskFinished {
        /// The task.
        task: TaskId,
        /// Its terminal status.
        status: TaskStatus,
    },
    /// A task with this id exists already.
    DuplicateTask(TaskId),
    /// The session follows this task already (its updates go to the first follower:
    /// [`Host::follow_task`](crate::Host::follow_task) or the call that created it).
    AlreadyFollowing(TaskId),
    /// Creating the task would pass a quota.
    QuotaExceeded(Quota),
    /// The peer did not declare this capability, or the negotiated version lacks it.
    NotNegotiated(&'static str),
    /// The method does not exist in the era the session speaks; the text says what to use.
    NotInEra {
        /// The method.
        method: &'static str,
        /// What to do instead.
        instead: &'static str,
    },
    /// The handshake has not completed on this session.
    NotInitialized(SessionId),
    /// `initialize` was already sent on this session.
    AlreadyInitialized(SessionId),
    /// The command belongs to the other role.
    WrongRole {
        /// The role the command needs.
        needs: Role,
    },
    /// A value that must be a JSON object was not.
    NotAnObject(&'static str),
    /// A `_meta` member the engine writes itself (`progressToken`, and every key under
    /// `io.modelcontextprotocol/`) was given to [`Host::send_with_meta`](crate::Host::send_with_meta).
    ReservedMeta(String),
    /// The method cannot carry an input request (only `elicitation/create`,
    /// `sampling/createMessage` and `roots/list` can).
    NotAnInputMethod(String),
    /// Progress must be finite (JSON has no NaN or infinity).
    NonFiniteProgress,
    /// Log messages need [`Config::logging`](crate::Config::logging).
    LoggingOff,
    /// [`Notice::ToolsListChanged`](crate::Notice::ToolsListChanged) needs
    /// [`Config::tools_list_changed`](crate::Config::tools_list_changed).
    ToolsListChangedOff,
    /// The call was not offered as a task, or it is one already.
    NotATaskOffer(CallId),
    /// The call does not run a task (it answers its request plainly).
    NotATask(CallId),
    /// The host keeps no request for this task, which handing its work off needs (the other
    /// host runs the stored request): journal the host's tasks
    /// ([`Durability::Journal`](crate::Durability) or `Confirmed`, set by a store).
    NotJournaled(TaskId),
    /// No task of ours is followed under this id on this session.
    UnknownRemoteTask(TaskId),
    /// The host was shut down ([`Host::shutdown`](crate::Host::shutdown)): it takes no more
    /// sessions, input or commands.
    ShutDown,
    /// The offered task could not be created (a task limit, or the task id source
    /// repeating itself). The requestor already got that error as its answer and the call
    /// is over: answer nothing more on it.
    TaskRefused {
        /// The call, now gone.
        call: CallId,
        /// Why, as the requestor was told.
        reason: String,
    },
}

/// Which task limit a creation would pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Quota {
    /// [`TaskConfig::max_tasks`](crate::TaskConfig::max_tasks): tasks held by the host.
    Host(usize),
    /// [`TaskConfig::max_tasks_per_owner`](crate::TaskConfig::max_tasks_per_owner).
    Owner(usize),
}

impl fmt::Display for Quota {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Quota::Host(n) => write!(f, "the server holds its maximum of {n} tasks (max_tasks)"),
            Quota::Owner(n) => write!(
                f,
                "this requestor holds its maximum of {n} tasks (max_tasks_per_owner)"
            ),
        }
    }
}

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UsageError::UnknownSession(s) => write!(f, "no open {s}"),
            UsageError::UnknownCall(c) => write!(f, "{c} awaits no answer (answered, stopped or expired)"),
            UsageError::UnknownTask(t) => write!(f, "no task {t:?}"),
            UsageError::TaskFinished { task, status } => {
                write!(f, "task {task:?} is already {status}; nothing was changed")
            }
            UsageError::DuplicateTask(t) => write!(f, "task {t:?} exists already"),
            UsageError::AlreadyFollowing(t) => write!(
                f,
                "task {t:?} is followed already on this session: its updates go to the call that follows it"
            ),
            UsageError::QuotaExceeded(q) => write!(f, "task limit reached: {q}"),
            UsageError::NotNegotiated(what) => write!(f, "{what} was not negotiated with the peer"),
            UsageError::NotInEra { method, instead } => {
                write!(f, "{method} does not exist in the era this session speaks; {instead}")
            }
            UsageError::NotInitialized(s) => write!(f, "{s} has not completed the handshake"),
            UsageError::AlreadyInitialized(s) => write!(f, "initialize was already sent on {s}"),
            UsageError::WrongRole { needs } => write!(f, "only a {needs:?} session can do this"),
            UsageError::NotAnObject(what) => write!(f, "{what} must be a JSON object"),
            UsageError::ReservedMeta(key) => write!(
                f,
                "_meta member {key:?} is the engine's own (progressToken and the \
                 io.modelcontextprotocol/ keys): leave it out"
            ),
            UsageError::NotAnInputMethod(m) => write!(
                f,
                "{m} is not an input request (elicitation/create, sampling/createMessage, roots/list)"
            ),
            UsageError::LoggingOff => f.write_str(
                "log messages are off: set Config::logging to declare the logging capability"
            ),
            UsageError::ToolsListChangedOff => f.write_str(
                "tool list changes are off: set Config::tools_list_changed to declare tools.listChanged"
            ),
            UsageError::NonFiniteProgress => f.write_str("progress and total must be finite numbers"),
            UsageError::NotATaskOffer(c) => write!(f, "{c} was not offered as a task"),
            UsageError::NotATask(c) => write!(f, "{c} does not run a task"),
            UsageError::NotJournaled(t) => write!(
                f,
                "task {t:?} has no stored request to hand off: give the server a store (Durability::Journal or Confirmed)"
            ),
            UsageError::UnknownRemoteTask(t) => write!(f, "we follow no peer task {t:?}"),
            UsageError::ShutDown => f.write_str(
                "the host was shut down (Host::shutdown) and takes nothing more; make a new Host"
            ),
            UsageError::TaskRefused { call, reason } => write!(
                f,
                "the task for {call} was refused ({reason}); the requestor was told and the call is over"
            ),
        }
    }
}

impl std::error::Error for UsageError {}
