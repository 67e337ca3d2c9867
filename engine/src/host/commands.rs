//! The application's commands on calls and hosted tasks, and the era-neutral task
//! lifecycle they share with the protocol: finishing, expiry, removal, restore.

use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::calls::Call;
use super::tasks::{CreateError, NewOutcome, NewTask, OutcomeKind, Record};
use super::Host;
use crate::error::{Quota, UsageError};
use crate::event::{Event, StopReason};
use crate::ids::{CallId, InputId, Owner, TaskId};
use crate::jsonrpc::RpcError;
use crate::status::TaskStatus;
use crate::task::{Era, InputKinds, TaskSnapshot};
use crate::time::Millis;

/// How a call ends: a result object (as JSON text on one line) or a JSON-RPC error.
pub(crate) type Answer = Result<Box<RawValue>, RpcError>;

impl Host {
    // ---- answering calls --------------------------------------------------------------------

    /// Answers a call: a plain call gets `outcome` as its reply; a task stores it as its
    /// outcome (`completed`, or `failed` for an error; an `isError: true` result is
    /// `completed` with a tool error, which 2025-11-25 shows as `failed`).
    ///
    /// A task that was cancelled meanwhile keeps its status: the answer is dropped and
    /// [`UsageError::TaskFinished`] says so (a common race, not a mistake). Once a call is
    /// answered, or its task expired or was removed, the call is gone:
    /// [`UsageError::UnknownCall`].
    pub fn respond(
        &mut self,
        now: Millis,
        call: CallId,
        outcome: Result<Value, RpcError>,
    ) -> Result<(), UsageError> {
        let outcome: Answer = match outcome {
            Ok(value @ Value::Object(_)) => {
                Ok(serde_json::value::to_raw_value(&value).expect("JSON values serialize"))
            }
            Ok(_) => return Err(UsageError::NotAnObject("a result")),
            Err(e) => Err(e),
        };
        self.answer(now, call, outcome)
    }

    /// [`Host::respond`] with the result already serialized (e.g. by
    /// `serde_json::value::to_raw_value` from a typed result), which saves building a
    /// `Value` on the way. It must be a JSON object ([`UsageError::NotAnObject`]).
    pub fn respond_raw(
        &mut self,
        now: Millis,
        call: CallId,
        outcome: Result<Box<RawValue>, RpcError>,
    ) -> Result<(), UsageError> {
        let outcome = match outcome {
            Ok(raw) if !raw.get().trim_start().starts_with('{') => {
                return Err(UsageError::NotAnObject("a result"))
            }
            // Whitespace between tokens may hold newlines, which would split the line.
            Ok(raw) if raw.get().contains(['\n', '\r']) => Ok(one_line(&raw)),
            other => other,
        };
        self.answer(now, call, outcome)
    }

    fn answer(&mut self, now: Millis, call: CallId, outcome: Answer) -> Result<(), UsageError> {
        self.advance(now);
        let state = self.call(call).ok_or(UsageError::UnknownCall(call))?;
        if state.answering.is_some() {
            self.answer_server_input(call, outcome);
            return Ok(());
        }
        match state.task.clone() {
            Some(task) => self.finish_work(call, &task, outcome),
            None => {
                self.answer_plain(call, outcome);
                Ok(())
            }
        }
    }

    fn finish_work(
        &mut self,
        call: CallId,
        task: &TaskId,
        outcome: Answer,
    ) -> Result<(), UsageError> {
        let status = self.tasks.get(task).map(|r| r.status);
        match status {
            Some(status) if status.is_terminal() => {
                self.remove_call(call);
                self.work.remove(task);
                Err(UsageError::TaskFinished {
                    task: task.clone(),
                    status,
                })
            }
            Some(_) => {
                let (status, message, outcome) = settle(outcome);
                self.finish_task(task, status, message, outcome, None);
                Ok(())
            }
            None => {
                self.remove_call(call);
                Err(UsageError::UnknownTask(task.clone()))
            }
        }
    }

    /// Sets a running task's status message (the peer is told). `None` clears it.
    pub fn set_task_message(
        &mut self,
        now: Millis,
        call: CallId,
        message: Option<String>,
    ) -> Result<(), UsageError> {
        self.advance(now);
        let task = self.running_task(call)?;
        if self.tasks.set_message(&task, self.now, message) {
            self.journal_put(&task);
            self.tell_followers(&task);
        }
        Ok(())
    }

