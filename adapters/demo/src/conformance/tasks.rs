//! The tools the tasks scenarios call (`@modelcontextprotocol/conformance@0.2.0-alpha.12`;
//! `../shared/spec/tasks-ext-2026.md` §5.3). Each tool's task policy is what the scenarios
//! expect of it: `greet` never a task, `slow_compute` a task when the request declares the
//! extension, the rest task-only; `test_tool_with_task` asks first (MRTR) and then becomes a
//! task.

use std::time::Duration;

use serde::Deserialize;
use serde_json::{json, Value};
use taskwire_driver::engine::{RpcError, TaskSupport};
use taskwire_driver::{CallToolResult, NoArgs, Server, ToolContext, ToolOutcome};

use super::tool;

#[derive(Deserialize)]
struct GreetArgs {
    name: String,
}

#[derive(Deserialize)]
struct SlowArgs {
    /// How long to work (whole or fractional seconds, at most an hour).
    seconds: f64,
    #[serde(default)]
    label: Option<String>,
}

#[derive(Deserialize)]
struct DeleteArgs {
    filename: String,
}

/// Adds the tasks scenarios' tools.
pub(super) fn add(server: Server) -> Server {
    let none = json!({ "type": "object" });
    server
        .tool(
            tool(
                "greet",
                TaskSupport::Forbidden,
                "Greets synchronously.",
                json!({ "type": "object", "properties": { "name": { "type": "string" } },
                        "required": ["name"] }),
            ),
            |_ctx, args: GreetArgs| async move {
                Ok(CallToolResult::text(format!("Hello, {}!", args.name)))
            },
        )
        .tool(
            tool(
                "slow_compute",
                TaskSupport::Optional,
                "Works for `seconds`; a task when the request declares the tasks extension.",
                json!({ "type": "object", "properties": {
                    "seconds": { "type": "number", "minimum": 0, "maximum": 3600 },
                    "label": { "type": "string" } }, "required": ["seconds"] }),
            ),
            slow_compute,
        )
        .tool(
            tool(
                "failing_job",
                TaskSupport::Required,
                "Task-only; ends after about a second with a tool error (isError).",
                none.clone(),
            ),
            |ctx: ToolContext, _: NoArgs| async move {
                ctx.sleep(Duration::from_secs(1)).await;
                Ok(CallToolResult::error("failing_job failed on purpose"))
            },
        )
        .tool(
            tool(
                "protocol_error_job",
                TaskSupport::Required,
                "Task-only; fails with a JSON-RPC error.",
                none.clone(),
            ),
            |ctx: ToolContext, _: NoArgs| async move {
                ctx.sleep(Duration::from_millis(300)).await;
                Err(RpcError::internal("protocol_error_job failed on purpose")
                    .with_data(json!({ "reason": "fixture" })))
            },
        )
        .tool(
            tool(
                "confirm_delete",
                TaskSupport::Required,
                "Task-only; asks to confirm the deletion of `filename`.",
                json!({ "type": "object", "properties": { "filename": { "type": "string" } },
                        "required": ["filename"] }),
            ),
            confirm_delete,
        )
        .tool(
            tool(
                "multi_input",
                TaskSupport::Required,
                "Task-only; asks two questions at once and completes once both are answered.",
                none.clone(),
            ),
            multi_input,
        )
        .tool_asking_first(
            tool(
                "test_tool_with_task",
                TaskSupport::Optional,
                "Asks for a name first (MRTR), then greets as a task.",
                none,
            ),
            test_tool_with_task,
        )
}

async fn slow_compute(ctx: ToolContext, args: SlowArgs) -> ToolOutcome {
    if !(0.0..=3600.0).contains(&args.seconds) {
        return Err(RpcError::invalid_params(
            "seconds must be between 0 and 3600",
        ));
    }
    ctx.sleep(Duration::from_secs_f64(args.seconds)).await;
    let label = args.label.unwrap_or_else(|| "slow_compute".into());
    Ok(CallToolResult::text(format!(
        "{label}: done after {} s",
        args.seconds
    )))
}

/// A form asking for the `fields`, each a required string or boolean.
fn form(message: &str, fields: &[(&str, &str)]) -> Value {
    let properties: serde_json::Map<String, Value> = fields
        .iter()
        .map(|(name, kind)| ((*name).to_owned(), json!({ "type": kind })))
        .collect();
    let required: Vec<&str> = fields.iter().map(|(name, _)| *name).collect();
    json!({ "mode": "form", "message": message, "requestedSchema": {
        "type": "object", "properties": properties, "required": required } })
}

fn accepted(answer: &Value) -> bool {
    answer["action"] == "accept"
}

async fn confirm_delete(ctx: ToolContext, args: DeleteArgs) -> ToolOutcome {
    ctx.set_status("waiting for confirmation").await;
    let question = form(
        &format!("Delete {}?", args.filename),
        &[("confirm", "boolean")],
    );
    let answer = ctx.elicit(question).await?;
    let confirmed = accepted(&answer) && answer["content"]["confirm"] == true;
    let text = match confirmed {
        true => format!("Deleted {}", args.filename),
        false => format!("Kept {}", args.filename),
    };
    Ok(CallToolResult::text(text))
}

async fn multi_input(ctx: ToolContext, _: NoArgs) -> ToolOutcome {
    let fields = [("name", "string"), ("confirm", "boolean")];
    let (first, second) = futures::join!(
        ctx.elicit(form("First: your name?", &fields)),
        ctx.elicit(form("Second: your name?", &fields)),
    );
    let names: Vec<String> = [first?, second?]
        .iter()
        .map(|a| a["content"]["name"].as_str().unwrap_or("?").to_owned())
        .collect();
    Ok(CallToolResult::text(format!("Got {}", names.join(" and "))))
}

async fn test_tool_with_task(ctx: ToolContext, _: NoArgs) -> ToolOutcome {
    let answer = ctx
        .elicit(form("What is your name?", &[("name", "string")]))
        .await?;
    let name = answer["content"]["name"]
        .as_str()
        .unwrap_or("stranger")
        .to_owned();
    // A task when the request declared the extension; plainly otherwise.
    let _ = ctx.start_task().await;
    Ok(CallToolResult::text(format!("Hello, {name}!")))
}
