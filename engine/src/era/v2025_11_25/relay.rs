//! Input requests relayed through a store that several hosts share (a fleet: fronts hold the
//! sessions, workers run the work). In this era the server asks its requestor by sending a
//! request on a session; a worker holds none. So the worker stores the question with the
//! task (a [`StoredInput`] under a key), a front holding a session that follows the task sends
//! it there (on the stream of a parked `tasks/result`, else the session's), and journals the
//! requestor's answer ([`Change::Answers`](crate::Change::Answers)) for the store to hand to
//! the worker, whose work hears it as if asked directly. An answer is relayed as
//! `{"result": …}` or `{"error": …}` (the requestor may answer with an error). Progress
//! goes the same way: stored with the task where the work runs, told by the host holding
//! the session that made the task, under its progress token.

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{json, Map, Value};

use super::encode::with_related_task;
use super::state::{self as kept, Asked, Relayed, RelayedAt};
use super::types::{declares, related_task_meta};
use crate::era::kept::{Sent, State};
use crate::error::UsageError;
use crate::event::Event;
use crate::ids::{CallId, InputId, SessionId, TaskId};
use crate::jsonrpc::RpcError;
use crate::model::{Era, StoredInput, TaskProgress};
use crate::status::TaskStatus;

/// A stored question, as read back.
#[derive(Deserialize)]
struct Question {
    method: String,
    #[serde(default)]
    params: Map<String, Value>,
}

/// A relayed answer, as read back.
#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
enum Answer {
    Result(Value),
    Error(RpcError),
}

/// Where the work runs and no session can carry the question: it is stored with the task
/// for a host holding a session of the requestor's to send. The requestor must have declared
/// `capability` when it made the task.
pub(super) fn ask(
    st: &mut State,
    call: CallId,
    task: &TaskId,
    method: &str,
    capability: &'static str,
    params: Map<String, Value>,
) -> Result<InputId, UsageError> {
    let kinds = st
        .tasks
        .get(task)
        .map(|r| r.input_kinds())
        .unwrap_or_default();
    let declared = match capability {
        "elicitation" => kinds.elicitation,
        "sampling" => kinds.sampling,
        _ => kinds.roots,
    };
    if !declared {
        return Err(UsageError::NotNegotiated(capability));
    }
    let input = st.fresh_input();
    let params = with_related_task(params, task.as_str());
    let request = json!({ "method": method, "params": params });
    let relayed = Relayed {
        key: format!("input-{}", input.0),
        request: serde_json::value::to_raw_value(&request).expect("JSON values serialize"),
        at: RelayedAt::Work(input),
    };
    let state = st.call_mut(call).ok_or(UsageError::UnknownCall(call))?;
    kept::of_call(state).relayed.push(relayed);
    st.tasks
        .transition(task, st.now, TaskStatus::InputRequired, None, None);
    // Journaled even when the status stays: the questions changed.
    st.journal_put(task);
    st.tell_followers(task);
    Ok(input)
}

/// The questions a call's task waits for, as a snapshot stores them.
pub(super) fn stored(st: &State, call: CallId) -> Vec<StoredInput> {
    let Some(c) = st.call(call).and_then(|c| c.kept.v2025_11_25.as_deref()) else {
        return Vec::new();
    };
    c.relayed
        .iter()
        .map(|r| StoredInput {
            key: r.key.clone(),
            request: r.request.clone(),
        })
        .collect()
}

/// The stand-in of a task whose work runs elsewhere learns the questions it waits for
/// there: those no longer asked are withdrawn from the requestor, new ones are sent.
pub(super) fn sync(st: &mut State, call: CallId, inputs: Vec<StoredInput>) {
    let Some(state) = st.call_mut(call) else {
        return;
    };
    let relayed = &mut kept::of_call(state).relayed;
    let mut gone = Vec::new();
    relayed.retain(|r| {
        let kept = inputs.iter().any(|i| i.key == r.key);
        if !kept {
            if let RelayedAt::Sent {
                session,
                request,
                stream,
            } = &r.at
            {
                gone.push((*session, stream.clone(), request.clone()));
            }
        }
        kept
    });
    for input in inputs {
        if !relayed.iter().any(|r| r.key == input.key) {
            relayed.push(Relayed {
                key: input.key,
                request: input.request,
                at: RelayedAt::Unsent,
            });
        }
    }
    for (session, stream, request) in gone {
        st.abandon_request(
            session,
            stream,
            &request,
            "Task no longer waits for this input",
        );
    }
    offer(st, call);
}

/// Sends the questions of `task` (whose work runs elsewhere) not sent yet to a session
/// following it here, once one can carry them (called as sessions start following).
pub(super) fn offer_task(st: &mut State, task: &TaskId) {
    if let Some(&call) = st.work.get(task) {
        offer(st, call);
    }
}

fn offer(st: &mut State, call: CallId) {
    let Some(state) = st.call(call) else {
        return;
    };
    let (Some(task), Some(c)) = (state.task.clone(), state.kept.v2025_11_25.as_deref()) else {
        return;
    };
    let unsent: Vec<(String, Box<RawValue>)> = c
        .relayed
        .iter()
        .filter(|r| matches!(r.at, RelayedAt::Unsent))
        .map(|r| (r.key.clone(), r.request.clone()))
        .collect();
    let followers: Vec<SessionId> = state
        .followers
        .iter()
        .filter(|f| f.era == Era::V2025_11_25)
        .map(|f| f.session)
        .collect();
    for (key, request) in unsent {
        let Ok(question) = serde_json::from_str::<Question>(request.get()) else {
            continue;
        };
        let capability = match question.method.as_str() {
            "sampling/createMessage" => "sampling",
            "roots/list" => "roots",
            _ => "elicitation",
        };
        let Some(session) = followers.iter().copied().find(|&s| {
            st.ready(s)
                .is_ok_and(|s| declares(&s.peer_capabilities, &[capability]))
        }) else {
            return;
        };
        let stream = kept::call_stream(st, session, call);
        let asked = Asked::Relayed {
            task: task.clone(),
            key: key.clone(),
        };
        let Some(request) = st.send_request(
            session,
            stream.clone(),
            &question.method,
            Some(question.params),
            Sent::Era(asked.into()),
            false,
            Some(&task),
        ) else {
            continue;
        };
        if let Some(r) = st
            .call_mut(call)
            .and_then(|c| c.kept.v2025_11_25.as_deref_mut())
            .and_then(|c| c.relayed.iter_mut().find(|r| r.key == key))
        {
            r.at = RelayedAt::Sent {
                session,
                request,
                stream,
            };
        }
    }
}

