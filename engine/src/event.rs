//! What the engine hands the caller: messages to send and events for the application.

use serde_json::value::RawValue;
use serde_json::Value;

use crate::jsonrpc::{RequestId, RpcError};
use crate::status::TaskStatus;
use crate::wire::v2025_11_25::{Implementation, ProgressParams, Task};

/// One item drained with [`Session::poll_output`](crate::Session::poll_output), in order.
#[derive(Debug)]
pub enum Output {
    /// One compact JSON-RPC message (no newline); a stream transport appends `\n`.
    Send(String),
    /// Something for the application.
    Event(Event),
}

/// Why hosted work must stop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopReason {
    /// The requestor called `tasks/cancel`.
    Cancelled,
    /// The task's retention ran out.
    Expired,
    /// The session closed.
    Closed,
}

/// Something the application should know or act on.
#[derive(Debug)]
pub enum Event {
    /// The handshake completed: the peer's version, identity and capabilities.
    Initialized {
        /// Negotiated protocol version.
        protocol_version: String,
        /// The peer.
        peer: Implementation,
        /// The peer's capabilities as sent.
        capabilities: Value,
    },
    /// Client: the server's `initialize` answer was unusable or did not come within the
    /// request timeout; the session is closed.
    InitializeFailed {
        /// Why.
        error: RpcError,
    },
    /// Server: run a tool. With `task`, finish it through `complete_task`/`fail_task`;
    /// without, answer through `respond`.
    ToolCall {
        /// The `tools/call` request id.
        request: RequestId,
        /// Tool name.
        name: String,
        /// Arguments exactly as sent.
        arguments: Option<Box<RawValue>>,
        /// The task created for this call, if task-augmented.
        task: Option<String>,
    },
    /// Client: a server-to-client request (`sampling/createMessage`, `elicitation/create`,
    /// `roots/list`). With `task`, finish it through `complete_task`; without, `respond`.
    Request {
        /// The request id.
        request: RequestId,
        /// The method.
        method: String,
        /// Parameters exactly as sent.
        params: Option<Box<RawValue>>,
        /// The task created for this request, if task-augmented.
        task: Option<String>,
        /// The peer's task this request serves (related-task metadata), if any.
        related_task: Option<String>,
    },
    /// The peer cancelled a plain request; its answer will not be sent.
    RequestCancelled {
        /// The cancelled request.
        request: RequestId,
        /// The peer's reason.
        reason: Option<String>,
    },
    /// Stop the work of a hosted task.
    StopTask {
        /// The task.
        task: String,
        /// Why.
        reason: StopReason,
    },
    /// The peer answered an input request made with `request_input`.
    InputResponse {
        /// The task the input was for.
        task: String,
        /// Our request id.
        request: RequestId,
        /// The peer's answer.
        outcome: Result<Value, RpcError>,
    },
    /// A task's outcome arrived after it became terminal (e.g. after a cancel) and was dropped.
    OutcomeDropped {
        /// The task.
        task: String,
        /// Its (terminal) status.
        status: TaskStatus,
    },
    /// The peer answered one of our requests.
    Response {
        /// Our request id.
        request: RequestId,
        /// The peer's answer.
        outcome: Result<Value, RpcError>,
    },
    /// The peer accepted a task-augmented request.
    TaskCreated {
        /// Our request id.
        request: RequestId,
        /// The task as created.
        task: Task,
    },
    /// A peer-hosted task changed status or message.
    TaskStatus {
        /// The task as now known.
        task: Task,
    },
    /// A peer-hosted task's outcome (what `tasks/result` returned); reported once per task.
    TaskResult {
        /// The task.
        task: String,
        /// The result, or the error the task ended with.
        outcome: Result<Value, RpcError>,
    },
    /// One of the application's requests timed out locally; `notifications/cancelled` was
    /// sent, and a late answer will be dropped quietly.
    TimedOut {
        /// Our request id.
        request: RequestId,
    },
    /// The peer reported progress.
    Progress(ProgressParams),
    /// The peer sent something we could not use. Any JSON-RPC error reply is already queued.
    PeerError {
        /// What was wrong.
        message: String,
    },
}
