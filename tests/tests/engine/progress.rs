//! Progress (spec §2.16, §3.5): a task keeps its request's `progressToken` until it is
//! terminal; task progress carries related-task `_meta`; no token, no notification.

use serde_json::json;
use taskwire_engine::{TaskStatus, UsageError};
use taskwire_harness::msg::with_method;
use taskwire_harness::setup::text_result;

use crate::common::job_server;

#[test]
fn task_progress_uses_the_original_token_until_terminal() {
    let mut d = job_server();
    d.call(
        "tools/call",
        json!({ "name": "job", "arguments": {}, "task": {}, "_meta": { "progressToken": "p-2" } }),
    );
    d.advance(1000);
    let target = d.work("task-1");
    d.host
        .notify_progress(d.now, target, 1.0, Some(4.0), Some("Loading data".into()))
        .unwrap();
    d.host
        .notify_progress(d.now, target, 2.5, None, None)
        .unwrap();
    let out = d.drain();
    let notes = with_method(&out, "notifications/progress");
    assert_eq!(
        notes[0]["params"],
        json!({ "progressToken": "p-2", "progress": 1.0, "total": 4.0, "message": "Loading data",
                "_meta": { "io.modelcontextprotocol/related-task": { "taskId": "task-1" } } })
    );
    assert_eq!(notes[1]["params"]["progress"], 2.5);

    d.host
        .respond(d.now, target, Ok(text_result("ok")))
        .unwrap();
    d.drain();
    // The answer consumes the call: progress on it is refused (it used to be a silent no-op).
    assert_eq!(
        d.host.notify_progress(d.now, target, 3.0, None, None),
        Err(UsageError::UnknownCall(target))
    );
    assert!(d.drain().is_empty(), "no progress after the end");
}

#[test]
fn no_progress_for_a_task_finished_under_the_app() {
    let mut d = job_server();
    d.call(
        "tools/call",
        json!({ "name": "job", "arguments": {}, "task": {}, "_meta": { "progressToken": "p" } }),
    );
    let work = d.work("task-1");
    d.call("tasks/cancel", json!({ "taskId": "task-1" }));
    // The one rule for every command on a finished task (intended change).
    assert_eq!(
        d.host.notify_progress(d.now, work, 1.0, None, None),
        Err(UsageError::TaskFinished {
            task: "task-1".into(),
            status: TaskStatus::Cancelled
        })
    );
    assert!(d.drain().is_empty(), "no progress after the end");
}

#[test]
fn integer_tokens_are_kept_as_integers() {
    let mut d = job_server();
    d.call(
        "tools/call",
        json!({ "name": "job", "arguments": {}, "task": {}, "_meta": { "progressToken": 7 } }),
    );
    let work = d.work("task-1");
    d.host
        .notify_progress(d.now, work, 1.0, None, None)
        .unwrap();
    let out = d.drain();
    assert_eq!(out[0]["params"]["progressToken"], 7);
}

#[test]
fn without_a_token_nothing_is_sent() {
    let mut d = job_server();
    d.call(
        "tools/call",
        json!({ "name": "job", "arguments": {}, "task": {} }),
    );
    let work = d.work("task-1");
    d.host
        .notify_progress(d.now, work, 1.0, None, None)
        .unwrap();
    assert!(d.drain().is_empty());
    // Unknown work: a plain call already answered.
    let (id, _) = d.send("tools/call", json!({ "name": "job", "arguments": {} }));
    let gone = d.call_for(&id);
    d.host
        .respond(d.now, gone, Ok(text_result("done")))
        .unwrap();
    d.drain();
    assert_eq!(
        d.host.notify_progress(d.now, gone, 1.0, None, None),
        Err(UsageError::UnknownCall(gone))
    );
}

#[test]
fn plain_request_progress_ends_with_the_answer() {
    let mut d = job_server();
    let (id, _) = d.send(
        "tools/call",
        json!({ "name": "job", "arguments": {}, "_meta": { "progressToken": "plain" } }),
    );
    let call = d.call_for(&id);
    d.host
        .notify_progress(d.now, call, 0.5, Some(1.0), None)
        .unwrap();
    let out = d.drain();
    assert_eq!(
        out[0]["params"],
        json!({ "progressToken": "plain", "progress": 0.5, "total": 1.0 })
    );
    d.host
        .respond(d.now, call, Ok(text_result("done")))
        .unwrap();
    assert_eq!(d.drain()[0]["id"], id);
    assert_eq!(
        d.host.notify_progress(d.now, call, 1.0, None, None),
        Err(UsageError::UnknownCall(call))
    );
}