    /// Sends `notifications/progress` when the request asked for it (a `progressToken`);
    /// nothing is sent without a token, nor for a task of the 2026-07-28 era (which has no
    /// task progress; [`Host::set_task_message`] reaches its `tasks/get`).
    pub fn notify_progress(
        &mut self,
        now: Millis,
        call: CallId,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    ) -> Result<(), UsageError> {
        if !progress.is_finite() || total.is_some_and(|t| !t.is_finite()) {
            return Err(UsageError::NonFiniteProgress);
        }
        self.advance(now);
        let state = self.call(call).ok_or(UsageError::UnknownCall(call))?;
        let modern = state.era == Era::V2026_07_28;
        if let Some(task) = state.task.clone() {
            self.running_task(call)?;
            // 2026-07-28 has no progress for tasks: the task's status message carries it.
            if !modern {
                self.send_task_progress(call, &task, progress, total, message);
            }
        } else {
            self.send_plain_progress(call, progress, total, message);
        }
        Ok(())
    }

    /// Asks the requestor for input on behalf of a call: `method` is `elicitation/create`,
    /// `sampling/createMessage` or `roots/list`. A task shows `input_required` until every
    /// input request is answered; the answer arrives as [`Event::InputResponse`]. In
    /// 2025-11-25 the request goes to the peer; a 2026-07-28 task lists it in `tasks/get`
    /// (`inputRequests`) until `tasks/update` answers it; a plain 2026-07-28 call either
    /// finds the answer in its request (an MRTR retry: [`Event::InputResponse`] at once) or
    /// ends, its request answered with an `InputRequiredResult`
    /// ([`StopReason::InputRequired`]), and the client retries it as a new call.
    pub fn request_input(
        &mut self,
        now: Millis,
        call: CallId,
        method: &str,
        params: Value,
    ) -> Result<InputId, UsageError> {
        let capability = match method {
            "elicitation/create" => "elicitation",
            "sampling/createMessage" => "sampling",
            "roots/list" => "roots",
            _ => return Err(UsageError::NotAnInputMethod(method.to_owned())),
        };
        let Value::Object(params) = params else {
            return Err(UsageError::NotAnObject("input request params"));
        };
        self.advance(now);
        let state = self.call(call).ok_or(UsageError::UnknownCall(call))?;
        let modern = state.era == Era::V2026_07_28;
        if state.task.is_some() {
            self.running_task(call)?;
        }
        if modern {
            return self.ask_input(call, method, capability, params);
        }
        self.send_input_request(call, method, capability, params)
    }

    /// Accepts the task the requestor offered ([`ToolCall::task_offered`]): the task is
    /// created and the `CreateTaskResult` sent; the call goes on as the task's work. When
    /// the task cannot be created ([`UsageError::TaskRefused`]: a task limit), the
    /// requestor gets that error as its answer and the call is over.
    ///
    /// [`ToolCall::task_offered`]: crate::ToolCall::task_offered
    pub fn start_task(&mut self, now: Millis, call: CallId) -> Result<TaskId, UsageError> {
        self.advance(now);
        let state = self.call(call).ok_or(UsageError::UnknownCall(call))?;
        let Some(ttl) = state.offer else {
            return Err(UsageError::NotATaskOffer(call));
        };
        self.accept_offer(call, ttl)
    }

    // ---- app-made tasks ---------------------------------------------------------------------

    /// Creates a `working` task of `owner` with an id of the application's choosing (e.g. a
    /// demo task). `ttl_ms: None` keeps it until removed. Its work is the returned call.
    pub fn create_task(
        &mut self,
        now: Millis,
        owner: &Owner,
        task: &str,
        ttl_ms: Option<u64>,
    ) -> Result<CallId, UsageError> {
        self.advance(now);
        let id = TaskId::from(task);
        let owner_idx = self.tasks.owner(owner);
        let new = NewTask {
            id: id.clone(),
            owner: owner_idx,
            now: self.now,
            ttl_ms,
            poll_interval_ms: self.config.tasks.poll_interval_ms,
            era: Era::V2025_11_25,
            input_kinds: InputKinds::default(),
        };
        match self.tasks.create(new) {
            Ok(_) => {}
            Err(CreateError::Duplicate) => return Err(UsageError::DuplicateTask(id)),
            Err(CreateError::Quota(q)) => return Err(UsageError::QuotaExceeded(q)),
        }
        let call = self.add_call(Call::task(None, id.clone(), None));
        self.work.insert(id.clone(), call);
        self.journal_put(&id);
        Ok(call)
    }

