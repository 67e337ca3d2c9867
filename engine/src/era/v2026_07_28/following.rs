//! Following a task the server runs for us in this era: a `tasks/get` answer is the whole
//! `DetailedTask` (the outcome inline, the pending `inputRequests`), input goes back with
//! `tasks/update`, a `tasks/cancel` ack is followed by a fresh `tasks/get`, and a
//! `subscriptions/listen` stream reports changes between polls. Pacing, malformed answers
//! and giving up are the era-neutral host's.

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{json, Map, Value};

use super::outgoing::{answerable, answering_call, input_event, respond_to, send};
use super::state::{self as kept, Answering, Asked};
use super::types::Task;
use crate::era::kept::State;
use crate::ids::{SessionId, TaskId};
use crate::jsonrpc::{code, RequestId, RpcError};
use crate::model::{Era, TaskInfo};
use crate::peer_error::PeerErrorKind;
use crate::state::{answered_task, Source, Timer};
use crate::status::TaskStatus;

fn task_params(task: &str) -> Value {
    json!({ "taskId": task })
}

/// `tasks/get` asked by the application: its answer also updates the task's view.
pub(super) fn get_task(st: &mut State, session: SessionId, task: &str) -> Option<RequestId> {
    let asked = Asked::TaskGet {
        task: TaskId::from(task),
        auto: false,
    };
    send(st, session, "tasks/get", Some(task_params(task)), asked)
}

/// `tasks/get` starting to follow a task made earlier.
pub(super) fn follow_task(st: &mut State, session: SessionId, task: &str) -> Option<RequestId> {
    let asked = Asked::Follow {
        task: TaskId::from(task),
    };
    send(st, session, "tasks/get", Some(task_params(task)), asked)
}

/// A task of ours, made by `request` (or followed by it): followed from now on, and
/// listened to while it runs.
pub(super) fn adopt(st: &mut State, session: SessionId, request: RequestId, task: TaskInfo) {
    let (id, running) = (task.id.clone(), !task.status.is_terminal());
    st.track_created(session, Era::V2026_07_28, request, task);
    if running {
        listen_to(st, session, &id);
    }
}

/// The answer to the `tasks/get` that starts following `task`: the task is followed as if
/// `request` had created it (a terminal one's outcome is read by the next `tasks/get`, its
/// pending input requests by the next poll); an error, or an answer about another task,
/// answers `request`.
pub(super) fn on_followed(
    st: &mut State,
    session: SessionId,
    request: RequestId,
    task: &TaskId,
    outcome: Result<Value, RpcError>,
) {
    let read = answered_task(task, outcome, Task::info_of);
    match read {
        Ok(info) => adopt(st, session, request, info),
        Err(error) => respond_to(st, session, request, Err(error)),
    }
}

/// `tasks/cancel` asked by the application: an ack, then a `tasks/get` that answers it.
pub(super) fn cancel_task(st: &mut State, session: SessionId, task: &str) -> Option<RequestId> {
    let asked = Asked::TaskCancel {
        task: TaskId::from(task),
    };
    send(st, session, "tasks/cancel", Some(task_params(task)), asked)
}

/// The engine's own `tasks/get`.
pub(super) fn poll(st: &mut State, session: SessionId, task: &TaskId) {
    let asked = Asked::TaskGet {
        task: task.clone(),
        auto: true,
    };
    send(st, session, "tasks/get", Some(task_params(task)), asked);
}

/// A `tasks/get` answer: the engine's poll, the application's (answered as `report`), or
/// the one after a cancel ack.
pub(super) fn on_detailed_task(
    st: &mut State,
    session: SessionId,
    id: RequestId,
    task: TaskId,
    report: Option<RequestId>,
    outcome: Result<Value, RpcError>,
) {
    // While the answer is read, no other poll starts for the task.
    if let Some(entry) = st.remote_entry(session, &task) {
        entry.get_in_flight = true;
    }
    match &outcome {
        Ok(value) => match Task::deserialize(value) {
            Ok(view) if view.task_id == task.as_str() => {
                observe_detailed(st, session, &task, view, value, Source::Answer)
            }
            _ => st.on_malformed_task_answer(session, &task, &id),
        },
        Err(e) if e.code == code::INVALID_PARAMS => st.give_up(session, &task, e.clone()),
        Err(_) => {}
    }
    if let Some(request) = report {
        st.answer_task(session, request, &task, outcome, Task::info_of);
    }
    st.after_poll(session, &task);
}

