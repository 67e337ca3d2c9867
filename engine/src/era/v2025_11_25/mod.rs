//! MCP 2025-11-25: tasks in the core protocol (experimental).
//!
//! A session of this era starts with `initialize`; task-augmented requests carry
//! `params.task`; `tasks/get`, `tasks/result`, `tasks/list` and `tasks/cancel` serve them;
//! `notifications/tasks/status` reports changes; input is asked with `elicitation/create`
//! and `sampling/createMessage` requests carrying related-task `_meta`. A tool result with
//! `isError: true` reads as `failed`; `tasks/cancel` of a terminal task is -32602.
//!
//! - `serving.rs`: which requests and notifications this era reads, and how it routes them.
//! - `handshake.rs`: `initialize` in both roles; `tools.rs`: `tools/list` and `tools/call`.
//! - `receiver.rs`: `tasks/*`, status notifications, parked results, what calls send.
//! - `requestor.rs`: our requests and their answers; `following.rs`: fetching the outcome
//!   of a peer's task; `negotiation.rs`: whether a call of ours goes as a task.
//! - `resources.rs`: resource subscriptions, when the application declares them.
//! - `logging.rs`, `encode.rs` (tasks and outcomes as written), `types.rs` (wire shapes),
//!   `state.rs` (what this era keeps on sessions and calls).

mod encode;
mod following;
mod handshake;
pub(super) mod kept;
mod logging;
mod negotiation;
pub(super) mod notices;
mod receiver;
mod relay;
pub(crate) use receiver::list_cursor;
mod requestor;
mod resources;
mod serving;
mod state;
mod tools;
mod types;

use serde_json::value::RawValue;
use serde_json::{Map, Value};

pub use types::*;

use crate::era::kept::{Eras, Purpose, State};
use crate::error::UsageError;
use crate::ids::{CallId, InputId, SessionId, TaskId};
use crate::jsonrpc::{Reject, RequestId, RpcError};
use crate::log_level::LogLevel;
use crate::model::{Request, StoredInput, TaskProgress};
use crate::state::{Answer, Protocol, TaskVerb};
use state::Asked;

/// This era's rules.
pub(crate) struct V2025_11_25;

impl Protocol<Eras> for V2025_11_25 {
    fn serve(
        &self,
        st: &mut State,
        session: SessionId,
        id: &RequestId,
        method: &str,
        params: Option<&RawValue>,
    ) -> Option<Result<(), Reject>> {
        serving::serve(st, session, id, method, params)
    }

    fn notify(
        &self,
        st: &mut State,
        session: SessionId,
        method: &str,
        params: Option<&RawValue>,
    ) -> bool {
        serving::notify(st, session, method, params)
    }

    fn drop_held(&self, st: &mut State, session: SessionId, request: &RequestId) {
        receiver::drop_parked(st, session, request);
    }

    fn tell(&self, st: &mut State, session: SessionId, task: &TaskId) {
        receiver::status_notification(st, session, task);
    }

    fn release(&self, st: &mut State, session: SessionId, task: &TaskId, gone: bool) {
        receiver::release_parked(st, session, task, gone);
    }

    fn answer_again(
        &self,
        st: &State,
        id: &RequestId,
        verb: TaskVerb,
        task: &TaskId,
    ) -> Option<(String, Option<i64>)> {
        receiver::answer_again(st, id, verb, task)
    }

    fn answer(&self, st: &mut State, call: CallId, outcome: Answer) {
        receiver::answer_plain(st, call, outcome);
    }

    fn progress(
        &self,
        st: &mut State,
        call: CallId,
        task: Option<&TaskId>,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    ) {
        let meta = task.map(|t| related_task_meta(t.as_str()));
        let Some(session) = st.call(call).and_then(|c| c.session) else {
            if let Some(task) = task {
                relay::progress(st, call, task, progress, total, message);
            }
            return;
        };
        let stream = state::call_stream(st, session, call);
        st.send_progress(call, stream, task, progress, total, message, meta);
    }

    fn request_input(
        &self,
        st: &mut State,
        call: CallId,
        method: &str,
        capability: &'static str,
        params: Map<String, Value>,
    ) -> Result<InputId, UsageError> {
        receiver::send_input_request(st, call, method, capability, params)
    }

    fn stored_inputs(&self, st: &State, call: CallId) -> Vec<StoredInput> {
        relay::stored(st, call)
    }

    fn sync_inputs(&self, st: &mut State, call: CallId, inputs: Vec<StoredInput>) {
        relay::sync(st, call, inputs);
    }

