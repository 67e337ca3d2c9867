//! The core scenarios' tools (`tools-call-*`, `elicitation-sep1034-defaults`,
//! `elicitation-sep1330-enums`, the pending `json-schema-2020-12`): each returns the reference
//! server's content, and those that log, report progress or ask the client do so mid-call.
//! None is ever a task.

use std::time::Duration;

use serde::Deserialize;
use serde_json::{json, Value};
use taskwire_driver::engine::{LogLevel, RpcError, TaskSupport};
use taskwire_driver::{
    CallToolResult, Content, NoArgs, ResourceBody, Server, ToolContext, ToolOutcome,
};

use super::{tool, TEST_IMAGE_BASE64};

/// The suite's audio: a minimal WAV (44 bytes), base64.
const TEST_AUDIO_BASE64: &str = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=";

/// The pause between a tool's reports (log messages, progress).
const STEP: Duration = Duration::from_millis(50);

/// How long `test_reconnection` takes: longer than `conformance-server --http` keeps a
/// response stream open (it polls, SEP-1699), so the client must resume the stream to get
/// the answer.
const RECONNECTION_PAUSE: Duration = Duration::from_millis(800);

#[derive(Deserialize)]
struct SamplingArgs {
    prompt: String,
}

#[derive(Deserialize)]
struct ElicitationArgs {
    message: String,
}

