//! Following a task the server runs for us in 2026-07-28: a `tasks/get` answer is the whole
//! `DetailedTask` (the outcome inline, the pending `inputRequests`), input goes back with
//! `tasks/update`, and a `tasks/cancel` ack is followed by a fresh `tasks/get`. Polling
//! itself (pace, malformed answers, giving up) is shared with 2025-11-25.

use serde::Deserialize;
use serde_json::{json, Map, Value};

use super::requestor::{input_event, Answering};
use crate::era::v2025_11_25::{Source, Task};
use crate::event::Event;
use crate::host::{Call, Host};
use crate::ids::{SessionId, TaskId};
use crate::jsonrpc::{code, RequestId, RpcError};
use crate::session::Purpose;
use crate::status::TaskStatus;

impl Host {
    /// A `tasks/get` answer: the engine's poll, the application's (answered as `report`), or
    /// the one after a cancel ack.
    pub(super) fn on_detailed_task(
        &mut self,
        session: SessionId,
        id: RequestId,
        task: TaskId,
        report: Option<RequestId>,
        outcome: Result<Value, RpcError>,
    ) {
        // While the answer is read, no other poll starts for the task.
        self.mark_get_in_flight(session, &task);
        match &outcome {
            Ok(value) => match Task::deserialize(value) {
                Ok(view) if view.task_id == task.as_str() => {
                    self.observe_detailed(session, &task, view, value, Source::Answer)
                }
                _ => self.on_malformed_task_answer(session, &task, &id),
            },
            Err(e) if e.code == code::INVALID_PARAMS => self.remote_gone(session, &task, e.clone()),
            Err(_) => {}
        }
        if let Some(request) = report {
            self.event(Event::Response {
                session,
                request,
                outcome,
            });
        }
        self.after_poll(session, &task);
    }

    fn observe_detailed(
        &mut self,
        session: SessionId,
        id: &TaskId,
        view: Task,
        value: &Value,
        source: Source,
    ) {
        let status = view.status;
        self.observe_remote_task(session, view, source);
        if !self.is_our_remote_task(session, id) {
            return;
        }
        if status.is_terminal() {
            let outcome = inline_outcome(id, status, value);
            self.on_remote_result(session, id, outcome);
        } else if status == TaskStatus::InputRequired {
            if let Some(Value::Object(requests)) = value.get("inputRequests") {
                self.ask_task_inputs(session, id, requests);
            }
        }
    }

    /// Subscribes to a task's changes (`subscriptions/listen`), so that each reaches the
    /// application between polls.
    pub(super) fn listen_to(&mut self, session: SessionId, task: &TaskId) {
        let params = json!({ "notifications": { "taskIds": [task.as_str()] } });
        let purpose = Purpose::Listen { task: task.clone() };
        let id = self.send_request(session, "subscriptions/listen", Some(params), purpose, None);
        if let Some(entry) = self.remote_entry(session, task) {
            entry.listen = id;
        }
    }

    /// Our listen stream for a task ended (or was refused): polling goes on alone.
    pub(super) fn listen_ended(&mut self, session: SessionId, task: &TaskId, id: &RequestId) {
        if let Some(entry) = self.remote_entry(session, task) {
            if entry.listen.as_ref() == Some(id) {
                entry.listen = None;
            }
        }
    }

    /// A notification on a client session of this era: `notifications/tasks` reports a task
    /// of ours like a `tasks/get` answer; a listen acknowledgement says nothing we need.
    /// Whether it was one of those.
    pub(crate) fn modern_notification(
        &mut self,
        session: SessionId,
        method: &str,
        params: Option<&serde_json::value::RawValue>,
    ) -> bool {
        match method {
            "notifications/subscriptions/acknowledged" => true,
            "notifications/tasks" => {
                let text = params.map_or("null", |p| p.get());
                let value: Value = serde_json::from_str(text).unwrap_or(Value::Null);
                match Task::deserialize(&value) {
                    Ok(view) => {
                        let id = TaskId::from(view.task_id.as_str());
                        if self.is_our_remote_task(session, &id) {
                            self.observe_detailed(session, &id, view, &value, Source::Notification);
                        }
                    }
                    Err(e) => self.peer_error(
                        session,
                        crate::error::PeerErrorKind::Malformed,
                        format!("notifications/tasks: {e}"),
                    ),
                }
                true
            }
            _ => false,
        }
    }