/// The requestor answered a relayed question (`outcome`, `Err` when its session could not
/// carry it: it is sent again to the next session that follows the task).
pub(super) fn on_answer(
    st: &mut State,
    task: &TaskId,
    key: &str,
    outcome: Result<Value, RpcError>,
    delivered: bool,
) {
    let Some(&call) = st.work.get(task) else {
        return;
    };
    let Some(c) = st
        .call_mut(call)
        .and_then(|c| c.kept.v2025_11_25.as_deref_mut())
    else {
        return;
    };
    let Some(at) = c.relayed.iter().position(|r| r.key == key) else {
        return;
    };
    if !delivered {
        c.relayed[at].at = RelayedAt::Unsent;
        return;
    }
    c.relayed.remove(at);
    let answer = match outcome {
        Ok(value) => json!({ "result": value }),
        Err(error) => json!({ "error": error }),
    };
    let mut responses = Map::new();
    responses.insert(key.to_owned(), answer);
    st.journal_answers(task, responses);
}

/// Answers relayed from another host to the questions of a task whose work runs here; keys
/// that name none are ignored. The task works again once none is left.
pub(super) fn answered(st: &mut State, task: &TaskId, responses: Map<String, Value>) {
    let Some(&call) = st.work.get(task) else {
        return;
    };
    let mut heard = Vec::new();
    let mut none_left = false;
    if let Some(c) = st
        .call_mut(call)
        .and_then(|c| c.kept.v2025_11_25.as_deref_mut())
    {
        for (key, value) in responses {
            let Some(at) = c.relayed.iter().position(|r| r.key == key) else {
                continue;
            };
            let RelayedAt::Work(input) = c.relayed[at].at else {
                continue;
            };
            c.relayed.remove(at);
            let outcome = match serde_json::from_value::<Answer>(value) {
                Ok(Answer::Result(value)) => Ok(value),
                Ok(Answer::Error(error)) => Err(error),
                Err(e) => Err(RpcError::internal(format!(
                    "an answer relayed through the store cannot be read: {e}"
                ))),
            };
            heard.push((input, outcome));
        }
        none_left = c.relayed.is_empty() && c.inputs.is_empty();
    }
    if heard.is_empty() {
        return;
    }
    if none_left {
        st.tasks
            .transition(task, st.now, TaskStatus::Working, None, None);
    }
    st.journal_put(task);
    st.tell_followers(task);
    for (input, outcome) in heard {
        st.event(Event::InputResponse {
            call,
            input,
            outcome,
        });
    }
}

/// Withdraws the relayed questions a call's stand-in sent (its task ended).
pub(super) fn withdraw(st: &mut State, call: CallId, reason: &str) {
    let Some(c) = st
        .call_mut(call)
        .and_then(|c| c.kept.v2025_11_25.as_deref_mut())
    else {
        return;
    };
    for relayed in std::mem::take(&mut c.relayed) {
        if let RelayedAt::Sent {
            session,
            request,
            stream,
        } = relayed.at
        {
            st.abandon_request(session, stream, &request, reason);
        }
    }
}

/// Progress of work running where no session of its requestor's is: stored with the task
/// (when journaling), for the host holding the session that made it to tell.
pub(super) fn progress(
    st: &mut State,
    call: CallId,
    task: &TaskId,
    progress: f64,
    total: Option<f64>,
    message: Option<String>,
) {
    if !st.journal_enabled() {
        return;
    }
    let Some(state) = st.call_mut(call) else {
        return;
    };
    kept::of_call(state).progress = Some(TaskProgress {
        progress,
        total,
        message,
    });
    st.journal_put(task);
}

/// The newest progress the work here reported, as a snapshot stores it.
pub(super) fn stored_progress(st: &State, call: CallId) -> Option<TaskProgress> {
    let c = st.call(call)?;
    if c.shadow {
        return None;
    }
    c.kept.v2025_11_25.as_deref()?.progress.clone()
}

/// The stand-in of a task whose work runs elsewhere hears its progress there: new progress
/// is told to the session that made the task, when it is here.
pub(super) fn sync_progress(st: &mut State, call: CallId, progress: Option<TaskProgress>) {
    let Some(progress) = progress else {
        return;
    };
    let Some(state) = st.call_mut(call) else {
        return;
    };
    let task = state.task.clone();
    let heard = &mut kept::of_call(state).progress;
    if heard.as_ref() == Some(&progress) {
        return;
    }
    *heard = Some(progress.clone());
    let (Some(task), Some(session)) = (task, st.call(call).and_then(|c| c.session)) else {
        return;
    };
    let stream = kept::call_stream(st, session, call);
    let meta = related_task_meta(task.as_str());
    st.send_progress(
        call,
        stream,
        Some(&task),
        progress.progress,
        progress.total,
        progress.message,
        Some(meta),
    );
}