    /// Removes a task whatever its status: running work is stopped
    /// ([`StopReason::Removed`]), parked `tasks/result` calls get "Task not found".
    pub fn remove_task(&mut self, now: Millis, task: &str) -> Result<(), UsageError> {
        self.advance(now);
        let record = self
            .tasks
            .remove(task)
            .ok_or_else(|| UsageError::UnknownTask(TaskId::from(task)))?;
        self.task_gone(record, StopReason::Removed);
        Ok(())
    }

    /// Loads tasks stored before a restart, before serving: deadlines are recomputed from
    /// the records, tasks already past their retention are skipped, and `tasks/list` orders
    /// them by creation time (then id). A task that was still running gets a call and
    /// [`Event::Restored`]. Fails, loading nothing, when an id exists already.
    pub fn restore(
        &mut self,
        now: Millis,
        tasks: impl IntoIterator<Item = TaskSnapshot>,
    ) -> Result<usize, UsageError> {
        self.advance(now);
        let mut live: Vec<TaskSnapshot> = tasks
            .into_iter()
            .filter(|t| match t.info.ttl_ms {
                Some(ttl) => t.info.created_at.plus(ttl) > self.now,
                None => true,
            })
            .collect();
        // Listing order is creation order; a store may hand records back in any order.
        live.sort_by(|a, b| (a.info.created_at, &a.info.id).cmp(&(b.info.created_at, &b.info.id)));
        let mut seen = std::collections::HashSet::new();
        if let Some(dup) = live
            .iter()
            .find(|t| self.tasks.contains(t.info.id.as_str()) || !seen.insert(t.info.id.clone()))
        {
            return Err(UsageError::DuplicateTask(dup.info.id.clone()));
        }
        let count = live.len();
        for snapshot in live {
            let Ok(record) = self.tasks.restore(snapshot) else {
                continue;
            };
            if !record.status.is_terminal() {
                let task = record.id.clone();
                let call = self.add_call(Call::task(None, task.clone(), None));
                self.work.insert(task.clone(), call);
                self.event(Event::Restored { call, task });
            }
        }
        Ok(count)
    }

    // ---- the lifecycle ----------------------------------------------------------------------

    /// The task a call works on, while it is not terminal.
    pub(crate) fn running_task(&self, call: CallId) -> Result<TaskId, UsageError> {
        let state = self.call(call).ok_or(UsageError::UnknownCall(call))?;
        let Some(task) = &state.task else {
            return Err(UsageError::UnknownCall(call));
        };
        match self.tasks.get(task) {
            Some(r) if r.status.is_terminal() => Err(UsageError::TaskFinished {
                task: task.clone(),
                status: r.status,
            }),
            Some(_) => Ok(task.clone()),
            None => Err(UsageError::UnknownTask(task.clone())),
        }
    }

    /// Moves a task to a terminal status and does what follows ([`Host::after_settle`]).
    pub(crate) fn finish_task(
        &mut self,
        task: &TaskId,
        status: TaskStatus,
        message: Option<String>,
        outcome: NewOutcome,
        stop: Option<StopReason>,
    ) {
        if self.settle_task(task, status, message, outcome) {
            self.after_settle(task, stop);
        }
    }

    /// Moves a task to a terminal status with its outcome and tells the store. Returns
    /// `false` (and changes nothing) when the transition table forbids it.
    pub(crate) fn settle_task(
        &mut self,
        task: &TaskId,
        status: TaskStatus,
        message: Option<String>,
        outcome: NewOutcome,
    ) -> bool {
        let moved = self
            .tasks
            .transition(task, self.now, status, message, Some(outcome));
        if moved {
            self.journal_put(task);
        }
        moved
    }

    /// After a task became terminal: the followers are told, input requests withdrawn,
    /// parked results answered; the work is stopped when `stop` says why (a later answer
    /// then gets [`UsageError::TaskFinished`]), else it is done.
    pub(crate) fn after_settle(&mut self, task: &TaskId, stop: Option<StopReason>) {
        let call = self.work.get(task).copied();
        let followers = call
            .and_then(|c| self.call(c))
            .map(|c| c.followers.clone())
            .unwrap_or_default();
        for session in &followers {
            self.tell_follower(*session, task);
        }
        if let Some(call) = call {
            self.withdraw_inputs(call, "Task is no longer running");
        }
        for session in followers {
            self.release_parked(session, task, false);
        }
        match (call, stop) {
            (Some(call), Some(reason)) => self.stop(call, reason, None),
            (Some(call), None) => {
                self.remove_call(call);
                self.work.remove(task);
            }
            _ => {}
        }
    }

