//! `tasks/get` and `tasks/result` (spec §2.7, §2.8, §2.14, §5.4, §5.10): flat task views,
//! parked results, replay, related-task `_meta`, and how each kind of outcome is answered.

use serde_json::{json, Value};
use taskwire_engine::{Era, Outcome, RpcError, TaskStatus, TaskSupport, UsageError};
use taskwire_harness::msg::{error_code, error_message, related_task, response, statuses};
use taskwire_harness::setup::{error_result, server_config, stamp, text_result, tool};
use taskwire_harness::Probe;

/// A ready server with one task, `task-1`, created at T0.
fn with_task() -> Probe {
    let mut d = Probe::ready_server(server_config(), |s| {
        s.add_tool(tool("job", TaskSupport::Optional))
    });
    let reply = d.call(
        "tools/call",
        json!({ "name": "job", "arguments": {}, "task": {} }),
    );
    assert_eq!(reply["result"]["task"]["taskId"], "task-1");
    d.take_events();
    d
}

fn get(d: &mut Probe, task: &str) -> Value {
    d.call("tasks/get", json!({ "taskId": task }))
}

#[test]
fn tasks_get_returns_the_flat_task_as_it_changes() {
    let mut d = with_task();
    d.advance(2000);
    let work = d.work("task-1");
    d.host
        .set_task_message(d.now, work, Some("2 of 4 steps".into()))
        .unwrap();
    d.drain();
    d.advance(500);
    let reply = get(&mut d, "task-1");
    assert_eq!(
        reply["result"],
        json!({ "taskId": "task-1", "status": "working", "statusMessage": "2 of 4 steps",
                "createdAt": stamp(0), "lastUpdatedAt": stamp(2000),
                "ttl": 300000, "pollInterval": 500 })
    );
}

#[test]
fn tasks_get_ignores_related_task_meta_and_extra_keys() {
    let mut d = with_task();
    let reply = d.call(
        "tasks/get",
        json!({ "taskId": "task-1", "extra": true,
                "_meta": { "io.modelcontextprotocol/related-task": { "taskId": "other" } } }),
    );
    assert_eq!(reply["result"]["taskId"], "task-1");
}

#[test]
fn unknown_or_malformed_task_ids_are_invalid_params() {
    let mut d = with_task();
    for method in ["tasks/get", "tasks/result", "tasks/cancel"] {
        let reply = d.call(method, json!({ "taskId": "does-not-exist" }));
        assert_eq!(error_code(&reply), Some(-32602), "{method}: {reply}");
        assert!(error_message(&reply).contains("not found"), "{reply}");
        let reply = d.call(method, json!({}));
        assert_eq!(error_code(&reply), Some(-32602), "{method}: {reply}");
        assert!(error_message(&reply).contains("taskId"), "{reply}");
        let reply = d.call(method, json!({ "taskId": 17 }));
        assert_eq!(error_code(&reply), Some(-32602), "{method}: {reply}");
        let reply = d.call(method, Value::Null);
        assert_eq!(error_code(&reply), Some(-32602), "{method} without params");
    }
}

#[test]
fn tasks_result_parks_until_terminal_then_answers_every_waiter_in_order() {
    let mut d = with_task();
    let (first, out) = d.send("tasks/result", json!({ "taskId": "task-1" }));
    assert!(out.is_empty(), "parked: {out:?}");
    d.advance(1000);
    let (second, out) = d.send("tasks/result", json!({ "taskId": "task-1" }));
    assert!(out.is_empty(), "parked: {out:?}");
    assert_eq!(get(&mut d, "task-1")["result"]["status"], "working");

    d.advance(4000);
    let work = d.work("task-1");
    d.host
        .respond(d.now, work, Ok(text_result("done")))
        .unwrap();
    let out = d.drain();
    let answers: Vec<_> = out.iter().filter(|m| m.get("id").is_some()).collect();
    assert_eq!(answers.len(), 2, "{out:?}");
    assert_eq!(answers[0]["id"], first);
    assert_eq!(answers[1]["id"], second);
    for answer in answers {
        assert_eq!(answer["result"]["content"], text_result("done")["content"]);
        assert_eq!(related_task(&answer["result"]), Some("task-1"));
    }
    assert_eq!(statuses(&out), ["completed"]);

    // Replayed at once, as often as asked.
    for _ in 0..2 {
        let reply = d.call("tasks/result", json!({ "taskId": "task-1" }));
        assert_eq!(reply["result"]["content"][0]["text"], "done");
        assert_eq!(related_task(&reply["result"]), Some("task-1"));
    }
    let task = get(&mut d, "task-1")["result"].clone();
    assert_eq!(task["status"], "completed");
    assert_eq!(task["lastUpdatedAt"], stamp(5000));
}

#[test]
fn result_meta_keeps_the_apps_keys() {
    let mut d = with_task();
    let mut result = text_result("x");
    result["_meta"] = json!({ "app/key": 1 });
    result["structuredContent"] = json!({ "rows": 3 });
    let work = d.work("task-1");
    d.host.respond(d.now, work, Ok(result)).unwrap();
    d.drain();
    let reply = d.call("tasks/result", json!({ "taskId": "task-1" }));
    assert_eq!(reply["result"]["_meta"]["app/key"], 1);
    assert_eq!(reply["result"]["structuredContent"], json!({ "rows": 3 }));
    assert_eq!(related_task(&reply["result"]), Some("task-1"));
}

