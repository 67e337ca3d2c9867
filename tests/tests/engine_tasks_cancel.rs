//! `tasks/cancel` (spec §2.10, §5.1, §5.2): working and input_required tasks become
//! `cancelled` before the answer; terminal and unknown tasks are -32602; the work is told to
//! stop; a later outcome is dropped.

use serde_json::{json, Value};
use taskwire_engine::{Event, ProgressTarget, RpcError, StopReason, TaskStatus, TaskSupport};
use taskwire_tests::msg::{error_code, error_message, response, statuses, with_method};
use taskwire_tests::setup::{server_config, stamp, text_result, tool};
use taskwire_tests::Driver;

fn with_task() -> Driver {
    let mut d = Driver::ready_server(server_config(), |s| {
        s.add_tool(tool("job", TaskSupport::Optional))
    });
    d.call(
        "tools/call",
        json!({ "name": "job", "arguments": {}, "task": {}, "_meta": { "progressToken": "p" } }),
    );
    d.take_events();
    d
}

fn stops(events: &[Event]) -> Vec<(String, StopReason)> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::StopTask { task, reason } => Some((task.clone(), *reason)),
            _ => None,
        })
        .collect()
}

#[test]
fn cancelling_a_working_task() {
    let mut d = with_task();
    let (parked, _) = d.send("tasks/result", json!({ "taskId": "task-1" }));
    d.advance(3000);
    let (id, out) = d.send("tasks/cancel", json!({ "taskId": "task-1" }));
    // The answer first, then the status notification and the parked result.
    let answer = &out[0];
    assert_eq!(answer["id"], id);
    assert_eq!(
        answer["result"],
        json!({ "taskId": "task-1", "status": "cancelled", "statusMessage": "Cancelled by requestor",
                "createdAt": stamp(0), "lastUpdatedAt": stamp(3000), "ttl": 300000, "pollInterval": 500 })
    );
    assert_eq!(statuses(&out), ["cancelled"]);
    let parked = response(&out, &parked).expect("the parked result is answered");
    assert_eq!(error_code(parked), Some(-32602));
    assert_eq!(parked["error"]["data"]["taskId"], "task-1");
    assert_eq!(
        stops(&d.take_events()),
        [("task-1".to_owned(), StopReason::Cancelled)]
    );

    let reply = d.call("tasks/result", json!({ "taskId": "task-1" }));
    assert_eq!(error_code(&reply), Some(-32602));
    assert!(error_message(&reply).contains("cancelled"), "{reply}");
    let reply = d.call("tasks/get", json!({ "taskId": "task-1" }));
    assert_eq!(reply["result"]["status"], "cancelled");
}

#[test]
fn completion_after_cancel_is_dropped_and_reported() {
    let mut d = with_task();
    d.call("tasks/cancel", json!({ "taskId": "task-1" }));
    d.take_events();
    let now = d.now.plus(10);
    d.session
        .complete_task(now, "task-1", text_result("late"))
        .unwrap();
    d.session
        .fail_task(now, "task-1", RpcError::new(-32603, "late"))
        .unwrap();
    let out = d.drain();
    assert!(out.is_empty(), "nothing reaches the peer: {out:?}");
    let dropped: Vec<_> = d
        .take_events()
        .into_iter()
        .filter_map(|e| match e {
            Event::OutcomeDropped { task, status } => Some((task, status)),
            _ => None,
        })
        .collect();
    assert_eq!(dropped.len(), 2);
    assert!(dropped
        .iter()
        .all(|(t, s)| t == "task-1" && *s == TaskStatus::Cancelled));
    let reply = d.call("tasks/get", json!({ "taskId": "task-1" }));
    assert_eq!(reply["result"]["status"], "cancelled");
    assert_eq!(reply["result"]["lastUpdatedAt"], stamp(0));
}

