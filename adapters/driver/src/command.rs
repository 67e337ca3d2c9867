//! Messages from tool workers and client handles to the driver task that owns the session.

use futures::channel::oneshot;
use serde_json::Value;
use taskwire_engine::{Millis, RequestId, RpcError, Session, Task, UsageError};

use crate::client::TaskCall;

/// An operation run against the session inside the driver task.
pub(crate) type SessionOp<T> =
    Box<dyn FnOnce(&mut Session, Millis) -> Result<T, UsageError> + Send>;

/// Where a piece of hosted work belongs.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Work {
    Task(String),
    Request(RequestId),
}

/// Who waits for the answer to a request we send.
pub(crate) enum Reply {
    Value(oneshot::Sender<Result<Value, RpcError>>),
    Task(oneshot::Sender<Result<TaskCall, RpcError>>),
    Initialized(oneshot::Sender<Result<Initialized, RpcError>>),
}

/// The handshake's outcome, as a client sees it.
#[derive(Clone, Debug)]
pub struct Initialized {
    /// Negotiated protocol version.
    pub protocol_version: String,
    /// The server's name and version.
    pub server: taskwire_engine::Implementation,
    /// The server's capabilities as sent.
    pub capabilities: Value,
}

pub(crate) enum Command {
    /// Run an operation; nobody waits (status updates, progress).
    Do(SessionOp<()>),
    /// Send a request and route its answer.
    Ask(SessionOp<RequestId>, Reply),
    /// Hosted work ended with this outcome.
    Finished {
        work: Work,
        outcome: Result<Value, RpcError>,
    },
    /// Close the session.
    Close,
}

/// Converts a refused command into the error its caller sees.
pub(crate) fn usage_error(e: UsageError) -> RpcError {
    RpcError::new(
        taskwire_engine::jsonrpc::code::INTERNAL_ERROR,
        e.to_string(),
    )
}

/// The error every caller sees once the connection is gone.
pub(crate) fn closed() -> RpcError {
    RpcError::new(
        taskwire_engine::jsonrpc::code::CONNECTION_CLOSED,
        "Connection closed",
    )
}

/// Parses a task out of a `tasks/get` or `tasks/cancel` answer.
pub(crate) fn task_from(value: Value) -> Result<Task, RpcError> {
    serde_json::from_value(value).map_err(|e| {
        RpcError::new(
            taskwire_engine::jsonrpc::code::INTERNAL_ERROR,
            format!("malformed task: {e}"),
        )
    })
}
