//! Commands to the driver task that owns the host: plain values, sent over a channel by
//! tool contexts, client handles and connection handles.

use futures::channel::oneshot;
use serde_json::value::RawValue;
use serde_json::Value;
use taskwire_engine::{CallId, LogLevel, Owner, RpcError, TaskId, TaskInfo};

use crate::client::{Initialized, TaskCall};
use crate::error::Error;
use crate::runtime::{Reader, Writer};

/// Where an answer goes.
pub(crate) type Reply<T> = oneshot::Sender<Result<T, Error>>;

/// One thing for the driver to do.
pub(crate) enum Command {
    // ---- from running work (tool contexts, client handlers) --------------------------------
    /// The work of a call ended with this outcome (a `CallToolResult` object or an error).
    Finished {
        call: CallId,
        outcome: Result<Box<RawValue>, RpcError>,
    },
    /// Set a task's status message.
    TaskMessage {
        call: CallId,
        message: String,
    },
    /// Report progress for a call.
    Progress {
        call: CallId,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    },
    /// Send a log message about a call.
    Log {
        call: CallId,
        level: LogLevel,
        logger: Option<String>,
        data: Value,
        reply: Reply<()>,
    },
    /// Turn a call offered a task into it (a tool that asks first).
    StartTask {
        call: CallId,
        reply: Reply<TaskId>,
    },
    /// Ask the requestor for input on behalf of a call.
    Input {
        call: CallId,
        method: &'static str,
        params: Value,
        reply: Reply<Value>,
    },

    // ---- from a client handle (on the driver's client session) ------------------------------
    Initialize(Reply<Initialized>),
    /// Any request; the raw result comes back.
    Request {
        method: String,
        params: Option<Value>,
        reply: Reply<Value>,
    },
    /// One `tools/list` page (the engine remembers each tool's task support).
    ListTools {
        cursor: Option<String>,
        reply: Reply<Value>,
    },
    CallTool {
        name: String,
        arguments: Value,
        reply: Reply<Value>,
    },
    CallToolAsTask {
        name: String,
        arguments: Value,
        ttl_ms: Option<u64>,
        reply: Reply<TaskCall>,
    },
    GetTask {
        task: String,
        reply: Reply<TaskInfo>,
    },
    TaskResult {
        task: String,
        reply: Reply<Value>,
    },
    CancelTask {
        task: String,
        reply: Reply<TaskInfo>,
    },

    // ---- connections and lifetime ------------------------------------------------------------
    /// Serve one more connection for `owner`; `done` fires when it ends.
    Attach {
        owner: Owner,
        reader: Reader,
        writer: Writer,
        done: oneshot::Sender<()>,
    },
    /// Stop: close every session and stop all work.
    Shutdown,
}

/// The error every caller sees once the connection is gone.
pub(crate) fn closed() -> Error {
    Error::Rpc(RpcError::new(
        taskwire_engine::jsonrpc::code::CONNECTION_CLOSED,
        "Connection closed",
    ))
}
