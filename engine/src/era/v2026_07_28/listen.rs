//! `subscriptions/listen` with `notifications.taskIds`: a stream of `notifications/tasks`,
//! each the whole task as `tasks/get` would show it, on the listen request's id.

use serde::Deserialize;

use super::encode;
use super::input::asks_of;
use super::meta::{stateless, tasks_required, Meta, RequestMeta};
use super::state as kept;
use crate::event::MessageKind;
use crate::ids::{SessionId, TaskId};
use crate::jsonrpc::{Reject, RequestId};
use crate::model::Era;
use crate::state::{PeerRequest, State};

/// `params` of `subscriptions/listen`.
#[derive(Deserialize)]
pub(super) struct ListenParams<'a> {
    notifications: Filter,
    #[serde(rename = "_meta", default, borrow)]
    meta: Meta<'a>,
}

stateless!(ListenParams);

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Filter {
    #[serde(default)]
    task_ids: Option<Vec<String>>,
}

/// Opens a listen stream: the acknowledgement names the ids we report on (the caller's
/// own tasks; others are left out so that their existence does not leak), each task is
/// reported at once as it stands, then on every change, and the stream ends with a
/// result once every task it follows is terminal (at once when it follows none).
pub(super) fn on_listen(
    st: &mut State,
    session: SessionId,
    id: &RequestId,
    p: ListenParams<'_>,
    meta: &RequestMeta,
) -> Result<(), Reject> {
    let wanted = p.notifications.task_ids.unwrap_or_default();
    if !wanted.is_empty() && !meta.declares_tasks() {
        return Err(tasks_required());
    }
    let owner = st.owner_of(session);
    let mut agreed: Vec<TaskId> = Vec::new();
    for task in &wanted {
        if let Some(record) = st.tasks.get_owned(task, owner) {
            if !agreed.contains(&record.id) {
                agreed.push(record.id.clone());
            }
        }
    }
    let line = encode::listen_acknowledged(id, &agreed);
    let kind = MessageKind::Notification {
        method: "notifications/subscriptions/acknowledged",
        task: None,
        stream: Some(id.clone()),
    };
    st.send(session, kind, None, line);
    let mut live = Vec::new();
    for task in agreed {
        // Each task as it stands first, so nothing between its creation and the
        // subscription is missed.
        notify_listener(st, session, id, &task);
        let finished = st.tasks.get(&task).is_none_or(|r| r.status.is_terminal());
        if finished {
            continue;
        }
        st.follow(session, Era::V2026_07_28, &task);
        live.push(task);
    }
    if live.is_empty() {
        let line = encode::listen_ended(id);
        st.reply(session, id, None, line);
        return Ok(());
    }
    if let Some(s) = st.session_mut(session) {
        s.requests
            .insert(id.clone(), PeerRequest::Held(Era::V2026_07_28));
        kept::of_session(s).listens.push((id.clone(), live));
    }
    Ok(())
}

/// Reports a task's change on the session's listen streams that follow it; a stream whose
/// every task is now terminal (or gone) ends.
pub(super) fn tell_listeners(st: &mut State, session: SessionId, task: &TaskId) {
    let streams: Vec<RequestId> = kept::session(st, session)
        .map(|k| {
            k.listens
                .iter()
                .filter(|(_, tasks)| tasks.contains(task))
                .map(|(id, _)| id.clone())
                .collect()
        })
        .unwrap_or_default();
    let terminal = st.tasks.get(task).is_none_or(|r| r.status.is_terminal());
    for stream in streams {
        notify_listener(st, session, &stream, task);
        if !terminal {
            continue;
        }
        let ended = st.session_mut(session).is_some_and(|s| {
            let listens = &mut kept::of_session(s).listens;
            let Some(at) = listens.iter().position(|(id, _)| *id == stream) else {
                return false;
            };
            listens[at].1.retain(|t| t != task);
            let empty = listens[at].1.is_empty();
            if empty {
                listens.remove(at);
                s.requests.remove(&stream);
            }
            empty
        });
        if ended {
            let line = encode::listen_ended(&stream);
            st.reply(session, &stream, None, line);
        }
    }
}

/// The client ends its stream (`notifications/cancelled`): nothing more is sent for it.
pub(super) fn drop_stream(st: &mut State, session: SessionId, request: &RequestId) {
    if let Some(k) = kept::session_mut(st, session) {
        k.listens.retain(|(id, _)| id != request);
    }
}

fn notify_listener(st: &mut State, session: SessionId, stream: &RequestId, task: &TaskId) {
    let Some(record) = st.tasks.get(task) else {
        return;
    };
    let line = encode::task_notification(stream, record, asks_of(st, task));
    let kind = MessageKind::Notification {
        method: "notifications/tasks",
        task: Some(task.clone()),
        stream: Some(stream.clone()),
    };
    st.send(session, kind, Some(task), line);
}
