//! Who waits for what on a client session: each request of ours and its caller, the
//! handshake, the task calls in progress; the engine's events complete them.

use std::collections::HashMap;

use async_channel::{Receiver, Sender};
use serde_json::Value;
use taskwire_engine::{
    Event, PlainReason, ProgressParams, RequestId, RpcError, TaskId, TaskInfo, TaskPage, ToolPage,
    UsageError,
};

use super::command::Answer;
use super::{Initialized, Progress, TaskCall, TaskUpdate};
use crate::driver::Reply;
use crate::error::Error;
use crate::tool_result::CallToolResult;

/// A caller waiting for the answer to one request of ours.
enum Pending {
    Value(Reply<Value>),
    Tool(Reply<CallToolResult>),
    Info(Reply<TaskInfo>),
    Page(Reply<TaskPage>),
    Tools(Reply<ToolPage>),
    /// A task call whose caller waits for the task, or for the answer if there is none.
    Task {
        reply: Reply<TaskCall>,
        /// Boxed: a receiver is not `Unpin`, the driver's application must be.
        updates: Box<Receiver<TaskUpdate>>,
    },
    /// A task call that went out plainly: its caller holds the updates already.
    Plain,
}

/// A task call's updates, and what its caller last heard of its task.
struct Watch {
    updates: Sender<TaskUpdate>,
    request: RequestId,
    last: TaskInfo,
}

/// Everything waiting on the client's session.
#[derive(Default)]
pub(crate) struct Waits {
    pub initialized: Option<Reply<Initialized>>,
    replies: HashMap<RequestId, Pending>,
    /// Each task call's updates, by its request id (its `progressToken`), until its outcome.
    calls: HashMap<RequestId, Sender<TaskUpdate>>,
    tasks: HashMap<TaskId, Watch>,
}

impl Waits {
    /// Waits for the answer to the request `sent`, as `answer` says; an error to send it
    /// goes to the caller at once.
    pub fn expect(&mut self, sent: Result<RequestId, UsageError>, answer: Answer) {
        let pending = match answer {
            Answer::Value(reply) => Pending::Value(reply),
            Answer::Tool(reply) => Pending::Tool(reply),
            Answer::Info(reply) => Pending::Info(reply),
            Answer::Page(reply) => Pending::Page(reply),
            Answer::Tools(reply) => Pending::Tools(reply),
            Answer::Task(reply) => {
                let (tx, updates) = async_channel::unbounded();
                if let Ok(id) = &sent {
                    self.calls.insert(id.clone(), tx);
                }
                let updates = Box::new(updates);
                Pending::Task { reply, updates }
            }
        };
        match sent {
            Ok(id) => {
                self.replies.insert(id, pending);
            }
            Err(e) => self.answer(None, pending, Err(Error::Usage(e))),
        }
    }

    /// Nobody waits for `request` any more (nor for its updates).
    pub fn forget(&mut self, request: &RequestId) {
        self.replies.remove(request);
        self.calls.remove(request);
    }

