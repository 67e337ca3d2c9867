//! The receiver role in 2025-11-25: serving `tasks/*`, status notifications, parked
//! results, the requestor's `notifications/cancelled`, and what a call sends its peer
//! (plain answers, progress, input requests).

use serde_json::value::RawValue;
use serde_json::{json, Map, Value};

use super::encode::{self, shown_status, with_related_task};
use super::types::{
    declares, related_task_meta, AugmentableParams, CancelledParams, PageParams, ProgressParams,
    TaskIdRef,
};
use crate::event::{AppRequest, Event, MessageKind, StopReason};
use crate::host::commands::error_outcome;
use crate::host::{Call, Host, PendingInput};
use crate::ids::{CallId, InputId, SessionId, TaskId};
use crate::jsonrpc::{self, Reject, RequestId, RpcError};
use crate::session::{Inbound, Purpose};
use crate::status::TaskStatus;
use crate::task::Era;
use crate::UsageError;

/// A `tasks/list` cursor: the listing key of the last task listed, `{ms}:{id}`.
fn push_cursor(buf: &mut crate::json::Buf, created: crate::Millis, id: &str) {
    let mut text = created.0.to_string();
    text.push(':');
    text.push_str(id);
    crate::json::push_str(buf, &text);
}

fn decode_cursor(cursor: &str) -> Option<(crate::Millis, String)> {
    let (ms, id) = cursor.split_once(':')?;
    Some((crate::Millis(ms.parse().ok()?), id.to_owned()))
}

impl Host {
    // ---- tasks/* ----------------------------------------------------------------------------

    pub(super) fn on_tasks_get(
        &mut self,
        session: SessionId,
        id: &RequestId,
        params: Option<&RawValue>,
    ) -> Result<(), Reject> {
        let record = self.requested_task(session, params, "retrieve")?;
        let line = encode::task_reply(id, record);
        let task = record.id.clone();
        self.follow(session, &task);
        self.reply(session, id, Some(&task), line);
        Ok(())
    }

    pub(super) fn on_tasks_result(
        &mut self,
        session: SessionId,
        id: &RequestId,
        params: Option<&RawValue>,
    ) -> Result<(), Reject> {
        let record = self.requested_task(session, params, "retrieve result of")?;
        let task = record.id.clone();
        if let Some((line, error)) = encode::outcome_reply(id, record) {
            let kind = MessageKind::Reply {
                to: Some(id.clone()),
                error,
            };
            self.send(session, kind, Some(&task), line);
            return Ok(());
        }
        self.follow(session, &task);
        if let Some(s) = self.session_mut(session) {
            s.parked.entry(task.clone()).or_default().push(id.clone());
            s.inbound.insert(id.clone(), Inbound::Parked(task));
        }
        Ok(())
    }

