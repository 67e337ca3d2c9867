//! Tasks: what one is, whatever protocol era created or reads it.

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::ids::{Owner, TaskId};
use crate::jsonrpc::RpcError;
use crate::status::TaskStatus;
use crate::time::Millis;

/// A protocol era. A task carries the era that created it (each era reads every task in its
/// own shapes; the tag says which rules created it, e.g. which later requests may see it);
/// a client session speaks one era, a server session reads each request in its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[non_exhaustive]
pub enum Era {
    /// MCP 2025-11-25: tasks in the core protocol (`params.task`, `tasks/result`).
    #[serde(rename = "2025-11-25")]
    V2025_11_25,
    /// MCP 2026-07-28 with the `io.modelcontextprotocol/tasks` extension (stateless
    /// requests, the outcome inline in `tasks/get`).
    #[serde(rename = "2026-07-28")]
    V2026_07_28,
}

impl Era {
    /// Every era, newest first.
    pub const ALL: [Era; 2] = [Era::V2026_07_28, Era::V2025_11_25];

    /// A stable name, for storage: `"2025-11-25"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Era::V2025_11_25 => "2025-11-25",
            Era::V2026_07_28 => "2026-07-28",
        }
    }

    /// The status a task of this era shows its requestor, stored as `status`
    /// (`is_error_result`: its outcome is a result saying `isError: true`): in 2025-11-25
    /// such a result reads `failed`, in 2026-07-28 `completed`.
    pub fn shown_status(self, status: TaskStatus, is_error_result: bool) -> TaskStatus {
        match (self, status) {
            (Era::V2025_11_25, TaskStatus::Completed) if is_error_result => TaskStatus::Failed,
            (_, status) => status,
        }
    }

    /// The era named by [`Era::as_str`].
    pub fn from_name(name: &str) -> Option<Era> {
        match name {
            "2025-11-25" => Some(Era::V2025_11_25),
            "2026-07-28" => Some(Era::V2026_07_28),
            _ => None,
        }
    }
}

/// What a task's requestor can answer when the task asks for input.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct InputKinds {
    /// `elicitation/create`.
    pub elicitation: bool,
    /// `sampling/createMessage`.
    pub sampling: bool,
    /// `roots/list`.
    pub roots: bool,
}

impl InputKinds {
    pub(crate) fn bits(self) -> u8 {
        u8::from(self.elicitation) | u8::from(self.sampling) << 1 | u8::from(self.roots) << 2
    }

    pub(crate) fn from_bits(bits: u8) -> InputKinds {
        InputKinds {
            elicitation: bits & 1 != 0,
            sampling: bits & 2 != 0,
            roots: bits & 4 != 0,
        }
    }
}

/// How a finished task ended: the underlying request's result or its JSON-RPC error.
/// Stored raw and era-neutral: no related-task `_meta`, no `resultType`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The result as the application gave it (for `tools/call`, a `CallToolResult`).
    Result {
        /// The JSON object.
        value: Box<RawValue>,
        /// `isError: true` (a tool-level error; 2025-11-25 shows such a task as `failed`).
        is_error: bool,
    },
    /// The JSON-RPC error the request ended with.
    Error(RpcError),
}

/// A task's status fields, with times as [`Millis`]: what every era's task object carries.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskInfo {
    /// The task id.
    pub id: TaskId,
    /// The status, as the transition table decided it. A result with `isError: true` is
    /// `completed` here; an era may show it otherwise (2025-11-25: `failed`).
    pub status: TaskStatus,
    /// Optional human-readable status.
    pub status_message: Option<String>,
    /// Creation time.
    pub created_at: Millis,
    /// Time of the last change.
    pub last_updated_at: Millis,
    /// Retention from creation; `None` is unlimited.
    pub ttl_ms: Option<u64>,
    /// Suggested interval between polls.
    pub poll_interval_ms: Option<u64>,
}

