//! Input in the 2026-07-28 era; the server never sends a request of its own.
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
use crate::error::UsageError;
use crate::event::{Event, StopReason};
use crate::host::Rounds;
use crate::host::{Ask, Host};
use crate::ids::{CallId, InputId, TaskId};
use crate::jsonrpc::{Reject, RpcError};
use crate::status::TaskStatus;
use crate::task::InputKinds;

impl Host {
    /// Records an input request of a 2026-07-28 task; the task shows `input_required`.
    /// The kind of input must be one the task's creating request declared.
    pub(crate) fn ask_input(
        &mut self,
        call: CallId,
        method: &str,
        capability: &'static str,
        params: Map<String, Value>,
    ) -> Result<InputId, UsageError> {
        let state = self.call(call).ok_or(UsageError::UnknownCall(call))?;
        let Some(task) = state.task.clone() else {
            return self.ask_round(call, method, capability, params);
        };
        let kinds = self
            .tasks
            .get(&task)
            .map(|r| r.input_kinds())
            .unwrap_or_default();
        if !declared(kinds, capability) {
            return Err(UsageError::NotNegotiated(capability));
        }
        let input = self.fresh_input();
        let request = serde_json::json!({ "method": method, "params": params });
        let ask = Ask {
            id: input,
            key: format!("input-{}", input.0),
            request: serde_json::value::to_raw_value(&request).expect("JSON values serialize"),
        };
        if let Some(state) = self.call_mut(call) {
            state.asks.push(ask);
        }
        self.tasks
            .transition(&task, self.now, TaskStatus::InputRequired, None, None);
        // Journaled and reported even when the status stays: the list of requests changed.
        self.journal_put(&task);
        self.tell_followers(&task);
        Ok(input)
    }

    /// Applies `tasks/update` responses: each key that names an outstanding request of the
    /// task answers it (the work hears [`Event::InputResponse`]); other keys are ignored.
    /// A response for an outstanding key that is not an object is -32602 and nothing is
    /// applied. The task is `working` again once nothing is outstanding.
    pub(super) fn answer_asks(
        &mut self,
        task: &TaskId,
        responses: Map<String, Value>,
    ) -> Result<(), Reject> {
        let Some(&call) = self.work.get(task) else {
            return Ok(());
        };
        let outstanding = |host: &Host, key: &str| {
            host.call(call)
                .is_some_and(|c| c.asks.iter().any(|a| a.key == key))
        };
        if let Some((key, _)) = responses
            .iter()
            .find(|(key, value)| outstanding(self, key) && !value.is_object())
        {
            return Err(RpcError::invalid_params(format!(
                "Invalid params: inputResponses[\"{key}\"] must be an object"
            ))
            .into());
        }
        let mut answered = Vec::new();
        if let Some(state) = self.call_mut(call) {
            for (key, value) in responses {
                if let Some(i) = state.asks.iter().position(|a| a.key == key) {
                    answered.push((state.asks.remove(i).id, value));
                }
            }
        }
        if answered.is_empty() {
            return Ok(());
        }
        let none_left = self.call(call).is_some_and(|c| c.asks.is_empty());
        if none_left {
            self.tasks
                .transition(task, self.now, TaskStatus::Working, None, None);
        }
        self.journal_put(task);
        self.tell_followers(task);
        for (input, value) in answered {
            self.event(Event::InputResponse {
                call,
                input,
                outcome: Ok(value),
            });
        }
        Ok(())
    }

    /// MRTR: the answer is in this request (or an earlier round's), or the request is
    /// answered with an `InputRequiredResult` and the call ends
    /// ([`StopReason::InputRequired`]).
    fn ask_round(
        &mut self,
        call: CallId,
        method: &str,
        capability: &'static str,
        params: Map<String, Value>,
    ) -> Result<InputId, UsageError> {
        let state = self.call(call).ok_or(UsageError::UnknownCall(call))?;
        if !declared(state.input_kinds, capability) {
            return Err(UsageError::NotNegotiated(capability));
        }
        let input = self.fresh_input();
        let Some(state) = self.call_mut(call) else {
            return Err(UsageError::UnknownCall(call));
        };
        let rounds = state.rounds.get_or_insert_with(Default::default);
        rounds.asked += 1;
        let key = format!("input-{}", rounds.asked);
        if let Some(answer) = rounds.answers.get(&key).cloned() {
            self.event(Event::InputResponse {
                call,
                input,
                outcome: Ok(answer),
            });
            return Ok(input);
        }
        let answers = std::mem::take(&mut rounds.answers);
        let Some(state) = self.remove_call(call) else {
            return Err(UsageError::UnknownCall(call));
        };
        if let (Some(session), Some(request)) = (state.session, state.reply_to) {
            if let Some(s) = self.session_mut(session) {
                s.inbound.remove(&request);
            }
            let ask = serde_json::json!({ key: { "method": method, "params": params } });
            let line = encode::input_required(&request, &ask, &answers);
            self.reply(session, &request, None, line);
        }
        self.event(Event::Stop {
            call,
            reason: StopReason::InputRequired,
            message: None,
        });
        Ok(input)
    }

    /// The outstanding input requests of a task, in the order they were made.
    pub(super) fn asks_of(&self, task: &TaskId) -> &[Ask] {
        self.work
            .get(task)
            .and_then(|&call| self.call(call))
            .map_or(&[], |c| c.asks.as_slice())
    }
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
