//! `turbomcp-task-client`: a stdio MCP client on turbomcp 4.0.0-alpha.5 that runs
//! `long_running_task` as a task of the 2026 tasks extension (`io.modelcontextprotocol/tasks`).
//!
//! ```text
//! turbomcp-task-client [--cancel] -- SERVER_CMD [ARGS...]
//! ```
//!
//! It spawns the server (`connect_child`) and connects in turbomcp's `ConnectMode::Modern`
//! (one `server/discover` for 2026-07-28, then turbomcp's per-request `_meta` on every request),
//! declaring the tasks extension and elicitation (`{"elicitation":{},"extensions":
//! {"io.modelcontextprotocol/tasks":{}}}`). Then it calls `long_running_task` with the raw
//! `Client::request` (turbomcp's `call_tool` would drive the task to its end out of sight),
//! expects a `CreateTaskResult` and polls `Client::task_get` at the server's `pollIntervalMs`
//! until the task is terminal. With `--cancel` it sends `Client::task_cancel` right after
//! creation, then polls the same way. Replies are decoded with turbomcp's own wire types
//! (`turbomcp::ext_tasks::wire`).
//!
//! Stdout gets one JSON object per line, as `rmcp-task-client` prints them:
//!
//! ```text
//! {"event":"connected","lifecycle":"modern","protocolVersion":"2026-07-28","server":{"name":..,"version":..},"tasksExtension":true}
//! {"event":"created","taskId":"..","status":"working","statusMessage":"..","pollIntervalMs":500,"ttlMs":300000}
//! {"event":"cancel_acked"}                                   (--cancel)
//! {"event":"status","status":"working","statusMessage":".."} (each change seen by tasks/get)
//! {"event":"result","text":"..","isError":false}             (completed; also a synchronous answer)
//! {"event":"cancelled"}                                      (cancelled)
//! {"event":"failed","error":{..}}                            (failed)
//! ```
//!
//! Exit 0 when the run ends as expected: `completed` with a text block, or `cancelled` with
//! `--cancel`. Otherwise exit 1 with the reason on stderr (a synchronous answer, another terminal
//! status, `input_required`, a JSON-RPC error, no terminal status within 60 s); 2 on usage errors.

use std::process::ExitCode;
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};
use turbomcp_client::{Client, ClientBuilder, ConnectMode, connect_child};
use turbomcp_ext_tasks::EXTENSION_ID;
use turbomcp_ext_tasks::wire::{CreateTaskResult, DetailedTask, Task, TaskStatus};

/// How long the client polls before it gives up on the task.
const POLL_DEADLINE: Duration = Duration::from_secs(60);
/// The poll interval when the server suggests none.
const DEFAULT_POLL_MS: u64 = 1000;
/// How long the server gets to exit after its stdin is closed.
const EXIT_GRACE: Duration = Duration::from_secs(5);

const USAGE: &str = "usage: turbomcp-task-client [--cancel] -- SERVER_CMD [ARGS...]";

struct Args {
    cancel: bool,
    server: Vec<String>,
}

fn parse_args() -> Result<Args, String> {
    let mut args = std::env::args().skip(1);
    let mut cancel = false;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--cancel" => cancel = true,
            "--" => break,
            other => return Err(format!("unknown argument: {other}")),
        }
    }
    let server: Vec<String> = args.collect();
    if server.is_empty() {
        return Err("no server command after --".into());
    }
    Ok(Args { cancel, server })
}

/// Writes one event line to stdout.
fn emit(event: Value) {
    println!("{event}");
}

#[tokio::main]
async fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(args) => args,
        Err(message) => {
            eprintln!("turbomcp-task-client: {message}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    match run(args).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("turbomcp-task-client: {message}");
            ExitCode::FAILURE
        }
    }
}

async fn run(args: Args) -> Result<(), String> {
    let mut command = tokio::process::Command::new(&args.server[0]);
    // The server's stderr is inherited; connect_child pipes stdin and stdout.
    command.args(&args.server[1..]).kill_on_drop(true);
    let builder = ClientBuilder::new("turbomcp-task-client", "4.0.0-alpha.5")
        .with_connect_mode(ConnectMode::Modern)
        .with_capabilities(json!({
            "elicitation": {},
            "extensions": { EXTENSION_ID: {} },
        }));
    let (client, mut child) = connect_child(builder, command)
        .await
        .map_err(|error| format!("connecting (modern, server/discover): {error}"))?;
    let tasks_extension = client
        .server_capabilities()
        .get("extensions")
        .and_then(|extensions| extensions.get(EXTENSION_ID))
        .is_some();
    emit(json!({
        "event": "connected",
        "lifecycle": "modern",
        "protocolVersion": client.protocol_version().as_str(),
        "server": client.server_info(),
        "tasksExtension": tasks_extension,
    }));
    let outcome = run_task(&client, args.cancel).await;
    // Closes the server's stdin and waits for it to exit (killed after EXIT_GRACE).
    client.close().await;
    match tokio::time::timeout(EXIT_GRACE, child.wait()).await {
        Ok(Ok(_status)) => {}
        Ok(Err(error)) => return Err(format!("waiting for the server: {error}")),
        Err(_) => {
            let _ = child.kill().await;
            if outcome.is_ok() {
                return Err(format!(
                    "the server did not exit within {}s of the end of its stdin",
                    EXIT_GRACE.as_secs()
                ));
            }
        }
    }
    outcome
}

