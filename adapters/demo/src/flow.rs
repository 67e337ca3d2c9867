//! The seed client's flow: initialize, list tools, call `long_running_task` as a task,
//! follow its status until terminal, print the result; and what it answers when the server
//! asks for input mid-task ([`elicitation_answer`]).

use std::time::Instant;

use serde_json::{json, Map, Value};
use taskwire_driver::engine::{PlainReason, RpcError, TaskStatus};
use taskwire_driver::{Client, ElicitationAnswer, ElicitationMode, ElicitationRequest, TaskUpdate};

use crate::tools::TOOL;

/// The seed's requested retention.
pub const TTL_MS: u64 = 60_000;

/// Runs the flow, printing each step through `print` with the elapsed time.
/// Returns whether the call ended with a result that is not a tool error.
pub async fn run(client: &Client, print: impl FnMut(String)) -> Result<bool, RpcError> {
    run_since(client, Instant::now(), print).await
}

/// [`run`], its times counted from `start` (so that other lines can share the clock).
pub async fn run_since(
    client: &Client,
    start: Instant,
    mut print: impl FnMut(String),
) -> Result<bool, RpcError> {
    let mut say = |text: String| print(stamped(start, &text));
    let init = client.initialize().await?;
    say(format!(
        "connected to {} {} (protocol {})",
        init.server.name, init.server.version, init.protocol_version
    ));
    let tools = client.list_tools().await?;
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    say(format!("tools: {names:?}"));
    say(format!("calling {TOOL} as a task (ttl {TTL_MS} ms)"));
    let call = client
        .call_tool_as_task(TOOL, json!({}), Some(TTL_MS))
        .await?;
    let mut status = match &call.task {
        Some(task) => {
            say(format!("task created: {}", task.id));
            say(status_line(task.status, task.status_message.as_deref()));
            task.status
        }
        None => {
            say(match call.plain {
                Some(reason) => format!("calling it without a task: {}", plain_reason(reason)),
                None => "the server ran the call without a task".into(),
            });
            TaskStatus::Completed
        }
    };
    while let Ok(update) = call.updates.recv().await {
        match update {
            TaskUpdate::Status(task) | TaskUpdate::Message(task) => {
                status = task.status;
                say(status_line(task.status, task.status_message.as_deref()));
            }
            TaskUpdate::Result(Ok(result)) => {
                say(format!(
                    "result{}: {}",
                    if result.is_error { " (error)" } else { "" },
                    result.all_text()
                ));
                // The result is the outcome, even when it came before a poll showed the
                // task terminal (e.g. right after input was given).
                return Ok(!result.is_error);
            }
            TaskUpdate::Result(Err(error)) => {
                // As JSON-RPC puts it: `MESSAGE (CODE)`.
                let error = RpcError::from(error);
                say(format!("task ended with status {status}: {error}"));
                return Ok(false);
            }
            _ => {}
        }
    }
    say("the connection closed before the task finished".into());
    Ok(false)
}

/// `[  1.003s] TEXT`: `text` stamped with the time since `start`.
pub fn stamped(start: Instant, text: &str) -> String {
    format!("[{:>6.3}s] {text}", start.elapsed().as_secs_f64())
}

/// What an unattended client answers to `elicitation/create`: a form whose required fields
/// all have a `default` is accepted with every default given; anything else is declined.
pub fn elicitation_answer(request: &ElicitationRequest) -> ElicitationAnswer {
    let ElicitationMode::Form { requested_schema } = &request.mode else {
        return ElicitationAnswer::Decline;
    };
    let defaults = schema_defaults(requested_schema);
    let required = requested_schema["required"]
        .as_array()
        .map_or(&[][..], Vec::as_slice);
    let answerable = required
        .iter()
        .all(|r| r.as_str().is_some_and(|r| defaults.contains_key(r)));
    if answerable {
        ElicitationAnswer::Accept(defaults)
    } else {
        ElicitationAnswer::Decline
    }
}

/// The `default` of each property of a form's schema that has one, by property name.
pub fn schema_defaults(schema: &Value) -> Map<String, Value> {
    schema["properties"]
        .as_object()
        .into_iter()
        .flatten()
        .filter_map(|(name, field)| Some((name.clone(), field.get("default")?.clone())))
        .collect()
}

/// The line for an input request and the answer given: `input requested: MESSAGE - ACTION`.
pub fn input_line(request: &ElicitationRequest, answer: &ElicitationAnswer) -> String {
    format!("input requested: {} - {}", request.message, answer.action())
}

fn plain_reason(reason: PlainReason) -> &'static str {
    match reason {
        PlainReason::NoTaskCapability => "the server offers no tool tasks",
        PlainReason::ToolForbidsTasks => "the tool does not run as a task",
        PlainReason::TaskRefused => "the server refused a task for it",
        _ => "the server does not run it as a task",
    }
}

fn status_line(status: TaskStatus, message: Option<&str>) -> String {
    format!("status: {status} - {}", message.unwrap_or(""))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elicitation_is_accepted_with_defaults_or_declined() {
        let form = |required: Value| {
            let params = json!({ "message": "Go?", "requestedSchema": { "type": "object",
                "required": required,
                "properties": { "go": { "type": "boolean", "default": true },
                                "why": { "type": "string" } } } });
            ElicitationRequest::from_params(params).unwrap()
        };
        let accepted = elicitation_answer(&form(json!(["go"])));
        let go = ElicitationAnswer::accept(&json!({ "go": true })).unwrap();
        assert_eq!(accepted, go);
        assert_eq!(
            input_line(&form(json!(["go"])), &accepted),
            "input requested: Go? - accept"
        );
        let declined = ElicitationAnswer::Decline;
        assert_eq!(elicitation_answer(&form(json!(["go", "why"]))), declined);
        let url = json!({ "mode": "url", "message": "Sign in", "url": "https://example.com" });
        let url = ElicitationRequest::from_params(url).unwrap();
        assert_eq!(elicitation_answer(&url), declined);
        assert_eq!(elicitation_answer(&form(json!([]))).action(), "accept");
    }
}
