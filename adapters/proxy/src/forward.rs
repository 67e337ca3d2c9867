//! A front tool call, forwarded: as a task behind when the front call is a task and the
//! server behind takes one (else plainly, the front task wrapping it); a plain front call
//! plainly behind a 2025-11-25 server, unless the tool there requires a task, and behind a
//! 2026-07-28 server (which decides per call) offered as a task there too. The task behind is
//! followed to its outcome: its status messages, progress and logs become the front call's
//! (a plain front call hears them as progress, [`crate::progress`]), its questions are put to
//! the front client, a front cancel cancels it, and its cancel there cancels the front task.

use std::future::Future;
use std::pin::pin;
use std::sync::Arc;

use async_channel::Receiver;
use futures::channel::oneshot;
use futures::FutureExt;
use serde_json::Value;
use taskwire_driver::engine::TaskStatus;
use taskwire_driver::{
    CallToolResult, Client, Error, Progress, RpcError, Runtime, TaskCall, TaskUpdate, ToolContext,
    ToolOutcome,
};

use crate::backend::Backend;
use crate::progress::AsProgress;
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

/// A tool of the server behind, as the front calls it.
#[derive(Clone)]
pub(crate) struct Forward {
    pub behind: Behind,
    /// Its name behind.
    pub tool: String,
    /// The server behind runs it only as a task (`taskSupport: required`): a plain front
    /// call of it runs as a task there.
    pub task_only: bool,
}

impl Forward {
    /// Forwards the call of the tool made in front (`ctx`) to the server behind.
    pub async fn call(self, ctx: ToolContext, arguments: Value) -> ToolOutcome {
        let Forward {
            behind: to,
            tool,
            task_only,
        } = self;
        let client = to.backend.client().await?;
        let (to_call, questions) = async_channel::unbounded();
        // Until a task exists behind, its questions name none (a 2026-07-28 MRTR round).
        let plain_route = to.routes.plain(to_call.clone());
        if ctx.task_id().is_none() && !to.decides && !task_only {
            let call = client.call_tool(&tool, arguments);
            return answering(&ctx, &questions, call).await.map_err(behind);
        }
        let starting = to.routes.starting();
        let call = if to.decides {
            // It may answer plainly: a front call gone gives the call behind up.
            let start = client.call_tool_as_task(&tool, arguments, None);
            answering(&ctx, &questions, start).await
        } else {
            let start = start(&client, &to.runtime, tool.clone(), arguments);
            answering(&ctx, &questions, start).await
        };
        let call = call.map_err(behind)?;
        let (_route, mut cancel) = match &call.task {
            Some(task) => {
                drop(plain_route);
                tracing::debug!(tool = %tool, task = %task.id, "task behind");
                let route = to.routes.task(task.id.as_str(), to_call);
                let cancel = CancelBehind::armed(&client, &to.runtime, task.id.to_string());
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

/// Calls `tool` behind a 2025-11-25 server as a task, in the background: a front call gone
/// before the task is made (a front cancel right after the call) leaves no task running
/// there, as the task is cancelled once made (the call cannot be given up by
/// `notifications/cancelled`: the spec forbids it for a task call).
async fn start(
    client: &Client,
    runtime: &Arc<dyn Runtime>,
    tool: String,
    arguments: Value,
) -> Result<TaskCall, Error> {
    let (made, call) = oneshot::channel();
    let (client, on) = (client.clone(), runtime.clone());
    runtime.spawn(Box::pin(async move {
        let call = client.call_tool_as_task(&tool, arguments, None).await;
        if let Err(Ok(TaskCall { task: Some(task), .. })) = made.send(call) {
            tracing::debug!(task = %task.id, "the front call ended before its task behind was made");
            drop(CancelBehind::armed(&client, &on, task.id.to_string()));
        }
    }));
    call.await.unwrap_or(Err(Error::Closed))
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

/// The task behind, mirrored on the front task (or, for a plain front call, reported as its
/// progress) until its outcome (`cancel` disarmed when the task behind is cancelled there:
/// nothing to cancel then).
async fn follow(
    ctx: &ToolContext,
    updates: &Receiver<TaskUpdate>,
    cancel: &mut CancelBehind,
) -> Result<CallToolResult, Error> {
    let mut as_progress = ctx.task_id().is_none().then(AsProgress::default);
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
            TaskUpdate::Status(task) | TaskUpdate::Message(task) => match &mut as_progress {
                Some(reports) => report(ctx, reports.status(task.status_message.as_deref())).await,
                // Mirrored as it is behind, a message cleared there included (else a completed
                // task in front would keep the last working step's message).
                None => match task.status_message {
                    Some(message) => ctx.set_status(message).await,
                    None => ctx.clear_status().await,
                },
            },
            TaskUpdate::Progress(p) => match &mut as_progress {
                Some(reports) => report(ctx, reports.progress(p)).await,
                None => ctx.progress(p.progress, p.total, p.message).await,
            },
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

/// Sends `progress`, if any, to the front call.
async fn report(ctx: &ToolContext, progress: Option<Progress>) {
    if let Some(p) = progress {
        ctx.progress(p.progress, p.total, p.message).await;
    }
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