    /// Tells every session following a task about its change.
    pub(crate) fn tell_followers(&mut self, task: &TaskId) {
        let followers = self
            .work
            .get(task)
            .and_then(|&c| self.call(c))
            .map(|c| c.followers.clone())
            .unwrap_or_default();
        for session in followers {
            self.tell_follower(session, task);
        }
    }

    /// A task's retention ran out: it is gone.
    pub(crate) fn on_task_expired(&mut self, record: Record) {
        self.task_gone(record, StopReason::Expired);
    }

    /// After a task left the table: parked results are answered, the work is stopped,
    /// the store is told.
    fn task_gone(&mut self, record: Record, reason: StopReason) {
        let task = record.id.clone();
        if let Some(call) = self.work.remove(&task) {
            let followers = self
                .call(call)
                .map(|c| c.followers.clone())
                .unwrap_or_default();
            self.withdraw_inputs(call, "Task is no longer running");
            for session in followers {
                self.release_parked(session, &task, true);
                // The record is gone: followers hear nothing, and a listen stream lets the
                // task go (ending once it follows no task).
                self.tell_follower(session, &task);
            }
            self.remove_call(call);
            if !record.status.is_terminal() {
                self.stop(call, reason, None);
            }
        }
        self.journal_delete(&task, reason);
    }

    /// Creates the task of a task-augmented request for `owner`, with its call.
    pub(crate) fn begin_task(
        &mut self,
        session: crate::SessionId,
        requested_ttl: Option<u64>,
        progress_token: Option<Value>,
        era: Era,
        input_kinds: InputKinds,
    ) -> Result<(TaskId, CallId), RpcError> {
        let owner = self
            .session(session)
            .map(|s| s.owner)
            .ok_or_else(|| RpcError::internal("session closed"))?;
        let id = self.fresh_task_id()?;
        let new = NewTask {
            id: id.clone(),
            owner,
            now: self.now,
            ttl_ms: self.effective_ttl(requested_ttl),
            poll_interval_ms: self.config.tasks.poll_interval_ms,
            era,
            input_kinds,
        };
        self.tasks.create(new).map_err(|e| match e {
            CreateError::Quota(q) => quota_error(q),
            CreateError::Duplicate => RpcError::internal("Task id collision"),
        })?;
        let mut state = Call::task(Some(session), id.clone(), progress_token);
        state.era = era;
        if era == Era::V2026_07_28 {
            // No unsolicited notifications in this era: only a listen stream hears changes.
            state.followers.clear();
        }
        let call = self.add_call(state);
        self.work.insert(id.clone(), call);
        self.journal_put(&id);
        Ok((id, call))
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
}

/// The JSON-RPC error for a quota a new task would pass.
pub(crate) fn quota_error(quota: Quota) -> RpcError {
    RpcError::internal(format!(
        "Task limit reached: {quota}; retry after some tasks expire"
    ))
}

/// The status, message and stored outcome an answer gives a task.
fn settle(outcome: Answer) -> (TaskStatus, Option<String>, NewOutcome) {
    match outcome {
        Ok(raw) => {
            let message = tool_error(&raw);
            let kind = match message {
                Some(_) => OutcomeKind::ErrorResult,
                None => OutcomeKind::Result,
            };
            (TaskStatus::Completed, message, NewOutcome { raw, kind })
        }
        Err(error) => {
            let message = Some(error.message.clone());
            (TaskStatus::Failed, message, error_outcome(&error))
        }
    }
}

/// For a result with `isError: true`, the message its task shows: its first text block.
fn tool_error(raw: &RawValue) -> Option<String> {
    if !raw.get().contains("\"isError\"") {
        return None;
    }
    let result: Map<String, Value> = serde_json::from_str(raw.get()).ok()?;
    (result.get("isError") == Some(&Value::Bool(true))).then(|| {
        first_text(&result)
            .unwrap_or("The tool reported an error")
            .to_owned()
    })
}

/// `raw` again, without the whitespace between its tokens.
fn one_line(raw: &RawValue) -> Box<RawValue> {
    let value: Value = serde_json::from_str(raw.get()).expect("a RawValue is valid JSON");
    serde_json::value::to_raw_value(&value).expect("JSON values serialize")
}

/// A JSON-RPC error as a stored outcome.
pub(crate) fn error_outcome(error: &RpcError) -> NewOutcome {
    NewOutcome {
        raw: serde_json::value::to_raw_value(error).expect("errors serialize"),
        kind: OutcomeKind::Error,
    }
}

fn first_text(result: &Map<String, Value>) -> Option<&str> {
    result
        .get("content")?
        .as_array()?
        .iter()
        .find_map(|b| b.get("text")?.as_str())
}
