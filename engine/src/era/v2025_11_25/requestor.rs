//! The requestor role in 2025-11-25: our requests to the peer, the tasks it hosts for us,
//! polling them, their results; local timeouts; what a closing session fails.

use serde::Deserialize;
use serde_json::{json, Value};

use super::types::{
    CallToolRequest, CancelledParams, CreateTaskResult, PageParams, Task, TaskIdParams,
    TaskMetadata,
};
use crate::error::PeerErrorKind;
use crate::event::{Event, MessageKind};
use crate::host::{Host, Timer};
use crate::ids::{SessionId, TaskId};
use crate::jsonrpc::{self, code, RequestId, RpcError};
use crate::session::{Purpose, Session};
use crate::status::TaskStatus;
use crate::task::TaskInfo;
use crate::time::Millis;
use crate::UsageError;

/// What we know of a task the peer hosts.
#[derive(Debug, Default)]
pub(crate) struct RemoteTask {
    /// The newest view seen (from `CreateTaskResult`, `tasks/get` or a notification).
    view: Option<TaskInfo>,
    /// We created it (its `CreateTaskResult` arrived); only then do we poll and fetch.
    ours: bool,
    auto_poll: bool,
    get_in_flight: bool,
    result_requested: bool,
    result_reported: bool,
}

impl RemoteTask {
    fn status(&self) -> Option<TaskStatus> {
        self.view.as_ref().map(|t| t.status)
    }
}

/// `tools/call` arguments: an object, or `null` for none (then the member is left out).
fn tool_arguments(arguments: &Value) -> Result<Option<&Value>, UsageError> {
    match arguments {
        Value::Null => Ok(None),
        Value::Object(_) => Ok(Some(arguments)),
        _ => Err(UsageError::NotAnObject("tool arguments")),
    }
}

fn malformed_task(id: &RequestId) -> String {
    format!("malformed task in answer to {id}")
}

impl Host {
    // ---- commands -----------------------------------------------------------------------------

    /// Sends any request; the answer arrives as [`Event::Response`].
    pub fn request(
        &mut self,
        now: Millis,
        session: SessionId,
        method: &str,
        params: Option<Value>,
    ) -> Result<RequestId, UsageError> {
        self.outbound_request(now, session, method, params, Purpose::App)
    }

    fn outbound_request(
        &mut self,
        now: Millis,
        session: SessionId,
        method: &str,
        params: Option<impl serde::Serialize>,
        purpose: Purpose,
    ) -> Result<RequestId, UsageError> {
        self.ready(session)?;
        self.advance(now);
        self.send_request(session, method, params, purpose, None)
            .ok_or(UsageError::UnknownSession(session))
    }

    /// `tools/list`, one page.
    pub fn list_tools(
        &mut self,
        now: Millis,
        session: SessionId,
        cursor: Option<String>,
    ) -> Result<RequestId, UsageError> {
        self.request(
            now,
            session,
            "tools/list",
            Some(json!(PageParams { cursor })),
        )
    }

    /// A plain `tools/call`; `arguments` is an object, or `null` for none.
    pub fn call_tool(
        &mut self,
        now: Millis,
        session: SessionId,
        name: &str,
        arguments: Value,
    ) -> Result<RequestId, UsageError> {
        let params = CallToolRequest {
            name,
            arguments: tool_arguments(&arguments)?,
            task: None,
        };
        self.outbound_request(now, session, "tools/call", Some(params), Purpose::App)
    }

    /// A task-augmented `tools/call`, whatever the tool advertises. [`Event::TaskCreated`]
    /// follows, then [`Event::TaskStatus`] changes and one [`Event::TaskResult`]; a server
    /// that runs the call plainly answers with [`Event::Response`] instead.
    pub fn call_tool_as_task(
        &mut self,
        now: Millis,
        session: SessionId,
        name: &str,
        arguments: Value,
        ttl_ms: Option<u64>,
    ) -> Result<RequestId, UsageError> {
        let params = CallToolRequest {
            name,
            arguments: tool_arguments(&arguments)?,
            task: Some(TaskMetadata { ttl: ttl_ms }),
        };
        self.check_tasks_negotiated(session)?;
        self.outbound_request(
            now,
            session,
            "tools/call",
            Some(params),
            Purpose::TaskRequest,
        )
    }

