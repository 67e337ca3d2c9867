//! A hosted task's life, whatever era it speaks: creation, status changes, its end (a
//! terminal status, expiry, removal) and who hears of each, and the application's answers
//! to calls.

use serde_json::value::RawValue;
use serde_json::{json, Map, Value};

use super::calls::{Call, Follower};
use super::tasks::{CreateError, NewOutcome, NewTask, OutcomeKind, Record};
use super::{Answer, Kept, State};
use crate::error::{Quota, UsageError};
use crate::event::StopReason;
use crate::ids::{CallId, SessionId, TaskId};
use crate::jsonrpc::RpcError;
use crate::model::{Era, InputKinds, TaskRequest};
use crate::status::TaskStatus;

/// A new task of a task-augmented request.
pub(crate) struct Begin {
    pub session: SessionId,
    pub era: Era,
    pub requested_ttl: Option<u64>,
    pub progress_token: Option<Value>,
    pub input_kinds: InputKinds,
    /// The session hears the task's changes from the start (2025-11-25).
    pub follow: bool,
    /// The `tools/call` it runs, kept for a restart ([`State::task_request`]).
    pub request: Option<Box<TaskRequest>>,
}

impl<K: Kept> State<K> {
    /// Creates the task of a task-augmented request for the session's owner, with its call.
    pub fn begin_task(&mut self, begin: Begin) -> Result<(TaskId, CallId), RpcError> {
        let owner = self
            .session(begin.session)
            .map(|s| s.owner)
            .ok_or_else(|| RpcError::internal("session closed"))?;
        let id = self.fresh_task_id()?;
        let new = NewTask {
            id: id.clone(),
            owner,
            now: self.now,
            ttl_ms: self.effective_ttl(begin.requested_ttl),
            poll_interval_ms: self.config.tasks.poll_interval_ms,
            era: begin.era,
            input_kinds: begin.input_kinds,
            request: begin.request,
        };
        self.tasks.create(new).map_err(|e| match e {
            CreateError::Quota(q) => quota_error(q),
            CreateError::Duplicate => RpcError::internal("Task id collision"),
        })?;
        let state = Call::task(
            begin.era,
            Some(begin.session),
            id.clone(),
            begin.progress_token,
        );
        let call = self.add_call(state);
        self.work.insert(id.clone(), call);
        if begin.follow {
            self.follow(begin.session, begin.era, &id);
        }
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

    /// Turns a call offered a task into its task: the era creates the task and answers
    /// the request; the call goes on as the task's work.
    pub fn accept_offer(&mut self, call: CallId, ttl: Option<u64>) -> Result<TaskId, UsageError> {
        let state = self.call(call).ok_or(UsageError::UnknownCall(call))?;
        let (Some(session), Some(request), era) =
            (state.session, state.reply_to.clone(), state.era)
        else {
            return Err(UsageError::NotATaskOffer(call));
        };
        let (task, new_call) = match self
            .protocol(era)
            .begin_offered_task(self, call, session, &request, ttl)
        {
            Ok(started) => started,
            Err(reject) => {
                // The requestor learns why: that is the call's one answer.
                let reason = reject.error.message.clone();
                self.refuse(session, &request, reject);
                self.remove_call(call);
                if let Some(s) = self.session_mut(session) {
                    s.requests.remove(&request);
                }
                return Err(UsageError::TaskRefused { call, reason });
            }
        };
        // The new task's work is this call: keep the application's handle.
        let state = self.remove_call(new_call).expect("just created");
        if let Some(old) = self.call_mut(call) {
            old.task = state.task;
            old.reply_to = None;
            old.offer = None;
            old.followers = state.followers;
        }
        self.work.insert(task.clone(), call);
        if let Some(s) = self.session_mut(session) {
            s.requests.remove(&request);
        }
        Ok(task)
    }

    /// A session hears about a task's changes from now on (while its work runs).
    pub fn follow(&mut self, session: SessionId, era: Era, task: &TaskId) {
        let follower = Follower { session, era };
        let Some(state) = self
            .work
            .get(task)
            .and_then(|&c| self.calls.get_mut(c.index, c.generation))
        else {
            return;
        };
        if state.followers.contains(&follower) {
            return;
        }
        state.followers.push(follower);
        if let Some(s) = self.session_mut(session) {
            s.following.insert(task.clone());
        }
    }

    /// Replaces a running task's status message (`None` clears it); the store and the
    /// task's followers hear of a change.
    pub fn change_message(&mut self, task: &TaskId, message: Option<String>) {
        if self.tasks.set_message(task, self.now, message) {
            self.journal_message(task);
            self.tell_followers(task);
        }
    }

    /// Tells every session following a task about its change.
    pub fn tell_followers(&mut self, task: &TaskId) {
        for f in self.followers(task) {
            self.protocol(f.era).tell(self, f.session, task);
        }
    }

    fn followers(&self, task: &TaskId) -> Vec<Follower> {
        self.work
            .get(task)
            .and_then(|&c| self.call(c))
            .map(|c| c.followers.clone())
            .unwrap_or_default()
    }

    /// The task a call works on, while it is not terminal.
    pub fn running_task(&self, call: CallId) -> Result<TaskId, UsageError> {
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

    /// The application answered a call: a task stores the outcome, anything else is
    /// answered in its era.
    pub fn answer(&mut self, call: CallId, outcome: Answer) -> Result<(), UsageError> {
        let state = self.call(call).ok_or(UsageError::UnknownCall(call))?;
        match state.task.clone() {
            Some(task) => self.finish_work(call, &task, outcome),
            None => {
                let era = state.era;
                self.protocol(era).answer(self, call, outcome);
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
                if self.end_work(task).is_none() {
                    self.remove_call(call);
                }
                Err(UsageError::TaskFinished {
                    task: task.clone(),
                    status,
                })
            }
            Some(_) => {
                let (status, message, outcome) = settle(outcome);
                if self.settle_task(task, status, message, outcome) {
                    self.after_settle(task, None);
                }
                Ok(())
            }
            None => {
                self.remove_call(call);
                Err(UsageError::UnknownTask(task.clone()))
            }
        }
    }

    /// Moves a task along the transition table (not to a terminal status) and tells the
    /// store and its followers. Whether it moved.
    pub fn move_task(&mut self, task: &TaskId, to: TaskStatus) -> bool {
        let moved = self.tasks.transition(task, self.now, to, None, None);
        if moved {
            self.journal_put(task);
            self.tell_followers(task);
        }
        moved
    }

    /// Moves a task to a terminal status with its outcome and tells the store. Returns
    /// `false` (and changes nothing) when the transition table forbids it.
    pub fn settle_task(
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

    /// Moves a running task to `cancelled`, as a requestor's `tasks/cancel` does in either
    /// era: `message` its status message (`None` keeps the last one), -32602 "Task was
    /// cancelled" its outcome. Returns `false` when the table forbids it.
    pub fn cancel_task(&mut self, task: &TaskId, message: Option<String>) -> bool {
        let error =
            RpcError::invalid_params("Task was cancelled").with_data(json!({ "taskId": task }));
        self.settle_task(task, TaskStatus::Cancelled, message, error_outcome(&error))
    }

    /// A requestor's `tasks/cancel`: [`State::cancel_task`] with the configured message.
    pub fn cancel_requested(&mut self, task: &TaskId) -> bool {
        let message = self.config.tasks.cancelled_message.clone();
        self.cancel_task(task, Some(message))
    }

    /// After a task became terminal: the followers are told, input requests withdrawn,
    /// parked results answered; the work is stopped when `stop` says why (a later answer
    /// then gets [`UsageError::TaskFinished`]), else it is done.
    pub fn after_settle(&mut self, task: &TaskId, stop: Option<StopReason>) {
        let call = self.work.get(task).copied();
        let followers = call
            .and_then(|c| self.call(c))
            .map(|c| c.followers.clone())
            .unwrap_or_default();
        for f in &followers {
            self.protocol(f.era).tell(self, f.session, task);
        }
        if let Some(call) = call {
            self.withdraw_inputs(call);
        }
        for f in &followers {
            self.protocol(f.era).release(self, f.session, task, false);
        }
        // A task whose work runs on another host has nothing to stop here.
        let shadow = call.and_then(|c| self.call(c)).is_some_and(|c| c.shadow);
        match (call, stop) {
            (Some(call), Some(reason)) if !shadow => self.stop(call, reason, None),
            (Some(_), _) => {
                self.end_work(task);
            }
            _ => {}
        }
    }

    /// A task's retention ran out: it is gone.
    pub(super) fn task_expired(&mut self, record: Record) {
        self.task_gone(record, StopReason::Expired);
    }

    /// After a task left the table: parked results are answered, the work is stopped,
    /// the store is told.
    pub fn task_gone(&mut self, record: Record, reason: StopReason) {
        let task = record.id.clone();
        if let Some(&call) = self.work.get(&task) {
            let shadow = self.call(call).is_some_and(|c| c.shadow);
            let followers = self.followers(&task);
            self.withdraw_inputs(call);
            for f in followers {
                self.protocol(f.era).release(self, f.session, &task, true);
                // The record is gone: followers hear nothing, and a listen stream lets the
                // task go (ending once it follows no task).
                self.protocol(f.era).tell(self, f.session, &task);
            }
            self.end_work(&task);
            if !record.status.is_terminal() && !shadow {
                self.stop(call, reason, None);
            }
        }
        self.journal_delete(&task, reason);
    }

    /// The task's work is over: its call goes, and its followers stop following.
    pub fn end_work(&mut self, task: &TaskId) -> Option<Call<K>> {
        let call = self.work.remove(task)?;
        let state = self.remove_call(call)?;
        for f in &state.followers {
            if let Some(s) = self.session_mut(f.session) {
                s.following.remove(task);
            }
        }
        Some(state)
    }

    /// Task `task`'s work, `call`, no longer runs here (handed off, or taken over by another
    /// host): the call is over (its open input requests withdrawn), and a call that does no
    /// work takes its place, keeping its followers.
    pub fn move_work_away(&mut self, task: &TaskId, call: CallId) {
        self.withdraw_inputs(call);
        if let Some(old) = self.remove_call(call) {
            let shadow = self.add_call(Call {
                shadow: true,
                ..old
            });
            self.work.insert(task.clone(), shadow);
        }
    }

    /// Withdraws a call's open input requests, in its era.
    fn withdraw_inputs(&mut self, call: CallId) {
        if let Some(era) = self.call(call).map(|c| c.era) {
            self.protocol(era).withdraw_inputs(self, call);
        }
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

fn first_text(result: &Map<String, Value>) -> Option<&str> {
    result
        .get("content")?
        .as_array()?
        .iter()
        .find_map(|b| b.get("text")?.as_str())
}

/// A JSON-RPC error as a stored outcome.
pub(crate) fn error_outcome(error: &RpcError) -> NewOutcome {
    NewOutcome {
        raw: serde_json::value::to_raw_value(error).expect("errors serialize"),
        kind: OutcomeKind::Error,
    }
}
