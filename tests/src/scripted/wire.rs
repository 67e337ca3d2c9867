//! What `scripted-server` writes: its handshake and tool list, results, its one request to
//! the client, timestamps; written by hand with `json!`, never through the engine's types.

use serde_json::{json, Value};

use super::{Scenario, ELICIT_ID, TASK_ID, TOOL};

pub(super) const RELATED_TASK: &str = "io.modelcontextprotocol/related-task";
pub(super) const METHOD_NOT_FOUND: i64 = -32601;
pub(super) const INVALID_PARAMS: i64 = -32602;

/// The `initialize` result: tool tasks declared when the scenario does.
pub(super) fn initialize_result(scenario: &Scenario) -> Value {
    let mut capabilities = json!({ "tools": {} });
    if scenario.tasks {
        capabilities["tasks"] = json!({ "requests": { "tools": { "call": {} } } });
    }
    json!({ "protocolVersion": "2025-11-25", "capabilities": capabilities,
            "serverInfo": { "name": "scripted-server", "version": "1.0.0" } })
}

/// The `tools/list` result: the one tool, with the scenario's `execution`.
pub(super) fn tools(scenario: &Scenario) -> Value {
    let mut tool = json!({ "name": TOOL, "description": "A scripted task.",
                           "inputSchema": { "type": "object" } });
    if let Some(execution) = scenario.execution {
        tool["execution"] = serde_json::from_str(execution).expect("rows hold JSON");
    }
    json!({ "tools": [tool] })
}

/// Whether a status is final.
pub(super) fn is_terminal(status: &str) -> bool {
    matches!(status, "completed" | "failed" | "cancelled")
}

/// A `CallToolResult` with one text block; a task's carries the related-task meta.
pub(super) fn text_result(text: &str, related: bool) -> Value {
    let mut result = json!({ "content": [{ "type": "text", "text": text }] });
    if related {
        result["_meta"] = json!({ RELATED_TASK: { "taskId": TASK_ID } });
    }
    result
}

/// Our `elicitation/create`: a confirmation with a default, tied to the task.
pub(super) fn elicitation() -> Value {
    json!({ "jsonrpc": "2.0", "id": ELICIT_ID, "method": "elicitation/create", "params": {
        "mode": "form", "message": "Proceed?",
        "requestedSchema": { "type": "object", "required": ["confirm"], "properties": {
            "confirm": { "type": "boolean", "title": "Confirm", "default": true } } },
        "_meta": { RELATED_TASK: { "taskId": TASK_ID } },
    }})
}

/// `ms` after 2025-11-25T00:00:00Z (within a day), as RFC 3339.
pub(super) fn rfc3339(ms: u64) -> String {
    let s = ms / 1000;
    let (h, m, sec) = ((s / 3600) % 24, (s / 60) % 60, s % 60);
    format!("2025-11-25T{h:02}:{m:02}:{sec:02}.{:03}Z", ms % 1000)
}
