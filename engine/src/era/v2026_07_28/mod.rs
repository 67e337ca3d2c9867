//! MCP 2026-07-28 with the tasks extension `io.modelcontextprotocol/tasks` (server role).
//!
//! Requests are stateless: each carries its protocol version and client capabilities in
//! `params._meta`, there is no `initialize`, and `server/discover` says what we
//! serve. Every result has `resultType`. A `tools/call` becomes a task only when that
//! request declares the extension (the tool's policy decides); the `CreateTaskResult` is
//! flat; `tasks/get` inlines the outcome; `tasks/cancel` and `tasks/update` are acks;
//! `tasks/result` and `tasks/list` do not exist. A tool result with `isError: true` reads
//! as `completed`; `failed` carries the JSON-RPC error.
//!
//! Checks run in the order the spec's decisions fix: `_meta` (-32602) and version
//! (-32022), method (-32601), extension declared (-32021), params (-32602), task lookup.
//! Input ([`Host::request_input`](crate::Host::request_input)): a task lists it in `tasks/get` as `inputRequests`,
//! answered by `tasks/update`; a plain call answers its request with an
//! `InputRequiredResult` (MRTR) and its retry carries the answers. `subscriptions/listen`
//! with `notifications.taskIds` streams `notifications/tasks`.
//!
//! Client role: [`Host::initialize`](crate::Host::initialize) opens with `server/discover`
//! (an older era takes over when the server does not speak this one, per
//! [`ClientEra`](crate::ClientEra)); every request carries the `_meta`,
//! declaring the extension except on a plain `tools/call`; a `tools/call` answer is read by
//! its `resultType` (a result, MRTR rounds answered by the application's input handlers, or
//! a task); a task is polled with `tasks/get` at its `pollIntervalMs`, its `inputRequests`
//! go to the same handlers and back by `tasks/update`, and its outcome comes inline.

//!
//! - `serving.rs`: which requests this era reads (`_meta` checked once), `server/discover`.
//! - `tools.rs`, `tasks.rs`, `input.rs`, `listen.rs`: serving `tools/*`, `tasks/*`, input
//!   (task `inputRequests`, MRTR) and `subscriptions/listen`.
//! - `requestor.rs`: opening, our requests and the answers to our `tools/call`;
//!   `following.rs`: the tasks the server runs for us; `outgoing.rs`: what both share
//!   (sending with our `_meta`, handing answers and input requests to the application).
//! - `meta.rs` (the per-request `_meta`), `encode.rs` (results as written), `types.rs` (wire
//!   shapes read), `state.rs` (what this era keeps on sessions and calls).

mod encode;
mod following;
mod input;
pub(super) mod listen;
mod meta;
mod outgoing;
pub(super) use meta::names_version;
pub(super) use serving::serve_unchecked;
pub(super) mod kept;
mod requestor;
mod serving;
mod state;
mod tasks;
mod tools;
mod types;

use serde_json::value::RawValue;
use serde_json::{Map, Value};

pub(crate) use meta::VERSION_KEY;
pub use meta::{EXTENSION, VERSION};

use crate::era::kept::{Eras, Purpose, State};
use crate::error::UsageError;
use crate::ids::{CallId, InputId, SessionId, TaskId};
use crate::jsonrpc::{Params, Reject, RequestId, RpcError};
use crate::log_level::LogLevel;
use crate::model::{Request, StoredInput};
use crate::state::{Answer, Protocol, TaskVerb};

/// How long a client may cache `server/discover` and `tools/list` (ms).
const CACHE_TTL_MS: u64 = 60_000;

/// This era's rules.
pub(crate) struct V2026_07_28;

impl Protocol<Eras> for V2026_07_28 {
    fn serve(
        &self,
        st: &mut State,
        session: SessionId,
        id: &RequestId,
        method: &str,
        params: Option<&RawValue>,
    ) -> Option<Result<(), Reject>> {
        serving::serve(st, session, id, method, Params::Checked(params))
    }

    fn notify(
        &self,
        st: &mut State,
        session: SessionId,
        method: &str,
        params: Option<&RawValue>,
    ) -> bool {
        following::notify(st, session, method, params)
    }

    fn drop_held(&self, st: &mut State, session: SessionId, request: &RequestId) {
        listen::drop_stream(st, session, request);
    }

    fn answer_again(
        &self,
        st: &State,
        id: &RequestId,
        verb: TaskVerb,
        task: &TaskId,
    ) -> Option<(String, Option<i64>)> {
        tasks::answer_again(st, id, verb, task)
    }

    fn tell(&self, st: &mut State, session: SessionId, task: &TaskId) {
        listen::tell_listeners(st, session, task);
    }

    fn answer(&self, st: &mut State, call: CallId, outcome: Answer) {
        tools::answer(st, call, outcome);
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
        match task {
            None => {
                let stream = st.call_stream(call);
                st.send_progress(call, stream, None, progress, total, message, None);
            }
            // This era has no progress for tasks: the task's status message carries it,
            // unless the application set that message itself.
            Some(task) => {
                if st.call(call).is_some_and(|c| !c.own_message) {
                    let text = message.unwrap_or_else(|| progress_text(progress, total));
                    st.change_message(task, Some(text));
                }
            }
        }
    }