    /// Any task-augmented request (e.g. a server's `sampling/createMessage` to a client
    /// that hosts it).
    pub fn request_as_task(
        &mut self,
        now: Millis,
        session: SessionId,
        method: &str,
        params: Value,
        ttl_ms: Option<u64>,
    ) -> Result<RequestId, UsageError> {
        let Value::Object(mut params) = params else {
            return Err(UsageError::NotAnObject("request params"));
        };
        params.insert("task".into(), json!(TaskMetadata { ttl: ttl_ms }));
        self.check_tasks_negotiated(session)?;
        self.outbound_request(now, session, method, Some(params), Purpose::TaskRequest)
    }

    /// `tasks/get`; the answer arrives as [`Event::Response`] and updates the task's view.
    pub fn get_task(
        &mut self,
        now: Millis,
        session: SessionId,
        task: &str,
    ) -> Result<RequestId, UsageError> {
        let purpose = Purpose::TaskGet {
            task: TaskId::from(task),
            auto: false,
        };
        self.task_request(now, session, "tasks/get", task, purpose)
    }

    /// `tasks/result`; the answer arrives as [`Event::Response`] (and, the first time, as
    /// [`Event::TaskResult`]).
    pub fn task_result(
        &mut self,
        now: Millis,
        session: SessionId,
        task: &str,
    ) -> Result<RequestId, UsageError> {
        let purpose = Purpose::TaskResult {
            task: TaskId::from(task),
            auto: false,
        };
        self.task_request(now, session, "tasks/result", task, purpose)
    }

    /// `tasks/cancel`; the answer arrives as [`Event::Response`].
    pub fn cancel_task(
        &mut self,
        now: Millis,
        session: SessionId,
        task: &str,
    ) -> Result<RequestId, UsageError> {
        let purpose = Purpose::TaskCancel {
            task: TaskId::from(task),
        };
        self.task_request(now, session, "tasks/cancel", task, purpose)
    }

    /// `tasks/list`, one page.
    pub fn list_tasks(
        &mut self,
        now: Millis,
        session: SessionId,
        cursor: Option<String>,
    ) -> Result<RequestId, UsageError> {
        self.request(
            now,
            session,
            "tasks/list",
            Some(json!(PageParams { cursor })),
        )
    }

    fn task_request(
        &mut self,
        now: Millis,
        session: SessionId,
        method: &str,
        task: &str,
        purpose: Purpose,
    ) -> Result<RequestId, UsageError> {
        let params = TaskIdParams {
            task_id: task.to_owned(),
        };
        self.outbound_request(now, session, method, Some(params), purpose)
    }

    /// Task-augmented requests need a negotiated version that has tasks.
    fn check_tasks_negotiated(&self, session: SessionId) -> Result<(), UsageError> {
        match self.ready(session)?.version() {
            Some(v) if super::version_has_tasks(v) => Ok(()),
            _ => Err(UsageError::NotNegotiated(
                "tasks (the negotiated protocol version has none)",
            )),
        }
    }

    /// Turns the engine's own polling and result fetching for a peer task on or off.
    pub fn set_auto_poll(
        &mut self,
        session: SessionId,
        task: &str,
        on: bool,
    ) -> Result<(), UsageError> {
        let entry = self
            .session_mut(session)
            .ok_or(UsageError::UnknownSession(session))?
            .remote
            .get_mut(task)
            .filter(|t| t.ours)
            .ok_or_else(|| UsageError::UnknownRemoteTask(TaskId::from(task)))?;
        entry.auto_poll = on;
        let task = TaskId::from(task);
        if on {
            self.follow_up(session, &task);
            self.after_poll(session, &task);
        } else {
            self.timers.clear(&Timer::Poll(session, task));
        }
        Ok(())
    }

    /// What we last heard of a task the peer hosts for us.
    pub fn remote_task(&self, session: SessionId, task: &str) -> Option<&TaskInfo> {
        self.session(session)?.remote.get(task)?.view.as_ref()
    }

    /// Ids of the peer-hosted tasks we follow on a session, sorted.
    pub fn remote_task_ids(&self, session: SessionId) -> Vec<&TaskId> {
        let Some(s) = self.session(session) else {
            return Vec::new();
        };
        let mut ids: Vec<&TaskId> = s
            .remote
            .iter()
            .filter(|(_, t)| t.ours)
            .map(|(id, _)| id)
            .collect();
        ids.sort_unstable();
        ids
    }

