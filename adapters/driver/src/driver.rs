//! The driver loop: one task owns the host, feeds it bytes, time and commands, drains its
//! outputs, and runs hosted work as spawned futures.

use std::collections::HashMap;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Duration;

use async_channel::{Receiver, Sender};
use futures::future::{AbortHandle, Abortable};
use futures::{FutureExt, StreamExt};
use serde_json::Value;
use taskwire_engine::jsonrpc::code;
use taskwire_engine::{
    CallId, Event, Host, InputId, Output, RequestId, RpcError, SessionId, TaskId,
};

use crate::client::{Handler, TaskCall, TaskUpdate};
use crate::command::{closed, Command, Initialized, Reply};
use crate::runtime::{now, BoxFuture, Runtime};
use crate::server::{ToolContext, ToolSet};

/// Input from the transport.
#[derive(Debug)]
pub enum Input {
    /// Bytes read from the peer.
    Bytes(Vec<u8>),
    /// The peer closed its side (EOF, or a signal asking us to stop).
    Eof,
}

/// The application side of a session: tools for a server, handlers for a client.
pub(crate) enum App {
    Server(Arc<ToolSet>),
    Client(HashMap<String, Handler>),
}

pub(crate) struct Driver {
    host: Host,
    session: SessionId,
    runtime: Arc<dyn Runtime>,
    app: App,
    commands: Sender<Command>,
    replies: HashMap<RequestId, Reply>,
    inputs: HashMap<InputId, Reply>,
    initialized: Option<Reply>,
    task_updates: HashMap<TaskId, Sender<TaskUpdate>>,
    workers: HashMap<CallId, AbortHandle>,
}

impl Driver {
    pub fn new(
        host: Host,
        session: SessionId,
        runtime: Arc<dyn Runtime>,
        app: App,
        commands: Sender<Command>,
    ) -> Self {
        Driver {
            host,
            session,
            runtime,
            app,
            commands,
            replies: HashMap::new(),
            inputs: HashMap::new(),
            initialized: None,
            task_updates: HashMap::new(),
            workers: HashMap::new(),
        }
    }

    /// Runs until the session closes (peer EOF, `Close`, or our output going away).
    pub async fn run(
        mut self,
        input: Receiver<Input>,
        output: Sender<String>,
        commands: Receiver<Command>,
    ) {
        let mut input = Box::pin(input).fuse();
        let leftover = commands.clone();
        let mut commands = Box::pin(commands).fuse();
        loop {
            if !self.drain(&output).await {
                self.host.shutdown(now());
                self.drain(&output).await;
            }
            if self.host.is_closed(self.session) {
                break;
            }
            let timer = match self.host.poll_timeout() {
                Some(at) => self
                    .runtime
                    .sleep(Duration::from_millis(at.0.saturating_sub(now().0))),
                None => futures::future::pending().boxed(),
            };
            futures::select_biased! {
                command = commands.next() => match command {
                    Some(command) => self.on_command(command),
                    None => self.host.shutdown(now()),
                },
                bytes = input.next() => match bytes {
                    Some(Input::Bytes(bytes)) => self.host.handle_bytes(now(), self.session, &bytes),
                    Some(Input::Eof) | None => {
                        self.host.handle_eof(now(), self.session);
                        // One connection per driver: when it ends, so does all its work.
                        self.host.shutdown(now());
                    }
                },
                () = timer.fuse() => self.host.handle_timeout(now()),
            }
        }
        self.host.shutdown(now());
        self.drain(&output).await;
        for (_, worker) in self.workers.drain() {
            worker.abort();
        }
        // Handles keep the channel alive: close it so later sends fail, and drop what was
        // queued meanwhile, so every waiting caller gets "Connection closed" instead of hanging.
        leftover.close();
        while leftover.try_recv().is_ok() {}
    }

    /// Sends queued messages and handles events. `false` when the output is gone.
    async fn drain(&mut self, output: &Sender<String>) -> bool {
        let mut open = true;
        while let Some(out) = self.host.poll_output() {
            match out {
                Output::Send(t) if open => open = output.send(t.message).await.is_ok(),
                Output::Event(event) => self.on_event(event),
                _ => {}
            }
        }
        open
    }

    fn on_command(&mut self, command: Command) {
        let (host, session) = (&mut self.host, self.session);
        match command {
            Command::Do(op) => {
                let _ = op(host, session, now());
            }
            Command::Ask(op, reply) => match op(host, session, now()) {
                Ok(_) if matches!(reply, Reply::Initialized(_)) => self.initialized = Some(reply),
                Ok(id) => {
                    self.replies.insert(id, reply);
                }
                Err(e) => answer(reply, Err(crate::command::usage_error(e))),
            },
            Command::AskInput(op, reply) => match op(host, session, now()) {
                Ok(input) => {
                    self.inputs.insert(input, reply);
                }
                Err(e) => answer(reply, Err(crate::command::usage_error(e))),
            },
            Command::Finished { call, outcome } => {
                self.workers.remove(&call);
                // Errors here are races (cancelled, expired, closed): the outcome has no taker.
                let _ = self.host.respond(now(), call, outcome);
            }
            Command::Close => self.host.shutdown(now()),
        }
    }

