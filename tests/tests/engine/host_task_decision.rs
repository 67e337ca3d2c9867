//! The application can decide per call whether a requested task is created (issue 11 §4):
//! with `TaskDecision::App` the call arrives offered, and the application either starts the
//! task or answers plainly; by default the engine decides by the tool's `taskSupport`.
//! Either way the answer goes through the one call handle.

use serde_json::json;
use taskwire_engine::{TaskDecision, TaskSupport, ToolDef, UsageError};
use taskwire_harness::msg::response;
use taskwire_harness::setup::{server_config, text_result, tool};
use taskwire_harness::Probe;

use crate::common::last_call;

fn server() -> Probe {
    Probe::ready_server(server_config(), |h| {
        h.add_tool(ToolDef {
            decision: TaskDecision::App,
            ..ToolDef::from(tool("maybe", TaskSupport::Optional))
        });
        h.add_tool(tool("auto", TaskSupport::Optional));
    })
}

#[test]
fn the_application_starts_the_offered_task() {
    let mut d = server();
    let (id, out) = d.send(
        "tools/call",
        json!({ "name": "maybe", "arguments": {}, "task": { "ttl": 60_000 } }),
    );
    assert!(
        out.is_empty(),
        "nothing is answered before the application decides"
    );
    let call = last_call(&mut d);
    assert!(call.task_offered && call.task.is_none());
    let now = d.now;
    let task = d.host.start_task(now, call.call).unwrap();
    let out = d.drain();
    let created = response(&out, &id).expect("the CreateTaskResult");
    assert_eq!(created["result"]["task"]["taskId"], task.as_str());
    assert_eq!(created["result"]["task"]["ttl"], 60_000);
    assert_eq!(d.host.call_task(call.call), Some(&task));
    assert_eq!(
        d.host.start_task(now, call.call),
        Err(UsageError::NotATaskOffer(call.call)),
        "a task only once"
    );
    d.host
        .respond(now, call.call, Ok(text_result("decided")))
        .unwrap();
    let result = d.call("tasks/result", json!({ "taskId": task }));
    assert_eq!(result["result"]["content"][0]["text"], "decided");
}

#[test]
fn the_application_answers_an_offered_call_plainly() {
    let mut d = server();
    let (id, _) = d.send(
        "tools/call",
        json!({ "name": "maybe", "arguments": {}, "task": {} }),
    );
    let call = last_call(&mut d);
    let now = d.now;
    d.host
        .respond(now, call.call, Ok(text_result("right away")))
        .unwrap();
    let out = d.drain();
    let reply = response(&out, &id).unwrap();
    assert_eq!(reply["result"]["content"][0]["text"], "right away");
    assert_eq!(d.host.task_count(), 0, "no task was created");
}

#[test]
fn by_default_the_engine_decides_and_plain_calls_are_never_offered() {
    let mut d = server();
    d.call(
        "tools/call",
        json!({ "name": "auto", "arguments": {}, "task": {} }),
    );
    let call = last_call(&mut d);
    assert!(call.task.is_some() && !call.task_offered);
    d.send("tools/call", json!({ "name": "maybe", "arguments": {} }));
    let plain = last_call(&mut d);
    assert!(!plain.task_offered, "no task was asked for");
    let now = d.now;
    assert_eq!(
        d.host.start_task(now, plain.call),
        Err(UsageError::NotATaskOffer(plain.call))
    );
}
