//! The seed client's flow: initialize, list tools, call `long_running_task` as a task,
//! follow its status until terminal, print the result.

use std::time::Instant;

use serde_json::{json, Value};
use taskwire_driver::engine::{RpcError, TaskStatus};
use taskwire_driver::{Client, TaskUpdate};

use crate::tools::TOOL;

/// The seed's requested retention.
pub const TTL_MS: u64 = 60_000;

/// Runs the flow, printing each step through `print` with the elapsed time.
/// Returns whether the task completed with a non-error result.
pub async fn run(client: &Client, mut print: impl FnMut(String)) -> Result<bool, RpcError> {
    let start = Instant::now();
    let mut say = |text: String| print(format!("[{:>6.3}s] {text}", start.elapsed().as_secs_f64()));
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
            say("the server ran the call without a task".into());
            TaskStatus::Completed
        }
    };
    while let Ok(update) = call.updates.recv().await {
        match update {
            TaskUpdate::Status(task) => {
                status = task.status;
                say(status_line(task.status, task.status_message.as_deref()));
            }
            TaskUpdate::Result(Ok(result)) => {
                let failed = result.get("isError") == Some(&Value::Bool(true));
                say(format!(
                    "result{}: {}",
                    if failed { " (error)" } else { "" },
                    result_text(&result)
                ));
                return Ok(status == TaskStatus::Completed && !failed);
            }
            TaskUpdate::Result(Err(error)) => {
                say(format!("task ended with status {status}: {error}"));
                return Ok(false);
            }
        }
    }
    say("the connection closed before the task finished".into());
    Ok(false)
}

fn status_line(status: TaskStatus, message: Option<&str>) -> String {
    format!("status: {status} - {}", message.unwrap_or(""))
}

/// The text blocks of a `CallToolResult`, joined.
pub fn result_text(result: &Value) -> String {
    let blocks = result.get("content").and_then(Value::as_array);
    let texts: Vec<&str> = blocks
        .into_iter()
        .flatten()
        .filter_map(|b| b.get("text")?.as_str())
        .collect();
    texts.join("\n")
}
