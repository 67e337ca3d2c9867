//! The MCP JSON Schemas (2025-11-25; 2026-07-28 core and its tasks extension), each loaded
//! once, with one compiled validator per definition.
//!
//! The schema file is read from `shared/spec/` beside the checkout (`../../../shared/spec` from
//! this crate), or from `$TASKWIRE_SPEC_DIR` when set.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

use jsonschema::{Draft, Validator};
use serde_json::{json, Value};

const SCHEMA_FILE: &str = "schema-2025-11-25.json";
/// The core MCP 2026-07-28 schema (it has no task types).
pub const CORE_2026: &str = "schema-2026-07-28.json";
/// The schema of the 2026 tasks extension `io.modelcontextprotocol/tasks`.
pub const TASKS_2026: &str = "schema-ext-tasks-2026.json";

/// Where the spec files live.
pub fn spec_dir() -> PathBuf {
    match std::env::var_os("TASKWIRE_SPEC_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/spec"),
    }
}

fn root(file: &'static str) -> &'static Value {
    static ROOTS: OnceLock<Mutex<HashMap<&'static str, &'static Value>>> = OnceLock::new();
    let roots = ROOTS.get_or_init(Default::default);
    let mut roots = roots.lock().expect("schema roots");
    roots.entry(file).or_insert_with(|| {
        let path = spec_dir().join(file);
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("cannot read the MCP schema at {}: {e}", path.display()));
        Box::leak(Box::new(
            serde_json::from_str(&text).expect("the MCP schema is JSON"),
        ))
    })
}

fn validator(file: &'static str, definition: &str) -> Arc<Validator> {
    type Cache = HashMap<(&'static str, String), Arc<Validator>>;
    static CACHE: OnceLock<Mutex<Cache>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    let key = (file, definition.to_owned());
    if let Some(v) = cache.lock().expect("schema cache").get(&key) {
        return Arc::clone(v);
    }
    let root = root(file);
    assert!(
        root["$defs"].get(definition).is_some(),
        "{file} has no definition {definition:?}"
    );
    let schema = json!({
        "$schema": root["$schema"],
        "$defs": root["$defs"],
        "$ref": format!("#/$defs/{definition}"),
    });
    let compiled = jsonschema::options()
        .with_draft(Draft::Draft202012)
        .should_validate_formats(true)
        .build(&schema)
        .unwrap_or_else(|e| panic!("{file} definition {definition} does not compile: {e}"));
    let compiled = Arc::new(compiled);
    cache
        .lock()
        .expect("schema cache")
        .insert(key, Arc::clone(&compiled));
    compiled
}

/// Checks `value` against one `$defs` entry of the 2025-11-25 schema; the error lists every
/// violation with its path.
pub fn check(definition: &str, value: &Value) -> Result<(), String> {
    check_in(SCHEMA_FILE, definition, value)
}

/// [`check`] against a definition of another schema file ([`CORE_2026`], [`TASKS_2026`]).
pub fn check_in(file: &'static str, definition: &str, value: &Value) -> Result<(), String> {
    let validator = validator(file, definition);
    let errors: Vec<String> = validator
        .iter_errors(value)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    if errors.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "not a valid {definition} ({file}): {}\n  value: {value}",
            errors.join("; ")
        ))
    }
}

/// Panics unless `value` is a valid `definition` of the 2025-11-25 schema.
pub fn assert_valid(definition: &str, value: &Value) {
    assert_valid_in(SCHEMA_FILE, definition, value);
}

/// Panics unless `value` is a valid `definition` of `file`.
pub fn assert_valid_in(file: &'static str, definition: &str, value: &Value) {
    if let Err(e) = check_in(file, definition, value) {
        panic!("{e}");
    }
}

/// The schema definition of a whole request message, by method.
pub fn request_definition(method: &str) -> Option<&'static str> {
    Some(match method {
        "initialize" => "InitializeRequest",
        "ping" => "PingRequest",
        "tools/list" => "ListToolsRequest",
        "tools/call" => "CallToolRequest",
        "tasks/get" => "GetTaskRequest",
        "tasks/result" => "GetTaskPayloadRequest",
        "tasks/list" => "ListTasksRequest",
        "tasks/cancel" => "CancelTaskRequest",
        "sampling/createMessage" => "CreateMessageRequest",
        "elicitation/create" => "ElicitRequest",
        "roots/list" => "ListRootsRequest",
        "logging/setLevel" => "SetLevelRequest",
        "resources/list" => "ListResourcesRequest",
        "resources/read" => "ReadResourceRequest",
        "resources/subscribe" => "SubscribeRequest",
        "resources/unsubscribe" => "UnsubscribeRequest",
        "prompts/list" => "ListPromptsRequest",
        "prompts/get" => "GetPromptRequest",
        "completion/complete" => "CompleteRequest",
        _ => return None,
    })
}

/// The schema definition of a whole notification message, by method.
pub fn notification_definition(method: &str) -> Option<&'static str> {
    Some(match method {
        "notifications/initialized" => "InitializedNotification",
        "notifications/cancelled" => "CancelledNotification",
        "notifications/progress" => "ProgressNotification",
        "notifications/tasks/status" => "TaskStatusNotification",
        "notifications/message" => "LoggingMessageNotification",
        _ => return None,
    })
}

