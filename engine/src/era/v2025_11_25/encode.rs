//! Tasks and outcomes in 2025-11-25 shapes, written straight into the message text.

use serde_json::value::RawValue;
use serde_json::{json, Map, Value};

use super::types::{MODEL_IMMEDIATE_RESPONSE, RELATED_TASK};
use crate::json::{self, Buf};
use crate::jsonrpc::{self, RequestId};
use crate::model::Era;
use crate::state::{Record, StoredOutcome};
use crate::status::TaskStatus;

/// The status this era shows: a result with `isError: true` reads as `failed`.
pub(super) fn shown_status(task: &Record) -> TaskStatus {
    Era::V2025_11_25.shown_status(task.status, task.is_error_result())
}

/// The flat `Task` object: `ttl` always written (`null` is unlimited).
pub(super) fn push_task(buf: &mut Buf, task: &Record) {
    buf.push_str(r#"{"taskId":"#);
    json::push_str(buf, task.id.as_str());
    buf.push_str(r#","status":""#);
    buf.push_str(shown_status(task).as_str());
    buf.push('"');
    if let Some(message) = task.message() {
        buf.push_str(r#","statusMessage":"#);
        json::push_str(buf, message);
    }
    buf.push_str(r#","createdAt":"#);
    json::push_time(buf, task.created_at);
    buf.push_str(r#","lastUpdatedAt":"#);
    json::push_time(buf, task.last_updated_at);
    buf.push_str(r#","ttl":"#);
    match task.ttl_ms() {
        Some(ttl) => json::push_u64(buf, ttl),
        None => buf.push_str("null"),
    }
    if let Some(poll) = task.poll_interval_ms() {
        buf.push_str(r#","pollInterval":"#);
        json::push_u64(buf, poll);
    }
    buf.push('}');
}

/// A reply carrying the task (`tasks/get`, `tasks/cancel`).
pub(super) fn task_reply(id: &RequestId, task: &Record) -> String {
    jsonrpc::reply_with(id, 256, |buf| push_task(buf, task))
}

/// `CreateTaskResult`: `{"task": Task, "_meta"?: {model-immediate-response}}`.
pub(super) fn create_task_result(id: &RequestId, task: &Record, immediate: Option<&str>) -> String {
    jsonrpc::reply_with(id, 288, |buf| {
        buf.push_str(r#"{"task":"#);
        push_task(buf, task);
        if let Some(text) = immediate {
            buf.push_str(r#","_meta":{"#);
            json::push_str(buf, MODEL_IMMEDIATE_RESPONSE);
            buf.push(':');
            json::push_str(buf, text);
            buf.push('}');
        }
        buf.push('}');
    })
}

/// `notifications/tasks/status` with the flat task.
pub(super) fn status_notification(task: &Record) -> String {
    jsonrpc::notification_with(
        "notifications/tasks/status",
        Some(&|buf: &mut Buf| push_task(buf, task)),
    )
}

/// The answer `tasks/result` gives for a finished task: the stored result with the
/// related-task `_meta`, or the stored error. Returns the line and the error code, if any.
pub(super) fn outcome_reply(id: &RequestId, task: &Record) -> Option<(String, Option<i64>)> {
    Some(match task.outcome()? {
        StoredOutcome::Result { raw, .. } => (
            jsonrpc::reply_with(id, raw.get().len() + 128, |buf| {
                push_with_related_task(buf, raw, task.id.as_str())
            }),
            None,
        ),
        StoredOutcome::Error(raw) => (error_reply(id, raw), Some(error_code(raw))),
    })
}

/// `{"jsonrpc":"2.0","id":…,"error":<raw>}`.
fn error_reply(id: &RequestId, raw: &RawValue) -> String {
    let mut buf = Buf::with_capacity(raw.get().len() + 48);
    buf.push_str(r#"{"jsonrpc":"2.0","id":"#);
    jsonrpc::push_id(&mut buf, id);
    buf.push_str(r#","error":"#);
    buf.push_str(raw.get());
    buf.push('}');
    buf
}

/// The code of a stored error object (ours start `{"code":N`).
fn error_code(raw: &RawValue) -> i64 {
    let fast = raw
        .get()
        .strip_prefix(r#"{"code":"#)
        .and_then(|rest| rest.split([',', '}']).next())
        .and_then(|n| n.parse().ok());
    fast.unwrap_or_else(|| {
        serde_json::from_str::<crate::RpcError>(raw.get())
            .map_or(crate::jsonrpc::code::INTERNAL_ERROR, |e| e.code)
    })
}

/// Appends a stored result object with `_meta[related-task]` set to `task`.
pub(super) fn push_with_related_task(buf: &mut Buf, raw: &RawValue, task: &str) {
    let text = raw.get().trim_end();
    if text.contains("\"_meta\"") {
        // The result has `_meta` of its own (or the text names one inside): merge properly.
        let map: Map<String, Value> = serde_json::from_str(text).unwrap_or_default();
        json::push_serialized(buf, &with_related_task(map, task));
        return;
    }
    let body = text.strip_suffix('}').unwrap_or(text).trim_end();
    buf.push_str(body);
    if !body.ends_with('{') {
        buf.push(',');
    }
    buf.push_str(r#""_meta":{""#);
    buf.push_str(RELATED_TASK);
    buf.push_str(r#"":{"taskId":"#);
    json::push_str(buf, task);
    buf.push_str("}}}");
}

/// Inserts the related-task key into a result object's `_meta`.
pub(super) fn with_related_task(mut result: Map<String, Value>, task: &str) -> Map<String, Value> {
    let meta = result
        .entry("_meta")
        .or_insert_with(|| Value::Object(Map::new()));
    if !meta.is_object() {
        *meta = Value::Object(Map::new());
    }
    if let Value::Object(meta) = meta {
        meta.insert(RELATED_TASK.to_owned(), json!({ "taskId": task }));
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spliced(raw: &str) -> Value {
        let raw = RawValue::from_string(raw.into()).unwrap();
        let mut buf = Buf::new();
        push_with_related_task(&mut buf, &raw, "t\"1");
        serde_json::from_str(&buf).unwrap()
    }

    #[test]
    fn related_task_meta_is_added_to_any_result() {
        let meta = json!({ RELATED_TASK: { "taskId": "t\"1" } });
        assert_eq!(spliced("{}"), json!({ "_meta": meta }));
        assert_eq!(spliced("{ }"), json!({ "_meta": meta }));
        assert_eq!(
            spliced(r#"{"content":[]}"#),
            json!({ "content": [], "_meta": meta })
        );
        assert_eq!(
            spliced(r#"{"_meta":{"app":1},"x":2}"#),
            json!({ "x": 2, "_meta": { "app": 1, RELATED_TASK: { "taskId": "t\"1" } } })
        );
        assert_eq!(spliced(r#"{"_meta":7}"#), json!({ "_meta": meta }));
    }

    #[test]
    fn error_codes_read_fast_or_slow() {
        let raw = |t: &str| RawValue::from_string(t.into()).unwrap();
        assert_eq!(error_code(&raw(r#"{"code":-32602,"message":"x"}"#)), -32602);
        assert_eq!(error_code(&raw(r#"{"message":"x","code":7}"#)), 7);
    }
}