    fn answer_relayed(&self, st: &mut State, task: &TaskId, responses: Map<String, Value>) {
        relay::answered(st, task, responses);
    }

    fn stored_progress(&self, st: &State, call: CallId) -> Option<TaskProgress> {
        relay::stored_progress(st, call)
    }

    fn sync_progress(&self, st: &mut State, call: CallId, progress: Option<TaskProgress>) {
        relay::sync_progress(st, call, progress);
    }

    fn withdraw_inputs(&self, st: &mut State, call: CallId) {
        receiver::withdraw_inputs(st, call, "Task is no longer running");
        relay::withdraw(st, call, "Task is no longer running");
    }

    fn log(
        &self,
        st: &mut State,
        call: CallId,
        level: LogLevel,
        logger: Option<&str>,
        data: &Value,
    ) {
        logging::log(st, call, level, logger, data);
    }

    fn begin_offered_task(
        &self,
        st: &mut State,
        call: CallId,
        session: SessionId,
        request: &RequestId,
        ttl: Option<u64>,
    ) -> Result<(TaskId, CallId), Reject> {
        let (token, kept) = st
            .call_mut(call)
            .map(|c| (c.progress_token.clone(), c.request.take()))
            .unwrap_or_default();
        tools::begin_task(st, session, request, ttl, token, None, kept)
    }

    fn open(&self, st: &mut State, session: SessionId, _fallback: bool) -> Option<RequestId> {
        handshake::send_initialize(st, session)
    }

    fn send(
        &self,
        st: &mut State,
        session: SessionId,
        request: Request,
    ) -> Result<RequestId, UsageError> {
        let sent = match request {
            Request::Any { method, params } => requestor::app_request(st, session, &method, params),
            Request::AnyAsTask {
                method,
                params,
                ttl_ms,
            } => return requestor::request_as_task(st, session, &method, params, ttl_ms),
            Request::ListTools { cursor } => requestor::list_tools(st, session, cursor),
            Request::CallTool { name, arguments } => {
                return requestor::call_tool(st, session, &name, arguments, None)
            }
            Request::CallToolAsTask {
                name,
                arguments,
                ttl_ms,
            } => return requestor::call_tool(st, session, &name, arguments, Some(ttl_ms)),
            Request::GetTask { task } => requestor::get_task(st, session, &task),
            Request::FollowTask { task } => requestor::follow_task(st, session, &task),
            Request::TaskResult { task } => return requestor::task_result(st, session, &task),
            Request::CancelTask { task } => requestor::cancel_task(st, session, &task),
            Request::ListTasks { cursor } => return requestor::list_tasks(st, session, cursor),
            Request::SetLogLevel { level } => {
                let params = serde_json::json!({ "level": level });
                requestor::app_request(st, session, "logging/setLevel", Some(params))
            }
        };
        sent.ok_or(UsageError::UnknownSession(session))
    }

    fn cancel_request(&self, st: &mut State, session: SessionId, request: &RequestId) -> bool {
        if requestor::withdraw_task_request(st, session, request) {
            return true;
        }
        // A task call refused with -32601 went again plainly, under a new id.
        st.give_up_request(
            session,
            request,
            |purpose| matches!(purpose, Purpose::V2025_11_25(Asked::PlainRetry { original }) if original == request),
        )
    }

    fn answered(
        &self,
        st: &mut State,
        session: SessionId,
        id: RequestId,
        purpose: Purpose,
        outcome: Result<Value, RpcError>,
    ) {
        if let Purpose::V2025_11_25(asked) = purpose {
            requestor::answered(st, session, id, asked, outcome);
        }
    }

    fn timed_out(&self, st: &mut State, session: SessionId, id: RequestId, purpose: Purpose) {
        if let Purpose::V2025_11_25(asked) = purpose {
            requestor::timed_out(st, session, id, asked);
        }
    }

    fn closed_pending(
        &self,
        st: &mut State,
        session: SessionId,
        id: RequestId,
        purpose: Purpose,
        error: &RpcError,
    ) {
        if let Purpose::V2025_11_25(asked) = purpose {
            requestor::closed_pending(st, session, id, asked, error);
        }
    }

    fn follow_up(&self, st: &mut State, session: SessionId, task: &TaskId) {
        following::follow_up(st, session, task);
    }

    fn poll(&self, st: &mut State, session: SessionId, task: &TaskId) {
        following::poll(st, session, task);
    }
}
