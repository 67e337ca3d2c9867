//! `rmcp-task-client`: an MCP client on rmcp 3.11 that runs `long_running_task` as a task of
//! the 2026 tasks extension (`io.modelcontextprotocol/tasks`), on stdio or over Streamable HTTP.
//!
//! ```text
//! rmcp-task-client [--cancel] [--lifecycle discover|auto|initialize] -- SERVER_CMD [ARGS...]
//! rmcp-task-client [--cancel] [--lifecycle discover|auto|initialize] --url URL
//! ```
//!
//! It spawns the server (or, with `--url`, speaks to the Streamable HTTP endpoint `URL` through
//! rmcp's `StreamableHttpClientTransport` on reqwest, its default configuration: over HTTP the
//! `discover` lifecycle sends stateless POSTs, no `Mcp-Session-Id`, no GET stream), connects
//! with rmcp's lifecycle (`discover`, the default: `server/discover`
//! for 2026-07-28, then per-request `_meta` on every request; `auto`: the same, falling back to
//! `initialize` for a legacy server; `initialize`: rmcp's plain `serve`, the legacy handshake),
//! declaring the tasks extension and nothing else. Then it calls `long_running_task`, expects a
//! `CreateTaskResult` and polls `tasks/get` at the server's `pollIntervalMs` until the task is
//! terminal. With `--cancel` it sends `tasks/cancel` right after creation, then polls the same way.
//!
//! Stdout gets one JSON object per line:
//!
//! ```text
//! {"event":"connected","lifecycle":"discover","protocolVersion":"2026-07-28","server":{"name":..,"version":..},"tasksExtension":true}
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

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CancelTaskParams, ClientCapabilities,
    ClientConfig, DetailedTask, GetTaskParams, Implementation, ProtocolVersion, Task, TaskPayload,
    TaskStatus,
};
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientLifecycleMode, ClientServiceExt, Peer, RoleClient};
use serde_json::{json, Value};

/// How long the client polls before it gives up on the task.
const POLL_DEADLINE: Duration = Duration::from_secs(60);
/// The poll interval when the server suggests none.
const DEFAULT_POLL_MS: u64 = 1000;

const USAGE: &str = "usage: rmcp-task-client [--cancel] [--lifecycle discover|auto|initialize] \
                     (-- SERVER_CMD [ARGS...] | --url URL)";

/// Where the server is.
enum Server {
    /// A command to spawn, spoken to on its stdio.
    Command(Vec<String>),
    /// A Streamable HTTP endpoint.
    Url(String),
}

struct Args {
    cancel: bool,
    lifecycle: &'static str,
    server: Server,
}

fn parse_args() -> Result<Args, String> {
    let mut args = std::env::args().skip(1);
    let mut cancel = false;
    let mut lifecycle = "discover";
    let mut url = None;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--cancel" => cancel = true,
            "--url" => url = Some(args.next().ok_or("--url needs a URL")?),
            "--lifecycle" => {
                lifecycle = match args.next().as_deref() {
                    Some("discover") => "discover",
                    Some("auto") => "auto",
                    Some("initialize") => "initialize",
                    other => {
                        let got = other.unwrap_or("nothing");
                        return Err(format!(
                            "--lifecycle takes discover, auto or initialize, not {got}"
                        ));
                    }
                }
            }
            "--" => break,
            other => return Err(format!("unknown argument: {other}")),
        }
    }
    let command: Vec<String> = args.collect();
    let server = match (url, command.is_empty()) {
        (Some(url), true) => Server::Url(url),
        (None, false) => Server::Command(command),
        (Some(_), false) => return Err("both --url and a server command".into()),
        (None, true) => return Err("no server command after --, and no --url".into()),
    };
    Ok(Args {
        cancel,
        lifecycle,
        server,
    })
}

/// The rmcp lifecycle named on the command line.
fn lifecycle_mode(name: &str) -> ClientLifecycleMode {
    let preferred_versions = vec![ProtocolVersion::V_2026_07_28];
    match name {
        "discover" => ClientLifecycleMode::Discover { preferred_versions },
        "auto" => ClientLifecycleMode::Auto {
            preferred_versions,
            legacy_version: None,
        },
        "initialize" => ClientLifecycleMode::Initialize,
        other => unreachable!("parse_args accepts no lifecycle {other}"),
    }
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
            eprintln!("rmcp-task-client: {message}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    match run(args).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("rmcp-task-client: {message}");
            ExitCode::FAILURE
        }
    }
}

