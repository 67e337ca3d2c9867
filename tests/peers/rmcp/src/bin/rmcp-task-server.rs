//! `rmcp-task-server`: an MCP server on rmcp 3.11 that serves the 2026 tasks extension
//! (`io.modelcontextprotocol/tasks`) with rmcp's own `TaskManager`, on stdio or over Streamable
//! HTTP.
//!
//! ```text
//! rmcp-task-server [--step-ms N] [--http ADDR [--json-response]]
//! ```
//!
//! Tools:
//! - `long_running_task` (no arguments): three steps of `--step-ms` ms each (default 1000), then
//!   one text block "任务完成！". When the `tools/call` declares the tasks extension (in its
//!   `_meta` client capabilities, or in `initialize` for a legacy session) it becomes a task whose
//!   status message names the current step and which stops at `tasks/cancel`; otherwise it runs
//!   synchronously.
//! - `echo`: returns its `text` argument as one text block, never as a task.
//!
//! rmcp serves both eras on one connection: `initialize` starts a legacy session, and a first
//! request with complete 2026 `_meta` starts a stateless one. The server stops at the end of stdin.
//!
//! With `--http ADDR` it serves `http://ADDR/mcp` with rmcp's `StreamableHttpService` instead
//! (see `serve_http.rs`): `initialize` opens a legacy session, a request with complete 2026
//! `_meta` is served statelessly; every session and request gets a clone of the server, and
//! the clones share one `TaskManager`, so a task created by one POST is found by the next.
//! It prints `listening on http://ADDR/mcp` on stderr and runs until killed.

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CancelTaskParams, ContentBlock,
    CreateTaskResult, GetTaskParams, GetTaskResult, Implementation, JsonObject, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool, UpdateTaskParams,
};
use rmcp::service::RequestContext;
use rmcp::task_manager::{TaskExit, TaskManager, TaskOptions};
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::{json, Value};

#[path = "../serve_http.rs"]
mod serve_http;

/// The status message of each step, in order.
const STEPS: [&str; 3] = ["开始执行...", "处理步骤 1...", "处理步骤 2..."];
/// The text `long_running_task` returns.
const RESULT: &str = "任务完成！";

/// The tools and the tasks. Its clones (one per HTTP session or stateless request) share the
/// `TaskManager` (an `Arc` inside).
#[derive(Clone)]
struct TaskServer {
    tools: Vec<Tool>,
    tasks: TaskManager,
    step: Duration,
}

impl TaskServer {
    fn new(step: Duration) -> Self {
        let tools = vec![
            Tool::new(
                "long_running_task",
                "Runs three steps, reporting each as the task's status message.",
                object(json!({ "type": "object", "properties": {} })),
            ),
            Tool::new(
                "echo",
                "Returns its `text` argument.",
                object(json!({
                    "type": "object",
                    "properties": { "text": { "type": "string" } },
                    "required": ["text"]
                })),
            ),
        ];
        TaskServer {
            tools,
            tasks: TaskManager::new(),
            step,
        }
    }

    /// Starts `long_running_task` as a task and returns its seed state.
    fn spawn_long_running(&self) -> CreateTaskResult {
        let step = self.step;
        // Poll twice per step, so that a client honouring the interval sees every message.
        let poll_ms = u64::try_from(step.as_millis() / 2)
            .unwrap_or(u64::MAX)
            .max(1);
        let options = TaskOptions::new()
            .with_poll_interval_ms(poll_ms)
            .with_status_message(STEPS[0]);
        let task = self.tasks.spawn(options, move |ctx| {
            Box::pin(async move {
                tokio::select! {
                    () = ctx.cancelled() => Err(TaskExit::Cancelled),
                    result = run_steps(step, |message| ctx.set_status_message(message)) => Ok(result),
                }
            })
        });
        CreateTaskResult::new(task)
    }
}

/// The work of `long_running_task`: `report` gets each step's message as the step starts.
async fn run_steps(step: Duration, report: impl Fn(&'static str)) -> CallToolResult {
    for message in STEPS {
        report(message);
        tokio::time::sleep(step).await;
    }
    CallToolResult::success(vec![ContentBlock::text(RESULT)])
}

/// The object inside a JSON object literal.
fn object(value: Value) -> Arc<JsonObject> {
    let Value::Object(map) = value else {
        unreachable!("the schema literals are objects")
    };
    Arc::new(map)
}

impl ServerHandler for TaskServer {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tasks()
            .build();
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new("rmcp-task-server", "3.11.0"))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools.clone()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        match request.name.as_ref() {
            "long_running_task" => {
                let declares_tasks = context
                    .client_capabilities()
                    .is_some_and(|capabilities| capabilities.supports_tasks());
                if declares_tasks {
                    Ok(CallToolResponse::Task(self.spawn_long_running()))
                } else {
                    Ok(run_steps(self.step, |_| {}).await.into())
                }
            }
            "echo" => {
                let text = request
                    .arguments
                    .as_ref()
                    .and_then(|arguments| arguments.get("text"))
                    .and_then(Value::as_str)
                    .ok_or_else(|| ErrorData::invalid_params("echo needs a string `text`", None))?;
                Ok(CallToolResult::success(vec![ContentBlock::text(text)]).into())
            }
            name => Err(ErrorData::invalid_params(
                format!("unknown tool: {name}"),
                None,
            )),
        }
    }

    // rmcp answers these three with -32601 unless overridden, and checks beforehand that the
    // request declares the extension (-32021 otherwise).

    async fn get_task(
        &self,
        request: GetTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        Ok(GetTaskResult::new(self.tasks.get_task(&request.task_id)?))
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.tasks
            .update_task(&request.task_id, request.input_responses)
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.tasks.cancel_task(&request.task_id)
    }
}

/// What the command line asked for.
struct Args {
    /// The step length (`--step-ms N`, default 1000 ms).
    step: Duration,
    /// `--http ADDR [--json-response]`; stdio when absent.
    http: Option<serve_http::HttpOptions>,
}

const USAGE: &str = "usage: rmcp-task-server [--step-ms N] [--http ADDR [--json-response]]";

fn parse_args() -> Result<Args, String> {
    let mut step = Duration::from_millis(1000);
    let mut address = None;
    let mut json_response = false;
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
            "--http" => address = Some(args.next().ok_or("--http needs an address")?),
            "--json-response" => json_response = true,
            other => return Err(format!("unknown argument: {other}")),
        }
    }
    let http = match address {
        Some(address) => Some(serve_http::HttpOptions {
            address,
            json_response,
        }),
        None if json_response => return Err("--json-response needs --http".into()),
        None => None,
    };
    Ok(Args { step, http })
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = parse_args().unwrap_or_else(|message| {
        eprintln!("rmcp-task-server: {message}\n{USAGE}");
        std::process::exit(2)
    });
    let server = TaskServer::new(args.step);
    if let Some(options) = args.http {
        serve_http::serve(server, options).await?;
        return Ok(());
    }
    let service = server.serve(rmcp::transport::stdio_pipes()).await?;
    service.waiting().await?;
    Ok(())
}
