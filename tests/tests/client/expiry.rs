//! A server-hosted task that expires while the client follows it (spec §2.12, §5.13): the
//! client's next poll gets -32602, the application gets one failed `TaskResult`, polling
//! stops; a parked `tasks/result` is answered too.

use serde_json::json;
use taskwire_engine::{CallId, Event, StopReason, TaskSupport};
use taskwire_harness::setup::{client_config, server_config, tool};
use taskwire_harness::{Pair, Side};

/// A task `task-1` with retention `ttl`; returns the pair and the call doing its work.
fn started(ttl: u64) -> (Pair, CallId) {
    let mut pair = Pair::connected(client_config(), server_config(), |s| {
        s.add_tool(tool("job", TaskSupport::Optional))
    });
    pair.client
        .call_tool_as_task(pair.now, pair.cs, "job", json!({}), Some(ttl))
        .unwrap();
    pair.deliver();
    let work = pair.work(Side::Server, "task-1");
    (pair, work)
}

#[test]
fn expiry_while_the_client_polls() {
    let (mut pair, work) = started(3_000);
    pair.advance(2_900);
    assert!(pair.task_results().is_empty());
    pair.run_until(5_000, |p| !p.task_results().is_empty());
    let results = pair.task_results();
    assert_eq!(results.len(), 1);
    assert_eq!(results[0].as_ref().unwrap_err().code, -32602);
    let stops = pair.find(Side::Server, |e| match e {
        Event::Stop { call, reason, .. } => Some((*call, *reason)),
        _ => None,
    });
    assert_eq!(stops, [(work, StopReason::Expired)]);

    let polls = pair.sent_method(Side::Client, "tasks/get").len();
    pair.advance(20_000);
    assert_eq!(
        pair.sent_method(Side::Client, "tasks/get").len(),
        polls,
        "polling stopped"
    );
    assert!(pair.client.remote_task_ids(pair.cs).is_empty());
    assert_eq!(pair.client.poll_timeout(), None);
}

#[test]
fn expiry_answers_the_clients_parked_result() {
    let (mut pair, work) = started(3_000);
    // The task asks for input: the client parks a tasks/result at once.
    pair.server
        .request_input(pair.now, work, "elicitation/create",
            json!({ "mode": "form", "message": "?", "requestedSchema": { "type": "object", "properties": {} } }))
        .unwrap();
    pair.deliver();
    assert_eq!(pair.sent_method(Side::Client, "tasks/result").len(), 1);
    pair.advance(3_000);
    let results = pair.task_results();
    assert_eq!(results.len(), 1, "{}", pair.transcript());
    let error = results[0].as_ref().unwrap_err();
    assert_eq!(error.code, -32602);
    assert!(error.message.contains("expired"), "{}", error.message);
    // The withdrawn elicitation reaches the client as a cancellation of its request.
    let asked = pair.find(Side::Client, |e| match e {
        Event::Request(r) => Some(r.call),
        _ => None,
    });
    assert_eq!(asked.len(), 1);
    let cancelled = pair.find(Side::Client, |e| match e {
        Event::Stop {
            call,
            reason: StopReason::Cancelled,
            ..
        } => Some(*call),
        _ => None,
    });
    assert_eq!(cancelled, asked);
    pair.advance(10_000);
    assert_eq!(pair.task_results().len(), 1, "reported once");
}
