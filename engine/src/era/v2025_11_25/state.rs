//! What this era keeps on sessions and calls, and why it sent each of its requests.

use std::collections::HashMap;

use serde_json::Value;

use super::negotiation::PeerTools;
use crate::ids::{CallId, InputId, SessionId, TaskId};
use crate::jsonrpc::RequestId;
use crate::log_level::LogLevel;
use crate::state::{Call, Session, State};

/// A session's state in this era.
#[derive(Debug, Default)]
pub(super) struct SessionState {
    /// Parked `tasks/result` requests per task, in arrival order.
    pub parked: HashMap<TaskId, Vec<RequestId>>,
    /// The least severe log message the peer wants (`logging/setLevel`); none sends every
    /// level.
    pub log_level: Option<LogLevel>,
    /// What the peer's `tools/list` said about each tool's task support (client role).
    pub peer_tools: PeerTools,
    /// The resources the peer subscribed to (`resources/subscribe`), in order.
    pub resources: Vec<String>,
}

/// A call's state in this era.
#[derive(Debug, Default)]
pub(super) struct CallState {
    /// Our input requests to the peer still unanswered.
    pub inputs: Vec<PendingInput>,
    /// Client role: the peer task this request serves (its answer carries related-task
    /// `_meta`).
    pub related_task: Option<TaskId>,
}

/// An input request sent to a peer on behalf of a call.
#[derive(Clone, Debug)]
pub(super) struct PendingInput {
    pub id: InputId,
    pub session: SessionId,
    pub request: RequestId,
    /// The stream it was sent on (its withdrawal goes there too).
    pub stream: Option<RequestId>,
}

/// Why this era sent a request: decides how its answer is read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Asked {
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
    /// `tools/list`: answered with `Event::Response`, and each tool's task support is
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
}

/// A `tools/call` to send plainly if the task-augmented one is refused.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct PlainCall {
    pub name: String,
    pub arguments: Value,
}

impl Eq for PlainCall {}

impl Asked {
    /// Parked and user-facing requests wait as long as they must.
    pub fn times_out(&self) -> bool {
        !matches!(
            self,
            Asked::TaskResult { .. } | Asked::Input { .. } | Asked::Withdrawn
        )
    }
}

/// This era's state on a session, created when first needed.
pub(super) fn of_session(s: &mut Session) -> &mut SessionState {
    s.slots.get_or_default()
}

/// This era's state on a session, to change.
pub(super) fn session_mut(st: &mut State, session: SessionId) -> Option<&mut SessionState> {
    Some(of_session(st.session_mut(session)?))
}

/// This era's state on a call, created when first needed.
pub(super) fn of_call(call: &mut Call) -> &mut CallState {
    call.slots.get_or_default()
}

/// The stream ([`MessageKind::stream`]) of what a call sends on `session` before its
/// answer: its request's while it is a plain call; for a task, a `tasks/result` of that
/// session waiting for it (over HTTP, the stream the requestor opened to hear the task's
/// requests), else the session's (`None`).
pub(super) fn call_stream(st: &State, session: SessionId, call: CallId) -> Option<RequestId> {
    let state = st.call(call)?;
    if let (Some(to), Some(from)) = (&state.reply_to, state.session) {
        if from == session {
            return Some(to.clone());
        }
    }
    state.task.as_ref().and_then(|task| {
        let s = st.session(session)?.slots.get::<SessionState>()?;
        s.parked.get(task)?.first().cloned()
    })
}
