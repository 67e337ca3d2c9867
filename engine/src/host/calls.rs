//! Calls: the work the application answers (a tool call, a peer request, the work of an
//! app-created task), addressed by [`CallId`] whether or not it became a task.

use serde_json::Value;

use crate::era::v2026_07_28::Answering;
use crate::ids::{InputId, SessionId, TaskId};
use crate::jsonrpc::RequestId;
use crate::log_level::LogLevel;
use crate::task::{Era, InputKinds};

/// One call awaiting the application's answer.
#[derive(Debug)]
pub(crate) struct Call {
    /// The session it came from (where a plain call's reply and its progress go); `None`
    /// for the work of an app-created or restored task.
    pub session: Option<SessionId>,
    /// The peer request a plain call answers; `None` once it became a task.
    pub reply_to: Option<RequestId>,
    /// The task it runs as.
    pub task: Option<TaskId>,
    /// The request's progress token (valid for a task's whole life).
    pub progress_token: Option<Value>,
    /// Client role: the peer task this request serves (its answer carries related-task meta).
    pub related_task: Option<TaskId>,
    /// Our input requests still unanswered (2025-11-25: requests sent to the peer).
    pub inputs: Vec<PendingInput>,
    /// A 2026-07-28 task's outstanding `inputRequests`, shown by `tasks/get`.
    pub asks: Vec<Ask>,
    /// A plain 2026-07-28 call: the answers its request carried (MRTR `inputResponses`
    /// with those of earlier rounds from `requestState`), and how many inputs it asked.
    pub rounds: Option<Box<Rounds>>,
    /// Sessions told about the task's changes: where it was created and where it was asked about.
    pub followers: Vec<SessionId>,
    /// The requestor asked for a task and the application decides: the requested ttl.
    pub offer: Option<Option<u64>>,
    /// The era of the request it answers (how its plain reply and its task read).
    pub era: Era,
    /// The input the requestor can answer, as its request declared it (2026-07-28).
    pub input_kinds: InputKinds,
    /// Client role, 2026-07-28: the server's input request this call answers.
    pub answering: Option<Box<Answering>>,
    /// A plain 2026-07-28 call: the least severe log message its request asked for
    /// (`_meta["io.modelcontextprotocol/logLevel"]`); none means no log messages.
    pub log_level: Option<LogLevel>,
}

impl Call {
    pub fn plain(session: SessionId, request: RequestId, progress_token: Option<Value>) -> Self {
        Call {
            session: Some(session),
            reply_to: Some(request),
            task: None,
            progress_token,
            related_task: None,
            inputs: Vec::new(),
            asks: Vec::new(),
            rounds: None,
            followers: Vec::new(),
            offer: None,
            era: Era::V2025_11_25,
            input_kinds: InputKinds::default(),
            answering: None,
            log_level: None,
        }
    }

    pub fn task(session: Option<SessionId>, task: TaskId, progress_token: Option<Value>) -> Self {
        Call {
            session,
            reply_to: None,
            task: Some(task),
            progress_token,
            related_task: None,
            inputs: Vec::new(),
            asks: Vec::new(),
            rounds: None,
            followers: session.into_iter().collect(),
            offer: None,
            era: Era::V2025_11_25,
            input_kinds: InputKinds::default(),
            answering: None,
            log_level: None,
        }
    }

    /// The application's answer to the server's input request `answering` (client role,
    /// 2026-07-28): it replies to nothing on the wire by itself.
    pub fn answering(session: SessionId, answering: Answering) -> Self {
        Call {
            reply_to: None,
            era: Era::V2026_07_28,
            answering: Some(Box::new(answering)),
            ..Call::plain(session, RequestId::Number(0), None)
        }
    }

    /// Adds a session to those told about the task (once).
    pub fn follow(&mut self, session: SessionId) {
        if !self.followers.contains(&session) {
            self.followers.push(session);
        }
    }
}

/// An input request a 2026-07-28 task waits for: `tasks/get` lists it under `key` until
/// `tasks/update` answers it.
#[derive(Debug)]
pub(crate) struct Ask {
    pub id: InputId,
    /// Unique over the host's life, so never reused within a task.
    pub key: String,
    /// `{"method":…,"params":…}`, as `inputRequests` shows it.
    pub request: Box<serde_json::value::RawValue>,
}

/// The MRTR state of a plain 2026-07-28 call.
#[derive(Debug, Default)]
pub(crate) struct Rounds {
    /// Answers by key, from this request and the rounds before it.
    pub answers: serde_json::Map<String, serde_json::Value>,
    /// Inputs asked so far by this run of the call (keys are `input-1`, `input-2`, … in
    /// asking order, so a retried call asks under the same keys).
    pub asked: u32,
}

/// An input request sent to a peer on behalf of a call.
#[derive(Clone, Debug)]
pub(crate) struct PendingInput {
    pub id: InputId,
    pub session: SessionId,
    pub request: RequestId,
}
