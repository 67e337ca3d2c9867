//! Errors for misuse of the engine's own API. Peer misbehaviour is never an `Err`:
//! it becomes a JSON-RPC error reply or an [`Event`](crate::Event).

use std::fmt;

use crate::jsonrpc::RequestId;
use crate::status::TaskStatus;

/// A command the engine refused; the session is unchanged.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UsageError {
    /// No hosted task has this id (it may have expired).
    UnknownTask(String),
    /// No inbound request with this id awaits an answer (it may have been cancelled).
    UnknownRequest(RequestId),
    /// The task is terminal; it cannot take this command.
    TaskTerminal(String, TaskStatus),
    /// A task with this id exists already.
    DuplicateTask(String),
    /// The task store is full.
    StoreFull,
    /// The peer did not declare this capability, or the negotiated version lacks it.
    NotNegotiated(&'static str),
    /// The handshake has not completed.
    NotInitialized,
    /// The session is closed.
    Closed,
    /// The command does not fit this session's role or state.
    Invalid(String),
}

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UsageError::UnknownTask(id) => write!(f, "no task {id:?}"),
            UsageError::UnknownRequest(id) => write!(f, "no pending inbound request {id}"),
            UsageError::TaskTerminal(id, s) => write!(f, "task {id:?} is already {s}"),
            UsageError::DuplicateTask(id) => write!(f, "task {id:?} exists already"),
            UsageError::StoreFull => f.write_str("the task store is full"),
            UsageError::NotNegotiated(what) => write!(f, "{what} was not negotiated with the peer"),
            UsageError::NotInitialized => f.write_str("the session is not initialized"),
            UsageError::Closed => f.write_str("the session is closed"),
            UsageError::Invalid(why) => f.write_str(why),
        }
    }
}

impl std::error::Error for UsageError {}
