//! The exit codes (`taskwire --help` lists them), and which outcome gets which.

use std::process::ExitCode;

use taskwire_driver::engine::TaskStatus;
use taskwire_driver::{code, CallToolResult, Error};

/// How a command ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    /// The tool's result, not an error.
    Completed = 0,
    /// A tool error, a failed task, the server's JSON-RPC error.
    Failed = 1,
    /// Bad arguments.
    Usage = 2,
    /// Cancelled.
    Cancelled = 3,
    /// The server no longer knows the task.
    Lost = 4,
    /// The server could not be started or reached, exited, timed out or refused the
    /// handshake.
    Connection = 5,
}

impl Exit {
    /// The exit for a call's outcome; `last` is the task's last known status.
    pub fn of_outcome(outcome: &Result<CallToolResult, Error>, last: Option<TaskStatus>) -> Exit {
        match (outcome, last) {
            (_, Some(TaskStatus::Cancelled)) => Exit::Cancelled,
            (Ok(result), _) if result.is_error => Exit::Failed,
            (Ok(_), Some(TaskStatus::Failed)) => Exit::Failed,
            (Ok(_), _) => Exit::Completed,
            (Err(e), _) => Exit::of_error(e),
        }
    }

    /// The exit for an error of a request.
    pub fn of_error(error: &Error) -> Exit {
        match error {
            Error::Closed | Error::Timeout(_) | Error::Negotiation(_) => Exit::Connection,
            // The server does not know the task (any more): it expired, or the server lost it.
            Error::Rpc(e) if e.code == code::INVALID_PARAMS && names_a_missing_task(&e.message) => {
                Exit::Lost
            }
            _ => Exit::Failed,
        }
    }

    /// The outcome in a word, as the last line or JSON event says it.
    pub fn word(self) -> &'static str {
        match self {
            Exit::Completed => "completed",
            Exit::Failed => "failed",
            Exit::Usage => "usage",
            Exit::Cancelled => "cancelled",
            Exit::Lost => "lost",
            Exit::Connection => "connection error",
        }
    }

    /// What a task's status says, for a task read with `tasks get`.
    pub fn of_status(status: TaskStatus) -> Exit {
        match status {
            TaskStatus::Failed => Exit::Failed,
            TaskStatus::Cancelled => Exit::Cancelled,
            _ => Exit::Completed,
        }
    }
}

/// Whether a -32602's message says the task is unknown or expired (each SDK words it its
/// own way: "Task not found", "Task has expired", "Unknown task").
fn names_a_missing_task(message: &str) -> bool {
    let message = message.to_lowercase();
    message.contains("task")
        && ["not found", "expired", "unknown"]
            .iter()
            .any(|w| message.contains(w))
}

impl From<Exit> for ExitCode {
    fn from(exit: Exit) -> Self {
        ExitCode::from(exit as u8)
    }
}
