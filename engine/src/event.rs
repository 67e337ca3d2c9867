//! What the host hands its caller: messages to send, events for the application, and
//! journal entries for a durable store.

use std::sync::Arc;

use serde_json::value::RawValue;
use serde_json::Value;

use crate::ids::{CallId, InputId, SessionId, TaskId};
use crate::jsonrpc::{RequestId, RpcError};
use crate::method::Method;
use crate::model::{
    Implementation, LogMessage, PlainReason, ProgressParams, TaskInfo, TaskPage, TaskRequest,
    TaskSnapshot, ToolPage,
};
use crate::peer_error::PeerErrorKind;
use crate::time::Millis;

/// One item drained with [`Host::poll_output`](crate::Host::poll_output), in order.
#[derive(Debug)]
#[non_exhaustive]
pub enum Output {
    /// A message for one session's peer.
    Send(Transmit),
    /// Something for the application.
    Event(Event),
    /// A task change for a durable store, in order (with [`Durability::Journal`] or
    /// [`Durability::Confirmed`](crate::Durability)).
    ///
    /// [`Durability::Journal`]: crate::Durability::Journal
    Journal(JournalEntry),
}

/// A request the host read from a session's peer, as reported by
/// [`Host::requests_read`](crate::Host::requests_read): what a caller timing requests
/// needs, read once by the engine (the answer is the [`MessageKind::Reply`] to `id`).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct RequestRead {
    /// The session it came on.
    pub session: SessionId,
    /// Its id.
    pub id: RequestId,
    /// Its method; `None` for a name MCP does not have.
    pub method: Option<Method>,
}

/// One JSON-RPC message for a session's peer, and what it is.
#[derive(Debug)]
pub struct Transmit {
    /// The session whose peer gets it.
    pub session: SessionId,
    /// What the message is (so a transport can route it without parsing it).
    pub kind: MessageKind,
    /// One compact JSON text (no newline); a stream transport appends `\n`.
    pub message: String,
}

/// What an outgoing message is.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum MessageKind {
    /// The answer to the peer's request `to`; `error` is the JSON-RPC error code when the
    /// answer is an error (an HTTP transport maps it to a status without parsing).
    Reply {
        /// The peer's request id; `None` for an error about a message whose id could not
        /// be read.
        to: Option<RequestId>,
        /// The error code, for an error reply.
        error: Option<i64>,
    },
    /// A notification; `task` names the task it is about, if any.
    Notification {
        /// The method, e.g. `notifications/tasks/status`.
        method: &'static str,
        /// The task it is about.
        task: Option<TaskId>,
        /// The peer's request whose response carries it ([`MessageKind::stream`]).
        stream: Option<RequestId>,
    },
    /// A request of ours; its answer comes back with this id.
    Request {
        /// Our request id.
        id: RequestId,
        /// The peer's request whose response carries it ([`MessageKind::stream`]).
        stream: Option<RequestId>,
    },
}

impl MessageKind {
    /// Which of its session's streams the message belongs to, so that a transport with
    /// several (Streamable HTTP: a response stream per request of the peer's, and the
    /// session's own) routes it without parsing it; a byte stream (stdio) has one and
    /// ignores this.
    ///
    /// `Some(id)`: the response to the peer's request `id`: its reply, and what rides it
    /// before the reply (a plain call's progress, log messages and our requests for its
    /// input; a task's messages while a `tasks/result` for it waits; the notifications of
    /// a `subscriptions/listen`; the `notifications/cancelled` that withdraws a request
    /// that rode it). `None`: the session's own stream (Streamable HTTP 2025-11-25: the
    /// `GET` stream): 2025-11-25 status notifications, a task's messages while no
    /// `tasks/result` waits, a client's own requests and notifications, and the error about
    /// a message whose id could not be read (a transport that fed one message at a time,
    /// such as an HTTP body, answers that message with it).
    pub fn stream(&self) -> Option<&RequestId> {
        match self {
            MessageKind::Reply { to, .. } => to.as_ref(),
            MessageKind::Notification { stream, .. } | MessageKind::Request { stream, .. } => {
                stream.as_ref()
            }
        }
    }
}