    // ---- answers --------------------------------------------------------------------------------

    /// The peer answered our request `id`, sent for `purpose`.
    pub(crate) fn on_answer(
        &mut self,
        session: SessionId,
        id: RequestId,
        purpose: Purpose,
        outcome: Result<Value, RpcError>,
    ) {
        match purpose {
            Purpose::Initialize => self.on_initialize_response(session, outcome),
            Purpose::App => self.event(Event::Response {
                session,
                request: id,
                outcome,
            }),
            Purpose::TaskRequest => self.on_task_created(session, id, outcome),
            Purpose::TaskGet { task, auto } => {
                match &outcome {
                    Ok(v) => match parse_task(v) {
                        Some(view) if view.task_id == task.as_str() => {
                            self.observe_remote_task(session, view)
                        }
                        _ => {
                            self.peer_error(session, PeerErrorKind::Malformed, malformed_task(&id))
                        }
                    },
                    Err(e) if e.code == code::INVALID_PARAMS => {
                        self.remote_gone(session, &task, e.clone())
                    }
                    Err(_) => {}
                }
                if !auto {
                    self.event(Event::Response {
                        session,
                        request: id,
                        outcome,
                    });
                }
                self.after_poll(session, &task);
            }
            Purpose::TaskCancel { task } => {
                if let Ok(v) = &outcome {
                    match parse_task(v) {
                        Some(view) if view.task_id == task.as_str() => {
                            self.observe_remote_task(session, view)
                        }
                        _ => {
                            self.peer_error(session, PeerErrorKind::Malformed, malformed_task(&id))
                        }
                    }
                }
                self.event(Event::Response {
                    session,
                    request: id,
                    outcome,
                });
            }
            Purpose::TaskResult { task, auto } => {
                self.on_remote_result(session, &task, outcome.clone());
                if !auto {
                    self.event(Event::Response {
                        session,
                        request: id,
                        outcome,
                    });
                }
            }
            Purpose::Input { call, input } => self.on_input_response(call, input, outcome),
        }
    }

    fn on_task_created(
        &mut self,
        session: SessionId,
        request: RequestId,
        outcome: Result<Value, RpcError>,
    ) {
        let created = match outcome {
            Ok(v) if v.get("task").is_some_and(Value::is_object) => {
                serde_json::from_value::<CreateTaskResult>(v)
                    .map_err(|e| RpcError::internal(format!("malformed CreateTaskResult: {e}")))
                    .and_then(|c| {
                        c.task.to_info().ok_or_else(|| {
                            RpcError::internal("malformed CreateTaskResult: a time is not RFC 3339")
                        })
                    })
            }
            other => {
                // The peer ran the request plainly (or refused it): pass the answer on.
                return self.event(Event::Response {
                    session,
                    request,
                    outcome: other,
                });
            }
        };
        let task = match created {
            Ok(task) => task,
            Err(error) => {
                return self.event(Event::Response {
                    session,
                    request,
                    outcome: Err(error),
                })
            }
        };
        let id = task.id.clone();
        let Some(s) = self.session_mut(session) else {
            return;
        };
        let entry = s.remote.entry(id.clone()).or_default();
        entry.ours = true;
        entry.auto_poll = true;
        let current = match entry.view.take() {
            Some(early) if early.status != task.status && task.status.can_become(early.status) => {
                early
            }
            Some(early)
                if early.status == task.status && task.last_updated_at < early.last_updated_at =>
            {
                early
            }
            _ => task,
        };
        entry.view = Some(current.clone());
        self.event(Event::TaskCreated {
            session,
            request,
            task: current,
        });
        self.follow_up(session, &id);
        self.after_poll(session, &id);
    }