/// A hosted task in brief ([`Host::task_brief`](crate::Host::task_brief)): its status and
/// its times, with nothing copied.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct TaskBrief {
    /// The status as its requestor sees it
    /// ([`Era::shown_status`](crate::Era::shown_status): a 2025-11-25 result with
    /// `isError: true` is `failed`).
    pub status: TaskStatus,
    /// Creation time.
    pub created_at: Millis,
    /// When its retention runs out; `None`: kept until removed.
    pub expires_at: Option<Millis>,
}

/// One page of a peer's `tasks/list`, as [`Event::TaskPage`](crate::Event::TaskPage)
/// reports it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskPage {
    /// The tasks on this page.
    pub tasks: Vec<TaskInfo>,
    /// The cursor of the next page (ask again with it); `None` on the last page.
    pub next_cursor: Option<String>,
}

/// Everything stored about a hosted task: a journal entry's payload, and what
/// [`Host::restore`](crate::Host::restore) loads after a restart. It serializes (serde) as
/// the JSON a store may keep: `{"info":{…},"owner":"…","era":"2025-11-25",…}`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TaskSnapshot {
    /// Status fields.
    pub info: TaskInfo,
    /// Who may see it.
    pub owner: Owner,
    /// The era that created it.
    pub era: Era,
    /// What its requestor can answer (input requests are limited to these).
    pub input_kinds: InputKinds,
    /// Set exactly when the status is terminal (`cancelled` tasks carry the cancel error).
    pub outcome: Option<Outcome>,
    /// The `tools/call` that created it, kept while it runs (only by a host that journals)
    /// so that its work can start again after a restart ([`Event::Restored`]).
    ///
    /// [`Event::Restored`]: crate::Event::Restored
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request: Option<TaskRequest>,
    /// The input requests it waits for (2026-07-28 `inputRequests`), so that every host
    /// sharing the store shows them and relays their answers to the host running the task
    /// ([`Change::Answers`](crate::Change::Answers)).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub inputs: Vec<StoredInput>,
    /// The newest progress its work reported where no session of its requestor's is (a
    /// worker of a fleet), so that the host holding that session tells it (2025-11-25
    /// `notifications/progress`, under the requestor's progress token).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub progress: Option<TaskProgress>,
}

impl TaskSnapshot {
    /// The status its requestor sees ([`Era::shown_status`]): `info.status` is as stored.
    pub fn shown_status(&self) -> TaskStatus {
        let is_error = matches!(self.outcome, Some(Outcome::Result { is_error: true, .. }));
        self.era.shown_status(self.info.status, is_error)
    }
}

/// A task's progress, as its work reported it (see [`TaskSnapshot::progress`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TaskProgress {
    /// The progress so far.
    pub progress: f64,
    /// The total, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<f64>,
    /// A human-readable message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// An input request a task waits for, as stored: its `inputRequests` key and
/// `{"method":…,"params":…}`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct StoredInput {
    /// Its key in `inputRequests` (the answer's key in `inputResponses`).
    pub key: String,
    /// The request, as `inputRequests` shows it.
    pub request: Box<RawValue>,
}

/// The `tools/call` a task runs: what resuming its work after a restart needs.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TaskRequest {
    /// The tool name.
    pub tool: String,
    /// The arguments exactly as sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Box<RawValue>>,
    /// Which run of the work this is: 1 for the call's own, one more each time a host
    /// starts it again ([`Event::Restored`](crate::Event::Restored)).
    #[serde(default = "first_attempt", skip_serializing_if = "is_first_attempt")]
    pub attempt: u32,
    /// The request's `params._meta` exactly as sent, if it had one: e.g. the W3C trace
    /// context (`traceparent`, `tracestate`) a worker continues.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Box<RawValue>>,
}

fn first_attempt() -> u32 {
    1
}

fn is_first_attempt(attempt: &u32) -> bool {
    *attempt == 1
}
