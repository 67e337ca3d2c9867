//! Closing: every pending request and followed task is reported once, hosted work is told
//! to stop, nothing more is sent or scheduled.

use serde_json::json;
use taskwire_engine::{CallId, Event, RequestId, StopReason, TaskSupport, UsageError};
use taskwire_harness::setup::{client_config, server_config, tool};
use taskwire_harness::{Pair, Side};

fn busy_pair() -> (Pair, RequestId) {
    let mut pair = Pair::connected(client_config(), server_config(), |s| {
        s.add_tool(tool("job", TaskSupport::Optional))
    });
    pair.client
        .call_tool_as_task(pair.now, pair.cs, "job", json!({}), None)
        .unwrap();
    let plain = pair
        .client
        .call_tool(pair.now, pair.cs, "job", json!({}))
        .unwrap();
    pair.deliver();
    pair.advance(1_000);
    (pair, plain)
}

#[test]
fn closing_the_client_reports_everything_pending_once() {
    let (mut pair, plain) = busy_pair();
    let now = pair.now;
    let cs = pair.cs;
    pair.client.close(now, cs);
    pair.client.close(now, cs);
    pair.drain();
    assert!(pair.in_flight.is_empty(), "a closing client sends nothing");
    let failed = pair.find(Side::Client, |e| match e {
        Event::Response {
            request,
            outcome: Err(e),
            ..
        } => Some((request.clone(), e.code)),
        _ => None,
    });
    assert_eq!(failed, [(plain, -32000)]);
    let results = pair.find(Side::Client, |e| match e {
        Event::TaskResult {
            task,
            outcome: Err(e),
            ..
        } => Some((task.clone(), e.code)),
        _ => None,
    });
    assert_eq!(results, [("task-1".into(), -32000)]);
    let closed = pair.find(Side::Client, |e| match e {
        Event::Closed { session } => Some(*session),
        _ => None,
    });
    assert_eq!(closed, [cs], "closed once");
    assert_eq!(pair.client.poll_timeout(), None);
    // Intended change: a closed session is forgotten, so commands on it name it unknown.
    assert_eq!(
        pair.client.call_tool(now, cs, "job", json!({})),
        Err(UsageError::UnknownSession(cs))
    );
    pair.client
        .handle_message(now, cs, br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#)
        .expect("the host takes input");
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
    let ss = pair.ss;
    let work = pair.work(Side::Server, "task-1");
    let plain_call = pair
        .find(Side::Server, |e| match e {
            Event::ToolCall(c) if c.request == plain => Some(c.call),
            _ => None,
        })
        .pop()
        .expect("the plain call reached the server");
    let stops = |pair: &Pair| {
        pair.find(Side::Server, |e| match e {
            Event::Stop { call, reason, .. } => Some((*call, *reason)),
            _ => None,
        })
    };

    // Intended change: end of input closes the session and stops its plain calls only;
    // its task lives on and the host keeps its expiry deadline ...
    pair.server
        .handle_eof(now, ss)
        .expect("the host takes input");
    pair.drain();
    assert!(pair.in_flight.is_empty());
    assert_eq!(stops(&pair), [(plain_call, StopReason::Closed)]);
    assert!(pair.server.is_closed(ss));
    let info = pair.server.task("task-1").expect("the task lives on").info;
    assert_eq!(
        pair.server.poll_timeout(),
        Some(info.created_at.plus(info.ttl_ms.unwrap())),
        "the task's expiry is kept"
    );

    // ... and `shutdown` (what the stdio drivers call next) stops the rest.
    pair.server.shutdown(now);
    pair.drain();
    assert!(pair.in_flight.is_empty());
    let expected: Vec<(CallId, StopReason)> =
        vec![(plain_call, StopReason::Closed), (work, StopReason::Closed)];
    assert_eq!(stops(&pair), expected);
    assert_eq!(
        pair.server.poll_timeout(),
        None,
        "no expiry timers after shutdown"
    );
    assert!(pair
        .server
        .notify_progress(now, work, 1.0, None, None)
        .is_err());
}