    fn request_input(
        &self,
        st: &mut State,
        call: CallId,
        method: &str,
        capability: &'static str,
        params: Map<String, Value>,
    ) -> Result<InputId, UsageError> {
        input::ask(st, call, method, capability, params)
    }

    fn stored_inputs(&self, st: &State, call: CallId) -> Vec<StoredInput> {
        input::stored(st, call)
    }

    fn sync_inputs(&self, st: &mut State, call: CallId, inputs: Vec<StoredInput>) {
        input::sync(st, call, inputs);
    }

    fn answer_relayed(&self, st: &mut State, task: &TaskId, responses: Map<String, Value>) {
        // Checked where the requestor answered: a relayed answer is applied as it is.
        let _ = input::answer_asks(st, task, responses);
    }

    fn log(
        &self,
        st: &mut State,
        call: CallId,
        level: LogLevel,
        logger: Option<&str>,
        data: &Value,
    ) {
        tools::log(st, call, level, logger, data);
    }

    fn begin_offered_task(
        &self,
        st: &mut State,
        call: CallId,
        session: SessionId,
        request: &RequestId,
        _ttl: Option<u64>,
    ) -> Result<(TaskId, CallId), Reject> {
        let (token, kinds, kept) = st
            .call_mut(call)
            .map(|c| (c.progress_token.clone(), c.input_kinds, c.request.take()))
            .unwrap_or_default();
        tools::begin_task(st, session, request, token, kinds, kept)
    }

    fn open(&self, st: &mut State, session: SessionId, fallback: bool) -> Option<RequestId> {
        requestor::discover(st, session, fallback)
    }

    fn listen_for_notices(
        &self,
        st: &mut State,
        session: SessionId,
        resources: &[String],
    ) -> Option<RequestId> {
        following::listen_for_notices(st, session, resources)
    }

    fn send(
        &self,
        st: &mut State,
        session: SessionId,
        request: Request,
    ) -> Result<RequestId, UsageError> {
        let sent = match request {
            Request::Any { method, params } => outgoing::app_request(st, session, &method, params),
            Request::ListTools { cursor } => {
                let params = cursor.map(|c| serde_json::json!({ "cursor": c }));
                outgoing::send(st, session, "tools/list", params, state::Asked::ToolsList)
            }
            Request::CallTool { name, arguments } => {
                return requestor::call_tool(st, session, &name, arguments, false)
            }
            Request::CallToolAsTask {
                name, arguments, ..
            } => return requestor::call_tool(st, session, &name, arguments, true),
            Request::GetTask { task } => following::get_task(st, session, &task),
            Request::FollowTask { task } => following::follow_task(st, session, &task),
            Request::CancelTask { task } => following::cancel_task(st, session, &task),
            Request::AnyAsTask { .. } => {
                return Err(UsageError::NotInEra {
                    method: "task-augmented requests",
                    instead: "in 2026-07-28 only the server runs tasks (Host::call_tool_as_task)",
                })
            }
            Request::TaskResult { .. } => {
                return Err(UsageError::NotInEra {
                    method: "tasks/result",
                    instead: "in 2026-07-28, tasks/get carries the outcome (Host::get_task)",
                })
            }
            Request::ListTasks { .. } => {
                return Err(UsageError::NotInEra {
                    method: "tasks/list",
                    instead: "in 2026-07-28 a client keeps the ids of the tasks it created",
                })
            }
            Request::SetLogLevel { .. } => {
                return Err(UsageError::NotInEra {
                    method: "logging/setLevel",
                    instead: "in 2026-07-28 a request asks for log messages in its own _meta \
                              (io.modelcontextprotocol/logLevel)",
                })
            }
        };
        sent.ok_or(UsageError::UnknownSession(session))
    }

    fn cancel_request(&self, st: &mut State, session: SessionId, request: &RequestId) -> bool {
        requestor::give_up(st, session, request)
    }

    fn answered(
        &self,
        st: &mut State,
        session: SessionId,
        id: RequestId,
        purpose: Purpose,
        outcome: Result<Value, RpcError>,
    ) {
        if let Purpose::V2026_07_28(asked) = purpose {
            requestor::answered(st, session, id, asked, outcome);
        }
    }

    fn timed_out(&self, st: &mut State, session: SessionId, id: RequestId, purpose: Purpose) {
        if let Purpose::V2026_07_28(asked) = purpose {
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
        if let Purpose::V2026_07_28(asked) = purpose {
            requestor::closed_pending(st, session, id, asked, error);
        }
    }

    fn closed(&self, st: &mut State, session: SessionId, error: &RpcError) {
        requestor::fail_retries(st, session, error);
    }

    fn follow_up(&self, st: &mut State, session: SessionId, task: &TaskId) {
        following::follow_up(st, session, task);
    }

    fn poll(&self, st: &mut State, session: SessionId, task: &TaskId) {
        following::poll(st, session, task);
    }

    fn let_go(&self, st: &mut State, session: SessionId, task: &TaskId) {
        following::let_go(st, session, task);
    }
}

/// `"3 of 5"`, or `"3"` without a total; whole numbers without a fraction.
fn progress_text(progress: f64, total: Option<f64>) -> String {
    let number = |n: f64| {
        if n.fract() == 0.0 && n.abs() < 1e15 {
            format!("{}", n as i64)
        } else {
            format!("{n}")
        }
    };
    match total {
        Some(total) => format!("{} of {}", number(progress), number(total)),
        None => number(progress),
    }
}
