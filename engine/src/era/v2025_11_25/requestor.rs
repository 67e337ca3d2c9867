//! The requestor role in 2025-11-25: our requests to the peer and their answers, local
//! timeouts, and what a closing session fails. Following the tasks it hosts for us is in
//! `polling`; whether a call goes as a task, in `negotiation`.

use serde::Deserialize;
use serde_json::{json, Value};

use super::negotiation::{PlainReason, Plan};
use super::polling::Source;
use super::types::{
    CallToolRequest, CancelledParams, CreateTaskResult, PageParams, Task, TaskIdParams,
    TaskMetadata,
};
use crate::error::PeerErrorKind;
use crate::event::{Event, MessageKind};
use crate::host::{Host, Timer};
use crate::ids::{SessionId, TaskId};
use crate::jsonrpc::{self, code, RequestId, RpcError};
use crate::session::{PlainCall, Purpose, Session};
use crate::task::TaskInfo;
use crate::time::Millis;
use crate::UsageError;

/// `tools/call` arguments: an object, or `null` for none (then the member is left out).
fn tool_arguments(arguments: &Value) -> Result<Option<&Value>, UsageError> {
    match arguments {
        Value::Null => Ok(None),
        Value::Object(_) => Ok(Some(arguments)),
        _ => Err(UsageError::NotAnObject("tool arguments")),
    }
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

    /// `tools/list`, one page; the answer arrives as [`Event::Response`], and each tool's
    /// task support is remembered for [`Host::call_tool_as_task`].
    pub fn list_tools(
        &mut self,
        now: Millis,
        session: SessionId,
        cursor: Option<String>,
    ) -> Result<RequestId, UsageError> {
        let params = Some(json!(PageParams { cursor }));
        self.outbound_request(now, session, "tools/list", params, Purpose::ToolsList)
    }

    /// A plain `tools/call`; `arguments` is an object, or `null` for none. On a 2026-07-28
    /// session an `InputRequiredResult` (MRTR) is not the answer: its inputs reach the
    /// application as [`Event::Request`]s (`request` is the key), and once all are answered
    /// the call goes again with them; [`Event::Response`] for this request id ends it.
    pub fn call_tool(
        &mut self,
        now: Millis,
        session: SessionId,
        name: &str,
        arguments: Value,
    ) -> Result<RequestId, UsageError> {
        tool_arguments(&arguments)?;
        if self.is_modern_client(session) {
            return self.modern_call_tool(now, session, name, arguments, false);
        }
        let params = CallToolRequest {
            name,
            arguments: tool_arguments(&arguments)?,
            task: None,
        };
        self.outbound_request(now, session, "tools/call", Some(params), Purpose::App)
    }

    /// A `tools/call` as a task, when the server and the tool allow it: [`Event::TaskCreated`]
    /// follows, then [`Event::TaskStatus`] changes and one [`Event::TaskResult`].
    ///
    /// The call goes out plainly, with [`Event::RanPlainly`] saying why and the answer as
    /// [`Event::Response`], when the server did not declare `tasks.requests.tools.call`, or
    /// the tool's last listed `execution.taskSupport` (see [`Host::list_tools`]) is
    /// `"forbidden"` or absent. When the listing could not be read (e.g. `task_support`), the
    /// task is tried and, if refused with -32601, sent again plainly. A server that answers
    /// a task request plainly gives [`Event::Response`] too.
    ///
    /// On a 2026-07-28 session the request declares the tasks extension and the server
    /// decides (`ttl_ms` is not sent); it goes plainly, with [`Event::RanPlainly`], when the
    /// server's `server/discover` did not list the extension. A task's `inputRequests` reach
    /// the application as [`Event::Request`]s (`request` is the key, `related_task` the task;
    /// answer with [`Host::respond`], which sends `tasks/update`); its outcome arrives inline
    /// with `tasks/get` as [`Event::TaskResult`].
    pub fn call_tool_as_task(
        &mut self,
        now: Millis,
        session: SessionId,
        name: &str,
        arguments: Value,
        ttl_ms: Option<u64>,
    ) -> Result<RequestId, UsageError> {
        let args = tool_arguments(&arguments)?;
        if self.is_modern_client(session) {
            return self.modern_call_tool(now, session, name, arguments, true);
        }
        self.check_tasks_negotiated(session)?;
        let s = self.ready(session)?;
        let plan = s.tools.plan(&s.peer_capabilities, name);
        let fallback = match plan {
            Plan::Plain(reason) => {
                let params = CallToolRequest {
                    name,
                    arguments: args,
                    task: None,
                };
                let request =
                    self.outbound_request(now, session, "tools/call", Some(params), Purpose::App)?;
                self.event(Event::RanPlainly {
                    session,
                    request: request.clone(),
                    reason,
                });
                return Ok(request);
            }
            Plan::Task { fallback } => fallback.then(|| {
                Box::new(PlainCall {
                    name: name.to_owned(),
                    arguments: arguments.clone(),
                })
            }),
        };
        let params = CallToolRequest {
            name,
            arguments: args,
            task: Some(TaskMetadata { ttl: ttl_ms }),
        };
        self.outbound_request(
            now,
            session,
            "tools/call",
            Some(params),
            Purpose::TaskRequest { fallback },
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
        let purpose = Purpose::TaskRequest { fallback: None };
        self.outbound_request(now, session, method, Some(params), purpose)
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
        if self.is_modern_client(session) {
            return Err(UsageError::NotInEra {
                method: "tasks/result",
                instead: "in 2026-07-28, tasks/get carries the outcome (Host::get_task)",
            });
        }
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

    /// A client session opened in 2026-07-28.
    fn is_modern_client(&self, session: SessionId) -> bool {
        self.session(session).is_some_and(Session::is_modern)
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
            self.schedule_poll(session, &task, false);
        } else {
            self.timers.clear(&Timer::Poll(session, task));
        }
        Ok(())
    }

    /// What we last heard of a task the peer hosts for us.
    pub fn remote_task(&self, session: SessionId, task: &str) -> Option<&TaskInfo> {
        self.session(session)?.remote.get(task)?.view()
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
            Purpose::TaskRequest { fallback } => match (fallback, &outcome) {
                (Some(plain), Err(e)) if e.code == code::METHOD_NOT_FOUND => {
                    self.retry_plainly(session, id, *plain)
                }
                _ => self.on_task_created(session, id, outcome),
            },
            Purpose::PlainRetry { original } => self.event(Event::Response {
                session,
                request: original,
                outcome,
            }),
            Purpose::ToolsList => {
                if let (Ok(page), Some(s)) = (&outcome, self.session_mut(session)) {
                    s.tools.learn(page);
                }
                self.event(Event::Response {
                    session,
                    request: id,
                    outcome,
                });
            }
            Purpose::TaskGet { task, auto } => {
                match &outcome {
                    Ok(v) => match parse_task(v) {
                        Some(view) if view.task_id == task.as_str() => {
                            self.observe_remote_task(session, view, Source::Answer)
                        }
                        _ => self.on_malformed_task_answer(session, &task, &id),
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
                            self.observe_remote_task(session, view, Source::Answer)
                        }
                        _ => self.peer_error(
                            session,
                            PeerErrorKind::Malformed,
                            format!("malformed task in answer to {id}"),
                        ),
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
            modern @ (Purpose::Discover { .. }
            | Purpose::ModernCall(_)
            | Purpose::AfterCancel { .. }
            | Purpose::Ack { .. }
            | Purpose::Listen { .. }) => self.modern_answer(session, id, modern, outcome),
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
        self.track_created(session, request, task);
    }

    /// A task of ours was created (any era): it is followed from now on.
    pub(crate) fn track_created(&mut self, session: SessionId, request: RequestId, task: TaskInfo) {
        let id = task.id.clone();
        let Some(s) = self.session_mut(session) else {
            return;
        };
        if s.remote.get(&id).is_some_and(|t| t.ours) {
            // Two calls cannot share one task: the second would never hear its outcome.
            let error = RpcError::internal(format!(
                "Invalid response: the server created task {id} again, which an earlier call \
                 already has"
            ));
            return self.event(Event::Response {
                session,
                request,
                outcome: Err(error),
            });
        }
        let current = s.remote.entry(id.clone()).or_default().created(task);
        self.event(Event::TaskCreated {
            session,
            request,
            task: current,
        });
        self.follow_up(session, &id);
        self.schedule_poll(session, &id, false);
    }

    /// The server refused a task-augmented call (-32601) whose tool's support we could not
    /// read: it goes again plainly, answering as the original request.
    fn retry_plainly(&mut self, session: SessionId, original: RequestId, plain: PlainCall) {
        let params = CallToolRequest {
            name: &plain.name,
            arguments: tool_arguments(&plain.arguments).ok().flatten(),
            task: None,
        };
        let purpose = Purpose::PlainRetry {
            original: original.clone(),
        };
        self.event(Event::RanPlainly {
            session,
            request: original,
            reason: PlainReason::TaskRefused,
        });
        self.send_request(session, "tools/call", Some(params), purpose, None);
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
        if let Purpose::TaskResult { task, auto: true } = &purpose {
            return self.result_timed_out(session, task);
        }
        if let Purpose::Discover { fallback } = purpose {
            return self.discover_timed_out(session, &id, fallback);
        }
        self.abandon_request(session, &id, "Request timed out");
        // The engine's own requests are not the application's business.
        if !matches!(
            purpose,
            Purpose::TaskGet { auto: true, .. } | Purpose::Ack { .. }
        ) {
            let request = match &purpose {
                Purpose::PlainRetry { original } | Purpose::AfterCancel { original, .. } => {
                    original.clone()
                }
                Purpose::ModernCall(call) => call.original.clone().unwrap_or(id),
                _ => id,
            };
            self.event(Event::TimedOut { session, request });
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
                Purpose::Initialize | Purpose::Discover { .. } => {
                    self.event(Event::InitializeFailed {
                        session,
                        error: closed(),
                    })
                }
                Purpose::App
                | Purpose::ToolsList
                | Purpose::TaskRequest { .. }
                | Purpose::TaskCancel { .. } => self.event(response(request)),
                Purpose::PlainRetry { original } | Purpose::AfterCancel { original, .. } => {
                    self.event(response(original))
                }
                Purpose::ModernCall(call) => self.event(response(call.original.unwrap_or(request))),
                Purpose::Ack { .. } | Purpose::Listen { .. } => {}
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
        self.fail_retries(session, s, &closed());
        let mut remote = Vec::new();
        for (id, task) in s.remote.drain() {
            self.let_go(session, &task);
            if task.ours && !task.result_reported {
                remote.push(id);
            }
        }
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
