//! Small lookups over parsed JSON-RPC messages.

use serde_json::Value;
use taskwire_engine::RequestId;

/// A request id as JSON.
pub fn id_json(id: &RequestId) -> Value {
    serde_json::to_value(id).expect("ids serialize")
}

/// The answer (result or error) to request `id`, if present.
pub fn response<'a>(messages: &'a [Value], id: &Value) -> Option<&'a Value> {
    messages
        .iter()
        .find(|m| m.get("id") == Some(id) && m.get("method").is_none())
}

/// Every message with this method (requests and notifications), in order.
pub fn with_method<'a>(messages: &'a [Value], method: &str) -> Vec<&'a Value> {
    messages.iter().filter(|m| m["method"] == method).collect()
}

/// The error code of an error response.
pub fn error_code(message: &Value) -> Option<i64> {
    message.get("error")?.get("code")?.as_i64()
}

/// The error message of an error response ("" when absent).
pub fn error_message(message: &Value) -> &str {
    message["error"]["message"].as_str().unwrap_or_default()
}

/// The status of every `notifications/tasks/status` in `messages`, in order.
pub fn statuses(messages: &[Value]) -> Vec<String> {
    with_method(messages, "notifications/tasks/status")
        .iter()
        .map(|m| {
            m["params"]["status"]
                .as_str()
                .unwrap_or_default()
                .to_owned()
        })
        .collect()
}

/// `_meta["io.modelcontextprotocol/related-task"].taskId` of a result or params object.
pub fn related_task(object: &Value) -> Option<&str> {
    object["_meta"]["io.modelcontextprotocol/related-task"]["taskId"].as_str()
}