/// Why hosted work must stop.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum StopReason {
    /// The requestor cancelled (`tasks/cancel`, or `notifications/cancelled` for a plain call).
    Cancelled,
    /// The task's retention ran out.
    Expired,
    /// The session the answer was due on closed, or the host shut down.
    Closed,
    /// The application removed the task.
    Removed,
    /// A plain 2026-07-28 call asked for input: its request was answered with an
    /// `InputRequiredResult` (MRTR), and the client retries it as a new call that carries
    /// the answers (the same [`Host::request_input`](crate::Host::request_input) calls then
    /// get them at once).
    InputRequired,
    /// Another host sharing the store runs the task's work now: this host's hold on it ran
    /// out (its lease, while it was paused or cut off from the store), and its work here
    /// must stop ([`Host::release`](crate::Host::release)).
    Moved,
}

/// A change of a hosted task, for a durable store. Entries come in the order the
/// changes happened; `seq` increases by one each time. It serializes (serde) as
/// `{"seq":1,"change":{"put":{"info":{…},…}}}`, the JSON a store may keep.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct JournalEntry {
    /// Position in the journal; confirm with [`Host::confirm`](crate::Host::confirm).
    pub seq: u64,
    /// What changed.
    pub change: Change,
}

/// What a journal entry records.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
// Externally tagged: an internally tagged enum buffers its content, which cannot hold the
// raw outcome (`Box<RawValue>`).
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
// `Put` is most entries: boxing it would cost an allocation per change for nothing.
#[allow(clippy::large_enum_variant)]
pub enum Change {
    /// Store this task (insert or replace): it was created, changed status, or got its
    /// outcome.
    Put(TaskSnapshot),
    /// A running task's status message changed, and nothing else: set `info.status_message`
    /// and `info.last_updated_at` of the stored task (a small write, not the snapshot).
    Message {
        /// The task.
        task: TaskId,
        /// The new message; `None` clears it.
        message: Option<String>,
        /// The task's `last_updated_at` after the change.
        at: Millis,
    },
    /// The requestor answered input requests of a task whose work runs on another host
    /// sharing the store (a front took the answer): the store hands `responses` (by
    /// `inputRequests` key) to the host running it
    /// ([`Host::answer_inputs`](crate::Host::answer_inputs)). Nothing of the task changes.
    Answers {
        /// The task.
        task: TaskId,
        /// The answers, by key.
        responses: serde_json::Map<String, serde_json::Value>,
    },
    /// Delete this task: it expired or was removed.
    Delete {
        /// The task.
        task: TaskId,
        /// Why.
        reason: StopReason,
    },
}

impl Change {
    /// The task the change is about.
    pub fn task(&self) -> &TaskId {
        match self {
            Change::Put(snapshot) => &snapshot.info.id,
            Change::Message { task, .. }
            | Change::Answers { task, .. }
            | Change::Delete { task, .. } => task,
        }
    }
}

/// A tool call for the application to run; answer it with
/// [`Host::respond`](crate::Host::respond) (a plain call gets the reply, a task its outcome).
#[derive(Debug)]
pub struct ToolCall {
    /// The handle to answer through.
    pub call: CallId,
    /// The session it came from.
    pub session: SessionId,
    /// The peer's request id (for logs; answers go through `call`).
    pub request: RequestId,
    /// The tool name.
    pub name: String,
    /// The arguments exactly as sent.
    pub arguments: Option<Box<RawValue>>,
    /// The request's `params._meta` exactly as sent, if it had one: e.g. the W3C trace
    /// context (`traceparent`, `tracestate`) to continue. A task keeps it in its
    /// [`TaskRequest::meta`](crate::TaskRequest::meta) when journaled. Shared: a 2026-07-28
    /// client sends the same `_meta` with each request, read once.
    pub meta: Option<Arc<RawValue>>,
    /// The task this call runs as, when it became one.
    pub task: Option<TaskId>,
    /// The requestor asked for a task and the tool leaves the decision to the application
    /// ([`TaskDecision::App`](crate::TaskDecision::App)): call
    /// [`Host::start_task`](crate::Host::start_task), or answer plainly.
    pub task_offered: bool,
}

