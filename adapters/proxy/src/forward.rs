//! A front tool call, forwarded: as a task behind when the front call is a task and the
//! server behind takes one (else plainly, the front task wrapping it); a plain front call
//! plainly behind a 2025-11-25 server, and behind a 2026-07-28 server (which decides per
//! call) offered as a task there too. The task behind is followed to its outcome: its
//! status messages, progress and logs become the front call's, its questions are put to the
//! front client, a front cancel cancels it, and its cancel there cancels the front task.

use std::future::Future;
use std::pin::pin;
use std::sync::Arc;

use async_channel::Receiver;
use futures::FutureExt;
use serde_json::Value;
use taskwire_driver::engine::TaskStatus;
use taskwire_driver::{
    CallToolResult, Client, Error, RpcError, Runtime, TaskUpdate, ToolContext, ToolOutcome,
};

use crate::backend::Backend;
use crate::routes::{Question, Routes};

/// What a forwarded call needs of the proxy.
#[derive(Clone)]
pub(crate) struct Behind {
    pub backend: Backend,
    pub routes: Routes,
    pub runtime: Arc<dyn Runtime>,
    /// The server behind decides per call whether a call is a task (2026-07-28).
    pub decides: bool,
}

impl Behind {
    /// Forwards the call of tool `name` made in front (`ctx`) to the server behind.
    pub async fn call(self, ctx: ToolContext, name: String, arguments: Value) -> ToolOutcome {
        let client = self.backend.client().await?;
        let (to_call, questions) = async_channel::unbounded();
        // Until a task exists behind, its questions name none (a 2026-07-28 MRTR round).
        let plain_route = self.routes.plain(to_call.clone());
        if ctx.task_id().is_none() && !self.decides {
            let call = client.call_tool(&name, arguments);
            return answering(&ctx, &questions, call).await.map_err(behind);
        }
        let starting = self.routes.starting();
        let start = client.call_tool_as_task(&name, arguments, None);
        let call = answering(&ctx, &questions, start).await.map_err(behind)?;
        let (_route, mut cancel) = match &call.task {
            Some(task) => {
                drop(plain_route);
                tracing::debug!(tool = %name, task = %task.id, "task behind");
                let route = self.routes.task(task.id.as_str(), to_call);
                let cancel = CancelBehind::armed(&client, &self.runtime, task.id.to_string());
                (route, cancel)
            }
            None => (plain_route, CancelBehind::default()),
        };
        drop(starting);
        let updates = call.updates;
        let outcome = answering(&ctx, &questions, follow(&ctx, &updates, &mut cancel)).await;
        cancel.disarm();
        outcome.map_err(behind)
    }
}

/// The front's error for what the client behind met: its own errors (the connection
/// closed, no answer in time, an unusable answer) say they are about the server behind.
pub(crate) fn behind(error: Error) -> RpcError {
    let about = match &error {
        Error::Rpc(e) => return e.clone(),
        Error::Closed => {
            tracing::warn!("the server behind has closed its connection");
            return RpcError::internal(
                "The server behind the proxy closed its connection (it exited or crashed) \
                 before answering",
            );
        }
        Error::Timeout(what) => format!("did not answer in time ({what})"),
        other => format!("could not be used: {other}"),
    };
    let mut front = RpcError::from(error);
    front.message = format!("The server behind the proxy {about}");
    front
}

/// Runs `work` while putting the questions that arrive to the front client.
async fn answering<T>(
    ctx: &ToolContext,
    questions: &Receiver<Question>,
    work: impl Future<Output = T>,
) -> T {
    let mut work = pin!(work.fuse());
    loop {
        futures::select_biased! {
            done = work => return done,
            question = questions.recv().fuse() => {
                if let Ok(question) = question {
                    let answer = ask_front(ctx, &question.method, question.params).await;
                    let _ = question.answer.send(answer);
                }
            }
        }
    }
}

/// One question of the server behind, put to the front client.
async fn ask_front(ctx: &ToolContext, method: &str, params: Value) -> Result<Value, RpcError> {
    let answer = match method {
        "elicitation/create" => ctx.elicit(params).await,
        "sampling/createMessage" => ctx.create_message(params).await,
        other => return Err(RpcError::method_not_found(other)),
    };
    answer.map_err(RpcError::from)
}

/// The task behind, mirrored on the front task until its outcome (`cancel` disarmed when
/// the task behind is cancelled there: nothing to cancel then).
async fn follow(
    ctx: &ToolContext,
    updates: &Receiver<TaskUpdate>,
    cancel: &mut CancelBehind,
) -> Result<CallToolResult, Error> {
    while let Ok(update) = updates.recv().await {
        match update {
            // Cancelled behind (by its server, or another client there): so in front.
            TaskUpdate::Status(task) if task.status == TaskStatus::Cancelled => {
                tracing::info!(task = %task.id, "the task behind was cancelled there");
                cancel.disarm();
                if ctx.cancel_task(task.status_message).await.is_ok() {
                    // Unreached: the front cancel stops this call.
                    return Err(Error::Closed);
                }
            }
            // Mirrored as it is behind, a message cleared there included (else a completed
            // task in front would keep the last working step's message).
            TaskUpdate::Status(task) | TaskUpdate::Message(task) => match task.status_message {
                Some(message) => ctx.set_status(message).await,
                None => ctx.clear_status().await,
            },
            TaskUpdate::Progress(p) => ctx.progress(p.progress, p.total, p.message).await,
            TaskUpdate::Log(m) => {
                // A front server that does not log drops it.
                let _ = ctx.log(m.level, m.logger.as_deref(), m.data).await;
            }
            TaskUpdate::Result(outcome) => return outcome,
            _ => {}
        }
    }
    Err(Error::Closed)
}

/// Cancels the task behind (made by the client it holds) when the front call ends before
/// its outcome (a front `tasks/cancel`, expiry, the proxy stopping).
#[derive(Default)]
struct CancelBehind(Option<(Client, Arc<dyn Runtime>, String)>);

impl CancelBehind {
    fn armed(client: &Client, runtime: &Arc<dyn Runtime>, task: String) -> Self {
        CancelBehind(Some((client.clone(), runtime.clone(), task)))
    }

    fn disarm(&mut self) {
        self.0 = None;
    }
}

impl Drop for CancelBehind {
    fn drop(&mut self) {
        let Some((client, runtime, task)) = self.0.take() else {
            return;
        };
        runtime.spawn(Box::pin(async move {
            match client.cancel_task(&task).await {
                Ok(_) => tracing::debug!(task = %task, "task behind cancelled"),
                Err(e) => {
                    tracing::warn!(task = %task, error = %e, "cancelling the task behind failed")
                }
            }
        }));
    }
}
