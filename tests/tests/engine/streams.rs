//! Which of its session's streams each message belongs to (`MessageKind::stream`), so that a
//! Streamable HTTP transport routes without parsing: a plain call's progress, logs and input
//! requests ride its request; a task's ride a `tasks/result` waiting for it, else the
//! session's stream; status notifications the session's; a listen's notifications the
//! listen request; a client's own requests the session's.

use serde_json::{json, Value};
use taskwire_engine::{CallId, Config, LogLevel, RequestId, TaskSupport};
use taskwire_harness::setup::{server_config, text_result, tool};
use taskwire_harness::Probe;

use crate::common::last_call;

/// Each message sent since `from`: its method (or `reply <id>`) and its stream.
fn routed(d: &Probe, from: usize) -> Vec<(String, Option<RequestId>)> {
    d.transmits[from..]
        .iter()
        .map(|t| {
            let v: Value = serde_json::from_str(&t.message).expect("JSON");
            let what = match v["method"].as_str() {
                Some(method) => method.to_owned(),
                None => format!("reply {}", v["id"]),
            };
            (what, t.kind.stream().cloned())
        })
        .collect()
}

/// The stream of the response to our request `id`.
fn request(id: &Value) -> Option<RequestId> {
    Some(RequestId::Number(id.as_i64().expect("a numeric id")))
}

fn server() -> Probe {
    let config = Config {
        logging: true,
        ..server_config()
    };
    Probe::ready_server(config, |s| s.add_tool(tool("job", TaskSupport::Optional)))
}

/// Progress, a log message and an elicitation from `call`, then whatever follows.
fn speak(d: &mut Probe, call: CallId) {
    let now = d.now;
    d.host
        .notify_progress(now, call, 1.0, None, None)
        .expect("progress");
    d.host
        .log(now, call, LogLevel::Info, None, json!("step"))
        .expect("log");
    let form = json!({ "mode": "form", "message": "Go on?",
                       "requestedSchema": { "type": "object", "properties": {} } });
    d.host
        .request_input(now, call, "elicitation/create", form)
        .expect("input");
    d.drain();
}

#[test]
fn a_plain_calls_messages_ride_its_request() {
    let mut d = server();
    let from = d.transmits.len();
    let (id, _) = d.send(
        "tools/call",
        json!({ "name": "job", "arguments": {}, "_meta": { "progressToken": "p" } }),
    );
    let call = last_call(&mut d).call;
    speak(&mut d, call);
    d.host
        .respond(d.now, call, Ok(text_result("done")))
        .expect("respond");
    d.drain();
    let routed = routed(&d, from);
    let methods: Vec<&str> = routed.iter().map(|(m, _)| m.as_str()).collect();
    assert_eq!(
        methods,
        [
            "notifications/progress",
            "notifications/message",
            "elicitation/create",
            &format!("reply {id}"),
        ]
    );
    for (what, stream) in routed {
        assert_eq!(stream, request(&id), "{what}");
    }
}

#[test]
fn a_tasks_messages_ride_a_waiting_tasks_result_else_the_session() {
    let mut d = server();
    let from = d.transmits.len();
    let (created, _) = d.send(
        "tools/call",
        json!({ "name": "job", "arguments": {}, "task": {}, "_meta": { "progressToken": "p" } }),
    );
    let work = d.work("task-1");
    d.host
        .notify_progress(d.now, work, 1.0, None, None)
        .expect("progress");
    d.drain();
    assert_eq!(
        routed(&d, from),
        [
            (format!("reply {created}"), request(&created)),
            ("notifications/progress".into(), None),
        ],
        "the CreateTaskResult rides the call; the task's progress, no request waiting, the session"
    );

    let from = d.transmits.len();
    let (waiting, _) = d.send("tasks/result", json!({ "taskId": "task-1" }));
    speak(&mut d, work);
    d.host
        .respond(d.now, work, Ok(text_result("done")))
        .expect("respond");
    d.drain();
    for (what, stream) in routed(&d, from) {
        let expected = match what.as_str() {
            "notifications/tasks/status" => None,
            _ => request(&waiting),
        };
        assert_eq!(stream, expected, "{what}");
    }
    assert!(
        routed(&d, from)
            .iter()
            .any(|(what, _)| *what == format!("reply {waiting}")),
        "the parked tasks/result was answered"
    );
}

#[test]
fn a_listens_notifications_ride_the_listen_request() {
    let mut d = Probe::server(server_config());
    d.host.add_tool(tool("job", TaskSupport::Optional));
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities":
            { "extensions": { "io.modelcontextprotocol/tasks": {} } }
    });
    d.send("tools/call", json!({ "name": "job", "_meta": meta }));
    let work = d.work("task-1");
    let from = d.transmits.len();
    let (listen, _) = d.send(
        "subscriptions/listen",
        json!({ "notifications": { "taskIds": ["task-1"] }, "_meta": meta }),
    );
    d.host
        .set_task_message(d.now, work, Some("half way".into()))
        .expect("status message");
    d.drain();
    let routed = routed(&d, from);
    assert_eq!(routed.len(), 3, "{routed:?}");
    for (what, stream) in routed {
        assert_eq!(stream, request(&listen), "{what}");
    }
}

#[test]
fn a_clients_own_requests_ride_the_session() {
    let mut d = Probe::client(taskwire_harness::setup::client_config());
    d.host.initialize(d.now, d.session).expect("initialize");
    d.drain();
    assert_eq!(routed(&d, 0), [("initialize".to_owned(), None)]);
}
