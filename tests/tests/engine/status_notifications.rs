//! `notifications/tasks/status` (spec §2.6, §2.11, §5.22): one per change, the full task,
//! no related-task `_meta`, nothing once terminal, nothing when switched off.

use serde_json::{json, Value};
use taskwire_engine::{Config, TaskSupport, UsageError};
use taskwire_harness::msg::{statuses, with_method};
use taskwire_harness::setup::{server_config, stamp, text_result, tool};
use taskwire_harness::Probe;

fn with_task(config: Config) -> Probe {
    let mut d = Probe::ready_server(config, |s| s.add_tool(tool("job", TaskSupport::Optional)));
    let (_, out) = d.send(
        "tools/call",
        json!({ "name": "job", "arguments": {}, "task": {} }),
    );
    assert!(
        statuses(&out).is_empty(),
        "creation is announced by the CreateTaskResult only"
    );
    d
}

fn elicit() -> Value {
    json!({ "mode": "form", "message": "?", "requestedSchema": { "type": "object", "properties": {} } })
}

#[test]
fn every_change_is_announced_once_with_the_whole_task() {
    let mut d = with_task(server_config());
    let mut out = Vec::new();
    let work = d.work("task-1");
    d.now = d.now.plus(1000);
    d.host
        .set_task_message(d.now, work, Some("step 1".into()))
        .unwrap();
    d.host
        .set_task_message(d.now, work, Some("step 1".into()))
        .unwrap();
    out.extend(d.drain());
    d.now = d.now.plus(1000);
    d.host
        .request_input(d.now, work, "elicitation/create", elicit())
        .unwrap();
    let sent = d.drain();
    let input = with_method(&sent, "elicitation/create")[0]["id"].clone();
    out.extend(sent);
    d.now = d.now.plus(1000);
    out.extend(d.reply(&input, json!({ "action": "decline" })));
    d.now = d.now.plus(1000);
    d.host.respond(d.now, work, Ok(text_result("ok"))).unwrap();
    // The answer consumed the call: a later message is refused (it used to be a no-op).
    assert_eq!(
        d.host
            .set_task_message(d.now, work, Some("after the end".into())),
        Err(UsageError::UnknownCall(work))
    );
    out.extend(d.drain());

    assert_eq!(
        statuses(&out),
        ["working", "input_required", "working", "completed"]
    );
    let notes = with_method(&out, "notifications/tasks/status");
    let stamps: Vec<_> = notes
        .iter()
        .map(|n| n["params"]["lastUpdatedAt"].clone())
        .collect();
    assert_eq!(stamps, [stamp(1000), stamp(2000), stamp(3000), stamp(4000)]);
    assert_eq!(
        notes[0]["params"],
        json!({ "taskId": "task-1", "status": "working", "statusMessage": "step 1",
                "createdAt": stamp(0), "lastUpdatedAt": stamp(1000), "ttl": 300000, "pollInterval": 500 })
    );
    let last = d.call("tasks/get", json!({ "taskId": "task-1" }));
    assert_eq!(
        last["result"]["statusMessage"], "step 1",
        "no message change once terminal"
    );
}

#[test]
fn switched_off_nothing_is_sent_but_the_state_still_moves() {
    let mut config = server_config();
    config.tasks.status_notifications = false;
    let mut d = with_task(config);
    let work = d.work("task-1");
    d.host
        .set_task_message(d.now, work, Some("busy".into()))
        .unwrap();
    d.host.respond(d.now, work, Ok(text_result("ok"))).unwrap();
    assert!(d.drain().is_empty());
    let task = d.call("tasks/get", json!({ "taskId": "task-1" }));
    assert_eq!(task["result"]["status"], "completed");
    d.call(
        "tools/call",
        json!({ "name": "job", "arguments": {}, "task": {} }),
    );
    let (_, out) = d.send("tasks/cancel", json!({ "taskId": "task-2" }));
    assert_eq!(out.len(), 1, "only the answer: {out:?}");
}

#[test]
fn clearing_the_message_is_a_change() {
    let mut d = with_task(server_config());
    let work = d.work("task-1");
    d.host
        .set_task_message(d.now, work, Some("busy".into()))
        .unwrap();
    d.host.set_task_message(d.now, work, None).unwrap();
    let out = d.drain();
    let notes = with_method(&out, "notifications/tasks/status");
    assert_eq!(notes.len(), 2);
    assert!(notes[1]["params"].get("statusMessage").is_none());
}
