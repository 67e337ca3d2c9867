//! Following a task made earlier (`Host::follow_task`), against a scripted server in both
//! eras: the first `tasks/get` answer is the task's creation for the caller, then polls,
//! status changes and the outcome come as for a task the session made (2025-11-25 by
//! `tasks/result`, 2026-07-28 inline); a task the server does not know answers the follow
//! with its error; a task followed already is refused.

use serde_json::{json, Value};
use taskwire_engine::{Event, TaskStatus, UsageError};
use taskwire_harness::msg::{id_json, with_method};
use taskwire_harness::setup::{client_config, first_text, v2026_client_config};
use taskwire_harness::Probe;

fn v2025_client() -> Probe {
    Probe::ready_client(
        client_config(),
        json!({ "protocolVersion": "2025-11-25",
                "capabilities": { "tasks": { "list": {}, "cancel": {},
                                             "requests": { "tools": { "call": {} } } } },
                "serverInfo": { "name": "scripted", "version": "1" } }),
    )
}

fn v2026_client() -> Probe {
    let mut d = Probe::client(v2026_client_config());
    d.host.initialize(d.now, d.session).expect("initialize");
    let discover = d.drain();
    d.feed_json(
        json!({ "jsonrpc": "2.0", "id": discover[0]["id"], "result": {
        "resultType": "complete", "supportedVersions": ["2026-07-28"],
        "capabilities": { "tools": {}, "extensions": { "io.modelcontextprotocol/tasks": {} } } } }),
    );
    assert_eq!(d.host.protocol_version(d.session), Some("2026-07-28"));
    d.clear();
    d
}

/// A task as `tasks/get` answers it (2025-11-25 members; 2026-07-28 clients read them too).
fn task(status: &str, message: &str, updated: &str) -> Value {
    json!({ "taskId": "t-1", "status": status, "statusMessage": message,
            "createdAt": "2026-12-03T09:00:00Z", "lastUpdatedAt": updated,
            "ttl": 60000, "pollInterval": 500 })
}

/// Follows `t-1`: the request sent, and its id.
fn follow(d: &mut Probe) -> Value {
    let request = d.host.follow_task(d.now, d.session, "t-1").unwrap();
    let out = d.drain();
    assert_eq!(out.len(), 1, "{out:?}");
    assert_eq!(out[0]["method"], "tasks/get");
    assert_eq!(out[0]["params"]["taskId"], "t-1");
    assert_eq!(out[0]["id"], id_json(&request));
    out[0]["id"].clone()
}

/// The task statuses the application was told of, in order.
fn statuses(events: &[Event]) -> Vec<TaskStatus> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::TaskCreated { task, .. } | Event::TaskStatus { task, .. } => Some(task.status),
            _ => None,
        })
        .collect()
}

fn outcome(events: &[Event]) -> Option<Result<Value, i64>> {
    events.iter().find_map(|e| match e {
        Event::TaskResult { outcome, .. } => Some(outcome.clone().map_err(|e| e.code)),
        _ => None,
    })
}

#[test]
fn a_v2025_task_is_polled_and_its_result_fetched_as_if_this_session_made_it() {
    let mut d = v2025_client();
    let id = follow(&mut d);
    d.feed_json(json!({ "jsonrpc": "2.0", "id": id,
        "result": task("working", "step 1", "2026-12-03T09:00:01Z") }));
    let events = d.take_events();
    assert!(
        matches!(&events[..], [Event::TaskCreated { request, task, .. }]
            if id_json(request) == id && task.status_message.as_deref() == Some("step 1")),
        "{events:?}"
    );
    // It is polled at its interval, and refused a second follower.
    assert_eq!(
        d.host.follow_task(d.now, d.session, "t-1"),
        Err(UsageError::AlreadyFollowing("t-1".into()))
    );
    let ticked = d.advance(500);
    let polls = with_method(&ticked, "tasks/get");
    assert_eq!(polls.len(), 1);
    let out = d.reply(
        &polls[0]["id"],
        task("completed", "done", "2026-12-03T09:00:02Z"),
    );
    let fetch = with_method(&out, "tasks/result");
    assert_eq!(fetch.len(), 1, "{out:?}");
    d.reply(
        &fetch[0]["id"],
        json!({ "content": [{ "type": "text", "text": "made earlier" }] }),
    );
    let events = d.take_events();
    assert_eq!(statuses(&events), [TaskStatus::Completed]);
    let result = outcome(&events).expect("an outcome").unwrap();
    assert_eq!(first_text(&result), Some("made earlier"));
    assert!(d.host.remote_task_ids(d.session).is_empty(), "let go");
}

