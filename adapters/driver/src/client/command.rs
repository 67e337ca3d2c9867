//! What a [`Client`](super::Client) handle asks of its driver, one value per verb.

use futures::channel::oneshot;
use serde_json::Value;
use taskwire_engine::{Request, RequestId, TaskInfo, TaskPage, ToolPage};

use super::{Initialized, TaskCall};
use crate::driver::Reply;
use crate::error::Error;
use crate::tool_result::CallToolResult;

/// What a [`Client`](super::Client) handle asks of its driver.
pub(crate) enum ClientCommand {
    Initialize(Reply<Initialized>),
    /// A request of ours; `answer` says what its answer becomes for the caller.
    Send {
        request: Request,
        /// Members for its `_meta`: the trace context of the caller's span.
        meta: Option<serde_json::Map<String, serde_json::Value>>,
        answer: Answer,
        /// For a call: ends without a value when the caller's future is dropped before the
        /// answer (a call that made a task has nothing to give up).
        caller: Option<Caller>,
    },
    /// Opens the listen stream again for updates of `uris` when the server speaks
    /// 2026-07-28; answers whether it does.
    ListenForResources {
        uris: Vec<String>,
        reply: Reply<bool>,
    },
    /// The caller of this request went away: give it up.
    GiveUp(RequestId),
}

/// What the answer to a request of ours becomes for its caller.
pub(crate) enum Answer {
    /// The raw result.
    Value(Reply<Value>),
    /// A `CallToolResult`.
    Tool(Reply<CallToolResult>),
    /// A task as it stands (`tasks/get`, `tasks/cancel`).
    Info(Reply<TaskInfo>),
    /// A page of tasks (`tasks/list`).
    Page(Reply<TaskPage>),
    /// A page of tools (`tools/list`).
    Tools(Reply<ToolPage>),
    /// A task call: the task, then its updates (or the plain answer when there is none).
    Task(Reply<TaskCall>),
}

/// Completes with `()` when the caller has its answer; cancelled when the caller went away
/// first.
pub(crate) type Caller = oneshot::Receiver<()>;

impl ClientCommand {
    /// Answers a command that cannot run with `error`.
    pub(crate) fn refuse(self, error: Error) {
        match self {
            ClientCommand::Initialize(reply) => {
                let _ = reply.send(Err(error));
            }
            ClientCommand::Send { answer, .. } => answer.refuse(error),
            ClientCommand::ListenForResources { reply, .. } => {
                let _ = reply.send(Err(error));
            }
            ClientCommand::GiveUp(_) => {}
        }
    }
}

impl Answer {
    /// Gives the caller `error` instead of an answer.
    pub(crate) fn refuse(self, error: Error) {
        match self {
            Answer::Value(reply) => {
                let _ = reply.send(Err(error));
            }
            Answer::Tool(reply) => {
                let _ = reply.send(Err(error));
            }
            Answer::Info(reply) => {
                let _ = reply.send(Err(error));
            }
            Answer::Page(reply) => {
                let _ = reply.send(Err(error));
            }
            Answer::Tools(reply) => {
                let _ = reply.send(Err(error));
            }
            Answer::Task(reply) => {
                let _ = reply.send(Err(error));
            }
        }
    }
}
