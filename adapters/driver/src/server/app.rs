//! A server on the driver: each tool call starts its tool (arguments decoded first, the task
//! started unless the tool asks first), each other request its handler.

use futures::FutureExt;
use taskwire_engine::{CallId, Event, Role, RpcError, SessionId, TaskId, TaskRequest, ToolCall};

use super::context::ToolContext;
use super::tool::{self, ToolOutcome, ToolSet};
use super::ServerCommand;
use crate::driver::{App, Ctx, Work};
use crate::handler::request_work;
use crate::observe::trace::{self, Parent};
use crate::runtime::now;
use crate::tool_result::CallToolResult;

/// The status message of a task a front handed off, until a worker takes it.
const QUEUED: &str = "Queued: waiting for a worker to take it";

impl App for ToolSet {
    type Command = ServerCommand;
    const ROLE: Role = Role::Server;

    fn on_event(&mut self, event: Event, ctx: Ctx<'_, ServerCommand>) -> Option<Work> {
        match event {
            Event::ToolCall(call) => self.tool_call(call, ctx),
            Event::Request(request) => {
                let handler = self.requests.get(&request.method)?;
                Some(request_work(handler, request))
            }
            Event::Restored {
                call,
                task,
                request,
            } => Some(self.restored(call, task, request, ctx)),
            Event::Claimed {
                call,
                task,
                request,
            } => Some(self.claimed(call, task, request, ctx)),
            Event::Closed { session } => {
                self.sessions.remove(&session);
                self.subscriptions.set(session, Vec::new());
                None
            }
            Event::ResourceSubscriptions { session, uris } => {
                self.subscriptions.set(session, uris);
                None
            }
            _ => None,
        }
    }

    fn opened(&mut self, session: SessionId) {
        self.sessions.insert(session);
    }

    fn on_command(&mut self, command: ServerCommand, ctx: Ctx<'_, ServerCommand>) {
        match command {
            ServerCommand::Notify(notice) => {
                for &session in &self.sessions {
                    if let Err(e) = ctx.host.notify(now(), session, &notice) {
                        tracing::debug!(?session, error = %e, method = notice.method(), "notice not sent");
                    }
                }
            }
            ServerCommand::AddTool(tool, handler) => {
                tracing::debug!(tool = %tool.name, "tool added");
                let name = tool.name.clone();
                self.insert(name.clone(), handler);
                ctx.host.add_tool(tool::app_def(tool));
            }
            ServerCommand::RemoveTool(name) => {
                tracing::debug!(tool = %name, "tool removed");
                self.remove(&name);
                ctx.host.remove_tool(&name);
            }
        }
    }
}

impl ToolSet {
    /// Stores a new task's work as queued for a worker (this server is a front): nothing
    /// runs here. A task that cannot be handed off fails, saying why.
    fn hand_off(&self, call: CallId, task: TaskId, ctx: Ctx<'_, ServerCommand>) -> Option<Work> {
        let queued = Some(QUEUED.to_owned());
        match ctx.host.hand_off(now(), call, queued) {
            Ok(_) => {
                tracing::debug!(%task, "a task's work is queued for a worker");
                None
            }
            Err(error) => {
                tracing::error!(%task, %error, "a task's work cannot be handed to a worker; it fails");
                let error = RpcError::internal(format!(
                    "Internal error: task {task}'s work cannot be handed to a worker: {error}"
                ));
                Some(Work::done(call, Err(error)))
            }
        }
    }

