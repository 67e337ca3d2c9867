//! `Host::sync`: two hosts sharing one store (replicas on one database). A task made on one
//! is read, listed, waited for and cancelled on the other; its end reaches the other's
//! parked `tasks/result`; a cancel taken by the other stops the work where it runs; a task
//! ended here keeps its outcome; nothing synced is journaled again; a task whose host
//! stopped is taken over (`Host::adopt`) and its work runs again, one attempt more.

use serde_json::json;
use taskwire_engine::{Config, Durability, Event, StopReason, TaskSnapshot, TaskSupport};
use taskwire_harness::msg::response;
use taskwire_harness::setup::{server_config, text_result, tool};
use taskwire_harness::Probe;

use crate::common::stored;

fn replica() -> Probe {
    let mut config: Config = server_config();
    config.durability = Durability::Journal;
    Probe::ready_server(config, |h| h.add_tool(tool("job", TaskSupport::Optional)))
}

fn start(d: &mut Probe) -> String {
    let reply = d.call(
        "tools/call",
        json!({ "name": "job", "arguments": {}, "task": { "ttl": 60_000 } }),
    );
    reply["result"]["task"]["taskId"]
        .as_str()
        .unwrap()
        .to_owned()
}

fn sync(d: &mut Probe, snapshot: TaskSnapshot) {
    let now = d.now;
    d.host.sync(now, snapshot).expect("synced");
}

#[test]
fn a_task_made_elsewhere_is_read_listed_and_waited_for_here() {
    let (mut a, mut b) = (replica(), replica());
    let task = start(&mut a);
    sync(&mut b, stored(&a.journal, &task));
    let got = b.call("tasks/get", json!({ "taskId": task }));
    assert_eq!(got["result"]["status"], "working", "{got}");
    let listed = b.call("tasks/list", json!({}));
    assert_eq!(listed["result"]["tasks"][0]["taskId"], task.as_str());
    let (wait, out) = b.send("tasks/result", json!({ "taskId": task }));
    assert!(out.is_empty(), "parked: {out:?}");

    // The work ends on A; B hears it from the store.
    let now = a.now;
    let call = a.work(&task);
    a.host
        .respond(now, call, Ok(text_result("made on A")))
        .unwrap();
    a.drain();
    sync(&mut b, stored(&a.journal, &task));
    let out = b.drain();
    let result = response(&out, &wait).expect("the parked result is answered");
    assert_eq!(
        result["result"]["content"][0]["text"], "made on A",
        "{result}"
    );
    assert!(
        b.journal.is_empty(),
        "nothing synced is journaled: {:?}",
        b.journal
    );
    assert!(
        !b.take_events()
            .iter()
            .any(|e| matches!(e, Event::ToolCall(_) | Event::Stop { .. })),
        "no work runs on B"
    );
}

#[test]
fn a_cancel_taken_elsewhere_stops_the_work_where_it_runs() {
    let (mut a, mut b) = (replica(), replica());
    let task = start(&mut a);
    let call = a.work(&task);
    a.take_events();
    sync(&mut b, stored(&a.journal, &task));
    b.take_events();
    let cancelled = b.call("tasks/cancel", json!({ "taskId": task }));
    assert_eq!(cancelled["result"]["status"], "cancelled", "{cancelled}");
    assert!(
        !b.take_events()
            .iter()
            .any(|e| matches!(e, Event::Stop { .. })),
        "nothing runs on B to stop"
    );

    sync(&mut a, stored(&b.journal, &task));
    a.drain();
    assert!(
        a.take_events().iter().any(|e| matches!(
            e,
            Event::Stop { call: c, reason: StopReason::Cancelled, .. } if *c == call
        )),
        "the work on A stops"
    );
    let got = a.call("tasks/get", json!({ "taskId": task }));
    assert_eq!(got["result"]["status"], "cancelled");
    // The work's late answer changes nothing.
    let now = a.now;
    assert!(a.host.respond(now, call, Ok(text_result("late"))).is_err());
}

#[test]
fn a_status_message_made_elsewhere_reaches_the_sessions_here() {
    let (mut a, mut b) = (replica(), replica());
    let task = start(&mut a);
    sync(&mut b, stored(&a.journal, &task));
    // B's session follows the task once it asked about it.
    b.call("tasks/get", json!({ "taskId": task }));
    let mut moved = stored(&a.journal, &task);
    moved.info.status_message = Some("half way".into());
    moved.info.last_updated_at = a.now.plus(10);
    sync(&mut b, moved);
    let got = b.call("tasks/get", json!({ "taskId": task }));
    assert_eq!(got["result"]["statusMessage"], "half way", "{got}");
}

#[test]
fn a_task_ended_here_keeps_its_outcome_and_an_expired_one_is_not_added() {
    let (mut a, mut b) = (replica(), replica());
    let task = start(&mut a);
    let working = stored(&a.journal, &task);
    let now = a.now;
    let call = a.work(&task);
    a.host.respond(now, call, Ok(text_result("done"))).unwrap();
    a.drain();
    sync(&mut a, working.clone());
    let got = a.call("tasks/get", json!({ "taskId": task }));
    assert_eq!(got["result"]["status"], "completed");

    let mut old = working;
    old.info.ttl_ms = Some(1);
    b.advance(10);
    sync(&mut b, old);
    let got = b.call("tasks/get", json!({ "taskId": task }));
    assert_eq!(got["error"]["code"], -32602, "{got}");
}

#[test]
fn a_task_whose_host_stopped_is_taken_over_and_its_work_runs_here_again() {
    let (mut a, mut b) = (replica(), replica());
    let task = start(&mut a);
    let working = stored(&a.journal, &task);
    assert_eq!(working.request.as_ref().map(|r| r.attempt), Some(1));
    sync(&mut b, working.clone());
    b.take_events();
    assert!(!b.host.runs_here(&task), "synced: A runs it");

    // A third host ran it again and stopped too; the store hands the task to B, which
    // counts on from the store's attempt, not from the one it heard first.
    let mut ran_again = working.clone();
    if let Some(request) = ran_again.request.as_mut() {
        request.attempt = 2;
    }
    let now = b.now;
    b.host.adopt(now, ran_again).expect("adopted");
    b.drain();
    let restored: Vec<_> = b
        .take_events()
        .into_iter()
        .filter_map(|e| match e {
            Event::Restored {
                call,
                task: t,
                request,
            } => Some((call, t, request)),
            _ => None,
        })
        .collect();
    let [(call, t, Some(request))] = &restored[..] else {
        panic!("one Restored event with the request: {restored:?}");
    };
    assert_eq!(t.as_str(), task);
    assert_eq!((request.tool.as_str(), request.attempt), ("job", 3));
    assert!(b.host.runs_here(&task), "the work runs on B now");
    assert_eq!(
        stored(&b.journal, &task).request.map(|r| r.attempt),
        Some(3),
        "the third attempt is stored"
    );
    // B's work ends the task.
    let now = b.now;
    b.host.respond(now, *call, Ok(text_result("on B"))).unwrap();
    let got = b.call("tasks/get", json!({ "taskId": task }));
    assert_eq!(got["result"]["status"], "completed", "{got}");

    // Taken over again once it runs here, or once it ended: nothing starts.
    let now = b.now;
    b.host.adopt(now, working).expect("adopted");
    b.drain();
    assert!(
        !b.take_events()
            .iter()
            .any(|e| matches!(e, Event::Restored { .. })),
        "an ended task is not run again"
    );
}
