//! What a client may ask of this server's tools: whether a `tools/call` goes out as a task,
//! from the server's capabilities and the tool's `execution.taskSupport` as last listed.

use std::collections::HashMap;

use serde_json::Value;

use super::types::declares;
use crate::model::{listed_support, PlainReason, TaskSupport};

/// A tool's task support as a server's `tools/list` wrote it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ToolSupport {
    Known(TaskSupport),
    /// `execution` is there, but with a `taskSupport` we cannot read (an unknown value).
    Unreadable,
}

/// Each listed tool's task support.
#[derive(Debug, Default)]
pub(super) struct PeerTools(HashMap<String, ToolSupport>);

/// How to send a `tools/call` the application wants as a task.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Plan {
    /// As a task; `fallback`: plainly again if refused with -32601.
    Task {
        fallback: bool,
    },
    Plain(PlainReason),
}

impl PeerTools {
    /// Remembers the tools of one `tools/list` page.
    pub fn learn(&mut self, page: &Value) {
        let Some(tools) = page.get("tools").and_then(Value::as_array) else {
            return;
        };
        for tool in tools {
            let Some(name) = tool.get("name").and_then(Value::as_str) else {
                continue;
            };
            let support = match tool.get("execution").map(listed_support) {
                None => ToolSupport::Known(TaskSupport::Forbidden),
                Some(Some(listed)) => ToolSupport::Known(listed.unwrap_or_default()),
                Some(None) => ToolSupport::Unreadable,
            };
            self.0.insert(name.to_owned(), support);
        }
    }

    /// How to call `tool` as a task on a server with `capabilities`.
    pub fn plan(&self, capabilities: &Value, tool: &str) -> Plan {
        if !declares(capabilities, &["tasks", "requests", "tools", "call"]) {
            return Plan::Plain(PlainReason::NoTaskCapability);
        }
        match self.0.get(tool) {
            Some(ToolSupport::Known(TaskSupport::Forbidden)) => {
                Plan::Plain(PlainReason::ToolForbidsTasks)
            }
            Some(ToolSupport::Unreadable) => Plan::Task { fallback: true },
            // Optional, required, or never listed: the application asked for a task.
            Some(ToolSupport::Known(_)) | None => Plan::Task { fallback: false },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const TASKS: &str = r#"{"tasks":{"requests":{"tools":{"call":{}}}}}"#;

    #[test]
    fn plans_follow_capabilities_and_listed_support() {
        let caps: Value = serde_json::from_str(TASKS).unwrap();
        let mut catalog = PeerTools::default();
        catalog.learn(&json!({ "tools": [
            { "name": "plain" },
            { "name": "null", "execution": null },
            { "name": "forb", "execution": { "taskSupport": "forbidden" } },
            { "name": "opt", "execution": { "taskSupport": "optional" } },
            { "name": "req", "execution": { "taskSupport": "required" } },
            { "name": "snake", "execution": { "task_support": "optional" } },
            { "name": "snake_req", "execution": { "taskSupport": null, "task_support": "required" } },
            { "name": "both", "execution": { "taskSupport": "forbidden", "task_support": "required" } },
            { "name": "empty", "execution": {} },
            { "name": "odd", "execution": { "taskSupport": "sometimes" } },
        ]}));
        let plan = |tool| catalog.plan(&caps, tool);
        assert_eq!(plan("plain"), Plan::Plain(PlainReason::ToolForbidsTasks));
        assert_eq!(plan("null"), Plan::Plain(PlainReason::ToolForbidsTasks));
        assert_eq!(plan("forb"), Plan::Plain(PlainReason::ToolForbidsTasks));
        assert_eq!(plan("opt"), Plan::Task { fallback: false });
        assert_eq!(plan("req"), Plan::Task { fallback: false });
        assert_eq!(plan("snake"), Plan::Task { fallback: false });
        assert_eq!(plan("snake_req"), Plan::Task { fallback: false });
        assert_eq!(plan("both"), Plan::Plain(PlainReason::ToolForbidsTasks));
        assert_eq!(plan("empty"), Plan::Plain(PlainReason::ToolForbidsTasks));
        assert_eq!(plan("odd"), Plan::Task { fallback: true });
        assert_eq!(plan("unlisted"), Plan::Task { fallback: false });
        assert_eq!(
            catalog.plan(&json!({ "tools": {} }), "opt"),
            Plan::Plain(PlainReason::NoTaskCapability)
        );
    }
}
