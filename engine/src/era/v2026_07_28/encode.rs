//! Tasks, outcomes and results in 2026-07-28 shapes, written straight into the message
//! text: every result carries `resultType`, the task fields are `ttlMs` and
//! `pollIntervalMs`, and a task's outcome is inlined in `tasks/get`.

use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::meta::SERVER_INFO_KEY;
use super::state::{Ask, Notices};
use crate::ids::TaskId;
use crate::json::{self, Buf};
use crate::jsonrpc::{self, RequestId};
use crate::model::{Implementation, Notice};
use crate::state::{Record, StoredOutcome};
use crate::status::TaskStatus;

/// The task fields (no braces): status as stored, so an `isError: true` result reads as
/// `completed`; `ttlMs` always written (`null` is unlimited).
fn push_task_fields(buf: &mut Buf, task: &Record) {
    buf.push_str(r#""taskId":"#);
    json::push_str(buf, task.id.as_str());
    buf.push_str(r#","status":""#);
    buf.push_str(task.status.as_str());
    buf.push('"');
    if let Some(message) = task.message() {
        buf.push_str(r#","statusMessage":"#);
        json::push_str(buf, message);
    }
    buf.push_str(r#","createdAt":"#);
    json::push_time(buf, task.created_at);
    buf.push_str(r#","lastUpdatedAt":"#);
    json::push_time(buf, task.last_updated_at);
    buf.push_str(r#","ttlMs":"#);
    match task.ttl_ms() {
        Some(ttl) => json::push_u64(buf, ttl),
        None => buf.push_str("null"),
    }
    if let Some(poll) = task.poll_interval_ms().filter(|&p| p > 0) {
        buf.push_str(r#","pollIntervalMs":"#);
        json::push_u64(buf, poll);
    }
}

/// The bytes [`push_server_info`] writes besides `info` itself.
const SERVER_INFO_SIZE: usize = 48;

/// `,"_meta":{"io.modelcontextprotocol/serverInfo":{…}}`, `info` being our `Implementation`
/// as JSON text (the state's `info_json`).
fn push_server_info(buf: &mut Buf, info: &str) {
    buf.push_str(r#","_meta":{"io.modelcontextprotocol/serverInfo":"#);
    buf.push_str(info);
    buf.push('}');
}

/// The flat `CreateTaskResult`: `resultType: "task"` beside the task fields.
pub(super) fn create_task_result(id: &RequestId, task: &Record, info: &str) -> String {
    jsonrpc::reply_with(id, 320 + SERVER_INFO_SIZE + info.len(), |buf| {
        buf.push_str(r#"{"resultType":"task","#);
        push_task_fields(buf, task);
        push_server_info(buf, info);
        buf.push('}');
    })
}

/// `GetTaskResult`: `resultType` and the [`push_detailed`] task.
pub(super) fn get_task_result(id: &RequestId, task: &Record, asks: &[Ask], info: &str) -> String {
    let size = detailed_size(task, asks) + SERVER_INFO_SIZE + info.len();
    jsonrpc::reply_with(id, size, |buf| {
        buf.push_str(r#"{"resultType":"complete","#);
        push_detailed(buf, task, asks);
        push_server_info(buf, info);
        buf.push('}');
    })
}

/// `notifications/tasks` on the listen stream `subscription`: the [`push_detailed`] task,
/// as `tasks/get` would show it now.
pub(super) fn task_notification(subscription: &RequestId, task: &Record, asks: &[Ask]) -> String {
    let body = |buf: &mut Buf| {
        buf.push('{');
        push_detailed(buf, task, asks);
        push_subscription(buf, subscription);
        buf.push('}');
    };
    jsonrpc::notification_with("notifications/tasks", Some(&body))
}

/// `notifications/subscriptions/acknowledged`: the task ids we agreed to report on.
pub(super) fn listen_acknowledged(
    subscription: &RequestId,
    tasks: Option<&[TaskId]>,
    notices: &Notices,
) -> String {
    let body = |buf: &mut Buf| {
        buf.push_str(r#"{"notifications":{"#);
        let mut first = true;
        let mut key = |buf: &mut Buf, name: &str| {
            if !std::mem::take(&mut first) {
                buf.push(',');
            }
            buf.push_str(name);
        };
        if let Some(tasks) = tasks {
            key(buf, r#""taskIds":"#);
            push_strs(buf, tasks.iter().map(TaskId::as_str));
        }
        for (agreed, name) in [
            (notices.tools_list_changed, r#""toolsListChanged":true"#),
            (notices.prompts_list_changed, r#""promptsListChanged":true"#),
            (
                notices.resources_list_changed,
                r#""resourcesListChanged":true"#,
            ),
        ] {
            if agreed {
                key(buf, name);
            }
        }
        if !notices.resource_subscriptions.is_empty() {
            key(buf, r#""resourceSubscriptions":"#);
            push_strs(
                buf,
                notices.resource_subscriptions.iter().map(String::as_str),
            );
        }
        buf.push('}');
        push_subscription(buf, subscription);
        buf.push('}');
    };
    jsonrpc::notification_with("notifications/subscriptions/acknowledged", Some(&body))
}

/// A notice on a listen stream: its params (if any) with the stream's `_meta`.
pub(super) fn listen_notice(subscription: &RequestId, notice: &Notice) -> String {
    let params = match notice.params() {
        Some(Value::Object(params)) => params,
        _ => Map::new(),
    };
    let body = |buf: &mut Buf| {
        buf.push('{');
        for (key, value) in params.iter().filter(|(key, _)| *key != "_meta") {
            json::push_str(buf, key);
            buf.push(':');
            json::push_serialized(buf, value);
            buf.push(',');
        }
        push_subscription_meta(buf, subscription);
        buf.push('}');
    };
    jsonrpc::notification_with(notice.method(), Some(&body))
}

/// `["a","b"]`.
fn push_strs<'a>(buf: &mut Buf, items: impl Iterator<Item = &'a str>) {
    buf.push('[');
    for (i, item) in items.enumerate() {
        if i > 0 {
            buf.push(',');
        }
        json::push_str(buf, item);
    }
    buf.push(']');
}

/// The graceful end of a listen stream: its request's result.
pub(super) fn listen_ended(subscription: &RequestId) -> String {
    jsonrpc::reply_with(subscription, 128, |buf| {
        buf.push_str(r#"{"resultType":"complete""#);
        push_subscription(buf, subscription);
        buf.push('}');
    })
}

/// `,"_meta":{"io.modelcontextprotocol/subscriptionId":<id>}`.
fn push_subscription(buf: &mut Buf, subscription: &RequestId) {
    buf.push(',');
    push_subscription_meta(buf, subscription);
}

/// `"_meta":{"io.modelcontextprotocol/subscriptionId":<id>}`.
fn push_subscription_meta(buf: &mut Buf, subscription: &RequestId) {
    buf.push_str(r#""_meta":{"io.modelcontextprotocol/subscriptionId":"#);
    jsonrpc::push_id(buf, subscription);
    buf.push('}');
}

fn detailed_size(task: &Record, asks: &[Ask]) -> usize {
    let outcome = task.outcome().map_or(0, |o| match o {
        StoredOutcome::Result { raw, .. } | StoredOutcome::Error(raw) => raw.get().len(),
    });
    320 + outcome
        + asks
            .iter()
            .map(|a| a.request.get().len() + 24)
            .sum::<usize>()
}

/// The `DetailedTask` fields (no braces): the task, with the inline `result` (completed)
/// or `error` (failed), or every outstanding request (`inputRequests`, input_required); a
/// cancelled task carries none of them.
fn push_detailed(buf: &mut Buf, task: &Record, asks: &[Ask]) {
    push_task_fields(buf, task);
    match (task.status, task.outcome()) {
        (TaskStatus::Completed, Some(StoredOutcome::Result { raw, .. })) => {
            buf.push_str(r#","result":"#);
            push_complete(buf, raw);
        }
        (TaskStatus::Failed, Some(StoredOutcome::Error(raw))) => {
            buf.push_str(r#","error":"#);
            buf.push_str(raw.get());
        }
        // Always present in this status (the schema requires it); empty for a task of
        // the 2025-11-25 era, whose input requests went to its own client as requests.
        (TaskStatus::InputRequired, _) => {
            buf.push_str(r#","inputRequests":{"#);
            for (i, ask) in asks.iter().enumerate() {
                if i > 0 {
                    buf.push(',');
                }
                json::push_str(buf, &ask.key);
                buf.push(':');
                buf.push_str(ask.request.get());
            }
            buf.push('}');
        }
        _ => {}
    }
}

/// The empty acknowledgement of `tasks/update` and `tasks/cancel`.
pub(super) fn ack(id: &RequestId, info: &str) -> String {
    jsonrpc::reply_with(id, 96 + SERVER_INFO_SIZE + info.len(), |buf| {
        buf.push_str(r#"{"resultType":"complete""#);
        push_server_info(buf, info);
        buf.push('}');
    })
}

/// A result the engine builds (`server/discover`, `tools/list`): `resultType: "complete"`
/// and our `serverInfo` added to `fields`.
pub(super) fn complete_line(
    id: &RequestId,
    mut fields: Map<String, Value>,
    info: &Implementation,
) -> String {
    let mut result = Map::new();
    result.insert("resultType".into(), "complete".into());
    result.append(&mut fields);
    let meta = serde_json::json!({ SERVER_INFO_KEY: info });
    result.insert("_meta".into(), meta);
    jsonrpc::result_line(id, &result)
}

/// MRTR's `InputRequiredResult`: what to answer, and the answers so far as `requestState`.
pub(super) fn input_required(
    id: &RequestId,
    requests: &Value,
    answers: &Map<String, Value>,
) -> String {
    let mut result = Map::new();
    result.insert("resultType".into(), "input_required".into());
    result.insert("inputRequests".into(), requests.clone());
    if !answers.is_empty() {
        let state = serde_json::to_string(answers).expect("JSON values serialize");
        result.insert("requestState".into(), state.into());
    }
    jsonrpc::result_line(id, &result)
}

/// The reply to a plain call: the application's result with `resultType: "complete"`
/// (unless it set one).
pub(super) fn plain_reply(id: &RequestId, raw: &RawValue) -> String {
    jsonrpc::reply_with(id, raw.get().len() + 72, |buf| push_complete(buf, raw))
}

/// Appends a result object with `"resultType":"complete"` first, unless it has one.
fn push_complete(buf: &mut Buf, raw: &RawValue) {
    let text = raw.get();
    // A result the engine keeps is its compact text; other text is trimmed first.
    let text = match text.starts_with('{') && text.ends_with('}') {
        true => text,
        false => text.trim(),
    };
    if names_result_type(text) {
        // The text names the key (maybe nested): decide on the parsed object.
        let mut map: Map<String, Value> = serde_json::from_str(text).unwrap_or_default();
        map.entry("resultType").or_insert_with(|| "complete".into());
        json::push_serialized(buf, &map);
        return;
    }
    let body = text.strip_prefix('{').unwrap_or(text).trim_start();
    buf.push_str(r#"{"resultType":"complete""#);
    if !body.starts_with('}') {
        buf.push(',');
    }
    buf.push_str(body);
}

/// Whether `text` holds the key `"resultType"` anywhere (a capital `T` is rare in results, so
/// this looks for it eight bytes at a time first).
fn names_result_type(text: &str) -> bool {
    const KEY: &[u8] = b"\"resultType\"";
    let bytes = text.as_bytes();
    let mut from = 0;
    while let Some(found) = crate::scan::find(&bytes[from..], b'T') {
        let at = from + found;
        if at >= 7 && bytes[at - 7..].starts_with(KEY) {
            return true;
        }
        from = at + 1;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_result_type_agrees_with_a_plain_search() {
        for text in [
            r#"{"resultType":"complete"}"#,
            r#"{"a":{"resultType":1}}"#,
            r#"{"Type":"resultType"}"#,
            r#"{"T":"T","resultTyp":1}"#,
            r#"{"content":[{"type":"text","text":"T"}]}"#,
            "T",
            "",
        ] {
            assert_eq!(
                names_result_type(text),
                text.contains(r#""resultType""#),
                "{text}"
            );
        }
    }

    fn completed(raw: &str) -> Value {
        let raw = RawValue::from_string(raw.into()).unwrap();
        let mut buf = Buf::new();
        push_complete(&mut buf, &raw);
        serde_json::from_str(&buf).unwrap()
    }

    #[test]
    fn server_info_goes_under_its_key() {
        let mut buf = Buf::new();
        buf.push('{');
        buf.push_str(r#""x":1"#);
        push_server_info(&mut buf, r#"{"name":"n","version":"1"}"#);
        buf.push('}');
        let parsed: Value = serde_json::from_str(&buf).unwrap();
        assert_eq!(
            parsed["_meta"][SERVER_INFO_KEY],
            json!({ "name": "n", "version": "1" })
        );
    }

    #[test]
    fn result_type_is_added_to_any_result_once() {
        assert_eq!(completed("{}"), json!({ "resultType": "complete" }));
        assert_eq!(completed(" { } "), json!({ "resultType": "complete" }));
        assert_eq!(
            completed(r#"{"content":[]}"#),
            json!({ "resultType": "complete", "content": [] })
        );
        assert_eq!(
            completed(r#"{"resultType":"complete","x":1}"#),
            json!({ "resultType": "complete", "x": 1 })
        );
        assert_eq!(
            completed(r#"{"structuredContent":{"resultType":7}}"#),
            json!({ "resultType": "complete", "structuredContent": { "resultType": 7 } })
        );
    }
}
