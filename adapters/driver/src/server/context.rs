//! What a running tool can do: report status and progress, ask the client for input, sleep.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll};
use std::time::Duration;

use async_channel::Sender;
use futures::channel::oneshot;
use serde_json::Value;
use taskwire_engine::{CallId, LogLevel, TaskId, TaskStatus, UsageError};
use tracing::Instrument;

use super::ServerCommand;
use crate::driver::Command;
use crate::error::Error;
use crate::observe::trace;
use crate::runtime::Runtime;

/// The handle a tool runs with. Cancellation (`tasks/cancel`, expiry, shutdown) drops the
/// tool's future; its answer is its return value.
pub struct ToolContext {
    name: String,
    /// The task the call runs as, once it is one.
    task: OnceLock<TaskId>,
    /// The call was offered a task that it starts itself ([`ToolContext::start_task`]).
    offered: bool,
    call: CallId,
    commands: Sender<Command<ServerCommand>>,
    runtime: Arc<dyn Runtime>,
    /// Reports sent since the tool last let others run.
    sent: AtomicU32,
    /// Which run of the task's work this is (1: the call's own).
    attempt: u32,
}

/// Reports a tool may send before its context yields once, so that a tool that only
/// reports (and never waits) still lets the driver read input and fire timers.
const REPORTS_PER_YIELD: u32 = 32;

impl ToolContext {
    pub(crate) fn new(
        name: String,
        task: Result<TaskId, bool>,
        call: CallId,
        commands: Sender<Command<ServerCommand>>,
        runtime: Arc<dyn Runtime>,
    ) -> Self {
        let (task, offered) = match task {
            Ok(task) => (OnceLock::from(task), false),
            Err(offered) => (OnceLock::new(), offered),
        };
        ToolContext {
            name,
            task,
            offered,
            call,
            commands,
            runtime,
            sent: AtomicU32::new(0),
            attempt: 1,
        }
    }

    /// The same context for a run of the work started again ([`ToolContext::attempt`]).
    pub(crate) fn attempt_number(mut self, attempt: u32) -> Self {
        self.attempt = attempt;
        self
    }

    /// Which run of this task's work this is: 1 for the call's own; one more each time the
    /// work was started again by a resume hook ([`Server::resume`](crate::Server::resume))
    /// after the process running it stopped (a restart, or a replica on a shared store
    /// whose lease ran out). A hook that is not idempotent can tell a repeat by it.
    pub fn attempt(&self) -> u32 {
        self.attempt
    }

    /// The name of the tool that was called.
    pub fn tool_name(&self) -> &str {
        &self.name
    }

    /// The task this call runs as, when the client called it as a task.
    pub fn task_id(&self) -> Option<&str> {
        self.task.get().map(|t| t.as_str())
    }

    /// Turns a call of a tool added with [`Server::tool_asking_first`](crate::Server) into
    /// its task, once the questions it asks before are answered (in 2026-07-28 they went by
    /// MRTR, so the task starts with its input in hand): the client gets the task now and the
    /// rest of the work runs as it. Returns the task id; the same id when already a task.
    ///
    /// Errors when the client did not ask for a task (the call stays plain: go on and
    /// return the result), or when no task can be created (a quota; the call is over).
    pub async fn start_task(&self) -> Result<&str, Error> {
        if let Some(task) = self.task.get() {
            return Ok(task.as_str());
        }
        if !self.offered {
            return Err(Error::Usage(UsageError::NotATaskOffer(self.call)));
        }
        let (reply, answer) = oneshot::channel();
        self.send(Command::StartTask {
            call: self.call,
            reply,
        });
        let task = answer.await.unwrap_or(Err(Error::Closed))?;
        Ok(self.task.get_or_init(|| task).as_str())
    }

    /// Sets the task's status message (nothing for a plain call).
    pub async fn set_status(&self, message: impl Into<String>) {
        self.status_message(Some(message.into())).await;
    }

    /// Clears the task's status message (nothing for a plain call): the task's next status
    /// says nothing of it, e.g. when the work a tool relays ended without a message.
    pub async fn clear_status(&self) {
        self.status_message(None).await;
    }

    async fn status_message(&self, message: Option<String>) {
        if self.task.get().is_some() {
            trace::status(TaskStatus::Working, message.as_deref());
            self.send(Command::TaskMessage {
                call: self.call,
                message,
            });
            self.take_turns().await;
        }
    }

