//! The requestor role: our requests to the peer, tasks it hosts for us, and polling them.

use serde_json::value::RawValue;
use serde_json::{json, Value};

use super::outbound::Purpose;
use super::{Session, Timer};
use crate::event::Event;
use crate::jsonrpc::{code, RequestId, RpcError};
use crate::status::TaskStatus;
use crate::time::Millis;
use crate::wire::v2025_11_25::{
    CallToolRequest, CreateTaskResult, PageParams, Task, TaskIdParams, TaskMetadata,
};
use crate::UsageError;

/// What we know of a task the peer hosts.
#[derive(Debug, Default)]
pub(super) struct RemoteTask {
    /// The newest view seen (from `CreateTaskResult`, `tasks/get` or a notification).
    view: Option<Task>,
    /// We created it (its `CreateTaskResult` arrived); only then do we poll and fetch.
    pub ours: bool,
    auto_poll: bool,
    get_in_flight: bool,
    result_requested: bool,
    pub result_reported: bool,
}

impl RemoteTask {
    fn status(&self) -> Option<TaskStatus> {
        self.view.as_ref().map(|t| t.status)
    }
}

/// Whether `new` describes an older state than `current` (by `lastUpdatedAt`, when both parse).
fn is_older(new: &Task, current: &Task) -> bool {
    match (
        Millis::parse_rfc3339(&new.last_updated_at),
        Millis::parse_rfc3339(&current.last_updated_at),
    ) {
        (Some(a), Some(b)) => a < b,
        _ => false,
    }
}

/// `tools/call` arguments: an object, or `null` for none (then the member is left out).
fn tool_arguments(arguments: &Value) -> Result<Option<&Value>, UsageError> {
    match arguments {
        Value::Null => Ok(None),
        Value::Object(_) => Ok(Some(arguments)),
        _ => Err(UsageError::Invalid(
            "tool arguments must be a JSON object".into(),
        )),
    }
}

impl Session {
    // ---- commands -----------------------------------------------------------------------------

    /// Sends any request; the answer arrives as [`Event::Response`].
    pub fn request(
        &mut self,
        now: Millis,
        method: &str,
        params: Option<Value>,
    ) -> Result<RequestId, UsageError> {
        self.check_ready()?;
        self.advance(now);
        Ok(self.send_request(method, params, Purpose::App))
    }

    /// `tools/list`, one page.
    pub fn list_tools(
        &mut self,
        now: Millis,
        cursor: Option<String>,
    ) -> Result<RequestId, UsageError> {
        self.request(now, "tools/list", Some(json!(PageParams { cursor })))
    }

    /// A plain `tools/call`; `arguments` is an object, or `null` for none.
    pub fn call_tool(
        &mut self,
        now: Millis,
        name: &str,
        arguments: Value,
    ) -> Result<RequestId, UsageError> {
        let params = CallToolRequest {
            name,
            arguments: tool_arguments(&arguments)?,
            task: None,
        };
        self.request(now, "tools/call", Some(json!(params)))
    }

    /// A task-augmented `tools/call`, whatever the tool advertises. [`Event::TaskCreated`]
    /// follows, then [`Event::TaskStatus`] changes and one [`Event::TaskResult`]; a server
    /// that runs the call plainly answers with [`Event::Response`] instead.
    pub fn call_tool_as_task(
        &mut self,
        now: Millis,
        name: &str,
        arguments: Value,
        ttl_ms: Option<u64>,
    ) -> Result<RequestId, UsageError> {
        let params = CallToolRequest {
            name,
            arguments: tool_arguments(&arguments)?,
            task: Some(TaskMetadata { ttl: ttl_ms }),
        };
        self.check_tasks_negotiated()?;
        self.advance(now);
        Ok(self.send_request("tools/call", Some(params), Purpose::TaskRequest))
    }

    /// Any task-augmented request (e.g. a server's `sampling/createMessage` to a client that hosts it).
    pub fn request_as_task(
        &mut self,
        now: Millis,
        method: &str,
        params: Value,
        ttl_ms: Option<u64>,
    ) -> Result<RequestId, UsageError> {
        let Value::Object(mut params) = params else {
            return Err(UsageError::Invalid(
                "request params must be a JSON object".into(),
            ));
        };
        params.insert("task".into(), json!(TaskMetadata { ttl: ttl_ms }));
        self.check_tasks_negotiated()?;
        self.advance(now);
        Ok(self.send_request(method, Some(params), Purpose::TaskRequest))
    }

    /// `tasks/get`; the answer arrives as [`Event::Response`] and updates the task's view.
    pub fn get_task(&mut self, now: Millis, task: &str) -> Result<RequestId, UsageError> {
        self.task_request(
            now,
            "tasks/get",
            task,
            Purpose::TaskGet {
                task: task.to_owned(),
                auto: false,
            },
        )
    }

