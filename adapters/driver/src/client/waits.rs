//! Who waits for what on a client session: each request of ours and its caller, the
//! handshake, the task calls in progress; the engine's events complete them.

use std::collections::HashMap;

use async_channel::Sender;
use serde_json::Value;
use taskwire_engine::jsonrpc::code;
use taskwire_engine::{Event, PlainReason, RequestId, RpcError, TaskId, TaskInfo, UsageError};

use super::app::ClientCommand;
use super::{Initialized, TaskCall, TaskUpdate};
use crate::driver::Reply;
use crate::error::Error;

/// A caller waiting for the answer to one request of ours.
enum Pending {
    Value(Reply<Value>),
    Task(Reply<TaskCall>),
    Info(Reply<TaskInfo>),
}

/// Everything waiting on the client's session.
#[derive(Default)]
pub(crate) struct Waits {
    pub initialized: Option<Reply<Initialized>>,
    replies: HashMap<RequestId, Pending>,
    tasks: HashMap<TaskId, Sender<TaskUpdate>>,
    /// Task calls that went out plainly, and why.
    plain: HashMap<RequestId, PlainReason>,
}

impl Waits {
    pub fn value(&mut self, sent: Result<RequestId, UsageError>, reply: Reply<Value>) {
        self.wait(sent, Pending::Value(reply));
    }

    pub fn task(&mut self, sent: Result<RequestId, UsageError>, reply: Reply<TaskCall>) {
        self.wait(sent, Pending::Task(reply));
    }

    pub fn info(&mut self, sent: Result<RequestId, UsageError>, reply: Reply<TaskInfo>) {
        self.wait(sent, Pending::Info(reply));
    }

    fn wait(&mut self, sent: Result<RequestId, UsageError>, pending: Pending) {
        match sent {
            Ok(id) => {
                self.replies.insert(id, pending);
            }
            Err(e) => answer(pending, Err(Error::Usage(e)), None),
        }
    }

    /// A client-role event from the engine.
    pub fn on_event(&mut self, event: Event) {
        match event {
            Event::Response {
                request, outcome, ..
            } => {
                let plain = self.plain.remove(&request);
                if let Some(pending) = self.replies.remove(&request) {
                    answer(pending, outcome, plain);
                }
            }
            Event::TimedOut { request, .. } => {
                self.plain.remove(&request);
                if let Some(pending) = self.replies.remove(&request) {
                    let error = RpcError::new(code::REQUEST_TIMEOUT, "Request timed out");
                    answer(pending, Err(error), None);
                }
            }
            Event::RanPlainly {
                request, reason, ..
            } => {
                self.plain.insert(request, reason);
            }
            Event::TaskCreated { request, task, .. } => {
                let (tx, updates) = async_channel::unbounded();
                self.tasks.insert(task.id.clone(), tx);
                if let Some(Pending::Task(reply)) = self.replies.remove(&request) {
                    let _ = reply.send(Ok(TaskCall {
                        task: Some(task),
                        plain: None,
                        updates,
                    }));
                }
            }
            Event::TaskStatus { task, .. } => {
                if let Some(tx) = self.tasks.get(&task.id) {
                    let _ = tx.try_send(TaskUpdate::Status(task));
                }
            }
            Event::TaskResult { task, outcome, .. } => {
                if let Some(tx) = self.tasks.remove(&task) {
                    let _ = tx.try_send(TaskUpdate::Result(outcome));
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
                    let _ = reply.send(Err(Error::Rpc(error)));
                }
            }
            _ => {}
        }
    }
}

/// Delivers an answer to whoever waits for it.
fn answer(pending: Pending, outcome: Result<Value, impl Into<Error>>, plain: Option<PlainReason>) {
    let outcome = outcome.map_err(Into::into);
    match pending {
        Pending::Value(reply) => {
            let _ = reply.send(outcome);
        }
        // The call ran without a task: its answer is the outcome.
        Pending::Task(reply) => {
            let _ = reply.send(outcome.map(|result| TaskCall::answered(result, plain)));
        }
        Pending::Info(reply) => {
            let _ = reply.send(outcome.and_then(|v| task_info(v).map_err(Error::Rpc)));
        }
    }
}

/// A task out of a `tasks/get` or `tasks/cancel` answer.
fn task_info(value: Value) -> Result<TaskInfo, RpcError> {
    let task: taskwire_engine::era::v2025_11_25::Task = serde_json::from_value(value)
        .map_err(|e| RpcError::internal(format!("malformed task: {e}")))?;
    task.to_info()
        .ok_or_else(|| RpcError::internal("malformed task: a time is not RFC 3339"))
}

/// Answers a command that cannot run with `error`.
pub(crate) fn refuse(command: ClientCommand, error: Error) {
    match command {
        ClientCommand::Initialize(reply) => {
            let _ = reply.send(Err(error));
        }
        ClientCommand::Request { reply, .. }
        | ClientCommand::ListTools { reply, .. }
        | ClientCommand::CallTool { reply, .. }
        | ClientCommand::TaskResult { reply, .. } => {
            let _ = reply.send(Err(error));
        }
        ClientCommand::CallToolAsTask { reply, .. } => {
            let _ = reply.send(Err(error));
        }
        ClientCommand::GetTask { reply, .. } | ClientCommand::CancelTask { reply, .. } => {
            let _ = reply.send(Err(error));
        }
    }
}
