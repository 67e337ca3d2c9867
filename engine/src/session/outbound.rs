//! Our requests to a session's peer: id allocation, what each was for, abandoned ids.

use std::collections::{HashMap, VecDeque};

use serde_json::Value;

use crate::era::v2026_07_28::ModernCall;
use crate::ids::{CallId, InputId, TaskId};
use crate::jsonrpc::RequestId;

/// What an outbound request was for: decides how its answer is handled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Purpose {
    Initialize,
    /// `server/discover` opening a client session; `fallback`: `initialize` when the answer
    /// is what a 2025-11-25 server would say.
    Discover {
        fallback: bool,
    },
    /// A 2026-07-28 `tools/call` of ours, through its MRTR rounds; answered as its first
    /// request.
    ModernCall(Box<ModernCall>),
    /// The `tasks/get` that follows a 2026-07-28 `tasks/cancel` ack: answered as `original`.
    AfterCancel {
        task: TaskId,
        original: RequestId,
    },
    /// A 2026-07-28 request whose success is an empty ack (`tasks/update`, the `tasks/cancel`
    /// of a task given up).
    Ack {
        task: TaskId,
    },
    /// A 2026-07-28 `subscriptions/listen` for one task of ours: `notifications/tasks` on it
    /// report the task; its end (or refusal) changes nothing, since polling goes on.
    Listen {
        task: TaskId,
    },
    /// Asked by the application; answered with `Event::Response`.
    App,
    /// A task-augmented request; answered with `Event::TaskCreated` (or `Response`). With
    /// `fallback`, a -32601 answer is retried as this plain `tools/call`.
    TaskRequest {
        fallback: Option<Box<PlainCall>>,
    },
    /// The plain retry of a task request the server refused; its answer is `original`'s.
    PlainRetry {
        original: RequestId,
    },
    /// `tools/list` asked by the application: answered with `Event::Response`, and each
    /// tool's task support is remembered for `call_tool_as_task`.
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
    /// `tasks/result`; `auto` when the engine fetches on its own.
    TaskResult {
        task: TaskId,
        auto: bool,
    },
    /// An input request made for a call of ours.
    Input {
        call: CallId,
        input: InputId,
    },
}

/// A `tools/call` to send plainly if the task-augmented one is refused.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct PlainCall {
    pub name: String,
    pub arguments: Value,
}

impl Eq for PlainCall {}

impl Purpose {
    /// Sent only in 2026-07-28.
    pub fn is_modern(&self) -> bool {
        matches!(
            self,
            Purpose::Discover { .. }
                | Purpose::ModernCall(_)
                | Purpose::AfterCancel { .. }
                | Purpose::Ack { .. }
                | Purpose::Listen { .. }
        )
    }

    /// Parked and user-facing requests wait as long as they must.
    pub fn times_out(&self) -> bool {
        !matches!(
            self,
            Purpose::TaskResult { .. } | Purpose::Input { .. } | Purpose::Listen { .. }
        )
    }
}

/// How many abandoned request ids are remembered so that their late answers pass quietly.
const ABANDONED_MEMORY: usize = 256;

#[derive(Debug, Default)]
pub(crate) struct Outbound {
    next_id: i64,
    pub pending: HashMap<RequestId, Purpose>,
    /// Requests we gave up on (timed out or withdrawn), oldest first.
    abandoned: VecDeque<RequestId>,
}

impl Outbound {
    /// A fresh id for a request sent for `purpose`.
    pub fn start(&mut self, purpose: Purpose) -> RequestId {
        let id = RequestId::Number(self.next_id);
        self.next_id += 1;
        self.pending.insert(id.clone(), purpose);
        id
    }

    pub fn take(&mut self, id: &RequestId) -> Option<Purpose> {
        self.pending.remove(id)
    }

    /// Whether `id` is a request we gave up on (its late answer is no error); forgets it.
    pub fn was_abandoned(&mut self, id: &RequestId) -> bool {
        let found = self.abandoned.iter().position(|a| a == id);
        found.map(|i| self.abandoned.remove(i)).is_some()
    }

    pub fn remember_abandoned(&mut self, id: RequestId) {
        if self.abandoned.len() == ABANDONED_MEMORY {
            self.abandoned.pop_front();
        }
        self.abandoned.push_back(id);
    }
}
