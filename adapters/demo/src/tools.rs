//! The demo server: the seed's `long_running_task`, its unknown-tool answer, and `demo-task`;
//! optionally a `required` twin of the tool, the tools that show input and progress
//! ([`crate::extra_tools`]) and the benchmark fixture ([`crate::bench_tools`]).

use std::time::Duration;

use serde_json::{json, Value};
use taskwire_driver::engine::{Config, Host, Owner, TaskSupport, Tool, UsageError};
use taskwire_driver::{CallToolResult, NoArgs, Server, ToolContext, ToolOutcome};

use crate::{bench_tools, extra_tools};

/// The seed's tool name.
pub const TOOL: &str = "long_running_task";
/// A second tool with taskSupport "required" (for clients that only run such tools as tasks).
pub const REQUIRED_TOOL: &str = "long_running_task_required";
/// The seed's result text.
pub const RESULT_TEXT: &str = "任务完成！";
/// The seed's status messages, one second apart.
pub const STEPS: [&str; 3] = ["开始执行...", "处理步骤 1...", "处理步骤 2..."];
/// The status message a task of the tool ends with, set one step after the last of
/// [`STEPS`], an instant before the result: the engine keeps a task's last message when the
/// task completes, so without it a completed task would still show the last working step.
/// (A tool cannot give the completion a message of its own, so this one goes out first as one
/// more `working` update.)
pub const DONE_MESSAGE: &str = "处理完成";
/// The status message of a task cancelled by `tasks/cancel` (the engine's default is
/// English; the demo speaks Chinese throughout).
pub const CANCELLED_MESSAGE: &str = "已按请求取消";
/// The pre-created completed task.
pub const DEMO_TASK: &str = "demo-task";

/// The description of [`TOOL`] (taskSupport `"optional"`).
pub const DESCRIPTION: &str = "一个需要几秒钟完成的任务，会输出进度状态。支持普通调用和任务调用。";
/// The description of [`REQUIRED_TOOL`] (taskSupport `"required"`: never a plain call).
pub const REQUIRED_DESCRIPTION: &str = "一个需要几秒钟完成的任务，会输出进度状态。只支持任务调用。";

/// What the demo server offers besides the seed's tool.
#[derive(Clone, Copy, Debug)]
pub struct ServerOptions {
    /// The pause between status messages (one second in the seed).
    pub step: Duration,
    /// Adds [`REQUIRED_TOOL`] (`--required-tool`).
    pub required_tool: bool,
    /// Adds the benchmark tools and raises the task cap (`--bench-tools`).
    pub bench_tools: bool,
    /// Adds `confirm_task` and `progress_task` (`--extra-tools`).
    pub extra_tools: bool,
}

impl Default for ServerOptions {
    /// The seed's server: one-second steps, no extra tools.
    fn default() -> Self {
        ServerOptions {
            step: Duration::from_secs(1),
            required_tool: false,
            bench_tools: false,
            extra_tools: false,
        }
    }
}

/// The demo server with `options`.
pub fn server(options: ServerOptions) -> Result<Server, UsageError> {
    let ServerOptions {
        step,
        required_tool,
        bench_tools,
        extra_tools,
    } = options;
    let mut config = Config::new("task-server", env!("CARGO_PKG_VERSION"));
    config.tasks.poll_interval_ms = Some(500);
    config.tasks.cancelled_message = CANCELLED_MESSAGE.to_owned();
    if bench_tools {
        bench_tools::raise_limits(&mut config);
    }
    let tool = Tool::new(TOOL, TaskSupport::Optional).with_description(DESCRIPTION);
    let mut server = Server::new(config)
        .tool(tool, move |ctx, _: NoArgs| long_running_task(ctx, step))
        // Its work stopped with its process (a restart, a replica whose lease ran out): it
        // starts its steps over, saying which attempt it is.
        .resume(TOOL, move |ctx, _: NoArgs| long_running_task(ctx, step))
        .fallback(|ctx, _: Value| async move {
            Ok(CallToolResult::error(format!(
                "未知工具: {}",
                ctx.tool_name()
            )))
        });
    if required_tool {
        let tool =
            Tool::new(REQUIRED_TOOL, TaskSupport::Required).with_description(REQUIRED_DESCRIPTION);
        server = server
            .tool(tool, move |ctx, _: NoArgs| long_running_task(ctx, step))
            .resume(REQUIRED_TOOL, move |ctx, _: NoArgs| {
                long_running_task(ctx, step)
            });
    }
    if bench_tools {
        server = bench_tools::add_tools(server);
    }
    if extra_tools {
        server = extra_tools::add_tools(server, step);
    }
    server.setup(create_demo_task)
}

/// Three status messages `step` apart, then [`DONE_MESSAGE`] and the result; a plain call
/// just waits.
async fn long_running_task(ctx: ToolContext, step: Duration) -> ToolOutcome {
    let attempt = ctx.attempt();
    for message in STEPS {
        match attempt {
            1 => ctx.set_status(message).await,
            n => ctx.set_status(format!("{message}（第 {n} 次尝试）")).await,
        }
        ctx.sleep(step).await;
    }
    ctx.set_status(DONE_MESSAGE).await;
    Ok(CallToolResult::text(RESULT_TEXT))
}

/// `demo-task`: completed, message "已完成", kept 300 s, so that tasks/list shows something.
fn create_demo_task(
    host: &mut Host,
    now: taskwire_driver::engine::Millis,
) -> Result<(), UsageError> {
    let owner = Owner::from(taskwire_driver::STDIO_OWNER);
    let work = host.create_task(now, &owner, DEMO_TASK, Some(300_000))?;
    host.set_task_message(now, work, Some("已完成".into()))?;
    let result = CallToolResult::text("此任务用于List Tasks 功能");
    host.respond(now, work, Ok(json!(result)))
}