    /// Hands each input request not seen before to the application (each key once, however
    /// many polls repeat it).
    fn ask_task_inputs(&mut self, session: SessionId, id: &TaskId, requests: &Map<String, Value>) {
        let limit = self.config.limits.max_pending_requests;
        for (key, request) in requests {
            let Some(entry) = self.remote_entry(session, id) else {
                return;
            };
            if entry.asked.iter().any(|(k, _)| k == key) {
                continue;
            }
            if entry.asked.len() >= limit {
                let error = RpcError::internal(format!(
                    "Task {id} asked for more than {limit} inputs; giving up on it"
                ));
                return self.give_up_and_cancel(session, id, error);
            }
            let request = match self.answerable(request.clone()) {
                Ok(request) => request,
                Err(error) => return self.give_up_and_cancel(session, id, error),
            };
            let answering = Answering::Task {
                task: id.clone(),
                key: key.clone(),
            };
            let call = self.add_call(Call::answering(session, answering));
            if let Some(entry) = self.remote_entry(session, id) {
                entry.asked.push((key.clone(), Some(call)));
            }
            let event = input_event(call, session, key.clone(), request, Some(id.clone()));
            self.event(event);
        }
    }

    /// The application answered a task's input request: `tasks/update` carries it. If it
    /// could not, the task ends with its reason and the server is asked to cancel it.
    pub(super) fn answer_task_input(
        &mut self,
        session: SessionId,
        task: TaskId,
        key: String,
        outcome: Result<Value, RpcError>,
    ) {
        let Some(entry) = self.remote_entry(session, &task) else {
            return;
        };
        if let Some(slot) = entry.asked.iter_mut().find(|(k, _)| *k == key) {
            slot.1 = None;
        }
        match outcome {
            Ok(value) => {
                let mut responses = Map::new();
                responses.insert(key, value);
                let params = json!({ "taskId": task.as_str(), "inputResponses": responses });
                let purpose = Purpose::Ack { task };
                self.send_request(session, "tasks/update", Some(params), purpose, None);
            }
            Err(error) => self.give_up_and_cancel(session, &task, error),
        }
    }

    /// The answer to `tasks/update` or to the cancel of a task given up: an error ends the
    /// task with it (the server will not take its input).
    pub(super) fn on_ack(
        &mut self,
        session: SessionId,
        task: &TaskId,
        outcome: Result<Value, RpcError>,
    ) {
        if let Err(error) = outcome {
            self.give_up(session, task, error);
        }
    }

    /// Our `tasks/cancel` was acknowledged: a fresh `tasks/get` answers it.
    pub(super) fn after_cancel_ack(
        &mut self,
        session: SessionId,
        task: TaskId,
        original: RequestId,
    ) {
        let params = json!({ "taskId": task.as_str() });
        let purpose = Purpose::AfterCancel { task, original };
        self.send_request(session, "tasks/get", Some(params), purpose, None);
    }

    /// Stops following a task with `error` as its outcome, and asks the server to stop it.
    fn give_up_and_cancel(&mut self, session: SessionId, task: &TaskId, error: RpcError) {
        self.give_up(session, task, error);
        let params = json!({ "taskId": task.as_str() });
        let purpose = Purpose::Ack { task: task.clone() };
        self.send_request(session, "tasks/cancel", Some(params), purpose, None);
    }

    /// A terminal task whose outcome we have not read: a `tasks/get` reads it.
    pub(crate) fn fetch_outcome(&mut self, session: SessionId, task: &TaskId) {
        let Some(entry) = self.remote_entry(session, task) else {
            return;
        };
        if entry.get_in_flight {
            return;
        }
        entry.get_in_flight = true;
        let params = json!({ "taskId": task.as_str() });
        let purpose = Purpose::TaskGet {
            task: task.clone(),
            auto: true,
        };
        self.send_request(session, "tasks/get", Some(params), purpose, None);
    }
}

/// A terminal task's outcome from its `DetailedTask`: `result` when completed, `error` when
/// failed; a cancelled task ends with the same -32602 as in 2025-11-25.
fn inline_outcome(id: &TaskId, status: TaskStatus, value: &Value) -> Result<Value, RpcError> {
    let malformed = |what: &str| {
        RpcError::internal(format!(
            "Invalid response: task {id} is {}, but tasks/get carried no {what}",
            status.as_str()
        ))
    };
    match status {
        TaskStatus::Completed => value
            .get("result")
            .filter(|r| r.is_object())
            .cloned()
            .ok_or_else(|| malformed("result")),
        TaskStatus::Failed => {
            let error = value.get("error").ok_or_else(|| malformed("error"))?;
            Err(RpcError::deserialize(error).map_err(|_| malformed("readable error"))?)
        }
        _ => Err(RpcError::invalid_params("Task was cancelled")
            .with_data(json!({ "taskId": id.as_str() }))),
    }
}