/// Calls `long_running_task`, cancels it if asked to, and follows it to its end.
async fn run_task(client: &Client, cancel: bool) -> Result<(), String> {
    let mut params = Map::new();
    params.insert("name".into(), json!("long_running_task"));
    params.insert("arguments".into(), json!({}));
    let response = client
        .request("tools/call", params)
        .await
        .map_err(|error| format!("tools/call: {error}"))?;
    // An absent resultType is "complete" (a legacy-shaped answer).
    match response.get("resultType").and_then(Value::as_str) {
        Some("task") => {}
        None | Some("complete") => {
            emit_result(&response)?;
            return Err("tools/call was answered synchronously, not with a task".into());
        }
        Some("input_required") => {
            return Err("tools/call asked for input (MRTR), which this client cannot give".into());
        }
        Some(other) => {
            return Err(format!(
                "tools/call: unknown resultType {other:?}: {response}"
            ));
        }
    }
    let created: CreateTaskResult = serde_json::from_value(response.clone())
        .map_err(|error| format!("tools/call: not a CreateTaskResult ({error}): {response}"))?;
    let seed = created.task;
    emit(json!({
        "event": "created",
        "taskId": seed.task_id,
        "status": seed.status,
        "statusMessage": seed.status_message,
        "pollIntervalMs": seed.poll_interval_ms,
        "ttlMs": seed.ttl_ms,
    }));
    if cancel {
        client
            .task_cancel(&seed.task_id)
            .await
            .map_err(|error| format!("tasks/cancel: {error}"))?;
        emit(json!({ "event": "cancel_acked" }));
    }
    let last = poll_until_terminal(client, &seed).await?;
    match last.task.status {
        TaskStatus::Completed => {
            let result = last.result.ok_or("the completed task carries no result")?;
            emit_result(&result)?;
            if cancel {
                return Err("the task completed despite tasks/cancel".into());
            }
            Ok(())
        }
        TaskStatus::Cancelled => {
            emit(json!({ "event": "cancelled" }));
            if !cancel {
                return Err("the task was cancelled, though this client never cancelled it".into());
            }
            Ok(())
        }
        TaskStatus::Failed => {
            emit(json!({ "event": "failed", "error": last.error }));
            Err("the task failed".into())
        }
        other => Err(format!("poll ended on the non-terminal status {other:?}")),
    }
}

/// Emits a tool result's first text block; an error if it has none.
fn emit_result(result: &Value) -> Result<(), String> {
    let text = result
        .get("content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .find(|block| block.get("type").and_then(Value::as_str) == Some("text"))
        .and_then(|block| block.get("text"))
        .and_then(Value::as_str)
        .ok_or_else(|| format!("the tool result has no text block: {result}"))?;
    emit(json!({
        "event": "result",
        "text": text,
        "isError": result.get("isError").and_then(Value::as_bool).unwrap_or(false),
    }));
    Ok(())
}

/// Polls `tasks/get` until the task is terminal, emitting each change of status or message.
async fn poll_until_terminal(client: &Client, seed: &Task) -> Result<DetailedTask, String> {
    let deadline = Instant::now() + POLL_DEADLINE;
    let mut seen = (seed.status, seed.status_message.clone());
    let mut interval = seed.poll_interval_ms;
    loop {
        if Instant::now() >= deadline {
            return Err(format!(
                "no terminal status within {}s",
                POLL_DEADLINE.as_secs()
            ));
        }
        let wait = interval
            .and_then(|ms| u64::try_from(ms).ok())
            .unwrap_or(DEFAULT_POLL_MS);
        tokio::time::sleep(Duration::from_millis(wait)).await;
        let reply = client
            .task_get(&seed.task_id)
            .await
            .map_err(|error| format!("tasks/get: {error}"))?;
        let detailed: DetailedTask = serde_json::from_value(reply.clone())
            .map_err(|error| format!("tasks/get: not a DetailedTask ({error}): {reply}"))?;
        if detailed.result_type != "complete" {
            return Err(format!(
                "tasks/get answered resultType {:?}, not \"complete\"",
                detailed.result_type
            ));
        }
        let task = &detailed.task;
        if task.task_id != seed.task_id {
            return Err(format!(
                "tasks/get for {} answered task {}",
                seed.task_id, task.task_id
            ));
        }
        // The latest suggestion wins (it may change over the task's life).
        interval = task.poll_interval_ms.or(interval);
        let now = (task.status, task.status_message.clone());
        if now != seen {
            emit(json!({
                "event": "status",
                "status": task.status,
                "statusMessage": task.status_message,
            }));
            seen = now;
        }
        if task.status.is_terminal() {
            return Ok(detailed);
        }
        if task.status == TaskStatus::InputRequired {
            return Err("the task asks for input, which this client cannot give".into());
        }
    }
}