#[test]
fn a_finished_v2025_task_has_its_result_fetched_at_once() {
    let mut d = v2025_client();
    let id = follow(&mut d);
    let out = d.feed_json(json!({ "jsonrpc": "2.0", "id": id,
        "result": task("failed", "boom", "2026-12-03T09:00:01Z") }));
    let fetch = with_method(&out, "tasks/result");
    assert_eq!(fetch.len(), 1, "{out:?}");
    d.feed_json(json!({ "jsonrpc": "2.0", "id": fetch[0]["id"],
        "error": { "code": -32603, "message": "boom" } }));
    let events = d.take_events();
    assert_eq!(statuses(&events), [TaskStatus::Failed]);
    assert_eq!(outcome(&events), Some(Err(-32603)));
}

#[test]
fn a_task_the_server_does_not_know_answers_the_follow_with_its_error() {
    for mut d in [v2025_client(), v2026_client()] {
        let id = follow(&mut d);
        d.feed_json(json!({ "jsonrpc": "2.0", "id": id,
            "error": { "code": -32602, "message": "Task not found" } }));
        let events = d.take_events();
        assert!(
            matches!(&events[..], [Event::Response { outcome: Err(e), .. }] if e.code == -32602),
            "{events:?}"
        );
        // An answer about another task is refused, not followed.
        let id = follow(&mut d);
        let mut other = task("working", "", "2026-12-03T09:00:01Z");
        other["taskId"] = json!("t-2");
        d.feed_json(json!({ "jsonrpc": "2.0", "id": id, "result": other }));
        let events = d.take_events();
        assert!(
            matches!(&events[..], [Event::Response { outcome: Err(e), .. }]
                if e.code == -32603 && e.message.contains("t-2")),
            "{events:?}"
        );
        assert!(d.host.remote_task_ids(d.session).is_empty());
    }
}

#[test]
fn a_v2026_task_is_listened_to_polled_and_its_outcome_read_inline() {
    let mut d = v2026_client();
    let id = follow(&mut d);
    let out = d.feed_json(json!({ "jsonrpc": "2.0", "id": id, "result":
        task("working", "step 1", "2026-12-03T09:00:01Z") }));
    assert_eq!(
        with_method(&out, "subscriptions/listen").len(),
        1,
        "{out:?}"
    );
    assert_eq!(statuses(&d.take_events()), [TaskStatus::Working]);
    let ticked = d.advance(500);
    let polls = with_method(&ticked, "tasks/get");
    assert_eq!(polls.len(), 1);
    let mut done = task("completed", "done", "2026-12-03T09:00:02Z");
    done["result"] = json!({ "content": [{ "type": "text", "text": "made earlier" }],
                              "resultType": "complete" });
    let out = d.reply(&polls[0]["id"], done);
    assert!(with_method(&out, "tasks/get").is_empty(), "{out:?}");
    let events = d.take_events();
    assert_eq!(statuses(&events), [TaskStatus::Completed]);
    let result = outcome(&events).expect("an outcome").unwrap();
    assert_eq!(first_text(&result), Some("made earlier"));
}

#[test]
fn a_finished_v2026_task_is_read_again_for_its_outcome_and_not_listened_to() {
    let mut d = v2026_client();
    let id = follow(&mut d);
    let out = d.feed_json(json!({ "jsonrpc": "2.0", "id": id, "result":
        task("cancelled", "", "2026-12-03T09:00:01Z") }));
    assert!(with_method(&out, "subscriptions/listen").is_empty());
    let reads = with_method(&out, "tasks/get");
    assert_eq!(reads.len(), 1, "{out:?}");
    d.reply(
        &reads[0]["id"],
        task("cancelled", "", "2026-12-03T09:00:01Z"),
    );
    let events = d.take_events();
    assert_eq!(outcome(&events), Some(Err(-32602)), "{events:?}");
}
