//! What this era keeps on sessions and calls, and why it sent each of its requests: the
//! types `era/kept.rs` gathers for the host to store.

use std::collections::HashMap;

use serde_json::value::RawValue;
use serde_json::Value;

use super::negotiation::PeerTools;
use crate::ids::{CallId, InputId, SessionId, TaskId};
use crate::jsonrpc::RequestId;
use crate::log_level::LogLevel;
use crate::model::TaskProgress;

/// A session's state in this era.
#[derive(Debug, Default)]
pub(crate) struct SessionState {
    /// Parked `tasks/result` requests per task, in arrival order.
    pub(super) parked: HashMap<TaskId, Vec<RequestId>>,
    /// The least severe log message the peer wants (`logging/setLevel`); none sends every
    /// level.
    pub(super) log_level: Option<LogLevel>,
    /// What the peer's `tools/list` said about each tool's task support (client role).
    pub(super) peer_tools: PeerTools,
    /// The resources the peer subscribed to (`resources/subscribe`), in order.
    pub(super) resources: Vec<String>,
}

/// A call's state in this era.
#[derive(Debug, Default)]
pub(crate) struct CallState {
    /// Our input requests to the peer still unanswered.
    pub(super) inputs: Vec<PendingInput>,
    /// Input requests relayed through a shared store (`relay.rs`).
    pub(super) relayed: Vec<Relayed>,
    /// The newest progress relayed through a shared store (`relay.rs`): reported by the
    /// work here, or heard from the host running it.
    pub(super) progress: Option<TaskProgress>,
    /// Client role: the peer task this request serves (its answer carries related-task
    /// `_meta`).
    pub(super) related_task: Option<TaskId>,
}

/// An input request relayed through a store several hosts share: asked where the work runs
/// (which holds no session of the requestor's), sent by a host that holds one.
#[derive(Debug)]
pub(super) struct Relayed {
    /// Its key in the stored task, and of its answer.
    pub(super) key: String,
    /// `{"method":…,"params":…}`, as asked.
    pub(super) request: Box<RawValue>,
    pub(super) at: RelayedAt,
}

/// Where a relayed input request stands on this host.
#[derive(Debug)]
pub(super) enum RelayedAt {
    /// Asked by the work running here, which waits for this input.
    Work(InputId),
    /// Shown by a task whose work runs elsewhere, not sent to the requestor yet.
    Unsent,
    /// Sent to the requestor as `request` on `session` (on `stream`).
    Sent {
        session: SessionId,
        request: RequestId,
        stream: Option<RequestId>,
    },
}

/// An input request sent to a peer on behalf of a call.
#[derive(Clone, Debug)]
pub(super) struct PendingInput {
    pub(super) id: InputId,
    pub(super) session: SessionId,
    pub(super) request: RequestId,
    /// The stream it was sent on (its withdrawal goes there too).
    pub(super) stream: Option<RequestId>,
}

/// Why this era sent a request: decides how its answer is read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Asked {
    Initialize,
    /// A task-augmented request; answered with `Event::TaskCreated` (or `Response`). With
    /// `fallback`, a -32601 answer is retried as this plain `tools/call`.
    TaskRequest {
        fallback: Option<Box<PlainCall>>,
    },
    /// A task request given up before its task came (the application withdrew it, or it
    /// timed out), or the `tasks/cancel` of the task it made. A task-augmented request is
    /// never cancelled with `notifications/cancelled` (checklist §2.16 r1): the task it
    /// makes is cancelled with `tasks/cancel` once it exists, and nothing is reported.
    Withdrawn,
    /// The plain retry of a task request the server refused; its answer is `original`'s.
    PlainRetry {
        original: RequestId,
    },
    /// `tools/list`: answered with `Event::ToolPage`, and each tool's task support is
    /// remembered for `call_tool_as_task`.
    ToolsList,
    /// `tasks/get`; `auto` when the engine polls on its own.
    TaskGet {
        task: TaskId,
        auto: bool,
    },
    /// `tasks/cancel` asked by the application.
    TaskCancel {
        task: TaskId,
    },
    /// `tasks/list` asked by the application: answered with `Event::TaskPage`.
    TaskList,
    /// The `tasks/get` that starts following a task made earlier (`Host::follow_task`):
    /// answered as if it had created the task.
    Follow {
        task: TaskId,
    },
    /// `tasks/result`; `auto` when the engine fetches on its own.
    TaskResult {
        task: TaskId,
        auto: bool,
    },
    /// An input request made for a call.
    Input {
        call: CallId,
        input: InputId,
    },
    /// An input request of a task whose work runs on another host, relayed (`relay.rs`).
    Relayed {
        task: TaskId,
        key: String,
    },
}

/// A `tools/call` to send plainly if the task-augmented one is refused.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct PlainCall {
    pub(super) name: String,
    pub(super) arguments: Value,
}

impl Eq for PlainCall {}

impl Asked {
    /// Parked and user-facing requests wait as long as they must.
    pub fn times_out(&self) -> bool {
        !matches!(
            self,
            Asked::TaskResult { .. }
                | Asked::Input { .. }
                | Asked::Relayed { .. }
                | Asked::Withdrawn
        )
    }
}
