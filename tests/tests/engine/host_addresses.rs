//! Every outgoing message says what it is (issue 11 §3): the reply to the peer's request X
//! (with its error code when it is an error), a notification and the task it is about, or
//! our own request Y, and the session it goes to. A transport routes on these without
//! parsing the message; each is checked here against the message text.

use serde_json::{json, Value};
use taskwire_engine::{MessageKind, RequestId, TaskId, TaskSupport, Transmit};
use taskwire_harness::setup::{client_config, server_config, text_result, tool};
use taskwire_harness::Probe;

/// Checks a transmit's kind against its text; returns the parsed message.
fn consistent(t: &Transmit) -> Value {
    let m: Value = serde_json::from_str(&t.message).unwrap();
    let id = |v: &Value| serde_json::from_value::<RequestId>(v.clone()).ok();
    match &t.kind {
        MessageKind::Reply { to, error } => {
            assert!(m.get("method").is_none(), "{m}");
            assert_eq!(to.as_ref(), m.get("id").and_then(id).as_ref(), "{m}");
            assert_eq!(*error, m["error"]["code"].as_i64(), "{m}");
        }
        MessageKind::Notification { method, task, .. } => {
            assert!(m.get("id").is_none(), "{m}");
            assert_eq!(m["method"], *method);
            let named = m["params"]["taskId"].as_str().or(m["params"]["_meta"]
                ["io.modelcontextprotocol/related-task"]["taskId"]
                .as_str());
            assert_eq!(task.as_ref().map(TaskId::as_str), named, "{m}");
        }
        MessageKind::Request { id: ours, .. } => {
            assert!(m["method"].is_string(), "{m}");
            assert_eq!(Some(ours), id(&m["id"]).as_ref(), "{m}");
        }
        other => panic!("a kind this test does not know: {other:?}"),
    }
    m
}

fn kinds(d: &Probe) -> Vec<(MessageKind, Value)> {
    d.transmits
        .iter()
        .map(|t| {
            assert_eq!(t.session, d.session, "one session here");
            (t.kind.clone(), consistent(t))
        })
        .collect()
}

#[test]
fn a_server_says_what_each_message_is() {
    let mut d = Probe::ready_server(server_config(), |h| {
        h.add_tool(tool("job", TaskSupport::Optional))
    });
    d.feed("{not json");
    d.call("ping", Value::Null);
    d.call("tasks/get", json!({ "taskId": "nope" }));
    let created = d.call(
        "tools/call",
        json!({ "name": "job", "arguments": {}, "task": {}, "_meta": { "progressToken": "p" } }),
    );
    let task = created["result"]["task"]["taskId"]
        .as_str()
        .unwrap()
        .to_owned();
    let (now, work) = (d.now, d.work(&task));
    d.host.notify_progress(now, work, 1.0, None, None).unwrap();
    d.host
        .request_input(
            now,
            work,
            "elicitation/create",
            json!({ "message": "ok?", "requestedSchema": { "type": "object", "properties": {} } }),
        )
        .unwrap();
    d.drain();
    d.host.respond(now, work, Ok(text_result("done"))).unwrap();
    d.drain();
    let seen = kinds(&d);
    let summary: Vec<String> = seen
        .iter()
        .map(|(k, _)| match k {
            MessageKind::Reply { to: None, error } => format!("reply ? {error:?}"),
            MessageKind::Reply { to: Some(_), error } => format!("reply {error:?}"),
            MessageKind::Notification { method, task, .. } => {
                format!("{method} {}", task.is_some())
            }
            MessageKind::Request { .. } => "request".into(),
            _ => "other".into(),
        })
        .collect();
    assert_eq!(
        summary,
        [
            "reply ? Some(-32700)",
            "reply None",
            "reply Some(-32602)",
            "reply None",
            "notifications/progress true",
            "notifications/tasks/status true",
            "request",
            "notifications/tasks/status true",
            "notifications/cancelled false",
        ],
        "{seen:?}"
    );
}

#[test]
fn a_client_says_what_each_message_is() {
    let init = json!({
        "protocolVersion": "2025-11-25",
        "capabilities": { "tasks": { "requests": { "tools": { "call": {} } } } },
        "serverInfo": { "name": "s", "version": "1" }
    });
    let mut d = Probe::ready_client(client_config(), init);
    let (now, session) = (d.now, d.session);
    d.host
        .call_tool_as_task(now, session, "job", json!({}), Some(60_000))
        .unwrap();
    let call = d.drain().remove(0);
    d.reply(
        &call["id"],
        json!({ "task": { "taskId": "t1", "status": "working", "createdAt": "2026-01-15T09:00:00Z",
                          "lastUpdatedAt": "2026-01-15T09:00:00Z", "ttl": 60000, "pollInterval": 1000 } }),
    );
    let poll = d.advance(1_000).remove(0);
    assert_eq!(poll["method"], "tasks/get");
    // The server asks for input; the client answers it (a reply of ours).
    d.feed_json(json!({ "jsonrpc": "2.0", "id": "s-1", "method": "ping" }));
    d.host.cancel_task(d.now, session, "t1").unwrap();
    d.drain();
    let seen: Vec<String> = kinds(&d)
        .into_iter()
        .map(|(k, m)| match k {
            MessageKind::Request { .. } => m["method"].as_str().unwrap().to_owned(),
            MessageKind::Notification { method, .. } => method.to_owned(),
            MessageKind::Reply { error, .. } => format!("reply {error:?}"),
            _ => "other".into(),
        })
        .collect();
    assert_eq!(
        seen,
        ["tools/call", "tasks/get", "reply None", "tasks/cancel"]
    );
}