    /// A client-role event from the engine.
    pub fn on_event(&mut self, event: Event) {
        match event {
            Event::Response {
                request, outcome, ..
            } => {
                if let Some(pending) = self.replies.remove(&request) {
                    self.answer(Some(request), pending, outcome.map_err(Error::from_outcome));
                }
            }
            Event::TaskAnswer {
                request, outcome, ..
            } => {
                if let Some(Pending::Info(reply)) = self.replies.remove(&request) {
                    let _ = reply.send(outcome.map_err(Error::from_outcome));
                }
            }
            Event::TaskPage {
                request, outcome, ..
            } => {
                if let Some(Pending::Page(reply)) = self.replies.remove(&request) {
                    let _ = reply.send(outcome.map_err(Error::from_outcome));
                }
            }
            Event::ToolPage {
                request, outcome, ..
            } => {
                if let Some(Pending::Tools(reply)) = self.replies.remove(&request) {
                    let _ = reply.send(outcome.map_err(Error::from_outcome));
                }
            }
            Event::TimedOut { request, .. } => {
                if let Some(pending) = self.replies.remove(&request) {
                    let error = Error::Timeout(format!(
                        "request {request} got no answer within the request timeout"
                    ));
                    self.answer(Some(request), pending, Err(error));
                }
            }
            Event::RanPlainly {
                request, reason, ..
            } => self.ran_plainly(request, reason),
            Event::TaskCreated { request, task, .. } => {
                let Some(Pending::Task { reply, updates }) = self.replies.remove(&request) else {
                    return;
                };
                if let Some(tx) = self.calls.get(&request) {
                    let watch = Watch {
                        updates: tx.clone(),
                        request,
                        last: task.clone(),
                    };
                    self.tasks.insert(task.id.clone(), watch);
                }
                let _ = reply.send(Ok(TaskCall::new(Some(task), None, *updates)));
            }
            Event::TaskStatus { task, .. } => {
                if let Some(watch) = self.tasks.get_mut(&task.id) {
                    let changed = watch.last.status != task.status;
                    watch.last = task.clone();
                    let update = match changed {
                        true => TaskUpdate::Status(task),
                        false => TaskUpdate::Message(task),
                    };
                    let _ = watch.updates.try_send(update);
                }
            }
            Event::TaskResult { task, outcome, .. } => {
                if let Some(watch) = self.tasks.remove(&task) {
                    self.calls.remove(&watch.request);
                    let _ = watch
                        .updates
                        .try_send(TaskUpdate::Result(tool_outcome(outcome)));
                }
            }
            Event::Progress { params, .. } => self.progress(params),
            Event::Log {
                message,
                task: Some(task),
                ..
            } => {
                if let Some(watch) = self.tasks.get(&task) {
                    let _ = watch.updates.try_send(TaskUpdate::Log(message));
                }
            }
            Event::Initialized {
                protocol_version,
                peer,
                capabilities,
                ..
            } => {
                if let Some(reply) = self.initialized.take() {
                    let _ = reply.send(Ok(Initialized {
                        protocol_version,
                        server: peer,
                        capabilities,
                    }));
                }
            }
            Event::InitializeFailed { error, .. } => {
                if let Some(reply) = self.initialized.take() {
                    let _ = reply.send(Err(Error::Negotiation(error)));
                }
            }
            _ => {}
        }
    }

    /// A task call goes out plainly: its caller gets the call at once, and its progress
    /// and outcome as updates.
    fn ran_plainly(&mut self, request: RequestId, reason: PlainReason) {
        let Some(Pending::Task { reply, updates }) = self.replies.remove(&request) else {
            return;
        };
        self.replies.insert(request, Pending::Plain);
        let _ = reply.send(Ok(TaskCall::new(None, Some(reason), *updates)));
    }

    /// Progress on a task call (its token is its request id; other tokens are not ours).
    fn progress(&mut self, params: ProgressParams) {
        let Ok(request) = serde_json::from_value::<RequestId>(params.progress_token) else {
            return;
        };
        if let Some(tx) = self.calls.get(&request) {
            let _ = tx.try_send(TaskUpdate::Progress(Progress {
                progress: params.progress,
                total: params.total,
                message: params.message,
            }));
        }
    }

    /// Delivers an answer to whoever waits for it (`request`: the request it answers).
    fn answer(
        &mut self,
        request: Option<RequestId>,
        pending: Pending,
        outcome: Result<Value, Error>,
    ) {
        match pending {
            Pending::Value(reply) => {
                let _ = reply.send(outcome);
            }
            Pending::Tool(reply) => {
                let _ = reply.send(outcome.and_then(CallToolResult::from_value));
            }
            // Their answers come as `TaskAnswer`, `TaskPage` and `ToolPage`: here only the
            // errors that end any request (the engine sends them no `Response` otherwise).
            Pending::Info(reply) => {
                let _ = reply.send(Err(error_only(outcome)));
            }
            Pending::Page(reply) => {
                let _ = reply.send(Err(error_only(outcome)));
            }
            Pending::Tools(reply) => {
                let _ = reply.send(Err(error_only(outcome)));
            }
            // The server answered without a task: the answer is the outcome.
            Pending::Task { reply, updates } => {
                let tx = request.and_then(|r| self.calls.remove(&r));
                let _ = reply.send(outcome.map(|result| {
                    if let Some(tx) = tx {
                        let result = CallToolResult::from_value(result);
                        let _ = tx.try_send(TaskUpdate::Result(result));
                    }
                    TaskCall::new(None, None, *updates)
                }));
            }
            Pending::Plain => {
                if let Some(tx) = request.and_then(|r| self.calls.remove(&r)) {
                    let result = outcome.and_then(CallToolResult::from_value);
                    let _ = tx.try_send(TaskUpdate::Result(result));
                }
            }
        }
    }
}

/// A task's outcome as its caller reads it.
fn tool_outcome(outcome: Result<Value, RpcError>) -> Result<CallToolResult, Error> {
    outcome
        .map_err(Error::from_outcome)
        .and_then(CallToolResult::from_value)
}

/// The error of an outcome whose success comes typed by another event.
fn error_only(outcome: Result<Value, Error>) -> Error {
    outcome
        .err()
        .unwrap_or_else(|| Error::malformed("a task answer that is no task"))
}
