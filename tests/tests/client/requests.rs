//! What the client puts on the wire for the application's commands: valid requests only
//! (every line is also schema-checked by the harness).

use serde_json::{json, Value};
use taskwire_engine::{Event, LogLevel, Request, TaskStatus, UsageError};
use taskwire_harness::setup::{client_config, server_config};
use taskwire_harness::{Pair, Probe, Side};

fn ready() -> Probe {
    Probe::ready_client(
        client_config(),
        json!({ "protocolVersion": "2025-11-25",
                "capabilities": { "tools": {}, "tasks": { "requests": { "tools": { "call": {} } } } },
                "serverInfo": { "name": "s", "version": "1" } }),
    )
}

#[test]
fn tool_calls_carry_name_arguments_and_task() {
    let mut d = ready();
    let now = d.now;
    let s = d.session;
    d.host
        .call_tool(now, s, "echo", json!({ "text": "hi" }))
        .unwrap();
    d.host
        .call_tool_as_task(now, s, "echo", json!({}), Some(5_000))
        .unwrap();
    d.host
        .call_tool_as_task(now, s, "echo", json!({}), None)
        .unwrap();
    let out = d.drain();
    assert_eq!(
        out[0]["params"],
        json!({ "name": "echo", "arguments": { "text": "hi" } })
    );
    assert_eq!(out[1]["params"]["task"], json!({ "ttl": 5000 }));
    assert_eq!(out[2]["params"]["task"], json!({}));
}

#[test]
fn absent_arguments_are_omitted_and_non_objects_refused() {
    let mut d = ready();
    let now = d.now;
    let s = d.session;
    d.host.call_tool(now, s, "noargs", Value::Null).unwrap();
    d.host
        .call_tool_as_task(now, s, "noargs", Value::Null, None)
        .unwrap();
    let out = d.drain();
    assert_eq!(out[0]["params"], json!({ "name": "noargs" }));
    // A task call asks for progress, its request id the token.
    assert_eq!(
        out[1]["params"],
        json!({ "name": "noargs", "task": {}, "_meta": { "progressToken": out[1]["id"] } })
    );
    // Intended change: `UsageError::Invalid(_)` became the precise `NotAnObject`.
    for bad in [json!([1]), json!("x"), json!(3)] {
        assert!(matches!(
            d.host.call_tool(now, s, "t", bad.clone()),
            Err(UsageError::NotAnObject(_))
        ));
        assert!(matches!(
            d.host.call_tool_as_task(now, s, "t", bad, None),
            Err(UsageError::NotAnObject(_))
        ));
    }
    assert!(d.drain().is_empty(), "refused commands send nothing");
}

#[test]
fn commands_before_the_handshake_are_refused() {
    let mut d = Probe::client(client_config());
    let now = d.now;
    let s = d.session;
    // Intended change: `NotInitialized` names the session.
    assert_eq!(
        d.host.call_tool(now, s, "x", json!({})),
        Err(UsageError::NotInitialized(s))
    );
    assert_eq!(
        d.host.get_task(now, s, "t"),
        Err(UsageError::NotInitialized(s))
    );
    assert!(d.drain().is_empty());
}

/// `Request::SetLogLevel` goes out as `logging/setLevel` with the level's wire name, and the
/// server's `{}` answers it.
#[test]
fn set_log_level_is_logging_set_level() {
    let mut server = server_config();
    server.logging = true;
    let mut pair = Pair::connected(client_config(), server, |_| {});
    let (host, session) = pair.session(Side::Client);
    let level = LogLevel::Warning;
    let id = host
        .send(host.now(), session, Request::SetLogLevel { level })
        .unwrap();
    pair.run_until_quiet();
    let sent = pair.sent_method(Side::Client, "logging/setLevel");
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].json["params"], json!({ "level": "warning" }));
    let answers = pair.find(Side::Client, |e| match e {
        Event::Response {
            request, outcome, ..
        } if *request == id => Some(outcome.clone()),
        _ => None,
    });
    assert_eq!(answers, vec![Ok(json!({}))]);
}

/// `tasks/get`, `tasks/cancel` and `tasks/list` are answered with the engine's task types
/// (`Event::TaskAnswer`, `Event::TaskPage`): the application never reads the wire's task
/// object; an answer that is no task, or about another task, is a -32603 naming why.
#[test]
fn task_answers_come_typed() {
    let mut d = ready();
    let now = d.now;
    let s = d.session;
    let task = |id: &str, status: &str| {
        json!({ "taskId": id, "status": status, "createdAt": "2025-11-25T10:00:00+01:00",
                "lastUpdatedAt": "2025-11-25T09:00:01.5Z", "ttl": null })
    };
    let got = d.host.get_task(now, s, "t1").unwrap();
    let cancelled = d.host.cancel_task(now, s, "t2").unwrap();
    let listed = d.host.list_tasks(now, s, None).unwrap();
    let strange = d.host.get_task(now, s, "t3").unwrap();
    let other = d.host.get_task(now, s, "t4").unwrap();
    let out = d.drain();
    assert_eq!(out[2]["method"], "tasks/list");
    d.reply(&out[0]["id"], task("t1", "working"));
    d.reply(&out[1]["id"], task("t2", "cancelled"));
    d.reply(
        &out[2]["id"],
        json!({ "tasks": [task("t1", "working"), task("t2", "cancelled")], "nextCursor": "p2" }),
    );
    d.reply(&out[3]["id"], json!({ "answer": 42 }));
    d.reply(&out[4]["id"], task("t9", "working"));
    let events = d.take_events();
    let answer = |id: &taskwire_engine::RequestId| {
        let found = events.iter().find_map(|e| match e {
            Event::TaskAnswer {
                request, outcome, ..
            } if request == id => Some(outcome.clone()),
            _ => None,
        });
        found.unwrap_or_else(|| panic!("no task answer to {id}: {events:?}"))
    };
    let t1 = answer(&got).unwrap();
    assert_eq!((t1.id.as_str(), t1.status), ("t1", TaskStatus::Working));
    assert_eq!(
        t1.last_updated_at.0 - t1.created_at.0,
        1_500,
        "any RFC 3339 time"
    );
    assert_eq!(answer(&cancelled).unwrap().status, TaskStatus::Cancelled);
    let malformed = answer(&strange).unwrap_err();
    assert_eq!(malformed.code, -32603);
    assert!(
        malformed.message.contains("malformed task"),
        "{malformed:?}"
    );
    let elsewhere = answer(&other).unwrap_err();
    assert!(elsewhere.message.contains("about task t9"), "{elsewhere:?}");
    let page = events.iter().find_map(|e| match e {
        Event::TaskPage {
            request, outcome, ..
        } if *request == listed => Some(outcome.clone()),
        _ => None,
    });
    let page = page.expect("a page").unwrap();
    let ids: Vec<_> = page.tasks.iter().map(|t| t.id.as_str()).collect();
    assert_eq!(ids, ["t1", "t2"]);
    assert_eq!(page.next_cursor.as_deref(), Some("p2"));
    assert!(
        !events.iter().any(|e| matches!(e, Event::Response { .. })),
        "no raw answer besides: {events:?}"
    );
}