/// Adds the core scenarios' tools.
pub(super) fn add(server: Server) -> Server {
    let plain = |name: &str, description: &str| {
        let schema = json!({ "type": "object", "properties": {} });
        tool(name, TaskSupport::Forbidden, description, schema)
    };
    let one_string = |name: &str, description: &str, field: &str, about: &str| {
        let schema = json!({ "type": "object",
            "properties": { field: { "type": "string", "description": about } },
            "required": [field] });
        tool(name, TaskSupport::Forbidden, description, schema)
    };
    server
        .tool(
            plain("test_simple_text", "Tests simple text content response"),
            |_ctx, _: NoArgs| async {
                Ok(CallToolResult::text(
                    "This is a simple text response for testing.",
                ))
            },
        )
        .tool(
            plain(
                "test_reconnection",
                "Answers after 0.8 s: over HTTP its stream is ended first and resumed (SEP-1699)",
            ),
            |ctx, _: NoArgs| async move {
                ctx.sleep(RECONNECTION_PAUSE).await;
                Ok(CallToolResult::text("Reconnection test completed"))
            },
        )
        .tool(
            plain("test_image_content", "Tests image content response"),
            |_ctx, _: NoArgs| async { Ok(only(Content::image(TEST_IMAGE_BASE64, "image/png"))) },
        )
        .tool(
            plain("test_audio_content", "Tests audio content response"),
            |_ctx, _: NoArgs| async { Ok(only(Content::audio(TEST_AUDIO_BASE64, "audio/wav"))) },
        )
        .tool(
            plain(
                "test_embedded_resource",
                "Tests embedded resource content response",
            ),
            |_ctx, _: NoArgs| async {
                let text = ResourceBody::Text("This is an embedded resource content.".into());
                Ok(only(Content::embedded(
                    "test://embedded-resource",
                    "text/plain",
                    text,
                )))
            },
        )
        .tool(
            plain(
                "test_multiple_content_types",
                "Tests response with multiple content types (text, image, resource)",
            ),
            |_ctx, _: NoArgs| async {
                let json = ResourceBody::Text(r#"{"test":"data","value":123}"#.into());
                Ok(CallToolResult::text("Multiple content types test:")
                    .with(Content::image(TEST_IMAGE_BASE64, "image/png"))
                    .with(Content::embedded(
                        "test://mixed-content-resource",
                        "application/json",
                        json,
                    )))
            },
        )
        .tool(
            plain(
                "test_tool_with_logging",
                "Tests tool that emits log messages during execution",
            ),
            with_logging,
        )
        .tool(
            plain(
                "test_tool_with_progress",
                "Tests tool that reports progress notifications",
            ),
            with_progress,
        )
        .tool(
            plain("test_error_handling", "Tests error response handling"),
            |_ctx, _: NoArgs| async {
                Ok(CallToolResult::error(
                    "This tool intentionally returns an error for testing",
                ))
            },
        )
        .tool(
            one_string(
                "test_sampling",
                "Tests server-initiated sampling (LLM completion request)",
                "prompt",
                "The prompt to send to the LLM",
            ),
            sampling,
        )
        .tool(
            one_string(
                "test_elicitation",
                "Tests server-initiated elicitation (user input request)",
                "message",
                "The message to show the user",
            ),
            elicitation,
        )
        .tool(
            plain(
                "test_elicitation_sep1034_defaults",
                "Tests elicitation with default values per SEP-1034",
            ),
            |ctx, _: NoArgs| ask(ctx, defaults_form()),
        )
        .tool(
            plain(
                "test_elicitation_sep1330_enums",
                "Tests elicitation with enum schema improvements per SEP-1330",
            ),
            |ctx, _: NoArgs| ask(ctx, enums_form()),
        )
        .tool(
            tool(
                "json_schema_2020_12_tool",
                TaskSupport::Forbidden,
                "Tool with JSON Schema 2020-12 features for conformance testing (SEP-1613)",
                schema_2020_12(),
            ),
            |_ctx, args: Value| async move {
                Ok(CallToolResult::text(format!(
                    "JSON Schema 2020-12 tool called with: {args}"
                )))
            },
        )
}

/// SEP-1613: an input schema using 2020-12 keywords, listed exactly as written.
fn schema_2020_12() -> Value {
    json!({ "$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
        "$defs": { "address": { "type": "object", "properties": {
            "street": { "type": "string" }, "city": { "type": "string" } } } },
        "properties": { "name": { "type": "string" },
                        "address": { "$ref": "#/$defs/address" } },
        "additionalProperties": false })
}

/// A result holding just `content`.
fn only(content: Content) -> CallToolResult {
    CallToolResult::default().with(content)
}

async fn with_logging(ctx: ToolContext, _: NoArgs) -> ToolOutcome {
    let steps = [
        "Tool execution started",
        "Tool processing data",
        "Tool execution completed",
    ];
    for (n, step) in steps.into_iter().enumerate() {
        if n > 0 {
            ctx.sleep(STEP).await;
        }
        ctx.log(LogLevel::Info, None, json!(step)).await?;
    }
    Ok(CallToolResult::text(
        "Tool with logging executed successfully",
    ))
}

async fn with_progress(ctx: ToolContext, _: NoArgs) -> ToolOutcome {
    for (n, done) in [0.0, 50.0, 100.0].into_iter().enumerate() {
        if n > 0 {
            ctx.sleep(STEP).await;
        }
        let message = format!("Completed step {done} of 100");
        ctx.progress(done, Some(100.0), Some(message)).await;
    }
    // The TypeScript SDK client drops its progress handler as it reads the result, before its
    // queued handling of a notification read in the same chunk: on stdio the last progress
    // would be lost unless the result comes a moment later.
    ctx.sleep(STEP).await;
    Ok(CallToolResult::text(
        "Tool with progress executed successfully",
    ))
}

async fn sampling(ctx: ToolContext, args: SamplingArgs) -> ToolOutcome {
    let request = json!({
        "messages": [{ "role": "user", "content": { "type": "text", "text": args.prompt } }],
        "maxTokens": 100,
    });
    let answer = ctx.create_message(request).await?;
    let text = answer["content"]["text"].as_str().unwrap_or_default();
    Ok(CallToolResult::text(format!("LLM response: {text}")))
}

async fn elicitation(ctx: ToolContext, args: ElicitationArgs) -> ToolOutcome {
    let request = json!({ "message": args.message, "requestedSchema": {
        "type": "object",
        "properties": {
            "username": { "type": "string", "description": "User's response" },
            "email": { "type": "string", "description": "User's email address" } },
        "required": ["username", "email"] } });
    let answer = ctx.elicit(request).await?;
    Ok(CallToolResult::text(format!(
        "User response: action={}, content={}",
        answer["action"].as_str().unwrap_or("unknown"),
        content_of(&answer)
    )))
}

/// Asks with `request` and reports what came back.
async fn ask(ctx: ToolContext, request: Value) -> ToolOutcome {
    let answer = ctx.elicit(request).await?;
    let action = answer["action"]
        .as_str()
        .ok_or_else(|| RpcError::internal("the elicitation answer has no action"))?;
    Ok(CallToolResult::text(format!(
        "Elicitation completed: action={action}, content={}",
        content_of(&answer)
    )))
}

/// An `ElicitResult`'s content as JSON text (`{}` when it has none).
fn content_of(answer: &Value) -> String {
    answer.get("content").unwrap_or(&json!({})).to_string()
}

/// SEP-1034: a form whose every field has a default.
fn defaults_form() -> Value {
    json!({ "message": "Please review and update the form fields with defaults",
        "requestedSchema": { "type": "object", "properties": {
            "name": { "type": "string", "description": "User name", "default": "John Doe" },
            "age": { "type": "integer", "description": "User age", "default": 30 },
            "score": { "type": "number", "description": "User score", "default": 95.5 },
            "status": { "type": "string", "description": "User status",
                        "enum": ["active", "inactive", "pending"], "default": "active" },
            "verified": { "type": "boolean", "description": "Verification status",
                          "default": true } },
        "required": [] } })
}

/// SEP-1330: single and multiple choice, untitled, titled and legacy.
fn enums_form() -> Value {
    let titled = |label: &str| {
        json!([{ "const": "value1", "title": format!("First {label}") },
               { "const": "value2", "title": format!("Second {label}") },
               { "const": "value3", "title": format!("Third {label}") }])
    };
    json!({ "message": "Please select options from the enum fields",
        "requestedSchema": { "type": "object", "properties": {
            "untitledSingle": { "type": "string", "description": "Select one option",
                                "enum": ["option1", "option2", "option3"] },
            "titledSingle": { "type": "string", "description": "Select one option with titles",
                              "oneOf": titled("Option") },
            "legacyEnum": { "type": "string", "description": "Select one option (legacy)",
                            "enum": ["opt1", "opt2", "opt3"],
                            "enumNames": ["Option One", "Option Two", "Option Three"] },
            "untitledMulti": { "type": "array", "description": "Select multiple options",
                               "minItems": 1, "maxItems": 3,
                               "items": { "type": "string",
                                          "enum": ["option1", "option2", "option3"] } },
            "titledMulti": { "type": "array",
                             "description": "Select multiple options with titles",
                             "minItems": 1, "maxItems": 3,
                             "items": { "anyOf": titled("Choice") } } },
        "required": [] } })
}
