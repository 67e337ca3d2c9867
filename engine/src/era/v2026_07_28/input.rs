//! Input in this era; the server never sends a request of its own.
//!
//! - A task waits for `inputRequests` shown by `tasks/get`, answered by `tasks/update`.
//! - A plain call uses MRTR: the request is answered with an `InputRequiredResult`, and the
//!   client retries it with `inputResponses`. Keys follow the order the call asks in
//!   (`input-1`, `input-2`, …), so the retried call, asking again in the same order, finds
//!   its answers. Answers of earlier rounds travel in `requestState` as JSON: it holds only
//!   what the client itself answered, so a client that edits it changes nothing it could
//!   not have answered differently in the first place.

use serde_json::{Map, Value};

use super::encode;
use super::state::{self as kept, Ask, Rounds};
use crate::era::kept::State;
use crate::error::UsageError;
use crate::event::{Event, StopReason};
use crate::ids::{CallId, InputId, TaskId};
use crate::jsonrpc::{Reject, RpcError};
use crate::model::{InputKinds, StoredInput};
use crate::status::TaskStatus;

/// Asks for input on behalf of a call: a task lists it (the task shows `input_required`);
/// a plain call finds it in its request or ends with an `InputRequiredResult`. The kind of
/// input must be one the requestor declared.
pub(super) fn ask(
    st: &mut State,
    call: CallId,
    method: &str,
    capability: &'static str,
    params: Map<String, Value>,
) -> Result<InputId, UsageError> {
    let state = st.call(call).ok_or(UsageError::UnknownCall(call))?;
    let Some(task) = state.task.clone() else {
        return ask_round(st, call, method, capability, params);
    };
    let kinds = st
        .tasks
        .get(&task)
        .map(|r| r.input_kinds())
        .unwrap_or_default();
    if !declared(kinds, capability) {
        return Err(UsageError::NotNegotiated(capability));
    }
    let input = st.fresh_input();
    let request = serde_json::json!({ "method": method, "params": params });
    let ask = Ask {
        id: input,
        key: format!("input-{}", input.0),
        request: serde_json::value::to_raw_value(&request).expect("JSON values serialize"),
    };
    if let Some(state) = st.call_mut(call) {
        kept::of_call(state).asks.push(ask);
    }
    st.tasks
        .transition(&task, st.now, TaskStatus::InputRequired, None, None);
    // Journaled and reported even when the status stays: the list of requests changed.
    st.journal_put(&task);
    st.tell_followers(&task);
    Ok(input)
}

/// Applies `tasks/update` responses: each key that names an outstanding request of the
/// task answers it (the work hears [`Event::InputResponse`]); other keys are ignored.
/// A response for an outstanding key that is not an object is -32602 and nothing is
/// applied. The task is `working` again once nothing is outstanding. When the work runs on
/// another host, the answers are journaled for the store to relay to it
/// ([`Change::Answers`](crate::Change::Answers)), and the task changes there.
pub(super) fn answer_asks(
    st: &mut State,
    task: &TaskId,
    responses: Map<String, Value>,
) -> Result<(), Reject> {
    let Some(&call) = st.work.get(task) else {
        return Ok(());
    };
    let outstanding = |st: &State, key: &str| {
        kept::call(st, call).is_some_and(|c| c.asks.iter().any(|a| a.key == key))
    };
    if let Some((key, _)) = responses
        .iter()
        .find(|(key, value)| outstanding(st, key) && !value.is_object())
    {
        return Err(RpcError::invalid_params(format!(
            "Invalid params: inputResponses[\"{key}\"] must be an object"
        ))
        .into());
    }
    let shadow = st.call(call).is_some_and(|c| c.shadow);
    let mut answered = Vec::new();
    let mut none_left = false;
    if let Some(kept) = st
        .call_mut(call)
        .and_then(|c| c.kept.v2026_07_28.as_deref_mut())
    {
        for (key, value) in responses {
            if let Some(i) = kept.asks.iter().position(|a| a.key == key) {
                answered.push((kept.asks.remove(i), value));
            }
        }
        none_left = kept.asks.is_empty();
    }
    if answered.is_empty() {
        return Ok(());
    }
    if shadow {
        let relayed = answered
            .into_iter()
            .map(|(ask, value)| (ask.key, value))
            .collect();
        st.journal_answers(task, relayed);
        return Ok(());
    }
    if none_left {
        st.tasks
            .transition(task, st.now, TaskStatus::Working, None, None);
    }
    st.journal_put(task);
    st.tell_followers(task);
    for (ask, value) in answered {
        st.event(Event::InputResponse {
            call,
            input: ask.id,
            outcome: Ok(value),
        });
    }
    Ok(())
}

