//! `turbomcp-task-server`: a stdio MCP server on turbomcp 4.0.0-alpha.5 that serves the 2026
//! tasks extension (`io.modelcontextprotocol/tasks`) with turbomcp's own `TasksExtension`
//! (crate `turbomcp-ext-tasks`).
//!
//! ```text
//! turbomcp-task-server [--step-ms N]
//! ```
//!
//! Tools:
//! - `long_running_task` (no arguments): three steps of `--step-ms` ms each (default 1000), then
//!   one text block "任务完成！". When the `tools/call` declares the tasks extension in its
//!   per-request `_meta` client capabilities, `TasksExtension` turns it into a task that stops at
//!   `tasks/cancel`; otherwise it runs synchronously. turbomcp gives a running task no way to set
//!   its status message (the store sets `statusMessage` only on failure and on cancel), so the
//!   step messages "开始执行...", "处理步骤 1...", "处理步骤 2..." are not reported.
//! - `echo`: returns its `text` argument as one text block, never as a task.
//!
//! The dispatcher is wrapped in `LegacySessionAdapter`, so the server speaks both eras on one
//! connection: requests with 2026 per-request `_meta` (after `server/discover` or without it) are
//! served statelessly, `initialize` starts a 2025-11-25 session (where `long_running_task` is
//! never a task: the legacy path has core tasks only for `#[tool(task)]` tools, and this one is
//! not marked). The server stops at the end of stdin.

use std::sync::Arc;
use std::time::Duration;

use turbomcp::prelude::*;
use turbomcp::{LegacySessionAdapter, serve_stdio};
use turbomcp_ext_tasks::TasksExtension;

/// The status message of each step, in order (not reportable through turbomcp; see above).
const STEPS: [&str; 3] = ["开始执行...", "处理步骤 1...", "处理步骤 2..."];
/// The text `long_running_task` returns.
const RESULT: &str = "任务完成！";

#[derive(Clone)]
struct TaskServer {
    step: Duration,
}

#[server(name = "turbomcp-task-server", version = "4.0.0-alpha.5")]
impl TaskServer {
    /// Runs three steps, then returns "任务完成！".
    #[tool(
        description = "Runs three steps, then returns 任务完成！ (a task when the request declares the tasks extension)."
    )]
    async fn long_running_task(&self, ctx: &CallToolContext) -> McpResult<String> {
        // As a task, `ctx.base.cancellation` is the token `tasks/cancel` fires (the task is
        // already `cancelled` in the store, so the error below is dropped); synchronously it is
        // the request's own, fired by `notifications/cancelled`.
        let cancelled = ctx.base.cancellation.clone();
        for _message in STEPS {
            tokio::select! {
                () = cancelled.cancelled() => {
                    // The dispatcher races this future against the same token in an unbiased
                    // `select!` and answers whichever is ready first; being still pending on
                    // the poll that sees the token keeps a cancelled synchronous call unanswered.
                    tokio::task::yield_now().await;
                    return Err(McpError::internal("long_running_task was cancelled"));
                }
                () = tokio::time::sleep(self.step) => {}
            }
        }
        Ok(RESULT.to_owned())
    }

    /// Returns its `text` argument.
    #[tool(description = "Returns its `text` argument.")]
    async fn echo(&self, text: String) -> McpResult<String> {
        Ok(text)
    }
}

/// The step length from `--step-ms N` (default 1000 ms).
fn parse_args() -> Result<Duration, String> {
    let mut step = Duration::from_millis(1000);
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--step-ms" => {
                let value = args.next().ok_or("--step-ms needs a value")?;
                let ms = value
                    .parse()
                    .map_err(|_| format!("--step-ms: not a number of milliseconds: {value}"))?;
                step = Duration::from_millis(ms);
            }
            other => return Err(format!("unknown argument: {other}")),
        }
    }
    Ok(step)
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let step = parse_args().unwrap_or_else(|message| {
        eprintln!("turbomcp-task-server: {message}\nusage: turbomcp-task-server [--step-ms N]");
        std::process::exit(2)
    });
    // Poll twice per step, so that a client honouring the interval sees every change.
    let poll_ms = i64::try_from(step.as_millis() / 2)
        .unwrap_or(i64::MAX)
        .max(1);
    let tasks = TasksExtension::new()
        .task_tools(["long_running_task"])
        .poll_interval_ms(Some(poll_ms));
    let dispatcher = TaskServer { step }
        .into_server()
        .with_extension(Arc::new(tasks))
        .build();
    serve_stdio(LegacySessionAdapter::new(dispatcher)).await?;
    Ok(())
}
