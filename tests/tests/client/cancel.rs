//! Cancelling a server-hosted task from the client (spec §2.10, §5.1, §5.2): while it works,
//! and racing its completion in both orders. Whichever reaches the server first wins.

use serde_json::json;
use taskwire_engine::{
    CallId, Event, RequestId, RpcError, StopReason, TaskInfo, TaskStatus, TaskSupport, UsageError,
};
use taskwire_harness::setup::{client_config, first_text, server_config, text_result, tool};
use taskwire_harness::{Pair, Side};

use crate::common::statuses;

/// A task `task-1` working at the server; returns the pair and the call doing its work.
fn started() -> (Pair, CallId) {
    let mut pair = Pair::connected(client_config(), server_config(), |s| {
        s.add_tool(tool("job", TaskSupport::Optional))
    });
    pair.client
        .call_tool_as_task(pair.now, pair.cs, "job", json!({}), None)
        .unwrap();
    pair.deliver();
    pair.advance(1200);
    let work = pair.work(Side::Server, "task-1");
    (pair, work)
}

/// The task answer to `id` (a `tasks/cancel` answers with the task as it stands).
fn response(pair: &Pair, id: &RequestId) -> Result<TaskInfo, RpcError> {
    let found = pair.find(Side::Client, |e| match e {
        Event::TaskAnswer {
            request, outcome, ..
        } if request == id => Some(outcome.clone()),
        _ => None,
    });
    assert_eq!(found.len(), 1, "one answer to {id}");
    found.into_iter().next().unwrap()
}

fn stops(pair: &Pair) -> Vec<(CallId, StopReason)> {
    pair.find(Side::Server, |e| match e {
        Event::Stop { call, reason, .. } => Some((*call, *reason)),
        _ => None,
    })
}

#[test]
fn cancel_while_working() {
    let (mut pair, work) = started();
    let cancel = pair
        .client
        .cancel_task(pair.now, pair.cs, "task-1")
        .unwrap();
    pair.deliver();
    let answer = response(&pair, &cancel).expect("cancelled");
    assert_eq!(answer.status, TaskStatus::Cancelled);
    assert_eq!(stops(&pair), [(work, StopReason::Cancelled)]);
    assert_eq!(statuses(&pair), [TaskStatus::Cancelled], "reported once");
    let results = pair.task_results();
    assert_eq!(results.len(), 1);
    let error = results[0].as_ref().unwrap_err();
    assert_eq!(error.code, -32602);

    let polls = pair.sent_method(Side::Client, "tasks/get").len();
    pair.advance(10_000);
    assert_eq!(
        pair.sent_method(Side::Client, "tasks/get").len(),
        polls,
        "no polling after"
    );
    assert!(pair.client.remote_task_ids(pair.cs).is_empty());
}

#[test]
fn completion_reaches_the_server_before_the_cancel() {
    let (mut pair, work) = started();
    let cancel = pair
        .client
        .cancel_task(pair.now, pair.cs, "task-1")
        .unwrap();
    pair.drain(); // the cancel is on the wire …
    pair.server
        .respond(pair.now, work, Ok(text_result("won")))
        .unwrap(); // … when the work finishes
    pair.deliver();
    pair.advance(2_000);

    let error = response(&pair, &cancel).unwrap_err();
    assert_eq!(error.code, -32602);
    assert!(error.message.contains("completed"), "{}", error.message);
    assert!(stops(&pair).is_empty());
    let results = pair.task_results();
    assert_eq!(results.len(), 1);
    assert_eq!(first_text(results[0].as_ref().unwrap()), Some("won"));
    assert_eq!(statuses(&pair), [TaskStatus::Completed]);
}

#[test]
fn cancel_reaches_the_server_before_the_completion() {
    let (mut pair, work) = started();
    let cancel = pair
        .client
        .cancel_task(pair.now, pair.cs, "task-1")
        .unwrap();
    pair.deliver();
    // Intended change: the dropped outcome is no `OutcomeDropped` event but `TaskFinished`.
    let dropped = pair.server.respond(pair.now, work, Ok(text_result("lost")));
    assert_eq!(
        dropped,
        Err(UsageError::TaskFinished {
            task: "task-1".into(),
            status: TaskStatus::Cancelled
        })
    );
    pair.deliver();
    pair.advance(2_000);

    assert_eq!(
        response(&pair, &cancel).unwrap().status,
        TaskStatus::Cancelled
    );
    assert_eq!(stops(&pair), [(work, StopReason::Cancelled)]);
    let results = pair.task_results();
    assert_eq!(results.len(), 1);
    assert_eq!(results[0].as_ref().unwrap_err().code, -32602);
    assert_eq!(
        pair.server.task("task-1").unwrap().info.status,
        TaskStatus::Cancelled
    );
}

#[test]
fn cancelling_an_unknown_task_reports_the_error() {
    let (mut pair, _) = started();
    let cancel = pair.client.cancel_task(pair.now, pair.cs, "nope").unwrap();
    pair.deliver();
    assert_eq!(response(&pair, &cancel).unwrap_err().code, -32602);
    assert_eq!(
        pair.client.remote_task_ids(pair.cs),
        ["task-1"],
        "ours is untouched"
    );
}