#[test]
fn progress_stops_at_cancellation() {
    let mut d = with_task();
    let now = d.now;
    d.session
        .notify_progress(now, ProgressTarget::Task("task-1"), 1.0, None, None)
        .unwrap();
    assert_eq!(with_method(&d.drain(), "notifications/progress").len(), 1);
    d.call("tasks/cancel", json!({ "taskId": "task-1" }));
    d.session
        .notify_progress(now, ProgressTarget::Task("task-1"), 2.0, None, None)
        .unwrap();
    assert!(d.drain().is_empty());
}

#[test]
fn terminal_tasks_cannot_be_cancelled() {
    let mut d = Driver::ready_server(server_config(), |_| {});
    let now = d.now;
    for id in ["done", "broken", "gone"] {
        d.session.create_task(now, id, None).unwrap();
    }
    d.session
        .complete_task(now, "done", text_result("ok"))
        .unwrap();
    d.session
        .fail_task(now, "broken", RpcError::new(-32603, "no"))
        .unwrap();
    d.drain();
    d.call("tasks/cancel", json!({ "taskId": "gone" }));
    d.take_events();
    for (id, status) in [
        ("done", "completed"),
        ("broken", "failed"),
        ("gone", "cancelled"),
    ] {
        let reply = d.call("tasks/cancel", json!({ "taskId": id }));
        assert_eq!(error_code(&reply), Some(-32602), "{id}: {reply}");
        assert!(error_message(&reply).contains(status), "{reply}");
        let task = d.call("tasks/get", json!({ "taskId": id }));
        assert_eq!(task["result"]["status"], status);
    }
    assert!(stops(&d.take_events()).is_empty());
    let reply = d.call("tasks/result", json!({ "taskId": "done" }));
    assert_eq!(reply["result"]["content"][0]["text"], "ok");
}

#[test]
fn unknown_task_cannot_be_cancelled() {
    let mut d = with_task();
    let reply = d.call("tasks/cancel", json!({ "taskId": "nope" }));
    assert_eq!(error_code(&reply), Some(-32602));
    assert!(d.take_events().is_empty());
}

#[test]
fn cancelling_during_input_required_withdraws_the_input_request() {
    let mut d = with_task();
    let now = d.now;
    let input = d
        .session
        .request_input(now, "task-1", "elicitation/create",
            json!({ "mode": "form", "message": "ok?", "requestedSchema": { "type": "object", "properties": {} } }))
        .unwrap();
    d.drain();
    let out = {
        let (_, out) = d.send("tasks/cancel", json!({ "taskId": "task-1" }));
        out
    };
    assert_eq!(out[0]["result"]["status"], "cancelled");
    let withdrawn = with_method(&out, "notifications/cancelled");
    assert_eq!(withdrawn.len(), 1, "{out:?}");
    assert_eq!(
        withdrawn[0]["params"]["requestId"],
        serde_json::to_value(&input).unwrap()
    );
    // The peer's late answer changes nothing and is no error.
    d.take_events();
    let late = d.reply(
        &serde_json::to_value(&input).unwrap(),
        json!({ "action": "accept" }),
    );
    assert!(late.is_empty(), "{late:?}");
    let events = d.take_events();
    assert!(events.is_empty(), "dropped quietly: {events:?}");
    let reply = d.call("tasks/get", json!({ "taskId": "task-1" }));
    assert_eq!(reply["result"]["status"], "cancelled");
}

#[test]
fn without_the_cancel_capability_it_is_method_not_found() {
    let mut config = server_config();
    config.tasks.cancel = false;
    let mut d = Driver::ready_server(config, |_| {});
    d.session.create_task(d.now, "t", None).unwrap();
    let reply = d.call("tasks/cancel", json!({ "taskId": "t" }));
    assert_eq!(error_code(&reply), Some(-32601));
    let reply = d.call("tasks/get", json!({ "taskId": "t" }));
    assert_eq!(reply["result"]["status"], "working");
    let _: Value = reply;
}