fn observe_detailed(
    st: &mut State,
    session: SessionId,
    id: &TaskId,
    view: Task,
    value: &Value,
    source: Source,
) {
    let status = view.status;
    match view.to_info() {
        Some(info) => st.observe_remote_task(session, Era::V2026_07_28, info, source),
        None => st.peer_error(
            session,
            PeerErrorKind::Malformed,
            format!("task {:?}: a time is not RFC 3339", view.task_id),
        ),
    }
    if !st.is_our_remote_task(session, id) {
        return;
    }
    if status.is_terminal() {
        let outcome = inline_outcome(id, status, value);
        st.on_remote_result(session, id, outcome);
    } else if status == TaskStatus::InputRequired {
        if let Some(Value::Object(requests)) = value.get("inputRequests") {
            ask_task_inputs(st, session, id, requests);
        }
    }
}

/// Subscribes to a task's changes (`subscriptions/listen`), so that each reaches the
/// application between polls.
pub(super) fn listen_to(st: &mut State, session: SessionId, task: &TaskId) {
    let params = json!({ "notifications": { "taskIds": [task.as_str()] } });
    let asked = Asked::Listen { task: task.clone() };
    let id = send(st, session, "subscriptions/listen", Some(params), asked);
    if let Some(following) = kept::following(st, session, task) {
        following.listen = id;
    }
}

/// Subscribes to the list changes the server declares (`listChanged` of its tools, prompts
/// and resources) and to updates of `resources` (when it declares `resources.subscribe`) on
/// a stream that stays open, ending the one opened before: each notice arrives as a
/// notification for the application. None when there is nothing to ask for.
pub(super) fn listen_for_notices(
    st: &mut State,
    session: SessionId,
    resources: &[String],
) -> Option<RequestId> {
    let declared = &st.session(session)?.peer_capabilities;
    let mut filter = Map::new();
    for (capability, key) in [
        ("tools", "toolsListChanged"),
        ("prompts", "promptsListChanged"),
        ("resources", "resourcesListChanged"),
    ] {
        if declared[capability]["listChanged"] == true {
            filter.insert(key.to_owned(), Value::Bool(true));
        }
    }
    if declared["resources"]["subscribe"] == true && !resources.is_empty() {
        filter.insert("resourceSubscriptions".to_owned(), json!(resources));
    }
    let previous = kept::session_mut(st, session).and_then(|k| k.notices.take());
    if let Some(previous) = previous {
        st.abandon_request(session, None, &previous, "Listening again");
    }
    if filter.is_empty() {
        return None;
    }
    let params = json!({ "notifications": filter });
    let id = send(
        st,
        session,
        "subscriptions/listen",
        Some(params),
        Asked::Notices,
    )?;
    kept::session_mut(st, session)?.notices = Some(id.clone());
    Some(id)
}

/// Our listen stream for the server's notices ended (or was refused).
pub(super) fn notices_ended(st: &mut State, session: SessionId, id: &RequestId) {
    if let Some(k) = kept::session_mut(st, session) {
        if k.notices.as_ref() == Some(id) {
            k.notices = None;
        }
    }
}

/// Our listen stream for a task ended (or was refused): polling goes on alone.
pub(super) fn listen_ended(st: &mut State, session: SessionId, task: &TaskId, id: &RequestId) {
    if let Some(following) = kept::following(st, session, task) {
        if following.listen.as_ref() == Some(id) {
            following.listen = None;
        }
    }
}

