//! The receiver role: hosting tasks, serving `tasks/*`, and the application's task commands.

use serde_json::value::RawValue;
use serde_json::{json, Map, Value};

use super::outbound::Purpose;
use super::{InboundRequest, Phase, Session};
use crate::event::{Event, StopReason};
use crate::jsonrpc::{self, RequestId, RpcError};
use crate::status::TaskStatus;
use crate::store::{CreateError, ListKey, Outcome, TaskRecord};
use crate::time::Millis;
use crate::wire::v2025_11_25::{
    declares, related_task_meta, CreateTaskResult, ListTasksResult, PageParams, ProgressParams,
    Task, TaskIdParams, TaskMetadata, MODEL_IMMEDIATE_RESPONSE, RELATED_TASK,
};
use crate::UsageError;

/// Connection state of a hosted task that is not yet terminal.
#[derive(Debug, Default)]
pub(super) struct Hosted {
    /// Parked `tasks/result` requests, answered in arrival order.
    waiters: Vec<RequestId>,
    /// The original request's progress token; valid until the task is terminal.
    progress_token: Option<Value>,
    /// Our input requests (elicitation, sampling) still unanswered.
    inputs: Vec<RequestId>,
}

/// What a progress notification is about.
#[derive(Clone, Copy, Debug)]
pub enum ProgressTarget<'a> {
    /// A plain request still in flight.
    Request(&'a RequestId),
    /// A hosted task (its original request's token stays valid until it is terminal).
    Task(&'a str),
}

fn task_not_found(action: &str) -> RpcError {
    RpcError::invalid_params(format!("Failed to {action} task: Task not found"))
}

fn encode_cursor((created, id): &ListKey) -> String {
    format!("{}:{id}", created.0)
}

fn decode_cursor(cursor: &str) -> Option<ListKey> {
    let (ms, id) = cursor.split_once(':')?;
    Some((Millis(ms.parse().ok()?), id.to_owned()))
}

/// Inserts the related-task key into a result object's `_meta`.
pub(super) fn with_related_task(mut result: Map<String, Value>, task: &str) -> Map<String, Value> {
    let meta = result
        .entry("_meta")
        .or_insert_with(|| Value::Object(Map::new()));
    if !meta.is_object() {
        *meta = Value::Object(Map::new());
    }
    if let Value::Object(meta) = meta {
        meta.insert(RELATED_TASK.to_owned(), json!({ "taskId": task }));
    }
    result
}

fn object(value: Value, what: &str) -> Result<Map<String, Value>, UsageError> {
    match value {
        Value::Object(map) => Ok(map),
        _ => Err(UsageError::Invalid(format!("{what} must be a JSON object"))),
    }
}

impl Session {
    // ---- accepting task-augmented requests -----------------------------------------------

    /// Creates a task for an accepted task-augmented request and answers with `CreateTaskResult`.
    pub(super) fn begin_task(
        &mut self,
        request: &RequestId,
        metadata: TaskMetadata,
        progress_token: Option<Value>,
        immediate_response: Option<&str>,
    ) -> Result<String, RpcError> {
        let ttl = self.effective_ttl(metadata.ttl);
        let id = self.fresh_task_id()?;
        let record = self
            .store
            .create(&id, self.now, ttl, self.config.tasks.poll_interval_ms)
            .map_err(|e| match e {
                CreateError::Full => RpcError::new(
                    jsonrpc::code::INTERNAL_ERROR,
                    format!(
                        "Task limit reached ({} tasks); retry later",
                        self.config.tasks.max_tasks
                    ),
                ),
                CreateError::DuplicateId => {
                    RpcError::new(jsonrpc::code::INTERNAL_ERROR, "Task id collision")
                }
            })?;
        let task = record.to_wire(&id);
        self.hosted.insert(
            id.clone(),
            Hosted {
                progress_token,
                ..Hosted::default()
            },
        );
        let meta = immediate_response.map(|text| json!({ MODEL_IMMEDIATE_RESPONSE: text }));
        self.reply(request, &CreateTaskResult { task, meta });
        Ok(id)
    }

    /// The requested retention clamped to the maximum; the default when none was asked.
    fn effective_ttl(&self, requested: Option<u64>) -> Option<u64> {
        let tasks = &self.config.tasks;
        let ttl = match (requested.or(tasks.default_ttl_ms), tasks.max_ttl_ms) {
            (Some(ttl), Some(max)) => Some(ttl.min(max)),
            (None, max) => max,
            (ttl, None) => ttl,
        };
        ttl.map(|ttl| ttl.max(tasks.min_ttl_ms))
    }

    fn fresh_task_id(&mut self) -> Result<String, RpcError> {
        for _ in 0..4 {
            let id = (self.new_task_id)();
            if self.store.get(&id).is_none() {
                return Ok(id);
            }
        }
        Err(RpcError::new(
            jsonrpc::code::INTERNAL_ERROR,
            "Task id source keeps repeating ids",
        ))
    }

    // ---- tasks/* ----------------------------------------------------------------------------

    pub(super) fn on_tasks_get(
        &mut self,
        id: &RequestId,
        params: Option<&RawValue>,
    ) -> Result<(), RpcError> {
        let p: TaskIdParams = jsonrpc::params(params)?;
        let record = self
            .store
            .get(&p.task_id)
            .ok_or_else(|| task_not_found("retrieve"))?;
        let task = record.to_wire(&p.task_id);
        self.reply(id, &task);
        Ok(())
    }

    pub(super) fn on_tasks_result(
        &mut self,
        id: &RequestId,
        params: Option<&RawValue>,
    ) -> Result<(), RpcError> {
        let p: TaskIdParams = jsonrpc::params(params)?;
        let record = self
            .store
            .get(&p.task_id)
            .ok_or_else(|| task_not_found("retrieve result of"))?;
        match &record.outcome {
            Some(outcome) => {
                let line = outcome_line(id, outcome);
                self.send(line);
            }
            None => {
                self.hosted
                    .entry(p.task_id.clone())
                    .or_default()
                    .waiters
                    .push(id.clone());
                self.inbound
                    .insert(id.clone(), InboundRequest::Parked { task: p.task_id });
            }
        }
        Ok(())
    }

    pub(super) fn on_tasks_list(
        &mut self,
        id: &RequestId,
        params: Option<&RawValue>,
    ) -> Result<(), RpcError> {
        if !self.config.tasks.list {
            return Err(RpcError::method_not_found("tasks/list"));
        }
        let p: PageParams = jsonrpc::params(params)?;
        let after = match p.cursor {
            Some(c) => {
                Some(decode_cursor(&c).ok_or_else(|| RpcError::invalid_params("Invalid cursor"))?)
            }
            None => None,
        };
        let (tasks, next) = self
            .store
            .page(after.as_ref(), self.config.tasks.page_size.max(1));
        let next_cursor = next.as_ref().map(encode_cursor);
        self.reply(id, &ListTasksResult { tasks, next_cursor });
        Ok(())
    }

    pub(super) fn on_tasks_cancel(
        &mut self,
        id: &RequestId,
        params: Option<&RawValue>,
    ) -> Result<(), RpcError> {
        if !self.config.tasks.cancel {
            return Err(RpcError::method_not_found("tasks/cancel"));
        }
        let p: TaskIdParams = jsonrpc::params(params)?;
        let status = self
            .store
            .get(&p.task_id)
            .ok_or_else(|| task_not_found("cancel"))?
            .status;
        if status.is_terminal() {
            return Err(RpcError::invalid_params(format!(
                "Cannot cancel task: already in terminal status '{status}'"
            )));
        }
        let error = RpcError::invalid_params("Task was cancelled")
            .with_data(json!({ "taskId": p.task_id }));
        self.settle(
            &p.task_id,
            TaskStatus::Cancelled,
            Some("Cancelled by requestor".into()),
            Outcome::Error(error),
        );
        let task = self
            .hosted_task(&p.task_id)
            .expect("cancelled task is stored");
        self.reply(id, &task);
        self.after_settle(&p.task_id, Some(StopReason::Cancelled));
        Ok(())
    }

    // ---- status changes ---------------------------------------------------------------------

    /// Moves a task to a terminal status through the transition table.
    fn settle(
        &mut self,
        task: &str,
        status: TaskStatus,
        message: Option<String>,
        outcome: Outcome,
    ) -> bool {
        self.store
            .transition(task, self.now, status, message, Some(outcome))
    }

    /// After a task became terminal: notify, answer parked waiters, release its state.
    fn after_settle(&mut self, task: &str, stop: Option<StopReason>) {
        self.notify_task_status(task);
        self.release_hosted(task, false);
        if let Some(reason) = stop {
            self.event(Event::StopTask {
                task: task.to_owned(),
                reason,
            });
        }
    }

    /// Drops a task's connection state; parked waiters get its outcome (or "expired").
    fn release_hosted(&mut self, task: &str, expired: bool) {
        let Some(hosted) = self.hosted.remove(task) else {
            return;
        };
        for input in &hosted.inputs {
            self.abandon_request(input, "Task is no longer running");
        }
        let expired_error = || {
            RpcError::invalid_params("Failed to retrieve result of task: Task has expired")
                .with_data(json!({ "taskId": task }))
        };
        for waiter in hosted.waiters {
            self.inbound.remove(&waiter);
            let line = match self.store.get(task).and_then(|r| r.outcome.as_ref()) {
                Some(outcome) if !expired => outcome_line(&waiter, outcome),
                _ => jsonrpc::error_line(Some(&waiter), &expired_error()),
            };
            self.send(line);
        }
    }

    fn notify_task_status(&mut self, task: &str) {
        if !self.config.tasks.status_notifications || !matches!(self.phase, Phase::Ready { .. }) {
            return;
        }
        if let Some(task) = self.hosted_task(task) {
            self.notify("notifications/tasks/status", task);
        }
    }

    /// Forgets a parked `tasks/result` the peer cancelled.
    pub(super) fn unpark(&mut self, task: &str, request: &RequestId) {
        if let Some(hosted) = self.hosted.get_mut(task) {
            hosted.waiters.retain(|w| w != request);
        }
    }

    pub(super) fn on_task_expired(&mut self, task: String, record: TaskRecord) {
        self.release_hosted(&task, true);
        if !record.status.is_terminal() {
            self.event(Event::StopTask {
                task,
                reason: StopReason::Expired,
            });
        }
    }

    /// The peer answered one of our input requests for a hosted task.
    pub(super) fn on_input_response(
        &mut self,
        task: String,
        request: RequestId,
        outcome: Result<Value, RpcError>,
    ) {
        if let Some(hosted) = self.hosted.get_mut(&task) {
            hosted.inputs.retain(|r| r != &request);
            let done = hosted.inputs.is_empty();
            if done
                && self
                    .store
                    .transition(&task, self.now, TaskStatus::Working, None, None)
            {
                self.notify_task_status(&task);
            }
        }
        self.event(Event::InputResponse {
            task,
            request,
            outcome,
        });
    }

    // ---- application commands -----------------------------------------------------------------

    /// A hosted task as the peer would see it.
    pub fn hosted_task(&self, task: &str) -> Option<Task> {
        self.store.get(task).map(|r| r.to_wire(task))
    }

    /// Number of tasks this session hosts (all statuses, until they expire).
    pub fn hosted_task_count(&self) -> usize {
        self.store.len()
    }

    /// Creates a `working` task with an id of the application's choosing (e.g. a demo task).
    /// `ttl_ms: None` keeps it until the session ends.
    pub fn create_task(
        &mut self,
        now: Millis,
        task: &str,
        ttl_ms: Option<u64>,
    ) -> Result<Task, UsageError> {
        self.check_open()?;
        self.advance(now);
        let poll = self.config.tasks.poll_interval_ms;
        let record = self
            .store
            .create(task, self.now, ttl_ms, poll)
            .map_err(|e| match e {
                CreateError::Full => UsageError::StoreFull,
                CreateError::DuplicateId => UsageError::DuplicateTask(task.to_owned()),
            })?;
        let wire = record.to_wire(task);
        self.hosted.insert(task.to_owned(), Hosted::default());
        Ok(wire)
    }

    /// Replaces a working task's status message (notifying the peer). Ignored once terminal.
    pub fn update_task(
        &mut self,
        now: Millis,
        task: &str,
        message: Option<String>,
    ) -> Result<(), UsageError> {
        self.check_open()?;
        self.advance(now);
        self.store
            .get(task)
            .ok_or_else(|| UsageError::UnknownTask(task.to_owned()))?;
        if self.store.set_message(task, self.now, message) {
            self.notify_task_status(task);
        }
        Ok(())
    }

    /// Finishes a task with its result: `completed`, or `failed` when `isError` is true.
    /// After a cancel the result is dropped and [`Event::OutcomeDropped`] reports it.
    pub fn complete_task(
        &mut self,
        now: Millis,
        task: &str,
        result: Value,
    ) -> Result<(), UsageError> {
        let result = object(result, "a task result")?;
        self.finish(now, task, |task| {
            let failed = result.get("isError") == Some(&Value::Bool(true));
            let message = failed.then(|| {
                first_text(&result)
                    .unwrap_or("The tool reported an error")
                    .to_owned()
            });
            let raw = serde_json::value::to_raw_value(&with_related_task(result, task))
                .expect("JSON object serializes");
            let status = if failed {
                TaskStatus::Failed
            } else {
                TaskStatus::Completed
            };
            (status, message, Outcome::Result(raw))
        })
    }

    /// Finishes a task with a JSON-RPC error: `failed`, and `tasks/result` replays the error.
    pub fn fail_task(
        &mut self,
        now: Millis,
        task: &str,
        error: RpcError,
    ) -> Result<(), UsageError> {
        self.finish(now, task, |_| {
            (
                TaskStatus::Failed,
                Some(error.message.clone()),
                Outcome::Error(error),
            )
        })
    }

    fn finish(
        &mut self,
        now: Millis,
        task: &str,
        outcome: impl FnOnce(&str) -> (TaskStatus, Option<String>, Outcome),
    ) -> Result<(), UsageError> {
        self.check_open()?;
        self.advance(now);
        let status = self
            .store
            .get(task)
            .ok_or_else(|| UsageError::UnknownTask(task.to_owned()))?
            .status;
        if status.is_terminal() {
            self.event(Event::OutcomeDropped {
                task: task.to_owned(),
                status,
            });
            return Ok(());
        }
        let (status, message, outcome) = outcome(task);
        self.settle(task, status, message, outcome);
        self.after_settle(task, None);
        Ok(())
    }

    /// Asks the peer for input on behalf of a task (`elicitation/create` or
    /// `sampling/createMessage`): the task moves to `input_required` until every input
    /// request is answered, and the answer arrives as [`Event::InputResponse`].
    pub fn request_input(
        &mut self,
        now: Millis,
        task: &str,
        method: &str,
        params: Value,
    ) -> Result<RequestId, UsageError> {
        self.check_ready()?;
        self.advance(now);
        let capability = match method {
            "elicitation/create" => "elicitation",
            "sampling/createMessage" => "sampling",
            _ => {
                return Err(UsageError::Invalid(format!(
                    "{method} is not an input request"
                )))
            }
        };
        if !declares(&self.peer_capabilities, &[capability]) {
            return Err(UsageError::NotNegotiated(capability));
        }
        let status = self
            .store
            .get(task)
            .ok_or_else(|| UsageError::UnknownTask(task.to_owned()))?
            .status;
        if status.is_terminal() {
            return Err(UsageError::TaskTerminal(task.to_owned(), status));
        }
        let params = with_related_task(object(params, "input request params")?, task);
        if self
            .store
            .transition(task, self.now, TaskStatus::InputRequired, None, None)
        {
            self.notify_task_status(task);
        }
        let id = self.send_request(
            method,
            Some(params),
            Purpose::Input {
                task: task.to_owned(),
            },
        );
        self.hosted
            .entry(task.to_owned())
            .or_default()
            .inputs
            .push(id.clone());
        Ok(id)
    }

    /// Sends `notifications/progress` when the request asked for it (a `progressToken`).
    /// Nothing is sent without a token, or once the task is terminal.
    pub fn notify_progress(
        &mut self,
        now: Millis,
        target: ProgressTarget<'_>,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    ) -> Result<(), UsageError> {
        if !progress.is_finite() || total.is_some_and(|t| !t.is_finite()) {
            // JSON has no NaN or infinity: serde_json would write `null`, an invalid message.
            return Err(UsageError::Invalid(
                "progress and total must be finite numbers".into(),
            ));
        }
        self.check_open()?;
        self.advance(now);
        let (token, meta) = match target {
            ProgressTarget::Request(id) => match self.inbound.get(id) {
                Some(InboundRequest::App { progress_token, .. }) => (progress_token.clone(), None),
                _ => return Err(UsageError::UnknownRequest(id.clone())),
            },
            ProgressTarget::Task(task) => {
                self.store
                    .get(task)
                    .ok_or_else(|| UsageError::UnknownTask(task.to_owned()))?;
                let token = self.hosted.get(task).and_then(|h| h.progress_token.clone());
                (token, Some(related_task_meta(task)))
            }
        };
        if let Some(progress_token) = token {
            self.notify(
                "notifications/progress",
                ProgressParams {
                    progress_token,
                    progress,
                    total,
                    message,
                    meta,
                },
            );
        }
        Ok(())
    }
}

fn outcome_line(id: &RequestId, outcome: &Outcome) -> String {
    match outcome {
        Outcome::Result(raw) => jsonrpc::result_line(id, raw.as_ref()),
        Outcome::Error(error) => jsonrpc::error_line(Some(id), error),
    }
}

fn first_text(result: &Map<String, Value>) -> Option<&str> {
    result
        .get("content")?
        .as_array()?
        .iter()
        .find_map(|b| b.get("text")?.as_str())
}