    /// A fresh view of a peer-hosted task (poll answer, cancel answer or notification).
    pub(crate) fn observe_remote_task(&mut self, session: SessionId, task: Task) {
        let Some(task) = task.to_info() else {
            return self.peer_error(
                session,
                PeerErrorKind::Malformed,
                format!("task {:?}: a time is not RFC 3339", task.task_id),
            );
        };
        let max = self.config.tasks.max_tasks;
        let Some(s) = self.session_mut(session) else {
            return;
        };
        let id = task.id.clone();
        if !s.remote.contains_key(&id) && s.remote.len() >= max {
            return self.peer_error(
                session,
                PeerErrorKind::Malformed,
                format!("status of unknown task {id:?} dropped: too many"),
            );
        }
        let entry = s.remote.entry(id.clone()).or_default();
        let visible = match &entry.view {
            None => true,
            // An older state that arrived late (a reordered answer or notification).
            Some(cur) if task.last_updated_at < cur.last_updated_at => return,
            Some(cur) if cur.status != task.status => {
                if !cur.status.can_become(task.status) {
                    return; // stale or out of order: the table decides
                }
                true
            }
            Some(cur) => cur.status_message != task.status_message,
        };
        entry.view = Some(task.clone());
        if entry.ours {
            if visible {
                self.event(Event::TaskStatus { session, task });
            }
            self.follow_up(session, &id);
        }
    }

    /// Fetches the result when the task needs input or is terminal; forgets it when done.
    fn follow_up(&mut self, session: SessionId, id: &TaskId) {
        let Some(s) = self.session_mut(session) else {
            return;
        };
        let Some(entry) = s.remote.get_mut(id) else {
            return;
        };
        let Some(status) = entry.status() else {
            return;
        };
        if !entry.ours || !entry.auto_poll {
            return;
        }
        let fetch = (status == TaskStatus::InputRequired || status.is_terminal())
            && !entry.result_requested;
        if fetch {
            entry.result_requested = true;
        }
        let done = status.is_terminal() && entry.result_reported;
        if done {
            s.remote.remove(id);
        }
        if status.is_terminal() {
            self.timers.clear(&Timer::Poll(session, id.clone()));
        }
        if fetch {
            let params = TaskIdParams {
                task_id: id.to_string(),
            };
            let purpose = Purpose::TaskResult {
                task: id.clone(),
                auto: true,
            };
            self.send_request(session, "tasks/result", Some(params), purpose, None);
        }
    }

    /// Schedules the next poll, `pollInterval` (clamped) after the last answer.
    fn after_poll(&mut self, session: SessionId, id: &TaskId) {
        let polling = self.config.polling;
        let now = self.now;
        let key = Timer::Poll(session, id.clone());
        let scheduled = self.timers.contains(&key);
        let Some(entry) = self.session_mut(session).and_then(|s| s.remote.get_mut(id)) else {
            return;
        };
        entry.get_in_flight = false;
        let live = entry.status().is_some_and(|s| !s.is_terminal());
        if entry.ours && entry.auto_poll && live && !scheduled {
            let suggested = entry.view.as_ref().and_then(|t| t.poll_interval_ms);
            let interval = suggested.unwrap_or(polling.default_interval_ms).clamp(
                polling.min_interval_ms,
                polling.max_interval_ms.max(polling.min_interval_ms),
            );
            self.timers.set(key, now.plus(interval));
        }
    }

    /// A poll timer fired: send `tasks/get` unless one is already out.
    pub(crate) fn poll_remote_task(&mut self, session: SessionId, id: &TaskId) {
        let Some(entry) = self.session_mut(session).and_then(|s| s.remote.get_mut(id)) else {
            return;
        };
        if !entry.ours
            || !entry.auto_poll
            || entry.get_in_flight
            || entry.status().is_some_and(TaskStatus::is_terminal)
        {
            return;
        }
        entry.get_in_flight = true;
        let params = TaskIdParams {
            task_id: id.to_string(),
        };
        let purpose = Purpose::TaskGet {
            task: id.clone(),
            auto: true,
        };
        self.send_request(session, "tasks/get", Some(params), purpose, None);
    }

    fn on_remote_result(
        &mut self,
        session: SessionId,
        id: &TaskId,
        outcome: Result<Value, RpcError>,
    ) {
        let Some(s) = self.session_mut(session) else {
            return;
        };
        let Some(entry) = s
            .remote
            .get_mut(id)
            .filter(|t| t.ours && !t.result_reported)
        else {
            return;
        };
        entry.result_reported = true;
        let terminal = entry.status().is_some_and(TaskStatus::is_terminal);
        if terminal {
            s.remote.remove(id);
            self.timers.clear(&Timer::Poll(session, id.clone()));
        }
        self.event(Event::TaskResult {
            session,
            task: id.clone(),
            outcome,
        });
    }

