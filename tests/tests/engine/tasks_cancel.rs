//! `tasks/cancel` (spec §2.10, §5.1, §5.2): working and input_required tasks become
//! `cancelled` before the answer; terminal and unknown tasks are -32602; the work is told to
//! stop; a later outcome is dropped.

use serde_json::{json, Value};
use taskwire_engine::{
    CallId, Event, Owner, RpcError, StopReason, TaskStatus, TaskSupport, UsageError,
};
use taskwire_harness::msg::{error_code, error_message, response, statuses, with_method};
use taskwire_harness::probe::OWNER;
use taskwire_harness::setup::{server_config, stamp, text_result, tool};
use taskwire_harness::Probe;

fn with_task() -> Probe {
    let mut d = Probe::ready_server(server_config(), |s| {
        s.add_tool(tool("job", TaskSupport::Optional))
    });
    d.call(
        "tools/call",
        json!({ "name": "job", "arguments": {}, "task": {}, "_meta": { "progressToken": "p" } }),
    );
    d.take_events();
    d
}

fn stops(events: &[Event]) -> Vec<(CallId, StopReason)> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::Stop { call, reason, .. } => Some((*call, *reason)),
            _ => None,
        })
        .collect()
}

#[test]
fn cancelling_a_working_task() {
    let mut d = with_task();
    let work = d.work("task-1");
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
    assert_eq!(stops(&d.take_events()), [(work, StopReason::Cancelled)]);

    let reply = d.call("tasks/result", json!({ "taskId": "task-1" }));
    assert_eq!(error_code(&reply), Some(-32602));
    assert!(error_message(&reply).contains("cancelled"), "{reply}");
    let reply = d.call("tasks/get", json!({ "taskId": "task-1" }));
    assert_eq!(reply["result"]["status"], "cancelled");
}

#[test]
fn completion_after_cancel_is_dropped_and_reported() {
    let mut d = with_task();
    d.call(
        "tools/call",
        json!({ "name": "job", "arguments": {}, "task": {} }),
    );
    let work = [d.work("task-1"), d.work("task-2")];
    for task in ["task-1", "task-2"] {
        d.call("tasks/cancel", json!({ "taskId": task }));
    }
    d.take_events();
    let now = d.now.plus(10);
    // OutcomeDropped is gone: the late answer is refused with TaskFinished (intended change).
    let late: [Result<Value, RpcError>; 2] =
        [Ok(text_result("late")), Err(RpcError::new(-32603, "late"))];
    for ((call, task), outcome) in work.into_iter().zip(["task-1", "task-2"]).zip(late) {
        assert_eq!(
            d.host.respond(now, call, outcome),
            Err(UsageError::TaskFinished {
                task: task.into(),
                status: TaskStatus::Cancelled
            })
        );
        // That answer used the call up.
        assert_eq!(
            d.host.respond(now, call, Ok(text_result("again"))),
            Err(UsageError::UnknownCall(call))
        );
    }
    let out = d.drain();
    assert!(out.is_empty(), "nothing reaches the peer: {out:?}");
    let events = d.take_events();
    assert!(events.is_empty(), "{events:?}");
    for task in ["task-1", "task-2"] {
        let reply = d.call("tasks/get", json!({ "taskId": task }));
        assert_eq!(reply["result"]["status"], "cancelled");
        assert_eq!(reply["result"]["lastUpdatedAt"], stamp(0));
    }
}

#[test]
fn progress_stops_at_cancellation() {
    let mut d = with_task();
    let now = d.now;
    let work = d.work("task-1");
    d.host.notify_progress(now, work, 1.0, None, None).unwrap();
    assert_eq!(with_method(&d.drain(), "notifications/progress").len(), 1);
    d.call("tasks/cancel", json!({ "taskId": "task-1" }));
    // One rule for every command on a finished task (it used to be a silent no-op).
    assert_eq!(
        d.host.notify_progress(now, work, 2.0, None, None),
        Err(UsageError::TaskFinished {
            task: "task-1".into(),
            status: TaskStatus::Cancelled
        })
    );
    assert!(d.drain().is_empty());
}