    /// `tasks/result`; the answer arrives as [`Event::Response`] (and, the first time, as
    /// [`Event::TaskResult`]).
    pub fn task_result(&mut self, now: Millis, task: &str) -> Result<RequestId, UsageError> {
        self.task_request(
            now,
            "tasks/result",
            task,
            Purpose::TaskResult {
                task: task.to_owned(),
                auto: false,
            },
        )
    }

    /// `tasks/cancel`; the answer arrives as [`Event::Response`].
    pub fn cancel_task(&mut self, now: Millis, task: &str) -> Result<RequestId, UsageError> {
        self.task_request(
            now,
            "tasks/cancel",
            task,
            Purpose::TaskCancel {
                task: task.to_owned(),
            },
        )
    }

    /// `tasks/list`, one page.
    pub fn list_tasks(
        &mut self,
        now: Millis,
        cursor: Option<String>,
    ) -> Result<RequestId, UsageError> {
        self.request(now, "tasks/list", Some(json!(PageParams { cursor })))
    }

    fn task_request(
        &mut self,
        now: Millis,
        method: &str,
        task: &str,
        purpose: Purpose,
    ) -> Result<RequestId, UsageError> {
        self.check_ready()?;
        self.advance(now);
        let params = TaskIdParams {
            task_id: task.to_owned(),
        };
        Ok(self.send_request(method, Some(params), purpose))
    }

    /// Turns the engine's own polling and result fetching for a task on or off.
    pub fn set_auto_poll(&mut self, task: &str, on: bool) -> Result<(), UsageError> {
        let entry = self
            .remote
            .get_mut(task)
            .filter(|t| t.ours)
            .ok_or_else(|| UsageError::UnknownTask(task.to_owned()))?;
        entry.auto_poll = on;
        if on {
            self.follow_up(task);
            self.after_poll(task);
        } else {
            self.timers.clear(&Timer::Poll(task.to_owned()));
        }
        Ok(())
    }

    /// What we last heard of a task the peer hosts for us.
    pub fn remote_task(&self, task: &str) -> Option<&Task> {
        self.remote.get(task).and_then(|t| t.view.as_ref())
    }

    /// Ids of the peer-hosted tasks we follow, sorted.
    pub fn remote_task_ids(&self) -> Vec<&str> {
        let mut ids: Vec<&str> = self
            .remote
            .iter()
            .filter(|(_, t)| t.ours)
            .map(|(id, _)| id.as_str())
            .collect();
        ids.sort_unstable();
        ids
    }

    // ---- answers --------------------------------------------------------------------------------

    pub(super) fn on_response(&mut self, id: RequestId, outcome: Result<&RawValue, RpcError>) {
        let Some(purpose) = self.outbound.take(&id) else {
            if !self.outbound.was_abandoned(&id) {
                self.event(Event::PeerError {
                    message: format!("response to unknown request id {id}"),
                });
            }
            return;
        };
        self.timers.clear(&Timer::Request(id.clone()));
        let outcome = outcome.and_then(|raw| {
            serde_json::from_str::<Value>(raw.get())
                .map_err(|e| RpcError::new(code::INTERNAL_ERROR, format!("unreadable result: {e}")))
        });
        match purpose {
            Purpose::Initialize => self.on_initialize_response(outcome),
            Purpose::App => self.event(Event::Response {
                request: id,
                outcome,
            }),
            Purpose::TaskRequest => self.on_task_created(id, outcome),
            Purpose::TaskGet { task, auto } => {
                match &outcome {
                    Ok(v) => match serde_json::from_value::<Task>(v.clone()) {
                        Ok(view) if view.task_id == task => self.observe_remote_task(view),
                        _ => self.event(Event::PeerError {
                            message: format!("malformed task in answer to {id}"),
                        }),
                    },
                    Err(e) if e.code == code::INVALID_PARAMS => self.remote_gone(&task, e.clone()),
                    Err(_) => {}
                }
                if !auto {
                    self.event(Event::Response {
                        request: id,
                        outcome,
                    });
                }
                self.after_poll(&task);
            }
            Purpose::TaskCancel { task } => {
                if let Ok(view) = outcome
                    .as_ref()
                    .map(|v| serde_json::from_value::<Task>(v.clone()))
                {
                    match view {
                        Ok(view) if view.task_id == task => self.observe_remote_task(view),
                        _ => self.event(Event::PeerError {
                            message: format!("malformed task in answer to {id}"),
                        }),
                    }
                }
                self.event(Event::Response {
                    request: id,
                    outcome,
                });
            }
            Purpose::TaskResult { task, auto } => {
                self.on_remote_result(&task, outcome.clone());
                if !auto {
                    self.event(Event::Response {
                        request: id,
                        outcome,
                    });
                }
            }
            Purpose::Input { task } => self.on_input_response(task, id, outcome),
        }
    }

