//! Input a 2026-07-28 task waits for: `inputRequests` shown by `tasks/get`, answered by
//! `tasks/update`. The server never sends a request of its own in this era.

use serde_json::{Map, Value};

use crate::error::UsageError;
use crate::event::Event;
use crate::host::{Ask, Host};
use crate::ids::{CallId, InputId, TaskId};
use crate::jsonrpc::{Reject, RpcError};
use crate::status::TaskStatus;

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
            return Err(UsageError::NotNegotiated(
                "input on a plain 2026-07-28 call (it needs MRTR, not supported yet)",
            ));
        };
        let kinds = self
            .tasks
            .get(&task)
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
        // Journaled even when the status stays: the list of requests changed.
        self.journal_put(&task);
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
        for (input, value) in answered {
            self.event(Event::InputResponse {
                call,
                input,
                outcome: Ok(value),
            });
        }
        Ok(())
    }

    /// The outstanding input requests of a task, in the order they were made.
    pub(super) fn asks_of(&self, task: &TaskId) -> &[Ask] {
        self.work
            .get(task)
            .and_then(|&call| self.call(call))
            .map_or(&[], |c| c.asks.as_slice())
    }
}