    /// A task's work stopped with the process running it (this one, restarted, or a replica
    /// whose lease ran out): its tool's resume hook runs it again, or, without one or past
    /// [`ToolSet::max_attempts`], the task fails saying so (rather than stay `working` until
    /// it expires).
    fn restored(
        &self,
        call: CallId,
        task: TaskId,
        request: Option<TaskRequest>,
        ctx: Ctx<'_, ServerCommand>,
    ) -> Work {
        let resumer = request
            .as_ref()
            .and_then(|r| Some((r, self.resumer(&r.tool)?)));
        let Some((request, resume)) = resumer else {
            tracing::warn!(%task, "a task's work stopped with its process, and it has no resume hook; it fails");
            let error = RpcError::internal(format!(
                "Internal error: task {task} was running when its server process stopped (a \
                 restart, or a replica whose lease in the task store ran out), and its work \
                 was lost; run it again"
            ));
            return Work::done(call, Err(error));
        };
        let attempt = request.attempt;
        if attempt > self.max_attempts {
            let tries = self.max_attempts;
            tracing::warn!(%task, tool = %request.tool, attempt, "a task's work stopped with its process too often; it fails");
            let error = RpcError::internal(format!(
                "Internal error: task {task}'s work stopped with its server process {tries} \
                 times (the limit is {tries} attempts); run it again"
            ));
            return Work::done(call, Err(error));
        }
        let start = match resume(request.arguments.as_deref()) {
            Ok(start) => start,
            Err(error) => {
                tracing::warn!(%task, tool = %request.tool, %error.message, "a restored task cannot resume; it fails");
                return Work::done(call, Err(error));
            }
        };
        tracing::info!(%task, tool = %request.tool, attempt, "a task's work resumes");
        let parent = Parent::Stored(request.meta.as_deref());
        let span = ctx.spans.work(parent, &request.tool, Some(&task), attempt);
        let tool = ToolContext::new(
            request.tool.clone(),
            Ok(task),
            call,
            ctx.commands.clone(),
            ctx.runtime.clone(),
        )
        .attempt_number(attempt);
        let work =
            start(tool).map(|outcome: ToolOutcome| outcome.and_then(CallToolResult::into_raw));
        Work::traced(call, span, work)
    }

    /// A task handed off by a front, claimed here: its tool runs with the stored arguments,
    /// as it would have where it was called.
    fn claimed(
        &self,
        call: CallId,
        task: TaskId,
        request: TaskRequest,
        ctx: Ctx<'_, ServerCommand>,
    ) -> Work {
        let Some(handler) = self.handler(&request.tool) else {
            tracing::warn!(%task, tool = %request.tool, "a claimed task's tool is not one of this server's; it fails");
            let error = RpcError::internal(format!(
                "Internal error: task {task} runs tool {:?}, which the worker that took it does                  not have; give every worker the front's tools",
                request.tool
            ));
            return Work::done(call, Err(error));
        };
        let start = match handler(request.arguments.as_deref()) {
            Ok(start) => start,
            Err(error) => return Work::done(call, Err(error)),
        };
        tracing::debug!(%task, tool = %request.tool, "a claimed task's work starts");
        let parent = Parent::Stored(request.meta.as_deref());
        let span = ctx.spans.work(parent, &request.tool, Some(&task), 1);
        let tool = ToolContext::new(
            request.tool,
            Ok(task),
            call,
            ctx.commands.clone(),
            ctx.runtime.clone(),
        );
        let work =
            start(tool).map(|outcome: ToolOutcome| outcome.and_then(CallToolResult::into_raw));
        Work::traced(call, span, work)
    }

    fn tool_call(&self, call: ToolCall, ctx: Ctx<'_, ServerCommand>) -> Option<Work> {
        let handler = self.handler(&call.name)?;
        let span = trace::call_span(&call.name, call.meta.as_deref());
        // Arguments first: a mismatch is a -32602 answer, and no task is created for it.
        let start = match handler(call.arguments.as_deref()) {
            Ok(start) => start,
            Err(error) => return Some(Work::done(call.call, Err(error))),
        };
        let task = match (call.task_offered, call.task) {
            (true, _) if self.asks_first(&call.name) => Err(true),
            // The requestor's session may have gone away meanwhile: nothing to run for.
            (true, _) => {
                let task = ctx.host.start_task(now(), call.call).ok()?;
                if self.hand_off {
                    span.record("mcp.task.id", task.as_str());
                    ctx.spans.insert(&task, &span);
                    return self.hand_off(call.call, task, ctx);
                }
                Ok(task)
            }
            (false, Some(task)) => Ok(task),
            (false, None) => Err(false),
        };
        tracing::debug!(tool = %call.name, call = ?call.call, task = ?task.as_ref().ok(), "tool started");
        let work_span = (ctx.spans).work(Parent::Call(&span), &call.name, task.as_ref().ok(), 1);
        let tool = ToolContext::new(
            call.name,
            task,
            call.call,
            ctx.commands.clone(),
            ctx.runtime.clone(),
        );
        let work =
            start(tool).map(|outcome: ToolOutcome| outcome.and_then(CallToolResult::into_raw));
        Some(Work::traced(call.call, work_span, work))
    }
}