    /// The peer no longer knows the task (expired or purged).
    fn remote_gone(&mut self, session: SessionId, id: &TaskId, error: RpcError) {
        let Some(s) = self.session_mut(session) else {
            return;
        };
        if let Some(entry) = s.remote.remove(id) {
            self.timers.clear(&Timer::Poll(session, id.clone()));
            if entry.ours && !entry.result_reported {
                self.event(Event::TaskResult {
                    session,
                    task: id.clone(),
                    outcome: Err(error),
                });
            }
        }
    }

    // ---- timeouts and abandoning ------------------------------------------------------------

    /// Forgets an outbound request and tells the peer to stop working on it.
    pub(crate) fn abandon_request(&mut self, session: SessionId, id: &RequestId, reason: &str) {
        self.timers.clear(&Timer::Request(session, id.clone()));
        let Some(s) = self.session_mut(session) else {
            return;
        };
        if s.outbound.take(id).is_some() {
            s.outbound.remember_abandoned(id.clone());
            let params = CancelledParams {
                request_id: Some(id.clone()),
                reason: Some(reason.to_owned()),
            };
            let line = jsonrpc::notification_line("notifications/cancelled", Some(params));
            let kind = MessageKind::Notification {
                method: "notifications/cancelled",
                task: None,
            };
            self.send(session, kind, None, line);
        }
    }

    /// A request's local timeout fired.
    pub(crate) fn time_out(&mut self, session: SessionId, id: RequestId) {
        let Some(purpose) = self
            .session(session)
            .and_then(|s| s.outbound.pending.get(&id))
            .cloned()
        else {
            return;
        };
        if purpose == Purpose::Initialize {
            // A client MUST NOT cancel initialize: without a handshake the session is over.
            if let Some(s) = self.session_mut(session) {
                s.outbound.take(&id);
            }
            let error = RpcError::new(code::REQUEST_TIMEOUT, "initialize timed out");
            self.event(Event::InitializeFailed { session, error });
            return self.close(self.now, session);
        }
        self.abandon_request(session, &id, "Request timed out");
        // The engine's own polls are not the application's business.
        if !matches!(purpose, Purpose::TaskGet { auto: true, .. }) {
            self.event(Event::TimedOut {
                session,
                request: id,
            });
        }
        if let Purpose::TaskGet { task, .. } = purpose {
            self.after_poll(session, &task);
        }
    }

    /// A session closes: every request of ours fails, the peer's tasks we follow end.
    pub(crate) fn fail_outbound(&mut self, session: SessionId, s: &mut Session) {
        let closed = || RpcError::new(code::CONNECTION_CLOSED, "Connection closed");
        let mut pending: Vec<_> = s.outbound.pending.drain().collect();
        pending.sort_by(|a, b| a.0.cmp(&b.0));
        for (request, purpose) in pending {
            let response = |request| Event::Response {
                session,
                request,
                outcome: Err(closed()),
            };
            match purpose {
                Purpose::Initialize => self.event(Event::InitializeFailed {
                    session,
                    error: closed(),
                }),
                Purpose::App | Purpose::TaskRequest | Purpose::TaskCancel { .. } => {
                    self.event(response(request))
                }
                Purpose::TaskGet { auto: false, .. } | Purpose::TaskResult { auto: false, .. } => {
                    self.event(response(request))
                }
                Purpose::TaskGet { .. } | Purpose::TaskResult { .. } => {}
                Purpose::Input { call, input } => {
                    if let Some(state) = self.call_mut(call) {
                        state.inputs.retain(|i| i.id != input);
                    }
                    self.event(Event::InputResponse {
                        call,
                        input,
                        outcome: Err(closed()),
                    })
                }
            }
        }
        let mut remote: Vec<TaskId> = s
            .remote
            .drain()
            .filter(|(_, t)| t.ours && !t.result_reported)
            .map(|(id, _)| id)
            .collect();
        remote.sort();
        for task in remote {
            self.event(Event::TaskResult {
                session,
                task,
                outcome: Err(closed()),
            });
        }
    }
}

/// A `Task` from an answer, leniently.
fn parse_task(value: &Value) -> Option<Task> {
    Task::deserialize(value).ok()
}