/// MRTR: the answer is in this request (or an earlier round's), or the request is
/// answered with an `InputRequiredResult` and the call ends
/// ([`StopReason::InputRequired`]).
fn ask_round(
    st: &mut State,
    call: CallId,
    method: &str,
    capability: &'static str,
    params: Map<String, Value>,
) -> Result<InputId, UsageError> {
    let state = st.call(call).ok_or(UsageError::UnknownCall(call))?;
    if !declared(state.input_kinds, capability) {
        return Err(UsageError::NotNegotiated(capability));
    }
    let input = st.fresh_input();
    let Some(state) = st.call_mut(call) else {
        return Err(UsageError::UnknownCall(call));
    };
    let rounds = &mut kept::of_call(state).rounds;
    rounds.asked += 1;
    let key = format!("input-{}", rounds.asked);
    if let Some(answer) = rounds.answers.get(&key).cloned() {
        st.event(Event::InputResponse {
            call,
            input,
            outcome: Ok(answer),
        });
        return Ok(input);
    }
    let answers = std::mem::take(&mut rounds.answers);
    let Some(state) = st.remove_call(call) else {
        return Err(UsageError::UnknownCall(call));
    };
    if let (Some(session), Some(request)) = (state.session, state.reply_to) {
        if let Some(s) = st.session_mut(session) {
            s.requests.remove(&request);
        }
        let ask = serde_json::json!({ key: { "method": method, "params": params } });
        let line = encode::input_required(&request, &ask, &answers);
        st.reply(session, &request, None, line);
    }
    st.event(Event::Stop {
        call,
        reason: StopReason::InputRequired,
        message: None,
    });
    Ok(input)
}

/// A task's outstanding input requests, as a snapshot stores them.
pub(super) fn stored(st: &State, call: CallId) -> Vec<StoredInput> {
    kept::call(st, call).map_or_else(Vec::new, |c| {
        c.asks
            .iter()
            .map(|a| StoredInput {
                key: a.key.clone(),
                request: a.request.clone(),
            })
            .collect()
    })
}

/// The stand-in of a task whose work runs on another host shows the input requests it
/// waits for there, under their keys there (answers are relayed by key).
pub(super) fn sync(st: &mut State, call: CallId, inputs: Vec<StoredInput>) {
    let asks: Vec<Ask> = inputs
        .into_iter()
        .map(|i| Ask {
            id: st.fresh_input(),
            key: i.key,
            request: i.request,
        })
        .collect();
    if let Some(state) = st.call_mut(call) {
        kept::of_call(state).asks = asks;
    }
}

/// The outstanding input requests of a task, in the order they were made.
pub(super) fn asks_of<'a>(st: &'a State, task: &TaskId) -> &'a [Ask] {
    st.work
        .get(task)
        .and_then(|&call| kept::call(st, call))
        .map_or(&[], |c| c.asks.as_slice())
}

/// Whether the requestor declared the capability an input method needs.
fn declared(kinds: InputKinds, capability: &str) -> bool {
    match capability {
        "elicitation" => kinds.elicitation,
        "sampling" => kinds.sampling,
        _ => kinds.roots,
    }
}

/// The MRTR state a `tools/call` brings: its `inputResponses` over the answers of earlier
/// rounds carried in `requestState` (-32602 when that is not our JSON object).
pub(super) fn rounds(
    request_state: Option<&str>,
    responses: Option<Map<String, Value>>,
) -> Result<Rounds, Reject> {
    let mut answers = match request_state {
        None => Map::new(),
        Some(text) => serde_json::from_str(text).map_err(|_| {
            Reject::from(RpcError::invalid_params(
                "Invalid params: requestState is not one this server returned",
            ))
        })?,
    };
    answers.extend(responses.unwrap_or_default());
    Ok(Rounds { answers, asked: 0 })
}
