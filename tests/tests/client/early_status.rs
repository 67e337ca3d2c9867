//! `notifications/tasks/status` that overtakes the `CreateTaskResult` (spec §2.11, §5.7):
//! the client keeps the newer view and reports the task once, correctly.

use serde_json::{json, Value};
use taskwire_engine::{Event, TaskStatus, TaskSupport};
use taskwire_harness::msg::{id_json, with_method};
use taskwire_harness::setup::{client_config, first_text, server_config, text_result, tool};
use taskwire_harness::{Pair, Probe, Side};

fn server_init() -> Value {
    json!({ "protocolVersion": "2025-11-25",
            "capabilities": { "tasks": { "requests": { "tools": { "call": {} } } } },
            "serverInfo": { "name": "scripted", "version": "1" } })
}

fn task(status: &str, message: Option<&str>, updated: &str) -> Value {
    let mut t = json!({ "taskId": "t-1", "status": status, "createdAt": "2026-01-15T09:00:00Z",
                        "lastUpdatedAt": updated, "ttl": 60000, "pollInterval": 1000 });
    if let Some(m) = message {
        t["statusMessage"] = json!(m);
    }
    t
}

#[test]
fn completion_notified_before_creation_is_fetched_at_once() {
    let mut pair = Pair::connected(client_config(), server_config(), |s| {
        s.add_tool(tool("quick", TaskSupport::Optional))
    });
    pair.client
        .call_tool_as_task(pair.now, pair.cs, "quick", json!({}), None)
        .unwrap();
    assert!(pair.deliver_one(), "the call reaches the server");
    let work = pair.work(Side::Server, "task-1");
    pair.server
        .set_task_message(pair.now, work, Some("almost".into()))
        .unwrap();
    pair.server
        .respond(pair.now, work, Ok(text_result("fast")))
        .unwrap();
    pair.drain();
    // On the wire: CreateTaskResult, status(working), status(completed). Let the
    // notifications overtake the answer.
    let created = pair.in_flight.pop_front().unwrap();
    assert!(created.1.contains("\"task\""), "{created:?}");
    pair.in_flight.push_back(created);
    pair.deliver();

    let created = pair.find(Side::Client, |e| match e {
        Event::TaskCreated { task, .. } => Some(task.clone()),
        _ => None,
    });
    assert_eq!(created.len(), 1);
    assert_eq!(
        created[0].status,
        TaskStatus::Completed,
        "the newer view wins"
    );
    assert_eq!(created[0].status_message.as_deref(), Some("almost"));
    let results = pair.task_results();
    assert_eq!(results.len(), 1);
    assert_eq!(first_text(results[0].as_ref().unwrap()), Some("fast"));
    assert!(
        pair.sent_method(Side::Client, "tasks/get").is_empty(),
        "no poll needed"
    );
    let later = pair.find(Side::Client, |e| match e {
        Event::TaskStatus { task, .. } => Some(task.status),
        _ => None,
    });
    assert!(
        later.is_empty(),
        "nothing newer than TaskCreated: {later:?}"
    );
}

#[test]
fn a_newer_message_before_creation_is_kept_and_not_repeated() {
    let mut d = Probe::ready_client(client_config(), server_init());
    let call = d
        .host
        .call_tool_as_task(d.now, d.session, "job", json!({}), None)
        .unwrap();
    d.drain();
    d.notify(
        "notifications/tasks/status",
        Some(task(
            "working",
            Some("warming up"),
            "2026-01-15T09:00:00.500Z",
        )),
    );
    assert!(d.take_events().is_empty(), "not ours yet");
    d.reply(
        &id_json(&call),
        json!({ "task": task("working", None, "2026-01-15T09:00:00Z") }),
    );
    let events = d.take_events();
    let [Event::TaskCreated { task: created, .. }] = &events[..] else {
        panic!("{events:?}");
    };
    assert_eq!(created.status_message.as_deref(), Some("warming up"));

    // The first poll returns the same view: no event.
    let out = d.advance(1_000);
    let get = with_method(&out, "tasks/get");
    assert_eq!(get.len(), 1);
    d.reply(
        &get[0]["id"],
        task("working", Some("warming up"), "2026-01-15T09:00:00.500Z"),
    );
    assert!(d.take_events().is_empty());
}

#[test]
fn status_of_a_task_we_did_not_create_is_not_followed() {
    let mut d = Probe::ready_client(client_config(), server_init());
    d.notify(
        "notifications/tasks/status",
        Some(task("working", None, "2026-01-15T09:00:00Z")),
    );
    assert!(d.take_events().is_empty());
    assert!(d.advance(10_000).is_empty(), "never polled");
    assert!(d.host.remote_task_ids(d.session).is_empty());
    d.host.close(d.now, d.session);
    d.drain();
    assert!(
        !d.take_events()
            .iter()
            .any(|e| matches!(e, Event::TaskResult { .. })),
        "nothing to report for a stranger's task"
    );
}
