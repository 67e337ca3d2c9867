//! `tasks/get`, `tasks/cancel` and `tasks/update` in this era.

use serde::Deserialize;

use super::encode;
use super::input;
use super::meta::{stateless, tasks_required, Meta, RequestMeta};
use crate::era::kept::State;
use crate::event::StopReason;
use crate::ids::{SessionId, TaskId};
use crate::jsonrpc::{Reject, RequestId};
use crate::model::Era;
use crate::state::{AnswerAgain, Record, TaskVerb};

/// `params` of `tasks/get` and `tasks/cancel`.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct TaskIdParams {
    task_id: String,
    #[serde(rename = "_meta", default)]
    meta: Meta,
}

/// `params` of `tasks/update`.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct UpdateParams {
    task_id: String,
    input_responses: serde_json::Map<String, serde_json::Value>,
    #[serde(rename = "_meta", default)]
    meta: Meta,
}

stateless!(TaskIdParams => task_id, UpdateParams => task_id);

/// `tasks/get`: the whole `DetailedTask`, outcome inline. A poll that comes too soon
/// raises the task's `pollIntervalMs` (the task table's `pace_poll`) and is answered.
pub(super) fn on_tasks_get(
    st: &mut State,
    session: SessionId,
    id: &RequestId,
    params: Result<TaskIdParams, Reject>,
    meta: &RequestMeta,
) -> Result<(), Reject> {
    let task = requested_task(st, session, params, meta, "retrieve")?
        .id
        .clone();
    // Copied out (none, mostly: no allocation) so that pacing and reading the task is one
    // lookup.
    let asks = input::asks_of(st, &task).to_vec();
    let Some(record) = st.tasks.pace_poll(&task, st.now) else {
        return Ok(());
    };
    let line = encode::get_task_result(id, record, &asks, &st.info_json);
    st.reply_about(session, id, about(TaskVerb::Get, task), None, line);
    Ok(())
}

/// `tasks/cancel`: an ack, the same for a task already finished.
pub(super) fn on_tasks_cancel(
    st: &mut State,
    session: SessionId,
    id: &RequestId,
    params: Result<TaskIdParams, Reject>,
    meta: &RequestMeta,
) -> Result<(), Reject> {
    let record = requested_task(st, session, params, meta, "cancel")?;
    let task = record.id.clone();
    let running = !record.status.is_terminal();
    if running {
        st.cancel_requested(&task);
    }
    let line = encode::ack(id, &st.info_json);
    st.reply_about(
        session,
        id,
        about(TaskVerb::Cancel, task.clone()),
        None,
        line,
    );
    if running {
        st.after_settle(&task, Some(StopReason::Cancelled));
    }
    Ok(())
}

/// A reply about `task` in this era, given again should the store keep another version.
fn about(verb: TaskVerb, task: TaskId) -> AnswerAgain {
    AnswerAgain {
        era: Era::V2026_07_28,
        verb,
        task,
    }
}

/// The reply to `id` (`verb` on `task`) given again from the task as the store keeps it
/// (see [`crate::state::Protocol::answer_again`]): `tasks/get` shows it; a cancel is
/// acknowledged whatever became of the task, as always.
pub(super) fn answer_again(
    st: &State,
    id: &RequestId,
    verb: TaskVerb,
    task: &TaskId,
) -> Option<(String, Option<i64>)> {
    match verb {
        TaskVerb::Get => {
            let record = st.tasks.get(task)?;
            let asks = input::asks_of(st, task);
            Some((
                encode::get_task_result(id, record, asks, &st.info_json),
                None,
            ))
        }
        TaskVerb::Cancel => Some((encode::ack(id, &st.info_json), None)),
        TaskVerb::Result => None,
    }
}

/// `tasks/update`: answers the task's outstanding input requests, then acks (keys not
/// outstanding are ignored; a working or finished task just gets the ack).
pub(super) fn on_tasks_update(
    st: &mut State,
    session: SessionId,
    id: &RequestId,
    params: Result<UpdateParams, Reject>,
    meta: &RequestMeta,
) -> Result<(), Reject> {
    if !meta.declares_tasks() {
        return Err(tasks_required());
    }
    let p = params?;
    let owner = st.owner_of(session);
    let task = st
        .tasks
        .get_owned(&p.task_id, owner)
        .map(|r| r.id.clone())
        .ok_or_else(|| st.tasks.missing(&p.task_id, owner, "update"))?;
    // Applied before the ack, so the next tasks/get already shows it.
    input::answer_asks(st, &task, p.input_responses)?;
    let line = encode::ack(id, &st.info_json);
    st.reply(session, id, Some(&task), line);
    Ok(())
}

/// The task a request names, if its owner may see it. Without the extension declared
/// only a task created in another era is served (-32021 for anything else,
/// unknown ids included, so the gate leaks nothing).
fn requested_task<'a>(
    st: &'a State,
    session: SessionId,
    p: Result<TaskIdParams, Reject>,
    meta: &RequestMeta,
    action: &str,
) -> Result<&'a Record, Reject> {
    let owner = st.owner_of(session);
    if !meta.declares_tasks() {
        let record = p.ok().and_then(|p| st.tasks.get_owned(&p.task_id, owner));
        return match record {
            Some(record) if record.era != Era::V2026_07_28 => Ok(record),
            _ => Err(tasks_required()),
        };
    }
    let p = p?;
    st.tasks
        .get_owned(&p.task_id, owner)
        .ok_or_else(|| st.tasks.missing(&p.task_id, owner, action).into())
}