    fn on_event(&mut self, event: Event) {
        match event {
            Event::ToolCall(call) => {
                let App::Server(tools) = &self.app else {
                    return;
                };
                let Some(handler) = tools.handler(&call.name) else {
                    return;
                };
                let args = call
                    .arguments
                    .and_then(|raw| serde_json::from_str(raw.get()).ok())
                    .unwrap_or_else(|| Value::Object(Default::default()));
                let ctx = ToolContext::new(
                    call.name,
                    call.task,
                    call.call,
                    self.commands.clone(),
                    self.runtime.clone(),
                );
                self.spawn_work(call.call, handler(ctx, args));
            }
            Event::Request(request) => {
                let App::Client(handlers) = &self.app else {
                    return;
                };
                let Some(handler) = handlers.get(&request.method) else {
                    return;
                };
                let params = request
                    .params
                    .and_then(|raw| serde_json::from_str(raw.get()).ok())
                    .unwrap_or(Value::Null);
                let future = handler(params);
                self.spawn_work(request.call, future);
            }
            Event::Stop { call, .. } => {
                if let Some(worker) = self.workers.remove(&call) {
                    worker.abort();
                }
            }
            Event::Response {
                request, outcome, ..
            } => {
                if let Some(reply) = self.replies.remove(&request) {
                    answer(reply, outcome);
                }
            }
            Event::InputResponse { input, outcome, .. } => {
                if let Some(reply) = self.inputs.remove(&input) {
                    answer(reply, outcome);
                }
            }
            Event::TimedOut { request, .. } => {
                if let Some(reply) = self.replies.remove(&request) {
                    answer(
                        reply,
                        Err(RpcError::new(code::REQUEST_TIMEOUT, "Request timed out")),
                    );
                }
            }
            Event::TaskCreated { request, task, .. } => {
                let (tx, updates) = async_channel::unbounded();
                self.task_updates.insert(task.id.clone(), tx);
                match self.replies.remove(&request) {
                    Some(Reply::Task(reply)) => {
                        let _ = reply.send(Ok(TaskCall {
                            task: Some(task),
                            updates,
                        }));
                    }
                    Some(other) => answer(other, Ok(serde_json::json!({ "taskId": task.id }))),
                    None => {}
                }
            }
            Event::TaskStatus { task, .. } => {
                if let Some(tx) = self.task_updates.get(&task.id) {
                    let _ = tx.try_send(TaskUpdate::Status(task));
                }
            }
            Event::TaskResult { task, outcome, .. } => {
                if let Some(tx) = self.task_updates.remove(&task) {
                    let _ = tx.try_send(TaskUpdate::Result(outcome));
                }
            }
            Event::Initialized {
                protocol_version,
                peer,
                capabilities,
                ..
            } => {
                if let Some(Reply::Initialized(reply)) = self.initialized.take() {
                    let _ = reply.send(Ok(Initialized {
                        protocol_version,
                        server: peer,
                        capabilities,
                    }));
                }
            }
            Event::InitializeFailed { error, .. } => {
                if let Some(reply) = self.initialized.take() {
                    answer(reply, Err(error));
                }
            }
            _ => {}
        }
    }

    /// Runs hosted work in the background; its outcome comes back as `Command::Finished`.
    /// A panic fails the work with an internal error; an abort drops it silently.
    fn spawn_work(&mut self, call: CallId, future: BoxFuture<Result<Value, RpcError>>) {
        let (handle, registration) = AbortHandle::new_pair();
        let commands = self.commands.clone();
        let guarded = Abortable::new(AssertUnwindSafe(future).catch_unwind(), registration);
        self.runtime.spawn(Box::pin(async move {
            if let Ok(result) = guarded.await {
                let outcome = result.unwrap_or_else(|panic| {
                    let what = panic
                        .downcast_ref::<&str>()
                        .map(|s| s.to_string())
                        .or_else(|| panic.downcast_ref::<String>().cloned())
                        .unwrap_or_else(|| "unknown panic".into());
                    Err(RpcError::internal(format!(
                        "Internal error: the tool panicked: {what}"
                    )))
                });
                let _ = commands.send(Command::Finished { call, outcome }).await;
            }
        }));
        self.workers.insert(call, handle);
    }
}

/// Delivers an answer to whoever waits for it.
fn answer(reply: Reply, outcome: Result<Value, RpcError>) {
    match reply {
        Reply::Value(tx) => {
            let _ = tx.send(outcome);
        }
        Reply::Task(tx) => {
            // The peer answered a task-augmented request plainly: a call with no task.
            let _ = tx.send(outcome.map(|result| {
                let (updates_tx, updates) = async_channel::bounded(1);
                let _ = updates_tx.try_send(TaskUpdate::Result(Ok(result)));
                TaskCall {
                    task: None,
                    updates,
                }
            }));
        }
        Reply::Initialized(tx) => {
            let _ = tx.send(outcome.and_then(|_| Err(closed())));
        }
    }
}
