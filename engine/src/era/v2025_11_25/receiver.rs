//! The receiver role in this era: serving `tasks/*`, status notifications, parked results,
//! and what a call sends its peer (plain answers, input requests).

use serde_json::value::RawValue;
use serde_json::{json, Map, Value};

use super::encode::{self, shown_status, with_related_task};
use super::state::{self as kept, Asked, PendingInput};
use super::types::{declares, AugmentableParams, PageParams, TaskIdRef};
use super::{handshake, relay, tools};
use crate::era::kept::{Call, Sent, State};
use crate::error::UsageError;
use crate::event::{AppRequest, Event, MessageKind, StopReason};
use crate::ids::{CallId, InputId, SessionId, TaskId};
use crate::jsonrpc::{self, Reject, RequestId, RpcError};
use crate::model::Era;
use crate::state::{Answer, AnswerAgain, PeerRequest, Record, TaskVerb};
use crate::status::TaskStatus;
use crate::time::Millis;

/// A `tasks/list` cursor: the listing key of the last task listed, `{ms}:{id}`.
fn push_cursor(buf: &mut crate::json::Buf, created: Millis, id: &str) {
    let mut text = created.0.to_string();
    text.push(':');
    text.push_str(id);
    crate::json::push_str(buf, &text);
}

/// The listing key a `tasks/list` cursor names.
pub(crate) fn list_cursor(cursor: &str) -> Option<(Millis, &str)> {
    let (ms, id) = cursor.split_once(':')?;
    Some((Millis(ms.parse().ok()?), id))
}

// ---- tasks/* ------------------------------------------------------------------------------

pub(super) fn on_tasks_get(
    st: &mut State,
    session: SessionId,
    id: &RequestId,
    params: Option<&RawValue>,
) -> Result<(), Reject> {
    let record = requested_task(st, session, params, "retrieve")?;
    let line = encode::task_reply(id, record);
    let task = record.id.clone();
    st.follow(session, Era::V2025_11_25, &task);
    // A question relayed for the task goes out as the session starts following it.
    relay::offer_task(st, &task);
    st.reply_about(session, id, about(TaskVerb::Get, task), None, line);
    Ok(())
}

pub(super) fn on_tasks_result(
    st: &mut State,
    session: SessionId,
    id: &RequestId,
    params: Option<&RawValue>,
) -> Result<(), Reject> {
    let record = requested_task(st, session, params, "retrieve result of")?;
    let task = record.id.clone();
    if let Some((line, error)) = encode::outcome_reply(id, record) {
        st.reply_about(session, id, about(TaskVerb::Result, task), error, line);
        return Ok(());
    }
    st.follow(session, Era::V2025_11_25, &task);
    if let Some(s) = st.session_mut(session) {
        s.requests
            .insert(id.clone(), PeerRequest::Held(Era::V2025_11_25));
        kept::of_session(s)
            .parked
            .entry(task.clone())
            .or_default()
            .push(id.clone());
    }
    relay::offer_task(st, &task);
    Ok(())
}

