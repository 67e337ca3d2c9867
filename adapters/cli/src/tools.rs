//! `taskwire tools`: the server's tools, with their task support and input schema.

use serde_json::json;
use taskwire_driver::{ClientBuilder, TaskSupport};

use crate::args::ServerArgs;
use crate::connect;
use crate::display::Display;
use crate::exit::Exit;

/// Runs `taskwire tools`.
pub async fn run(server: ServerArgs, display: Display) -> Exit {
    let builder = ClientBuilder::new(connect::config(&server));
    let connected = match connect::connect(&server, builder, &display).await {
        Ok(connected) => connected,
        Err(unreached) => return crate::unreached(unreached, &display),
    };
    let tools = match connected.client.list_tools().await {
        Ok(tools) => tools,
        Err(e) => return crate::failed(&e, &display),
    };
    // A 2026-07-28 listing says nothing of tasks: the server decides at each call.
    let listed = connected.server.protocol_version != "2026-07-28";
    for tool in &tools {
        let support = match tool.execution.task_support {
            _ if !listed => "decided by the server",
            TaskSupport::Required => "required",
            TaskSupport::Optional => "optional",
            _ => "forbidden",
        };
        let event = json!({ "event": "tool", "tool": tool, "taskSupport": support });
        display.event(event, || format!("{}  (tasks: {support})", tool.name));
        if !display.is_json() {
            if let Some(description) = &tool.description {
                display.text(&format!("    {description}"));
            }
            let schema = serde_json::to_string(&tool.input_schema).unwrap_or_default();
            display.text(&format!("    input: {schema}"));
        }
    }
    Exit::Completed
}
