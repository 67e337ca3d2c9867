//! What this era keeps on sessions and calls, and why it sent each of its requests: the
//! types `era/kept.rs` gathers for the host to store.

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::meta::LastMeta;
use crate::ids::{CallId, InputId, TaskId};
use crate::jsonrpc::RequestId;
use crate::log_level::LogLevel;

/// The host's state in this era.
#[derive(Debug, Default)]
pub(crate) struct HostState {
    /// The last request `_meta` read, and what it declares.
    pub(super) last_meta: LastMeta,
}

/// A session's state in this era.
#[derive(Debug, Default)]
pub(crate) struct SessionState {
    /// Server: open `subscriptions/listen` streams.
    pub(super) listens: Vec<Listen>,
    /// Client: our `tools/call`s waiting for the application's answers to the server's MRTR
    /// `inputRequests`, by the call's first request.
    pub(super) retries: HashMap<RequestId, Box<Retry>>,
    /// Client: what we keep for each task the server runs for us.
    pub(super) following: HashMap<TaskId, Following>,
    /// Client: our `subscriptions/listen` for the server's notices, while open.
    pub(super) notices: Option<RequestId>,
}

/// A `subscriptions/listen` stream a client opened on us.
#[derive(Debug)]
pub(super) struct Listen {
    /// Its request's id (each of its messages names it).
    pub(super) id: RequestId,
    /// The tasks it still reports on.
    pub(super) tasks: Vec<TaskId>,
    /// The notices it agreed to carry.
    pub(super) notices: Notices,
}

/// The notices a listen stream carries (`toolsListChanged`, `promptsListChanged`,
/// `resourcesListChanged`, `resourceSubscriptions`): those the client asked for that the
/// server sends.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Notices {
    pub(super) tools_list_changed: bool,
    pub(super) prompts_list_changed: bool,
    pub(super) resources_list_changed: bool,
    pub(super) resource_subscriptions: Vec<String>,
}

/// What we keep for a task the server runs for us.
#[derive(Debug, Default)]
pub(super) struct Following {
    /// The `inputRequests` keys handed to the application, each with the call that answers
    /// it while unanswered.
    pub(super) asked: Vec<(String, Option<CallId>)>,
    /// Our `subscriptions/listen` for it, while open.
    pub(super) listen: Option<RequestId>,
}

/// A call's state in this era.
#[derive(Debug, Default)]
pub(crate) struct CallState {
    /// A task's outstanding `inputRequests`, shown by `tasks/get`.
    pub(super) asks: Vec<Ask>,
    /// A plain call: the answers its request carried (MRTR `inputResponses` with those of
    /// earlier rounds from `requestState`), and how many inputs it asked.
    pub(super) rounds: Rounds,
    /// Client role: the server's input request this call answers.
    pub(super) answering: Option<Answering>,
    /// A plain call: the least severe log message its request asked for; none means no log
    /// messages.
    pub(super) log_level: Option<LogLevel>,
}

/// An input request a task waits for: `tasks/get` lists it under `key` until `tasks/update`
/// answers it.
#[derive(Clone, Debug)]
pub(super) struct Ask {
    pub(super) id: InputId,
    /// Unique over the host's life, so never reused within a task.
    pub(super) key: String,
    /// `{"method":…,"params":…}`, as `inputRequests` shows it.
    pub(super) request: Box<serde_json::value::RawValue>,
}

/// The MRTR state of a plain call.
#[derive(Debug, Default)]
pub(super) struct Rounds {
    /// Answers by key, from this request and the rounds before it.
    pub(super) answers: Map<String, Value>,
    /// Inputs asked so far by this run of the call (keys are `input-1`, `input-2`, … in
    /// asking order, so a retried call asks under the same keys).
    pub(super) asked: u32,
}

/// The server's input request an application call answers (client role).
#[derive(Debug)]
pub(super) enum Answering {
    /// An `inputRequests` entry of a task the server runs for us: `tasks/update` carries it.
    Task { task: TaskId, key: String },
    /// An MRTR `inputRequests` entry: the retry of the call `original` carries it.
    Retry { original: RequestId, key: String },
}

/// A `tools/call` of ours, through its MRTR rounds.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Calling {
    /// The call's first request, which the application waits on; `None` while that is this
    /// request.
    pub(super) original: Option<RequestId>,
    pub(super) name: String,
    /// An object, or `null` for none.
    pub(super) arguments: Value,
    /// It declares the tasks extension: the application asked for a task.
    pub(super) as_task: bool,
    /// The `progressToken` of every round (the application's request id), when the
    /// application asked for a task.
    pub(super) progress: Option<RequestId>,
    /// MRTR rounds answered so far.
    pub(super) round: u8,
}

/// A call waiting for the application's answers to the server's `InputRequiredResult`.
#[derive(Debug)]
pub(super) struct Retry {
    pub(super) call: Calling,
    pub(super) request_state: Option<String>,
    /// Keys still unanswered, with the call that answers each.
    pub(super) waiting: Vec<(String, CallId)>,
    pub(super) responses: Map<String, Value>,
}

/// Why this era sent a request: decides how its answer is read.
#[derive(Debug)]
pub(crate) enum Asked {
    /// `server/discover` opening a client session; `fallback`: an older era opens it when
    /// the answer is what a server of that era would say; `retried`: this is the one retry
    /// after a -32022 that listed our version.
    Discover { fallback: bool, retried: bool },
    /// A `tools/call` of ours; answered as its first request.
    Call(Box<Calling>),
    /// `tools/list`: answered with `Event::ToolPage`.
    ToolsList,
    /// `tasks/get`; `auto` when the engine polls on its own.
    TaskGet { task: TaskId, auto: bool },
    /// The `tasks/get` that starts following a task made earlier (`Host::follow_task`):
    /// answered as if it had created the task.
    Follow { task: TaskId },
    /// `tasks/cancel` asked by the application (its answer is an ack).
    TaskCancel { task: TaskId },
    /// The `tasks/get` that follows a `tasks/cancel` ack: answered as `original`.
    AfterCancel { task: TaskId, original: RequestId },
    /// A request whose success is an empty ack (`tasks/update`, the `tasks/cancel` of a
    /// task given up).
    Ack { task: TaskId },
    /// A `subscriptions/listen` for one task of ours: `notifications/tasks` on it report
    /// the task; its end (or refusal) changes nothing, since polling goes on.
    Listen { task: TaskId },
    /// A `subscriptions/listen` for the server's list changes, open as long as the session:
    /// the notices on it go to the application; its end changes nothing.
    Notices,
}

impl Asked {
    /// A listen stream stays open as long as its tasks (or the session) run.
    pub fn times_out(&self) -> bool {
        !matches!(self, Asked::Listen { .. } | Asked::Notices)
    }
}
