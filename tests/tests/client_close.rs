//! Closing: every pending request and followed task is reported once, hosted work is told
//! to stop, nothing more is sent or scheduled.

use serde_json::json;
use taskwire_engine::{Event, ProgressTarget, RequestId, StopReason, TaskSupport};
use taskwire_tests::setup::{client_config, server_config, tool};
use taskwire_tests::{Pair, Side};

fn busy_pair() -> (Pair, RequestId) {
    let mut pair = Pair::connected(client_config(), server_config(), |s| {
        s.add_tool(tool("job", TaskSupport::Optional))
    });
    pair.client
        .call_tool_as_task(pair.now, "job", json!({}), None)
        .unwrap();
    let plain = pair.client.call_tool(pair.now, "job", json!({})).unwrap();
    pair.deliver();
    pair.advance(1_000);
    (pair, plain)
}

#[test]
fn closing_the_client_reports_everything_pending_once() {
    let (mut pair, plain) = busy_pair();
    let now = pair.now;
    pair.client.close(now);
    pair.client.close(now);
    pair.drain();
    assert!(pair.in_flight.is_empty(), "a closing client sends nothing");
    let failed = pair.find(Side::Client, |e| match e {
        Event::Response {
            request,
            outcome: Err(e),
        } => Some((request.clone(), e.code)),
        _ => None,
    });
    assert_eq!(failed, [(plain, -32000)]);
    let results = pair.find(Side::Client, |e| match e {
        Event::TaskResult {
            task,
            outcome: Err(e),
        } => Some((task.clone(), e.code)),
        _ => None,
    });
    assert_eq!(results, [("task-1".to_owned(), -32000)]);
    assert_eq!(pair.client.poll_timeout(), None);
    assert!(pair.client.call_tool(now, "job", json!({})).is_err());
    pair.client
        .handle_message(now, br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#);
    pair.drain();
    assert!(
        pair.in_flight.is_empty(),
        "a closed session answers nothing"
    );
}

#[test]
fn end_of_input_at_the_server_stops_all_work() {
    let (mut pair, plain) = busy_pair();
    let now = pair.now;
    pair.server.handle_eof(now);
    pair.drain();
    assert!(pair.in_flight.is_empty());
    let stops = pair.find(Side::Server, |e| match e {
        Event::StopTask { task, reason } => Some((task.clone(), *reason)),
        _ => None,
    });
    assert_eq!(stops, [("task-1".to_owned(), StopReason::Closed)]);
    let cancelled = pair.find(Side::Server, |e| match e {
        Event::RequestCancelled { request, .. } => Some(request.clone()),
        _ => None,
    });
    assert_eq!(cancelled, [plain]);
    assert!(pair.server.is_closed());
    assert_eq!(
        pair.server.poll_timeout(),
        None,
        "no expiry timers after close"
    );
    assert!(pair
        .server
        .notify_progress(now, ProgressTarget::Task("task-1"), 1.0, None, None)
        .is_err());
}