/// A notification on a client session of this era: `notifications/tasks` reports a task of
/// ours like a `tasks/get` answer; a listen acknowledgement says nothing we need. Whether
/// it was one of those.
pub(super) fn notify(
    st: &mut State,
    session: SessionId,
    method: &str,
    params: Option<&RawValue>,
) -> bool {
    match method {
        "notifications/subscriptions/acknowledged" => true,
        "notifications/tasks" => {
            let text = params.map_or("null", |p| p.get());
            let value: Value = serde_json::from_str(text).unwrap_or(Value::Null);
            match Task::deserialize(&value) {
                Ok(view) => {
                    let id = TaskId::from(view.task_id.as_str());
                    if st.is_our_remote_task(session, &id) {
                        observe_detailed(st, session, &id, view, &value, Source::Notification);
                    }
                }
                Err(e) => st.peer_error(
                    session,
                    PeerErrorKind::Malformed,
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
fn ask_task_inputs(st: &mut State, session: SessionId, id: &TaskId, requests: &Map<String, Value>) {
    let limit = st.config.limits.max_pending_requests;
    for (key, request) in requests {
        let Some(following) = kept::following(st, session, id) else {
            return;
        };
        if following.asked.iter().any(|(k, _)| k == key) {
            continue;
        }
        if following.asked.len() >= limit {
            let error = RpcError::internal(format!(
                "Task {id} asked for more than {limit} inputs; giving up on it"
            ));
            return give_up_and_cancel(st, session, id, error);
        }
        let request = match answerable(st, request.clone()) {
            Ok(request) => request,
            Err(error) => return give_up_and_cancel(st, session, id, error),
        };
        let answering = Answering::Task {
            task: id.clone(),
            key: key.clone(),
        };
        let call = st.add_call(answering_call(session, answering));
        if let Some(following) = kept::following(st, session, id) {
            following.asked.push((key.clone(), Some(call)));
        }
        let event = input_event(call, session, key.clone(), request, Some(id.clone()));
        st.event(event);
    }
}

/// The application answered a task's input request: `tasks/update` carries it. If it
/// could not, the task ends with its reason and the server is asked to cancel it.
pub(super) fn answer_task_input(
    st: &mut State,
    session: SessionId,
    task: TaskId,
    key: String,
    outcome: Result<Value, RpcError>,
) {
    let Some(following) = kept::following(st, session, &task) else {
        return;
    };
    if let Some(slot) = following.asked.iter_mut().find(|(k, _)| *k == key) {
        slot.1 = None;
    }
    match outcome {
        Ok(value) => {
            let mut responses = Map::new();
            responses.insert(key, value);
            let params = json!({ "taskId": task.as_str(), "inputResponses": responses });
            send(
                st,
                session,
                "tasks/update",
                Some(params),
                Asked::Ack { task },
            );
        }
        Err(error) => give_up_and_cancel(st, session, &task, error),
    }
}

/// Our `tasks/cancel` was acknowledged: a fresh `tasks/get` answers it.
pub(super) fn after_cancel_ack(
    st: &mut State,
    session: SessionId,
    task: TaskId,
    original: RequestId,
) {
    let params = task_params(&task);
    let asked = Asked::AfterCancel { task, original };
    send(st, session, "tasks/get", Some(params), asked);
}

/// Stops following a task with `error` as its outcome, and asks the server to stop it.
fn give_up_and_cancel(st: &mut State, session: SessionId, task: &TaskId, error: RpcError) {
    st.give_up(session, task, error);
    let asked = Asked::Ack { task: task.clone() };
    send(st, session, "tasks/cancel", Some(task_params(task)), asked);
}

/// A task has no `tasks/result` in this era: a terminal one has its outcome read by
/// `tasks/get` (the answer that showed it terminal usually carried it already).
pub(super) fn follow_up(st: &mut State, session: SessionId, id: &TaskId) {
    let Some(entry) = st.session(session).and_then(|s| s.remote.get(id)) else {
        return;
    };
    let terminal = entry.status().is_some_and(TaskStatus::is_terminal);
    if entry.ours && terminal && !entry.result_reported {
        st.clear_timer(&Timer::Poll(session, id.clone()));
        fetch_outcome(st, session, id);
    }
}

/// A terminal task whose outcome we have not read: a `tasks/get` reads it.
fn fetch_outcome(st: &mut State, session: SessionId, task: &TaskId) {
    let Some(entry) = st.remote_entry(session, task) else {
        return;
    };
    if entry.get_in_flight {
        return;
    }
    entry.get_in_flight = true;
    poll(st, session, task);
}

/// A task we stop following: the application's answers still due are not wanted, and our
/// listen stream for it ends.
pub(super) fn let_go(st: &mut State, session: SessionId, task: &TaskId) {
    let Some(following) = kept::session_mut(st, session).and_then(|k| k.following.remove(task))
    else {
        return;
    };
    for call in following.asked.iter().filter_map(|(_, call)| *call) {
        st.remove_call(call);
    }
    if let Some(listen) = &following.listen {
        st.abandon_request(session, None, listen, "Task finished");
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
