//! `notifications/cancelled` (spec §2.16, §3.4, §5.12): it stops a plain request and
//! suppresses its answer; it never touches a task; unknown or malformed ones are ignored.

use serde_json::json;
use taskwire_engine::{Event, StopReason, UsageError};
use taskwire_harness::setup::text_result;

use crate::common::job_server;

#[test]
fn a_cancelled_plain_request_is_never_answered() {
    let mut d = job_server();
    let (id, _) = d.send("tools/call", json!({ "name": "job", "arguments": {} }));
    let call = d.call_for(&id);
    d.take_events();
    let out = d.notify(
        "notifications/cancelled",
        Some(json!({ "requestId": id, "reason": "user pressed stop" })),
    );
    assert!(out.is_empty(), "no reply to a notification: {out:?}");
    let events = d.take_events();
    assert!(
        matches!(&events[..], [Event::Stop { call: c, reason: StopReason::Cancelled, message: Some(why) }]
            if *c == call && why == "user pressed stop"),
        "{events:?}"
    );
    assert_eq!(
        d.host.respond(d.now, call, Ok(text_result("late"))),
        Err(UsageError::UnknownCall(call))
    );
    assert!(d.drain().is_empty());
    d.assert_alive();
}

#[test]
fn it_does_not_cancel_a_task() {
    let mut d = job_server();
    let (id, _) = d.send(
        "tools/call",
        json!({ "name": "job", "arguments": {}, "task": {} }),
    );
    d.take_events();
    let out = d.notify("notifications/cancelled", Some(json!({ "requestId": id })));
    assert!(out.is_empty());
    assert!(d.take_events().is_empty());
    let reply = d.call("tasks/get", json!({ "taskId": "task-1" }));
    assert_eq!(reply["result"]["status"], "working");
}

#[test]
fn unknown_and_malformed_cancellations_are_ignored() {
    let mut d = job_server();
    for params in [
        json!({ "requestId": 999 }),
        json!({ "reason": "no id" }),
        json!({}),
    ] {
        let out = d.notify("notifications/cancelled", Some(params));
        assert!(out.is_empty());
    }
    assert!(d.take_events().is_empty());
    let out = d.notify(
        "notifications/cancelled",
        Some(json!({ "requestId": { "x": 1 } })),
    );
    assert!(out.is_empty(), "never a reply to a notification");
    assert!(matches!(&d.take_events()[..], [Event::PeerError { .. }]));
    d.assert_alive();
}

#[test]
fn unknown_notifications_are_ignored_silently() {
    let mut d = job_server();
    assert!(d
        .notify("notifications/whatever", Some(json!({ "a": 1 })))
        .is_empty());
    assert!(d
        .notify("notifications/roots/list_changed", None)
        .is_empty());
    // Notifications the engine does not handle now reach the app (intended change 7).
    let methods: Vec<String> = d
        .take_events()
        .into_iter()
        .map(|e| match e {
            Event::Notification { method, .. } => method,
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(
        methods,
        ["notifications/whatever", "notifications/roots/list_changed"]
    );
}