    /// Ends this call's task as `cancelled`, as if its requestor had cancelled it (e.g. the
    /// work the tool relays was cancelled elsewhere): `message` as its status message
    /// (`None` keeps the last one), -32602 "Task was cancelled" as its outcome.
    /// The tool stops at this call: its future is dropped, as on any cancel. Errs
    /// ([`Error::Usage`]) for a plain call, or a task that has ended already.
    pub async fn cancel_task(&self, message: Option<String>) -> Result<(), Error> {
        let (reply, answer) = oneshot::channel();
        self.send(Command::CancelTask {
            call: self.call,
            message,
            reply,
        });
        answer.await.unwrap_or(Err(Error::Closed))
    }

    /// Reports progress when the caller asked for it with a progress token (`total` when
    /// known). Non-finite numbers are dropped (JSON cannot carry them).
    ///
    /// A task of the 2026-07-28 era has no progress notifications, so there its status
    /// message shows the progress instead: `message` when given, else `"3 of 5"` (or `"3"`
    /// without a total), which every client sees in `tasks/get` (the driver's client as a
    /// [`TaskUpdate::Message`](crate::TaskUpdate::Message)). A status the tool set itself
    /// ([`ToolContext::set_status`]) stands over progress until [`ToolContext::clear_status`].
    pub async fn progress(&self, progress: f64, total: Option<f64>, message: Option<String>) {
        self.send(Command::Progress {
            call: self.call,
            progress,
            total,
            message,
        });
        self.take_turns().await;
    }

    /// Sends a log message (`notifications/message`; `logger` names its source) to the
    /// client, when it wants this level: in 2025-11-25 every level, or those from the one
    /// its `logging/setLevel` named; in 2026-07-28 only on a plain call whose request named a
    /// level, never on a task. A message the client does not want is dropped, which is no
    /// error. Errors when the server's [`Config::logging`](taskwire_engine::Config::logging)
    /// is off: turn it on to declare the `logging` capability.
    pub async fn log(
        &self,
        level: LogLevel,
        logger: Option<&str>,
        data: Value,
    ) -> Result<(), Error> {
        let (reply, answer) = oneshot::channel();
        self.send(Command::Log {
            call: self.call,
            level,
            logger: logger.map(str::to_owned),
            data,
            reply,
        });
        answer.await.unwrap_or(Err(Error::Closed))
    }

    /// Asks the client for input with `elicitation/create` (a task shows `input_required`
    /// meanwhile); returns the client's `ElicitResult`.
    ///
    /// A plain call of a 2026-07-28 client asks by MRTR: the call ends here (the tool's
    /// future is dropped), the client calls again with the answers, and the tool runs from
    /// the start. Each answer goes to the question asked at the same place (the first, the
    /// second, …), so a tool should ask the same questions in the same order on every run.
    pub async fn elicit(&self, params: Value) -> Result<Value, Error> {
        self.ask_input("elicitation/create", params).await
    }

    /// Asks the client's model with `sampling/createMessage` (a task shows `input_required`
    /// meanwhile); returns the `CreateMessageResult`. A plain call of a 2026-07-28 client
    /// asks by MRTR, as [`ToolContext::elicit`] says.
    pub async fn create_message(&self, params: Value) -> Result<Value, Error> {
        self.ask_input("sampling/createMessage", params).await
    }

    /// Sleeps on the runtime's timer.
    pub async fn sleep(&self, duration: Duration) {
        self.runtime.sleep(duration).await;
    }

    async fn ask_input(&self, method: &'static str, params: Value) -> Result<Value, Error> {
        let (reply, answer) = oneshot::channel();
        self.send(Command::Input {
            call: self.call,
            method,
            params,
            reply,
        });
        let span = trace::question_span(method);
        let answer = (answer.instrument(span.clone())).await;
        let answer = answer.unwrap_or(Err(Error::Closed));
        if let Err(error) = &answer {
            span.record("error", tracing::field::display(error));
        }
        answer
    }

    /// Commands go on an unbounded channel: sending never waits, and the driver takes them
    /// in turns with peer input and timers, so a chatty tool cannot starve either.
    fn send(&self, command: Command<ServerCommand>) {
        let _ = self.commands.try_send(command);
    }

    /// Every [`REPORTS_PER_YIELD`] reports, lets the executor run others once.
    async fn take_turns(&self) {
        if self.sent.fetch_add(1, Ordering::Relaxed) + 1 >= REPORTS_PER_YIELD {
            self.sent.store(0, Ordering::Relaxed);
            YieldNow(false).await;
        }
    }
}

/// Pending once (waking itself at once), then ready.
struct YieldNow(bool);

impl Future for YieldNow {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.0 {
            return Poll::Ready(());
        }
        self.0 = true;
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}
