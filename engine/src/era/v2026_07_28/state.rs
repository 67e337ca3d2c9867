//! What this era keeps on sessions and calls, and why it sent each of its requests.

use std::collections::HashMap;

use serde_json::{Map, Value};

use crate::ids::{CallId, InputId, SessionId, TaskId};
use crate::jsonrpc::RequestId;
use crate::log_level::LogLevel;
use crate::state::{Call, Session, State};

/// A session's state in this era.
#[derive(Debug, Default)]
pub(super) struct SessionState {
    /// Server: open `subscriptions/listen` streams.
    pub listens: Vec<Listen>,
    /// Client: our `tools/call`s waiting for the application's answers to the server's MRTR
    /// `inputRequests`, by the call's first request.
    pub retries: HashMap<RequestId, Box<Retry>>,
    /// Client: what we keep for each task the server runs for us.
    pub following: HashMap<TaskId, Following>,
    /// Client: our `subscriptions/listen` for the server's notices, while open.
    pub notices: Option<RequestId>,
}

/// A `subscriptions/listen` stream a client opened on us.
#[derive(Debug)]
pub(super) struct Listen {
    /// Its request's id (each of its messages names it).
    pub id: RequestId,
    /// The tasks it still reports on.
    pub tasks: Vec<TaskId>,
    /// The notices it agreed to carry.
    pub notices: Notices,
}

/// The notices a listen stream carries (`toolsListChanged`, `promptsListChanged`,
/// `resourcesListChanged`, `resourceSubscriptions`): those the client asked for that the
/// server sends.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Notices {
    pub tools_list_changed: bool,
    pub prompts_list_changed: bool,
    pub resources_list_changed: bool,
    pub resource_subscriptions: Vec<String>,
}

/// What we keep for a task the server runs for us.
#[derive(Debug, Default)]
pub(super) struct Following {
    /// The `inputRequests` keys handed to the application, each with the call that answers
    /// it while unanswered.
    pub asked: Vec<(String, Option<CallId>)>,
    /// Our `subscriptions/listen` for it, while open.
    pub listen: Option<RequestId>,
}

/// A call's state in this era.
#[derive(Debug, Default)]
pub(super) struct CallState {
    /// A task's outstanding `inputRequests`, shown by `tasks/get`.
    pub asks: Vec<Ask>,
    /// A plain call: the answers its request carried (MRTR `inputResponses` with those of
    /// earlier rounds from `requestState`), and how many inputs it asked.
    pub rounds: Rounds,
    /// Client role: the server's input request this call answers.
    pub answering: Option<Answering>,
    /// A plain call: the least severe log message its request asked for; none means no log
    /// messages.
    pub log_level: Option<LogLevel>,
}

/// An input request a task waits for: `tasks/get` lists it under `key` until `tasks/update`
/// answers it.
#[derive(Debug)]
pub(super) struct Ask {
    pub id: InputId,
    /// Unique over the host's life, so never reused within a task.
    pub key: String,
    /// `{"method":…,"params":…}`, as `inputRequests` shows it.
    pub request: Box<serde_json::value::RawValue>,
}

/// The MRTR state of a plain call.
#[derive(Debug, Default)]
pub(super) struct Rounds {
    /// Answers by key, from this request and the rounds before it.
    pub answers: Map<String, Value>,
    /// Inputs asked so far by this run of the call (keys are `input-1`, `input-2`, … in
    /// asking order, so a retried call asks under the same keys).
    pub asked: u32,
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
pub(super) struct Calling {
    /// The call's first request, which the application waits on; `None` while that is this
    /// request.
    pub original: Option<RequestId>,
    pub name: String,
    /// An object, or `null` for none.
    pub arguments: Value,
    /// It declares the tasks extension: the application asked for a task.
    pub as_task: bool,
    /// The `progressToken` of every round (the application's request id), when the
    /// application asked for a task.
    pub progress: Option<RequestId>,
    /// MRTR rounds answered so far.
    pub round: u8,
}

/// A call waiting for the application's answers to the server's `InputRequiredResult`.
#[derive(Debug)]
pub(super) struct Retry {
    pub call: Calling,
    pub request_state: Option<String>,
    /// Keys still unanswered, with the call that answers each.
    pub waiting: Vec<(String, CallId)>,
    pub responses: Map<String, Value>,
}

/// Why this era sent a request: decides how its answer is read.
#[derive(Debug)]
pub(super) enum Asked {
    /// `server/discover` opening a client session; `fallback`: an older era opens it when
    /// the answer is what a server of that era would say; `retried`: this is the one retry
    /// after a -32022 that listed our version.
    Discover { fallback: bool, retried: bool },
    /// A `tools/call` of ours; answered as its first request.
    Call(Box<Calling>),
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

/// This era's state on a session, created when first needed.
pub(super) fn of_session(s: &mut Session) -> &mut SessionState {
    s.slots.get_or_default()
}

/// This era's state on a session, to change.
pub(super) fn session_mut(st: &mut State, session: SessionId) -> Option<&mut SessionState> {
    Some(of_session(st.session_mut(session)?))
}

/// This era's state on a session, to read.
pub(super) fn session(st: &State, session: SessionId) -> Option<&SessionState> {
    st.session(session)?.slots.get()
}

/// This era's state on a call, created when first needed.
pub(super) fn of_call(call: &mut Call) -> &mut CallState {
    call.slots.get_or_default()
}

/// This era's state on a call, to read.
pub(super) fn call(st: &State, call: CallId) -> Option<&CallState> {
    st.call(call)?.slots.get()
}

/// What we keep for a followed task, to change.
pub(super) fn following<'a>(
    st: &'a mut State,
    session: SessionId,
    task: &TaskId,
) -> Option<&'a mut Following> {
    if !st.is_our_remote_task(session, task) {
        return None;
    }
    Some(
        session_mut(st, session)?
            .following
            .entry(task.clone())
            .or_default(),
    )
}
