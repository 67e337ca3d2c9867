//! The tools that show what users most need to see, behind `task-server --extra-tools` (so
//! the seed flow's output is unchanged without it):
//!
//! - [`CONFIRM_TASK`] asks the client to confirm by elicitation mid-task: the task shows
//!   `input_required`, then `working` again, and the answer ends up in the result.
//! - [`PROGRESS_TASK`] reports progress with a total at each step.

use std::time::Duration;

use serde::Deserialize;
use serde_json::{json, Value};
use taskwire_driver::engine::{TaskSupport, Tool};
use taskwire_driver::{CallToolResult, Server, ToolContext, ToolOutcome};

/// The tool that asks for a confirmation.
pub const CONFIRM_TASK: &str = "confirm_task";
/// The tool that reports progress.
pub const PROGRESS_TASK: &str = "progress_task";

/// `confirm_task`'s arguments.
#[derive(Deserialize)]
struct ConfirmArgs {
    /// What to ask (default: "Proceed?").
    #[serde(default)]
    question: Option<String>,
}

/// `progress_task`'s arguments.
#[derive(Deserialize)]
struct ProgressArgs {
    /// How many steps (default 3, at most 20).
    #[serde(default)]
    steps: Option<u32>,
}

/// `server` with [`CONFIRM_TASK`] and [`PROGRESS_TASK`]; `step` is the pause between steps.
pub fn add_tools(server: Server, step: Duration) -> Server {
    let confirm = Tool::new(CONFIRM_TASK, TaskSupport::Optional)
        .with_description(
            "Asks the client to confirm (elicitation), then answers with the decision.",
        )
        .with_input_schema(json!({
            "type": "object",
            "properties": { "question": { "type": "string" } }
        }));
    let progress = Tool::new(PROGRESS_TASK, TaskSupport::Optional)
        .with_description("Works in steps, reporting progress with a total at each.")
        .with_input_schema(json!({
            "type": "object",
            "properties": { "steps": { "type": "integer", "minimum": 1, "maximum": 20 } }
        }));
    server
        .tool(confirm, move |ctx, args: ConfirmArgs| {
            confirm_task(ctx, args, step)
        })
        .tool(progress, move |ctx, args: ProgressArgs| {
            progress_task(ctx, args, step)
        })
}

async fn confirm_task(ctx: ToolContext, args: ConfirmArgs, step: Duration) -> ToolOutcome {
    let question = args.question.unwrap_or_else(|| "Proceed?".into());
    ctx.set_status("waiting for confirmation").await;
    let answer = ctx
        .elicit(json!({
            "mode": "form",
            "message": question,
            "requestedSchema": {
                "type": "object",
                "properties": { "confirm": { "type": "boolean", "title": "Confirm" } },
                "required": ["confirm"]
            }
        }))
        .await?;
    ctx.set_status("confirmation received").await;
    ctx.sleep(step).await;
    let action = answer
        .get("action")
        .and_then(Value::as_str)
        .unwrap_or("none");
    let confirmed = action == "accept" && answer["content"]["confirm"] == json!(true);
    let text = if confirmed {
        format!("{question} confirmed")
    } else {
        format!("{question} not confirmed ({action})")
    };
    Ok(CallToolResult {
        structured_content: Some(json!({ "confirmed": confirmed, "action": action })),
        ..CallToolResult::text(text)
    })
}

async fn progress_task(ctx: ToolContext, args: ProgressArgs, step: Duration) -> ToolOutcome {
    let total = args.steps.unwrap_or(3).clamp(1, 20);
    for done in 1..=total {
        ctx.sleep(step).await;
        // A 2026-07-28 task shows it as its status message (that era has no task progress).
        let message = format!("step {done} of {total}");
        ctx.progress(f64::from(done), Some(f64::from(total)), Some(message))
            .await;
    }
    Ok(CallToolResult::text(format!("{total} steps done")))
}
