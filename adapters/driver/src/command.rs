//! Messages from tool workers and client handles to the driver task that owns the session.

use futures::channel::oneshot;
use serde_json::Value;
use taskwire_engine::{CallId, Host, Millis, RpcError, SessionId, TaskInfo, UsageError};

use crate::client::TaskCall;

/// An operation run against the host (on the driver's session) inside the driver task.
pub(crate) type SessionOp<T> =
    Box<dyn FnOnce(&mut Host, SessionId, Millis) -> Result<T, UsageError> + Send>;

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
    Ask(SessionOp<taskwire_engine::RequestId>, Reply),
    /// Ask the peer for input on behalf of a call and route its answer.
    AskInput(SessionOp<taskwire_engine::InputId>, Reply),
    /// Hosted work ended with this outcome.
    Finished {
        call: CallId,
        outcome: Result<Value, RpcError>,
    },
    /// Close the session.
    Close,
}

/// Converts a refused command into the error its caller sees.
pub(crate) fn usage_error(e: UsageError) -> RpcError {
    RpcError::internal(e.to_string())
}

/// The error every caller sees once the connection is gone.
pub(crate) fn closed() -> RpcError {
    RpcError::new(
        taskwire_engine::jsonrpc::code::CONNECTION_CLOSED,
        "Connection closed",
    )
}

/// Parses a task out of a `tasks/get` or `tasks/cancel` answer.
pub(crate) fn task_from(value: Value) -> Result<TaskInfo, RpcError> {
    let task: taskwire_engine::Task = serde_json::from_value(value)
        .map_err(|e| RpcError::internal(format!("malformed task: {e}")))?;
    task.to_info()
        .ok_or_else(|| RpcError::internal("malformed task: a time is not RFC 3339"))
}