pub(super) fn on_tasks_list(
    st: &mut State,
    session: SessionId,
    id: &RequestId,
    params: Option<&RawValue>,
) -> Result<(), Reject> {
    let p: PageParams = jsonrpc::params(params)?;
    let after = match &p.cursor {
        Some(c) => Some(list_cursor(c).ok_or_else(|| RpcError::invalid_params("Invalid cursor"))?),
        None => None,
    };
    let owner = st.owner_of(session);
    // Tasks made in 2026-07-28 are not listed (that era has no tasks/list).
    let (tasks, more) = st.tasks.page(
        owner,
        Era::V2025_11_25,
        after,
        st.config.tasks.page_size.max(1),
    );
    let reveals = st.newest_unstored(tasks.iter().map(|r| &r.id));
    let line = jsonrpc::reply_with(id, 64 + 200 * tasks.len(), |buf| {
        buf.push_str(r#"{"tasks":["#);
        for (i, task) in tasks.iter().enumerate() {
            if i > 0 {
                buf.push(',');
            }
            encode::push_task(buf, task);
        }
        buf.push(']');
        if let (true, Some(last)) = (more, tasks.last()) {
            buf.push_str(r#","nextCursor":"#);
            push_cursor(buf, last.created_at, &last.id);
        }
        buf.push('}');
    });
    st.reply_listing(session, id, reveals, line);
    Ok(())
}

pub(super) fn on_tasks_cancel(
    st: &mut State,
    session: SessionId,
    id: &RequestId,
    params: Option<&RawValue>,
) -> Result<(), Reject> {
    let record = requested_task(st, session, params, "cancel")?;
    let shown = shown_status(record);
    if shown.is_terminal() {
        return Err(too_late_to_cancel(shown).into());
    }
    let task = record.id.clone();
    st.cancel_requested(&task);
    st.follow(session, Era::V2025_11_25, &task);
    if let Some(record) = st.tasks.get(&task) {
        let line = encode::task_reply(id, record);
        st.reply_about(
            session,
            id,
            about(TaskVerb::Cancel, task.clone()),
            None,
            line,
        );
    }
    st.after_settle(&task, Some(StopReason::Cancelled));
    Ok(())
}

/// The error of `tasks/cancel` on a task shown `shown`, terminal.
fn too_late_to_cancel(shown: TaskStatus) -> RpcError {
    RpcError::invalid_params(format!(
        "Cannot cancel task: already in terminal status '{shown}'"
    ))
}

/// A reply about `task` in this era, given again should the store keep another version.
fn about(verb: TaskVerb, task: TaskId) -> AnswerAgain {
    AnswerAgain {
        era: Era::V2025_11_25,
        verb,
        task,
    }
}

/// The reply to `id` (`verb` on `task`) given again from the task as the store keeps it
/// (see [`crate::state::Protocol::answer_again`]).
pub(super) fn answer_again(
    st: &State,
    id: &RequestId,
    verb: TaskVerb,
    task: &TaskId,
) -> Option<(String, Option<i64>)> {
    let record = st.tasks.get(task)?;
    let shown = shown_status(record);
    match verb {
        TaskVerb::Get => Some((encode::task_reply(id, record), None)),
        TaskVerb::Result => encode::outcome_reply(id, record),
        TaskVerb::Cancel if shown == TaskStatus::Cancelled => {
            Some((encode::task_reply(id, record), None))
        }
        TaskVerb::Cancel if shown.is_terminal() => {
            let error = too_late_to_cancel(shown);
            Some((jsonrpc::error_line(Some(id), &error), Some(error.code)))
        }
        TaskVerb::Cancel => None,
    }
}

/// The task a `tasks/*` request names, if the session's owner may see it; otherwise the
/// same -32602 as for an id that does not exist.
fn requested_task<'a>(
    st: &'a State,
    session: SessionId,
    params: Option<&RawValue>,
    action: &str,
) -> Result<&'a Record, Reject> {
    let p = TaskIdRef::read(params)?;
    let owner = st.owner_of(session);
    st.tasks
        .get_owned(&p.task_id, owner)
        .ok_or_else(|| st.tasks.missing(&p.task_id, owner, action).into())
}

// ---- followers ----------------------------------------------------------------------------

/// `notifications/tasks/status` to one session, when it is ready and we send them.
pub(super) fn status_notification(st: &mut State, session: SessionId, task: &TaskId) {
    if !st.config.tasks.status_notifications || !st.session(session).is_some_and(|s| s.is_ready()) {
        return;
    }
    let Some(record) = st.tasks.get(task) else {
        return;
    };
    let line = encode::status_notification(record);
    let kind = MessageKind::Notification {
        method: "notifications/tasks/status",
        task: Some(task.clone()),
        stream: None,
    };
    st.send(session, kind, Some(task), line);
}

/// Answers a session's parked `tasks/result` calls for a task that is terminal, or that is
/// gone (`gone`: "Task has expired").
pub(super) fn release_parked(st: &mut State, session: SessionId, task: &TaskId, gone: bool) {
    let Some(s) = st.session_mut(session) else {
        return;
    };
    let Some(waiters) = kept::of_session(s).parked.remove(task) else {
        return;
    };
    for waiter in &waiters {
        s.requests.remove(waiter);
    }
    for waiter in waiters {
        let answer = (!gone)
            .then(|| st.tasks.get(task))
            .flatten()
            .and_then(|r| encode::outcome_reply(&waiter, r));
        match answer {
            Some((line, error)) => {
                let again = about(TaskVerb::Result, task.clone());
                st.reply_about(session, &waiter, again, error, line);
            }
            None => {
                let error =
                    RpcError::invalid_params("Failed to retrieve result of task: Task has expired")
                        .with_data(json!({ "taskId": task }));
                st.reply_error(session, Some(&waiter), &error);
            }
        }
    }
}

/// The requestor withdrew a parked `tasks/result` (`notifications/cancelled`).
pub(super) fn drop_parked(st: &mut State, session: SessionId, request: &RequestId) {
    if let Some(s) = kept::session_mut(st, session) {
        for waiters in s.parked.values_mut() {
            waiters.retain(|w| w != request);
        }
    }
}

// ---- what calls send ----------------------------------------------------------------------