/// A request for the application: a server-to-client request in the client role
/// (`sampling/createMessage`, `elicitation/create`, `roots/list`; in 2026-07-28 one entry of
/// the server's `inputRequests`, by MRTR or on a task), or any method listed in
/// [`Config::app_methods`](crate::Config::app_methods). Answer it with
/// [`Host::respond`](crate::Host::respond).
#[derive(Debug)]
pub struct AppRequest {
    /// The handle to answer through.
    pub call: CallId,
    /// The session it came from.
    pub session: SessionId,
    /// The peer's request id (for logs; answers go through `call`); for a 2026-07-28 input
    /// request, its `inputRequests` key.
    pub request: RequestId,
    /// The method.
    pub method: String,
    /// The parameters exactly as sent.
    pub params: Option<Box<RawValue>>,
    /// The task this request runs as, when it was task-augmented.
    pub task: Option<TaskId>,
    /// The peer's task this request serves (related-task metadata, or the 2026-07-28 task
    /// whose `inputRequests` it answers), if any.
    pub related_task: Option<TaskId>,
}

/// Something the application should know or act on.
#[derive(Debug)]
#[non_exhaustive]
pub enum Event {
    /// The handshake completed: the peer's version, identity and capabilities.
    Initialized {
        /// The session.
        session: SessionId,
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
        /// The session.
        session: SessionId,
        /// Why.
        error: RpcError,
    },
    /// The session closed (end of input, [`Host::close`](crate::Host::close), a failed
    /// handshake). Its plain calls were stopped; its tasks live on.
    Closed {
        /// The session.
        session: SessionId,
    },
    /// Server: run a tool.
    ToolCall(ToolCall),
    /// A request for the application to answer.
    Request(AppRequest),
    /// A notification the engine does not act on itself (e.g. `notifications/message`).
    Notification {
        /// The session.
        session: SessionId,
        /// The method.
        method: String,
        /// The parameters exactly as sent.
        params: Option<Box<RawValue>>,
    },
    /// Stop a call's work; its answer will not be sent (a task keeps its new status).
    Stop {
        /// The call.
        call: CallId,
        /// Why.
        reason: StopReason,
        /// The peer's reason, when it gave one.
        message: Option<String>,
    },
    /// A task's work stopped with the host running it: restored with
    /// [`Host::restore`](crate::Host::restore) (this host, restarted), or taken over with
    /// [`Host::adopt`](crate::Host::adopt) (another host sharing the store). Resume its work
    /// under `call` (its request's `attempt` says which run this is), or finish it with
    /// [`Host::respond`](crate::Host::respond).
    Restored {
        /// The handle of the task's work.
        call: CallId,
        /// The task.
        task: TaskId,
        /// The `tools/call` it runs, when the host that created it journaled it (a host
        /// with [`Durability::Journal`](crate::Durability) or `Confirmed` keeps it).
        request: Option<TaskRequest>,
    },
    /// This host took a task whose work another host handed off
    /// ([`Host::hand_off`](crate::Host::hand_off), e.g. a front that runs no work) with
    /// [`Host::adopt`](crate::Host::adopt): run its work under `call` for the first time (its
    /// request's `attempt` is 1), and answer it with [`Host::respond`](crate::Host::respond).
    Claimed {
        /// The handle of the task's work.
        call: CallId,
        /// The task.
        task: TaskId,
        /// The `tools/call` it runs.
        request: TaskRequest,
    },
    /// The peer answered an input request made with
    /// [`Host::request_input`](crate::Host::request_input).
    InputResponse {
        /// The call the input was for.
        call: CallId,
        /// Which input request.
        input: InputId,
        /// The peer's answer.
        outcome: Result<Value, RpcError>,
    },
    /// The peer answered one of our requests.
    Response {
        /// The session.
        session: SessionId,
        /// Our request id.
        request: RequestId,
        /// The peer's answer.
        outcome: Result<Value, RpcError>,
    },
    /// The peer answered our `tools/list` ([`Host::list_tools`](crate::Host::list_tools)):
    /// one page, read in the session's era.
    ToolPage {
        /// The session.
        session: SessionId,
        /// Our request id.
        request: RequestId,
        /// The page, or the error the request ended with.
        outcome: Result<ToolPage, RpcError>,
    },
    /// The peer answered our `tasks/get` or `tasks/cancel`
    /// ([`Host::get_task`](crate::Host::get_task), [`Host::cancel_task`](crate::Host::cancel_task)):
    /// the task as it stands, read in the session's era (in 2026-07-28, where the cancel is
    /// an ack, as the `tasks/get` the engine sends after it reads it). An answer that is no
    /// task, or one about another task, is an internal error (-32603) here.
    TaskAnswer {
        /// The session.
        session: SessionId,
        /// Our request id.
        request: RequestId,
        /// The task, or the error the request ended with.
        outcome: Result<TaskInfo, RpcError>,
    },
    /// The peer answered our `tasks/list` ([`Host::list_tasks`](crate::Host::list_tasks)):
    /// one page.
    TaskPage {
        /// The session.
        session: SessionId,
        /// Our request id.
        request: RequestId,
        /// The page, or the error the request ended with.
        outcome: Result<TaskPage, RpcError>,
    },
    /// The peer accepted a task-augmented request of ours.
    TaskCreated {
        /// The session.
        session: SessionId,
        /// Our request id.
        request: RequestId,
        /// The task as created.
        task: TaskInfo,
    },
    /// A `tools/call` the application asked for as a task went out plainly: its answer
    /// comes as [`Event::Response`] for the same request id.
    RanPlainly {
        /// The session.
        session: SessionId,
        /// Our request id.
        request: RequestId,
        /// Why no task.
        reason: PlainReason,
    },
    /// A peer-hosted task of ours changed status or message.
    TaskStatus {
        /// The session.
        session: SessionId,
        /// The task as now known.
        task: TaskInfo,
    },
    /// A peer-hosted task's outcome (what `tasks/result` returned); reported once per task.
    TaskResult {
        /// The session.
        session: SessionId,
        /// The task.
        task: TaskId,
        /// The result, or the error the task ended with.
        outcome: Result<Value, RpcError>,
    },
    /// One of the application's requests timed out locally; `notifications/cancelled` was
    /// sent, and a late answer will be dropped quietly.
    TimedOut {
        /// The session.
        session: SessionId,
        /// Our request id.
        request: RequestId,
    },
    /// The peer sent a log message (`notifications/message`); one whose params cannot be
    /// read (e.g. an unknown level) comes as [`Event::Notification`] instead.
    Log {
        /// The session.
        session: SessionId,
        /// The message.
        message: LogMessage,
        /// The task it is about, when it says (2025-11-25: related-task `_meta`).
        task: Option<TaskId>,
    },
    /// The peer reported progress.
    Progress {
        /// The session.
        session: SessionId,
        /// The notification's parameters.
        params: ProgressParams,
    },
    /// Server: the resources a client session wants updates of changed (only when the
    /// application's `resources` capability declares `subscribe`). In 2025-11-25 `uris` are
    /// those its `resources/subscribe` named and no `resources/unsubscribe` dropped (the
    /// engine answers both); in 2026-07-28 the union of the `resourceSubscriptions` its open
    /// listen streams were granted (empty once none is open). Send the updates with
    /// [`Notice::ResourceUpdated`](crate::Notice), which reaches only the sessions that
    /// want that resource; a closed session ([`Event::Closed`]) wants nothing more.
    ResourceSubscriptions {
        /// The session.
        session: SessionId,
        /// Every resource it wants updates of now.
        uris: Vec<String>,
    },
    /// The peer sent something we could not use. Any JSON-RPC error reply is already queued.
    PeerError {
        /// The session.
        session: SessionId,
        /// What kind of mistake.
        kind: PeerErrorKind,
        /// What was wrong, for people.
        message: String,
    },
}