async fn run(args: Args) -> Result<(), String> {
    let config = ClientConfig::new(
        ClientCapabilities::builder().enable_tasks().build(),
        Implementation::new("rmcp-task-client", "3.11.0"),
    );
    let lifecycle = lifecycle_mode(args.lifecycle);
    let connected = match &args.server {
        Server::Command(argv) => {
            let mut command = tokio::process::Command::new(&argv[0]);
            command.args(&argv[1..]);
            // The server's stderr is inherited.
            let transport = TokioChildProcess::new(command)
                .map_err(|error| format!("cannot start {}: {error}", argv[0]))?;
            config.serve_with_lifecycle(transport, lifecycle).await
        }
        Server::Url(url) => {
            let transport = StreamableHttpClientTransport::from_uri(url.as_str());
            config.serve_with_lifecycle(transport, lifecycle).await
        }
    };
    let client =
        connected.map_err(|error| format!("connecting ({} lifecycle): {error}", args.lifecycle))?;
    let server = client
        .peer_info()
        .ok_or("connected, but rmcp holds no server info")?;
    emit(json!({
        "event": "connected",
        "lifecycle": args.lifecycle,
        "protocolVersion": server.protocol_version,
        "server": server.server_info,
        "tasksExtension": server.capabilities.supports_tasks(),
    }));
    let outcome = run_task(client.peer(), args.cancel).await;
    // Closes the server's stdin and waits for it to exit (rmcp kills it after a timeout); over
    // HTTP, ends the transport (and a legacy session with `DELETE`).
    client
        .cancel()
        .await
        .map_err(|error| format!("shutting down: {error}"))?;
    outcome
}

/// Calls `long_running_task`, cancels it if asked to, and follows it to its end.
async fn run_task(peer: &Peer<RoleClient>, cancel: bool) -> Result<(), String> {
    let response = peer
        .call_tool_once(CallToolRequestParams::new("long_running_task"))
        .await
        .map_err(|error| format!("tools/call: {error}"))?;
    let seed = match response {
        CallToolResponse::Task(created) => created.task,
        CallToolResponse::Complete(result) => {
            emit_result(&result)?;
            return Err("tools/call was answered synchronously, not with a task".into());
        }
        CallToolResponse::InputRequired(_) => {
            return Err("tools/call asked for input (MRTR), which this client cannot give".into())
        }
        other => return Err(format!("tools/call: unexpected response {other:?}")),
    };
    emit(json!({
        "event": "created",
        "taskId": seed.task_id,
        "status": seed.status,
        "statusMessage": seed.status_message,
        "pollIntervalMs": seed.poll_interval_ms,
        "ttlMs": seed.ttl_ms,
    }));
    if cancel {
        peer.cancel_task(CancelTaskParams::new(seed.task_id.clone()))
            .await
            .map_err(|error| format!("tasks/cancel: {error}"))?;
        emit(json!({ "event": "cancel_acked" }));
    }
    let last = poll_until_terminal(peer, &seed).await?;
    match last.payload {
        TaskPayload::Completed { result } => {
            let result: CallToolResult =
                serde_json::from_value(Value::Object(result)).map_err(|error| {
                    format!("the completed task's result is no CallToolResult: {error}")
                })?;
            emit_result(&result)?;
            if cancel {
                return Err("the task completed despite tasks/cancel".into());
            }
            Ok(())
        }
        TaskPayload::Cancelled => {
            emit(json!({ "event": "cancelled" }));
            if !cancel {
                return Err("the task was cancelled, though this client never cancelled it".into());
            }
            Ok(())
        }
        TaskPayload::Failed { error } => {
            emit(json!({ "event": "failed", "error": error }));
            Err("the task failed".into())
        }
        other => Err(format!(
            "terminal status with a non-terminal payload: {other:?}"
        )),
    }
}

/// Emits a tool result's first text block; an error if it has none.
fn emit_result(result: &CallToolResult) -> Result<(), String> {
    let text = result
        .content
        .iter()
        .find_map(|block| block.as_text())
        .ok_or("the tool result has no text block")?;
    emit(json!({
        "event": "result",
        "text": text.text,
        "isError": result.is_error.unwrap_or(false),
    }));
    Ok(())
}

/// Polls `tasks/get` until the task is terminal, emitting each change of status or message.
async fn poll_until_terminal(peer: &Peer<RoleClient>, seed: &Task) -> Result<DetailedTask, String> {
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
        tokio::time::sleep(Duration::from_millis(interval.unwrap_or(DEFAULT_POLL_MS))).await;
        let detailed = peer
            .get_task(GetTaskParams::new(seed.task_id.clone()))
            .await
            .map_err(|error| format!("tasks/get: {error}"))?
            .task;
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