/// A server-to-client request for the application, possibly task-augmented.
pub(super) fn on_peer_request(
    st: &mut State,
    session: SessionId,
    id: &RequestId,
    method: &str,
    params: Option<&RawValue>,
    augmentable: bool,
) -> Result<(), Reject> {
    let common: AugmentableParams = jsonrpc::params(params)?;
    let progress_token = common.meta.as_ref().and_then(|m| m.progress_token.clone());
    let metadata = common.task_metadata(augmentable && handshake::hosts_tasks(st, session))?;
    let related_task = common
        .meta
        .and_then(|m| m.related_task)
        .map(|t| TaskId::from(t.task_id));
    let (call, task) = match metadata {
        Some(m) => {
            let (task, call) =
                tools::begin_task(st, session, id, m.ttl, progress_token, None, None)?;
            (call, Some(task))
        }
        None => {
            let mut state = Call::plain(Era::V2025_11_25, session, id.clone(), progress_token);
            kept::of_call(&mut state).related_task = related_task.clone();
            let call = st.add_call(state);
            if let Some(s) = st.session_mut(session) {
                s.requests.insert(id.clone(), PeerRequest::Call(call));
            }
            (call, None)
        }
    };
    st.event(Event::Request(AppRequest {
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

/// The reply to a plain call; related-task `_meta` when it served a peer's task.
pub(super) fn answer_plain(st: &mut State, call: CallId, outcome: Answer) {
    let Some(mut state) = st.remove_call(call) else {
        return;
    };
    let related = state.kept.v2025_11_25.take().and_then(|c| c.related_task);
    let (Some(session), Some(request)) = (state.session, state.reply_to) else {
        return;
    };
    let Some(s) = st.session_mut(session) else {
        return;
    };
    s.requests.remove(&request);
    match outcome {
        Ok(result) => {
            let text = result.get();
            let line = match related {
                Some(task) => jsonrpc::reply_with(&request, text.len() + 128, |buf| {
                    encode::push_with_related_task(buf, &result, task.as_str())
                }),
                None => jsonrpc::reply_with(&request, text.len() + 48, |buf| buf.push_str(text)),
            };
            st.reply(session, &request, None, line);
        }
        Err(error) => st.reply_error(session, Some(&request), &error),
    }
}

/// Sends an input request for a call: on its session, or on a session following its task
/// when that one has gone. A task shows `input_required` meanwhile.
pub(super) fn send_input_request(
    st: &mut State,
    call: CallId,
    method: &str,
    capability: &'static str,
    params: Map<String, Value>,
) -> Result<InputId, UsageError> {
    let state = st.call(call).ok_or(UsageError::UnknownCall(call))?;
    let session = state
        .session
        .filter(|s| st.session(*s).is_some())
        .or_else(|| {
            state
                .followers
                .iter()
                .map(|f| f.session)
                .find(|s| st.session(*s).is_some())
        });
    let task = state.task.clone();
    let session = match (session, &task) {
        (Some(session), _) => session,
        // The work runs here, its requestor's sessions elsewhere: relayed by the store.
        (None, Some(task)) if st.journal_enabled() => {
            return relay::ask(st, call, task, method, capability, params);
        }
        (None, _) => {
            return Err(UsageError::NotNegotiated(
                "input requests (no session can carry them)",
            ))
        }
    };
    let s = st.ready(session)?;
    if !declares(&s.peer_capabilities, &[capability]) {
        return Err(UsageError::NotNegotiated(capability));
    }
    let params = match &task {
        Some(task) => with_related_task(params, task.as_str()),
        None => params,
    };
    if let Some(task) = &task {
        st.move_task(task, TaskStatus::InputRequired);
    }
    let input = st.fresh_input();
    let sent = Sent::Era(Asked::Input { call, input }.into());
    let stream = kept::call_stream(st, session, call);
    let request = st
        .send_request(
            session,
            stream.clone(),
            method,
            Some(params),
            sent,
            false,
            task.as_ref(),
        )
        .ok_or(UsageError::UnknownSession(session))?;
    if let Some(state) = st.call_mut(call) {
        kept::of_call(state).inputs.push(PendingInput {
            id: input,
            session,
            request,
            stream,
        });
    }
    Ok(input)
}

/// The peer answered one of a call's input requests: once none is open, its task works
/// again.
pub(super) fn on_input_response(
    st: &mut State,
    call: CallId,
    input: InputId,
    outcome: Result<Value, RpcError>,
) {
    let Some(state) = st.call_mut(call) else {
        return;
    };
    let task = state.task.clone();
    let inputs = &mut kept::of_call(state).inputs;
    inputs.retain(|i| i.id != input);
    if let (true, Some(task)) = (inputs.is_empty(), task) {
        st.move_task(&task, TaskStatus::Working);
    }
    st.event(Event::InputResponse {
        call,
        input,
        outcome,
    });
}

/// Withdraws a call's open input requests (`notifications/cancelled` to the peer).
pub(super) fn withdraw_inputs(st: &mut State, call: CallId, reason: &str) {
    let Some(kept) = st
        .call_mut(call)
        .and_then(|c| c.kept.v2025_11_25.as_deref_mut())
    else {
        return;
    };
    for input in std::mem::take(&mut kept.inputs) {
        st.abandon_request(input.session, input.stream, &input.request, reason);
    }
}

/// A call's input request is over without an answer (its session closed).
pub(super) fn input_failed(st: &mut State, call: CallId, input: InputId, error: RpcError) {
    if let Some(state) = st.call_mut(call) {
        kept::of_call(state).inputs.retain(|i| i.id != input);
    }
    st.event(Event::InputResponse {
        call,
        input,
        outcome: Err(error),
    });
}