    fn on_task_created(&mut self, request: RequestId, outcome: Result<Value, RpcError>) {
        let created = match outcome {
            Ok(v) if v.get("task").is_some_and(Value::is_object) => {
                serde_json::from_value::<CreateTaskResult>(v).map_err(|e| {
                    RpcError::new(
                        code::INTERNAL_ERROR,
                        format!("malformed CreateTaskResult: {e}"),
                    )
                })
            }
            other => {
                // The peer ran the request plainly (or refused it): pass the answer on.
                self.event(Event::Response {
                    request,
                    outcome: other,
                });
                return;
            }
        };
        let task = match created {
            Ok(created) => created.task,
            Err(error) => {
                return self.event(Event::Response {
                    request,
                    outcome: Err(error),
                })
            }
        };
        let id = task.task_id.clone();
        let entry = self.remote.entry(id.clone()).or_default();
        entry.ours = true;
        entry.auto_poll = true;
        let current = match entry.view.take() {
            Some(early) if early.status != task.status && task.status.can_become(early.status) => {
                early
            }
            Some(early) if early.status == task.status && is_older(&task, &early) => early,
            _ => task,
        };
        entry.view = Some(current.clone());
        self.event(Event::TaskCreated {
            request,
            task: current,
        });
        self.follow_up(&id);
        self.after_poll(&id);
    }

    /// A fresh view of a peer-hosted task (poll answer, cancel answer or notification).
    pub(super) fn observe_remote_task(&mut self, task: Task) {
        let id = task.task_id.clone();
        if !self.remote.contains_key(&id) && self.remote.len() >= self.config.tasks.max_tasks {
            self.event(Event::PeerError {
                message: format!("status of unknown task {id:?} dropped: too many"),
            });
            return;
        }
        let entry = self.remote.entry(id.clone()).or_default();
        let visible = match &entry.view {
            None => true,
            // An older state that arrived late (a reordered answer or notification).
            Some(cur) if is_older(&task, cur) => return,
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
                self.event(Event::TaskStatus { task });
            }
            self.follow_up(&id);
        }
    }

    /// Fetches the result when the task needs input or is terminal; forgets it when done.
    fn follow_up(&mut self, id: &str) {
        let Some(entry) = self.remote.get_mut(id) else {
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
        if status.is_terminal() {
            self.timers.clear(&Timer::Poll(id.to_owned()));
        }
        if done {
            self.remote.remove(id);
        }
        if fetch {
            let params = TaskIdParams {
                task_id: id.to_owned(),
            };
            self.send_request(
                "tasks/result",
                Some(params),
                Purpose::TaskResult {
                    task: id.to_owned(),
                    auto: true,
                },
            );
        }
    }

    /// Schedules the next poll, `pollInterval` (clamped) after the last answer.
    pub(super) fn after_poll(&mut self, id: &str) {
        let polling = self.config.polling;
        let now = self.now;
        let Some(entry) = self.remote.get_mut(id) else {
            return;
        };
        entry.get_in_flight = false;
        let live = entry.status().is_some_and(|s| !s.is_terminal());
        let key = Timer::Poll(id.to_owned());
        if entry.ours && entry.auto_poll && live && !self.timers.contains(&key) {
            let suggested = entry.view.as_ref().and_then(|t| t.poll_interval);
            let interval = suggested.unwrap_or(polling.default_interval_ms).clamp(
                polling.min_interval_ms,
                polling.max_interval_ms.max(polling.min_interval_ms),
            );
            self.timers.set(key, now.plus(interval));
        }
    }

    /// A poll timer fired: send `tasks/get` unless one is already out.
    pub(super) fn poll_remote_task(&mut self, id: &str) {
        let Some(entry) = self.remote.get_mut(id) else {
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
            task_id: id.to_owned(),
        };
        self.send_request(
            "tasks/get",
            Some(params),
            Purpose::TaskGet {
                task: id.to_owned(),
                auto: true,
            },
        );
    }

    fn on_remote_result(&mut self, id: &str, outcome: Result<Value, RpcError>) {
        let Some(entry) = self
            .remote
            .get_mut(id)
            .filter(|t| t.ours && !t.result_reported)
        else {
            return;
        };
        entry.result_reported = true;
        let terminal = entry.status().is_some_and(TaskStatus::is_terminal);
        self.event(Event::TaskResult {
            task: id.to_owned(),
            outcome,
        });
        if terminal {
            self.remote.remove(id);
            self.timers.clear(&Timer::Poll(id.to_owned()));
        }
    }

    /// The peer no longer knows the task (expired or purged).
    fn remote_gone(&mut self, id: &str, error: RpcError) {
        if let Some(entry) = self.remote.remove(id) {
            self.timers.clear(&Timer::Poll(id.to_owned()));
            if entry.ours && !entry.result_reported {
                self.event(Event::TaskResult {
                    task: id.to_owned(),
                    outcome: Err(error),
                });
            }
        }
    }
}
