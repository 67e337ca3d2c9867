//! Progress (spec §2.16, §3.5): a task keeps its request's `progressToken` until it is
//! terminal; task progress carries related-task `_meta`; no token, no notification.

use serde_json::json;
use taskwire_engine::{ProgressTarget, TaskSupport, UsageError};
use taskwire_tests::msg::{id_json, with_method};
use taskwire_tests::setup::{server_config, text_result, tool};
use taskwire_tests::Driver;

fn server() -> Driver {
    Driver::ready_server(server_config(), |s| {
        s.add_tool(tool("job", TaskSupport::Optional))
    })
}

#[test]
fn task_progress_uses_the_original_token_until_terminal() {
    let mut d = server();
    d.call(
        "tools/call",
        json!({ "name": "job", "arguments": {}, "task": {}, "_meta": { "progressToken": "p-2" } }),
    );
    d.advance(1000);
    let target = ProgressTarget::Task("task-1");
    d.session
        .notify_progress(d.now, target, 1.0, Some(4.0), Some("Loading data".into()))
        .unwrap();
    d.session
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

    d.session
        .complete_task(d.now, "task-1", text_result("ok"))
        .unwrap();
    d.drain();
    d.session
        .notify_progress(d.now, target, 3.0, None, None)
        .unwrap();
    assert!(d.drain().is_empty(), "no progress after the end");
}

#[test]
fn integer_tokens_are_kept_as_integers() {
    let mut d = server();
    d.call(
        "tools/call",
        json!({ "name": "job", "arguments": {}, "task": {}, "_meta": { "progressToken": 7 } }),
    );
    d.session
        .notify_progress(d.now, ProgressTarget::Task("task-1"), 1.0, None, None)
        .unwrap();
    let out = d.drain();
    assert_eq!(out[0]["params"]["progressToken"], 7);
}

#[test]
fn without_a_token_nothing_is_sent() {
    let mut d = server();
    d.call(
        "tools/call",
        json!({ "name": "job", "arguments": {}, "task": {} }),
    );
    d.session
        .notify_progress(d.now, ProgressTarget::Task("task-1"), 1.0, None, None)
        .unwrap();
    assert!(d.drain().is_empty());
    assert!(matches!(
        d.session
            .notify_progress(d.now, ProgressTarget::Task("nope"), 1.0, None, None),
        Err(UsageError::UnknownTask(_))
    ));
}

#[test]
fn plain_request_progress_ends_with_the_answer() {
    let mut d = server();
    let (id, _) = d.send(
        "tools/call",
        json!({ "name": "job", "arguments": {}, "_meta": { "progressToken": "plain" } }),
    );
    let request = serde_json::from_value(id.clone()).unwrap();
    d.session
        .notify_progress(
            d.now,
            ProgressTarget::Request(&request),
            0.5,
            Some(1.0),
            None,
        )
        .unwrap();
    let out = d.drain();
    assert_eq!(
        out[0]["params"],
        json!({ "progressToken": "plain", "progress": 0.5, "total": 1.0 })
    );
    d.session
        .respond(d.now, &request, Ok(text_result("done")))
        .unwrap();
    d.drain();
    assert_eq!(
        d.session
            .notify_progress(d.now, ProgressTarget::Request(&request), 1.0, None, None),
        Err(UsageError::UnknownRequest(request.clone()))
    );
    assert_eq!(id_json(&request), id);
}
