//! The demo server: the seed's `long_running_task`, its unknown-tool answer, and `demo-task`.

use std::time::Duration;

use serde_json::{json, Value};
use taskwire_driver::engine::{Config, RpcError, Session, TaskSupport, Tool, UsageError};
use taskwire_driver::{Server, ToolContext};

/// The seed's tool name.
pub const TOOL: &str = "long_running_task";
/// A second tool with taskSupport "required" (for clients that only run such tools as tasks).
pub const REQUIRED_TOOL: &str = "long_running_task_required";
/// The seed's result text.
pub const RESULT_TEXT: &str = "任务完成！";
/// The seed's status messages, one second apart.
pub const STEPS: [&str; 3] = ["开始执行...", "处理步骤 1...", "处理步骤 2..."];
/// The pre-created completed task.
pub const DEMO_TASK: &str = "demo-task";

const DESCRIPTION: &str = "一个需要几秒钟完成的任务，会输出进度状态。支持普通调用和任务调用。";

/// The demo server; `step` is the pause between status messages (one second in the seed).
pub fn server(step: Duration, required_tool: bool) -> Result<Server, UsageError> {
    let mut config = Config::new("task-server", env!("CARGO_PKG_VERSION"));
    config.tasks.poll_interval_ms = Some(500);
    let tool = Tool::new(TOOL, TaskSupport::Optional).with_description(DESCRIPTION);
    let mut server = Server::new(config)
        .tool(tool, move |ctx, _| long_running_task(ctx, step))
        .fallback(|ctx, _| async move {
            Ok(text_result(&format!("未知工具: {}", ctx.tool_name()), true))
        });
    if required_tool {
        let tool = Tool::new(REQUIRED_TOOL, TaskSupport::Required).with_description(DESCRIPTION);
        server = server.tool(tool, move |ctx, _| long_running_task(ctx, step));
    }
    server.setup(create_demo_task)
}

/// Three status messages `step` apart, then the result; a plain call just waits.
async fn long_running_task(ctx: ToolContext, step: Duration) -> Result<Value, RpcError> {
    for message in STEPS {
        ctx.set_status(message).await;
        ctx.sleep(step).await;
    }
    Ok(text_result(RESULT_TEXT, false))
}

/// `demo-task`: completed, message "已完成", kept 300 s, so that tasks/list shows something.
fn create_demo_task(
    session: &mut Session,
    now: taskwire_driver::engine::Millis,
) -> Result<(), UsageError> {
    session.create_task(now, DEMO_TASK, Some(300_000))?;
    session.update_task(now, DEMO_TASK, Some("已完成".into()))?;
    session.complete_task(
        now,
        DEMO_TASK,
        text_result("此任务用于List Tasks 功能", false),
    )
}

/// A `CallToolResult` holding one text block.
pub fn text_result(text: &str, is_error: bool) -> Value {
    let mut result = json!({ "content": [{ "type": "text", "text": text }] });
    if is_error {
        result["isError"] = json!(true);
    }
    result
}