#[test]
fn is_error_result_fails_the_task_but_is_replayed_as_a_success_response() {
    let mut d = with_task();
    let (parked, _) = d.send("tasks/result", json!({ "taskId": "task-1" }));
    let work = d.work("task-1");
    d.host
        .respond(d.now, work, Ok(error_result("disk full")))
        .unwrap();
    let out = d.drain();
    let answer = response(&out, &parked).unwrap();
    assert_eq!(answer["result"]["isError"], true);
    assert_eq!(answer["result"]["content"][0]["text"], "disk full");
    assert_eq!(related_task(&answer["result"]), Some("task-1"));
    let task = get(&mut d, "task-1")["result"].clone();
    assert_eq!(task["status"], "failed");
    assert_eq!(
        task["statusMessage"], "disk full",
        "a diagnostic message (§2.6.5)"
    );
    // Stored era-neutral: `completed` with a tool error; only the 2025-11-25 wire says failed.
    let stored = d.host.task("task-1").unwrap();
    assert_eq!(stored.info.status, TaskStatus::Completed);
    assert!(
        matches!(stored.outcome, Some(Outcome::Result { is_error: true, .. })),
        "{stored:?}"
    );
    // What its requestor sees, as the operator's view shows it.
    assert_eq!(stored.shown_status(), TaskStatus::Failed);
    let brief = d.host.task_brief("task-1").unwrap();
    assert_eq!(brief.status, TaskStatus::Failed);
    assert_eq!(brief.created_at, stored.info.created_at);
    let ttl = stored.info.ttl_ms.expect("a retention");
    assert_eq!(brief.expires_at, Some(stored.info.created_at.plus(ttl)));
    assert!(d.host.task_brief("no-such-task").is_none());
    let in_2026 = Era::V2026_07_28.shown_status(TaskStatus::Completed, true);
    assert_eq!(
        in_2026,
        TaskStatus::Completed,
        "2026-07-28 shows it completed"
    );
}

#[test]
fn json_rpc_error_fails_the_task_and_the_same_error_is_replayed() {
    let mut d = with_task();
    let (parked, _) = d.send("tasks/result", json!({ "taskId": "task-1" }));
    let error =
        RpcError::new(-32603, "Upstream index unavailable").with_data(json!({ "retry": 30 }));
    let work = d.work("task-1");
    d.host.respond(d.now, work, Err(error)).unwrap();
    let out = d.drain();
    let expected = json!({ "code": -32603, "message": "Upstream index unavailable",
                           "data": { "retry": 30 } });
    assert_eq!(response(&out, &parked).unwrap()["error"], expected);
    let reply = d.call("tasks/result", json!({ "taskId": "task-1" }));
    assert_eq!(reply["error"], expected);
    let task = get(&mut d, "task-1")["result"].clone();
    assert_eq!(task["status"], "failed");
    assert_eq!(task["statusMessage"], "Upstream index unavailable");
}

#[test]
fn a_second_outcome_is_dropped_and_reported() {
    let mut d = with_task();
    let work = d.work("task-1");
    d.host
        .respond(d.now, work, Ok(text_result("first")))
        .unwrap();
    // OutcomeDropped is gone: the first answer used the call up, later ones are refused.
    assert_eq!(
        d.host.respond(d.now, work, Err(RpcError::new(-1, "late"))),
        Err(UsageError::UnknownCall(work))
    );
    assert_eq!(
        d.host.respond(d.now, work, Ok(text_result("second"))),
        Err(UsageError::UnknownCall(work))
    );
    assert_eq!(statuses(&d.drain()), ["completed"], "one change only");
    let reply = d.call("tasks/result", json!({ "taskId": "task-1" }));
    assert_eq!(reply["result"]["content"][0]["text"], "first");
}

#[test]
fn cancelled_notification_drops_only_that_parked_result() {
    let mut d = with_task();
    let (dropped, _) = d.send("tasks/result", json!({ "taskId": "task-1" }));
    let (kept, _) = d.send("tasks/result", json!({ "taskId": "task-1" }));
    let out = d.notify(
        "notifications/cancelled",
        Some(json!({ "requestId": dropped, "reason": "gave up" })),
    );
    assert!(out.is_empty(), "{out:?}");
    assert_eq!(
        get(&mut d, "task-1")["result"]["status"],
        "working",
        "the task lives on"
    );
    let work = d.work("task-1");
    d.host.respond(d.now, work, Ok(text_result("ok"))).unwrap();
    let out = d.drain();
    assert!(response(&out, &dropped).is_none(), "{out:?}");
    assert!(response(&out, &kept).is_some(), "{out:?}");
}

#[test]
fn commands_on_unknown_tasks_are_usage_errors() {
    let mut d = with_task();
    let now = d.now;
    // Unknown work: a plain call already answered (answers go through calls now).
    let (id, _) = d.send("tools/call", json!({ "name": "job", "arguments": {} }));
    let gone = d.call_for(&id);
    d.host.respond(now, gone, Ok(text_result("x"))).unwrap();
    d.drain();
    assert_eq!(
        d.host.respond(now, gone, Ok(text_result("x"))),
        Err(UsageError::UnknownCall(gone))
    );
    assert_eq!(
        d.host.respond(now, gone, Err(RpcError::new(-1, "x"))),
        Err(UsageError::UnknownCall(gone))
    );
    assert_eq!(
        d.host.set_task_message(now, gone, None),
        Err(UsageError::UnknownCall(gone))
    );
    let work = d.work("task-1");
    assert!(matches!(
        d.host.respond(now, work, Ok(json!("not an object"))),
        Err(UsageError::NotAnObject(_))
    ));
    assert!(d.drain().is_empty());
    assert_eq!(get(&mut d, "task-1")["result"]["status"], "working");
}