    pub(super) fn on_tasks_list(
        &mut self,
        session: SessionId,
        id: &RequestId,
        params: Option<&RawValue>,
    ) -> Result<(), Reject> {
        let p: PageParams = jsonrpc::params(params)?;
        let cursor = match &p.cursor {
            Some(c) => {
                Some(decode_cursor(c).ok_or_else(|| RpcError::invalid_params("Invalid cursor"))?)
            }
            None => None,
        };
        let owner = self.owner_of(session);
        let after = cursor.as_ref().map(|(at, id)| (*at, id.as_str()));
        // Tasks made in 2026-07-28 are not listed (that era has no tasks/list).
        let (tasks, more) = self.tasks.page(
            owner,
            Era::V2025_11_25,
            after,
            self.config.tasks.page_size.max(1),
        );
        let line = jsonrpc::reply_with(id, 64 + 200 * tasks.len(), |buf| {
            buf.extend_from_slice(br#"{"tasks":["#);
            for (i, task) in tasks.iter().enumerate() {
                if i > 0 {
                    buf.push(b',');
                }
                encode::push_task(buf, task);
            }
            buf.push(b']');
            if let (true, Some(last)) = (more, tasks.last()) {
                buf.extend_from_slice(br#","nextCursor":"#);
                push_cursor(buf, last.created_at, &last.id);
            }
            buf.push(b'}');
        });
        self.reply(session, id, None, line);
        Ok(())
    }

    pub(super) fn on_tasks_cancel(
        &mut self,
        session: SessionId,
        id: &RequestId,
        params: Option<&RawValue>,
    ) -> Result<(), Reject> {
        let record = self.requested_task(session, params, "cancel")?;
        let shown = shown_status(record);
        if shown.is_terminal() {
            return Err(RpcError::invalid_params(format!(
                "Cannot cancel task: already in terminal status '{shown}'"
            ))
            .into());
        }
        let task = record.id.clone();
        let error =
            RpcError::invalid_params("Task was cancelled").with_data(json!({ "taskId": task }));
        self.settle_task(
            &task,
            TaskStatus::Cancelled,
            Some("Cancelled by requestor".into()),
            error_outcome(&error),
        );
        self.follow(session, &task);
        if let Some(record) = self.tasks.get(&task) {
            let line = encode::task_reply(id, record);
            self.reply(session, id, Some(&task), line);
        }
        self.after_settle(&task, Some(StopReason::Cancelled));
        Ok(())
    }

    /// `notifications/cancelled`: stops a plain request (no answer follows) or drops a
    /// parked `tasks/result`. Unknown or finished requests are ignored.
    pub(super) fn on_cancelled(&mut self, session: SessionId, params: CancelledParams) {
        let Some(request) = params.request_id else {
            return;
        };
        let Some(s) = self.session_mut(session) else {
            return;
        };
        let call = match s.inbound.remove(&request) {
            Some(Inbound::App(call)) => call,
            Some(Inbound::Parked(task)) => {
                if let Some(waiters) = s.parked.get_mut(&task) {
                    waiters.retain(|w| *w != request);
                }
                return;
            }
            Some(Inbound::Listen) => {
                // The client ends its stream: nothing more is sent for it.
                s.listens.retain(|(id, _)| *id != request);
                return;
            }
            None => return,
        };
        if self.remove_call(call).is_some() {
            self.stop(call, StopReason::Cancelled, params.reason);
        }
    }

    // ---- telling followers --------------------------------------------------------------------

    /// `notifications/tasks/status` to one session, when it is ready and we send them.
    pub(crate) fn legacy_status_notification(&mut self, session: SessionId, task: &TaskId) {
        if !self.config.tasks.status_notifications
            || !self.session(session).is_some_and(|s| s.is_ready())
        {
            return;
        }
        let Some(record) = self.tasks.get(task) else {
            return;
        };
        let line = encode::status_notification(record);
        let kind = MessageKind::Notification {
            method: "notifications/tasks/status",
            task: Some(task.clone()),
        };
        self.send(session, kind, Some(task), line);
    }

    /// Answers a session's parked `tasks/result` calls for a task that is terminal, or that
    /// is gone (`gone`: "Task has expired").
    pub(crate) fn release_parked(&mut self, session: SessionId, task: &TaskId, gone: bool) {
        let Some(s) = self.session_mut(session) else {
            return;
        };
        let Some(waiters) = s.parked.remove(task) else {
            return;
        };
        for waiter in &waiters {
            s.inbound.remove(waiter);
        }
        for waiter in waiters {
            let answer = (!gone)
                .then(|| self.tasks.get(task))
                .flatten()
                .and_then(|r| encode::outcome_reply(&waiter, r));
            match answer {
                Some((line, error)) => {
                    let kind = MessageKind::Reply {
                        to: Some(waiter.clone()),
                        error,
                    };
                    self.send(session, kind, Some(task), line);
                }
                None => {
                    let error = RpcError::invalid_params(
                        "Failed to retrieve result of task: Task has expired",
                    )
                    .with_data(json!({ "taskId": task }));
                    self.reply_error(session, Some(&waiter), &error);
                }
            }
        }
    }

    /// The task a `tasks/*` request names, if the session's owner may see it; otherwise the
    /// same -32602 as for an id that does not exist.
    fn requested_task(
        &self,
        session: SessionId,
        params: Option<&RawValue>,
        action: &str,
    ) -> Result<&crate::host::tasks::Record, Reject> {
        let p = TaskIdRef::read(params)?;
        let owner = self.owner_of(session);
        self.tasks
            .get_owned(&p.task_id, owner)
            .ok_or_else(|| self.tasks.missing(&p.task_id, owner, action).into())
    }

    /// The session hears about the task's changes from now on (while it runs).
    fn follow(&mut self, session: SessionId, task: &TaskId) {
        if let Some(&call) = self.work.get(task) {
            if let Some(state) = self.call_mut(call) {
                state.follow(session);
            }
        }
    }

    fn owner_of(&self, session: SessionId) -> crate::host::tasks::OwnerIdx {
        self.session(session).map_or(u32::MAX, |s| s.owner)
    }

    // ---- what calls send ------------------------------------------------------------------------

    /// A server-to-client request for the application, possibly task-augmented.
    pub(super) fn on_peer_request(
        &mut self,
        session: SessionId,
        id: &RequestId,
        method: &str,
        params: Option<&RawValue>,
        augmentable: bool,
    ) -> Result<(), Reject> {
        let common: AugmentableParams = jsonrpc::params(params)?;
        let progress_token = common.meta.as_ref().and_then(|m| m.progress_token.clone());
        let metadata = common.task_metadata(augmentable && self.hosts_tasks(session))?;
        let related_task = common
            .meta
            .and_then(|m| m.related_task)
            .map(|t| TaskId::from(t.task_id));
        let (call, task) = match metadata {
            Some(m) => {
                let (task, call) =
                    self.legacy_begin_task(session, id, m.ttl, progress_token, None)?;
                (call, Some(task))
            }
            None => {
                let mut state = Call::plain(session, id.clone(), progress_token);
                state.related_task = related_task.clone();
                let call = self.add_call(state);
                if let Some(s) = self.session_mut(session) {
                    s.inbound.insert(id.clone(), Inbound::App(call));
                }
                (call, None)
            }
        };
        self.event(Event::Request(AppRequest {
            call,
            session,
            request: id.clone(),
            method: method.to_owned(),
            params: params.map(ToOwned::to_owned),
            task,
            related_task,
        }));
        Ok(())
    }

    /// `CreateTaskResult` for a task just created.
    pub(crate) fn send_create_task_result(
        &mut self,
        session: SessionId,
        id: &RequestId,
        task: &TaskId,
        immediate: Option<&str>,
    ) {
        if let Some(record) = self.tasks.get(task) {
            let line = encode::create_task_result(id, record, immediate);
            self.reply(session, id, Some(task), line);
        }
    }

    /// The reply to a plain call; related-task `_meta` when it served a peer's task.
    pub(crate) fn answer_plain(&mut self, call: CallId, outcome: Result<Box<RawValue>, RpcError>) {
        let Some(state) = self.remove_call(call) else {
            return;
        };
        let (Some(session), Some(request)) = (state.session, state.reply_to) else {
            return;
        };
        let Some(s) = self.session_mut(session) else {
            return;
        };
        s.inbound.remove(&request);
        match outcome {
            Ok(result) => {
                let text = result.get();
                let line = match (&state.related_task, state.era) {
                    (_, Era::V2026_07_28) => {
                        crate::era::v2026_07_28::plain_reply(&request, &result)
                    }
                    (Some(task), _) => jsonrpc::reply_with(&request, text.len() + 128, |buf| {
                        encode::push_with_related_task(buf, &result, task.as_str())
                    }),
                    (None, _) => jsonrpc::reply_with(&request, text.len() + 48, |buf| {
                        buf.extend_from_slice(text.as_bytes())
                    }),
                };
                self.reply(session, &request, None, line);
            }
            Err(error) => self.reply_error(session, Some(&request), &error),
        }
    }

    /// Turns an offered call into its task and sends the `CreateTaskResult`.
    pub(crate) fn accept_offer(
        &mut self,
        call: CallId,
        ttl: Option<u64>,
    ) -> Result<TaskId, UsageError> {
        let state = self.call(call).ok_or(UsageError::UnknownCall(call))?;
        let (Some(session), Some(request)) = (state.session, state.reply_to.clone()) else {
            return Err(UsageError::NotATaskOffer(call));
        };
        let token = state.progress_token.clone();
        let begun = match state.era {
            Era::V2026_07_28 => {
                let kinds = state.input_kinds;
                self.modern_begin_task(session, &request, token, kinds)
            }
            _ => self.legacy_begin_task(session, &request, ttl, token, None),
        };
        let (task, new_call) = match begun {
            Ok(started) => started,
            Err(reject) => {
                // The requestor learns why: that is the call's one answer.
                let reason = reject.error.message.clone();
                self.refuse(session, &request, reject);
                self.remove_call(call);
                if let Some(s) = self.session_mut(session) {
                    s.inbound.remove(&request);
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
            s.inbound.remove(&request);
        }
        Ok(task)
    }

    /// `notifications/progress` for a task (with related-task `_meta`).
    pub(crate) fn send_task_progress(
        &mut self,
        call: CallId,
        task: &TaskId,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    ) {
        self.send_progress(call, Some(task), progress, total, message);
    }

    /// `notifications/progress` for a plain call.
    pub(crate) fn send_plain_progress(
        &mut self,
        call: CallId,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    ) {
        self.send_progress(call, None, progress, total, message);
    }

    fn send_progress(
        &mut self,
        call: CallId,
        task: Option<&TaskId>,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    ) {
        let Some(state) = self.call(call) else {
            return;
        };
        let (Some(session), Some(progress_token)) = (state.session, state.progress_token.clone())
        else {
            return;
        };
        let params = ProgressParams {
            progress_token,
            progress,
            total,
            message,
            meta: task.map(|t| related_task_meta(t.as_str())),
        };
        let line = jsonrpc::notification_line("notifications/progress", Some(params));
        let kind = MessageKind::Notification {
            method: "notifications/progress",
            task: task.cloned(),
        };
        self.send(session, kind, task, line);
    }

    /// Sends an input request for a call: on its session, or on a session following its
    /// task when that one has gone.
    pub(crate) fn send_input_request(
        &mut self,
        call: CallId,
        method: &str,
        capability: &'static str,
        params: Map<String, Value>,
    ) -> Result<InputId, UsageError> {
        let state = self.call(call).ok_or(UsageError::UnknownCall(call))?;
        let session = state
            .session
            .filter(|s| self.session(*s).is_some())
            .or_else(|| {
                state
                    .followers
                    .iter()
                    .copied()
                    .find(|s| self.session(*s).is_some())
            })
            .ok_or(UsageError::NotNegotiated(
                "input requests (no session can carry them)",
            ))?;
        let task = state.task.clone();
        let s = self.ready(session)?;
        if !declares(&s.peer_capabilities, &[capability]) {
            return Err(UsageError::NotNegotiated(capability));
        }
        let params = match &task {
            Some(task) => with_related_task(params, task.as_str()),
            None => params,
        };
        if let Some(task) = &task {
            if self
                .tasks
                .transition(task, self.now, TaskStatus::InputRequired, None, None)
            {
                self.journal_put(task);
                self.tell_followers(task);
            }
        }
        let input = self.fresh_input();
        let request = self
            .send_request(
                session,
                method,
                Some(params),
                Purpose::Input { call, input },
                task.as_ref(),
            )
            .ok_or(UsageError::UnknownSession(session))?;
        if let Some(state) = self.call_mut(call) {
            state.inputs.push(PendingInput {
                id: input,
                session,
                request,
            });
        }
        Ok(input)
    }

    /// The peer answered one of a call's input requests.
    pub(super) fn on_input_response(
        &mut self,
        call: CallId,
        input: InputId,
        outcome: Result<Value, RpcError>,
    ) {
        let Some(state) = self.call_mut(call) else {
            return;
        };
        state.inputs.retain(|i| i.id != input);
        if let (true, Some(task)) = (state.inputs.is_empty(), state.task.clone()) {
            if self
                .tasks
                .transition(&task, self.now, TaskStatus::Working, None, None)
            {
                self.journal_put(&task);
                self.tell_followers(&task);
            }
        }
        self.event(Event::InputResponse {
            call,
            input,
            outcome,
        });
    }

    /// Withdraws a call's open input requests (`notifications/cancelled` to the peer).
    pub(crate) fn withdraw_inputs(&mut self, call: CallId, reason: &str) {
        let Some(state) = self.call_mut(call) else {
            return;
        };
        for input in std::mem::take(&mut state.inputs) {
            self.abandon_request(input.session, &input.request, reason);
        }
    }
}