/// The schema definition of a success result, by the method of the request it answers
/// (a `CreateTaskResult` answer to a task-augmented request is the caller's to spot).
pub fn result_definition(method: &str) -> Option<&'static str> {
    Some(match method {
        "initialize" => "InitializeResult",
        "ping" => "EmptyResult",
        "tools/list" => "ListToolsResult",
        "tools/call" => "CallToolResult",
        "tasks/get" => "GetTaskResult",
        "tasks/result" => "GetTaskPayloadResult",
        "tasks/list" => "ListTasksResult",
        "tasks/cancel" => "CancelTaskResult",
        "sampling/createMessage" => "CreateMessageResult",
        "elicitation/create" => "ElicitResult",
        "roots/list" => "ListRootsResult",
        "logging/setLevel" => "EmptyResult",
        _ => return None,
    })
}

/// The schema definition of a success result of a method the application answers (the
/// engine passes those results through as given).
pub fn app_result_definition(method: &str) -> Option<&'static str> {
    Some(match method {
        "resources/subscribe" | "resources/unsubscribe" => "EmptyResult",
        "resources/list" => "ListResourcesResult",
        "resources/templates/list" => "ListResourceTemplatesResult",
        "resources/read" => "ReadResourceResult",
        "prompts/list" => "ListPromptsResult",
        "prompts/get" => "GetPromptResult",
        "completion/complete" => "CompleteResult",
        _ => return None,
    })
}

/// The 2026-07-28 schema file and definition of a whole request message, by method.
pub fn v2026_request_definition(method: &str) -> Option<(&'static str, &'static str)> {
    Some(match method {
        "server/discover" => (CORE_2026, "DiscoverRequest"),
        "tools/list" => (CORE_2026, "ListToolsRequest"),
        "tools/call" => (CORE_2026, "CallToolRequest"),
        "subscriptions/listen" => (CORE_2026, "SubscriptionsListenRequest"),
        "tasks/get" => (TASKS_2026, "GetTaskRequest"),
        "tasks/update" => (TASKS_2026, "UpdateTaskRequest"),
        "tasks/cancel" => (TASKS_2026, "CancelTaskRequest"),
        _ => return None,
    })
}

/// The 2026-07-28 schema file and definition of a notification only that era has.
pub fn v2026_notification_definition(method: &str) -> Option<(&'static str, &'static str)> {
    Some(match method {
        "notifications/tasks" => (TASKS_2026, "TaskStatusNotification"),
        "notifications/subscriptions/acknowledged" => {
            (CORE_2026, "SubscriptionsAcknowledgedNotification")
        }
        _ => return None,
    })
}

/// The 2026-07-28 schema file and definition of a success result, by the method of the
/// request it answers and, for `tools/call`, its `resultType`.
pub fn v2026_result_definition(
    method: &str,
    result: &Value,
) -> Option<(&'static str, &'static str)> {
    Some(match method {
        "server/discover" => (CORE_2026, "DiscoverResult"),
        "tools/list" => (CORE_2026, "ListToolsResult"),
        "tools/call" => match result.get("resultType").and_then(Value::as_str) {
            Some("task") => (TASKS_2026, "CreateTaskResult"),
            Some("input_required") => (CORE_2026, "InputRequiredResult"),
            _ => (CORE_2026, "CallToolResult"),
        },
        "subscriptions/listen" => (CORE_2026, "SubscriptionsListenResult"),
        "tasks/get" => (TASKS_2026, "GetTaskResult"),
        "tasks/update" => (TASKS_2026, "UpdateTaskResult"),
        "tasks/cancel" => (TASKS_2026, "CancelTaskResult"),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(ttl: Value) -> Value {
        json!({ "taskId": "t", "status": "working", "createdAt": "2026-01-15T09:00:00Z",
                "lastUpdatedAt": "2026-01-15T09:00:00Z", "ttl": ttl })
    }

    #[test]
    fn accepts_the_spec_examples_shapes() {
        assert_valid("CreateTaskResult", &json!({ "task": task(json!(300000)) }));
        assert_valid("GetTaskResult", &task(Value::Null));
        assert_valid(
            "JSONRPCMessage",
            &json!({"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"}}),
        );
    }

    #[test]
    fn rejects_what_the_spec_forbids() {
        let mut no_ttl = task(json!(1));
        no_ttl.as_object_mut().unwrap().remove("ttl");
        assert!(check("GetTaskResult", &no_ttl).is_err());
        assert!(
            check("CreateTaskResult", &task(json!(1))).is_err(),
            "flat task"
        );
        assert!(check("GetTaskResult", &task(json!("1000"))).is_err());
        let bad_status = json!({ "taskId": "t", "status": "done", "createdAt": "x",
                                 "lastUpdatedAt": "x", "ttl": null });
        assert!(check("Task", &bad_status).is_err());
        assert!(check(
            "JSONRPCMessage",
            &json!([{"jsonrpc":"2.0","id":1,"method":"ping"}])
        )
        .is_err());
        assert!(check("CallToolResult", &json!({ "isError": true })).is_err());
    }
}