#[test]
fn terminal_tasks_cannot_be_cancelled() {
    let mut d = Probe::ready_server(server_config(), |_| {});
    let now = d.now;
    let owner = Owner::from(OWNER);
    let mut work = Vec::new();
    for id in ["done", "broken", "gone"] {
        work.push(d.host.create_task(now, &owner, id, None).unwrap());
    }
    d.host.respond(now, work[0], Ok(text_result("ok"))).unwrap();
    d.host
        .respond(now, work[1], Err(RpcError::new(-32603, "no")))
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
    let work = d.work("task-1");
    d.host
        .request_input(now, work, "elicitation/create",
            json!({ "mode": "form", "message": "ok?", "requestedSchema": { "type": "object", "properties": {} } }))
        .unwrap();
    let input = with_method(&d.drain(), "elicitation/create")[0]["id"].clone();
    let out = {
        let (_, out) = d.send("tasks/cancel", json!({ "taskId": "task-1" }));
        out
    };
    assert_eq!(out[0]["result"]["status"], "cancelled");
    let withdrawn = with_method(&out, "notifications/cancelled");
    assert_eq!(withdrawn.len(), 1, "{out:?}");
    assert_eq!(withdrawn[0]["params"]["requestId"], input);
    // The peer's late answer changes nothing and is no error.
    d.take_events();
    let late = d.reply(&input, json!({ "action": "accept" }));
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
    let mut d = Probe::ready_server(config, |_| {});
    d.host
        .create_task(d.now, &Owner::from(OWNER), "t", None)
        .unwrap();
    let reply = d.call("tasks/cancel", json!({ "taskId": "t" }));
    assert_eq!(error_code(&reply), Some(-32601));
    let reply = d.call("tasks/get", json!({ "taskId": "t" }));
    assert_eq!(reply["result"]["status"], "working");
    let _: Value = reply;
}

#[test]
fn the_application_cancels_its_own_task_as_a_requestor_would() {
    let mut d = with_task();
    let work = d.work("task-1");
    let (parked, _) = d.send("tasks/result", json!({ "taskId": "task-1" }));
    d.advance(1000);
    let why = Some("Cancelled behind the proxy".to_owned());
    d.host.cancel_work(d.now, work, why).unwrap();
    let out = d.drain();
    assert_eq!(statuses(&out), ["cancelled"]);
    let parked = response(&out, &parked).expect("the parked result is answered");
    assert_eq!(error_code(parked), Some(-32602));
    assert_eq!(parked["error"]["data"]["taskId"], "task-1");
    assert_eq!(stops(&d.take_events()), [(work, StopReason::Cancelled)]);
    let reply = d.call("tasks/get", json!({ "taskId": "task-1" }));
    assert_eq!(reply["result"]["status"], "cancelled");
    assert_eq!(
        reply["result"]["statusMessage"],
        "Cancelled behind the proxy"
    );

    let again = d.host.cancel_work(d.now, work, None);
    assert!(
        matches!(
            again,
            Err(UsageError::TaskFinished { .. }) | Err(UsageError::UnknownCall(_))
        ),
        "{again:?}"
    );
    // A call without a task has none to cancel.
    let mut plain = Probe::ready_server(server_config(), |s| {
        s.add_tool(tool("job", TaskSupport::Optional))
    });
    plain.send("tools/call", json!({ "name": "job", "arguments": {} }));
    let call = plain.tool_calls()[0];
    let refused = plain.host.cancel_work(plain.now, call, None);
    assert!(
        matches!(refused, Err(UsageError::UnknownCall(_))),
        "{refused:?}"
    );
}

#[test]
fn the_application_cancels_a_task_by_its_id_whoever_owns_it() {
    let mut d = with_task();
    let work = d.work("task-1");
    d.advance(1000);
    let why = Some("Cancelled by an operator".to_owned());
    d.host.cancel_hosted(d.now, "task-1", why).unwrap();
    let out = d.drain();
    assert_eq!(statuses(&out), ["cancelled"]);
    assert_eq!(stops(&d.take_events()), [(work, StopReason::Cancelled)]);
    let reply = d.call("tasks/get", json!({ "taskId": "task-1" }));
    assert_eq!(reply["result"]["status"], "cancelled");
    assert_eq!(reply["result"]["statusMessage"], "Cancelled by an operator");
    // Ended already, or never held: refused, and nothing is sent.
    let again = d.host.cancel_hosted(d.now, "task-1", None);
    assert!(
        matches!(again, Err(UsageError::TaskFinished { ref task, status: TaskStatus::Cancelled }) if task == "task-1"),
        "{again:?}"
    );
    let unknown = d.host.cancel_hosted(d.now, "no-such-task", None);
    assert!(
        matches!(unknown, Err(UsageError::UnknownTask(_))),
        "{unknown:?}"
    );
    assert!(d.drain().is_empty());
}
