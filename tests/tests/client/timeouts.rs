//! Local request timeouts (spec §3.2, §3.4): when one fires the client sends
//! `notifications/cancelled`, raises `TimedOut`, and ignores the late answer. Parked
//! `tasks/result` calls never time out.

use serde_json::{json, Value};
use taskwire_engine::{Config, Event, StopReason, TaskSupport, UsageError};
use taskwire_harness::msg::{id_json, with_method};
use taskwire_harness::setup::{client_config, server_config, tool};
use taskwire_harness::{Pair, Probe, Side};

fn client(timeout: u64) -> Config {
    let mut config = client_config();
    config.request_timeout_ms = Some(timeout);
    config
}

fn server_init() -> Value {
    json!({ "protocolVersion": "2025-11-25",
            "capabilities": { "tools": {}, "tasks": { "list": {}, "cancel": {}, "requests": { "tools": { "call": {} } } } },
            "serverInfo": { "name": "scripted", "version": "1" } })
}

fn timed_out(events: &[Event]) -> Vec<Value> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::TimedOut { request, .. } => Some(id_json(request)),
            _ => None,
        })
        .collect()
}

#[test]
fn a_timed_out_call_is_cancelled_at_the_server() {
    let mut pair = Pair::connected(client(5_000), server_config(), |s| {
        s.add_tool(tool("slow", TaskSupport::Optional))
    });
    let id = pair
        .client
        .call_tool(pair.now, pair.cs, "slow", json!({}))
        .unwrap();
    pair.deliver();
    pair.advance(4_999);
    assert!(pair
        .sent_method(Side::Client, "notifications/cancelled")
        .is_empty());
    pair.advance(1);
    let cancels = pair.sent_method(Side::Client, "notifications/cancelled");
    assert_eq!(cancels.len(), 1);
    assert_eq!(cancels[0].json["params"]["requestId"], id_json(&id));
    assert!(cancels[0].json["params"]["reason"].is_string());
    let timed: Vec<_> = pair.find(Side::Client, |e| match e {
        Event::TimedOut { request, .. } => Some(request.clone()),
        _ => None,
    });
    assert_eq!(timed.len(), 1);
    assert_eq!(timed[0], id);
    let call = pair
        .find(Side::Server, |e| match e {
            Event::ToolCall(c) if c.request == id => Some(c.call),
            _ => None,
        })
        .pop()
        .expect("the call reached the server");
    let server_saw = pair.find(Side::Server, |e| match e {
        Event::Stop {
            call,
            reason: StopReason::Cancelled,
            ..
        } => Some(*call),
        _ => None,
    });
    assert_eq!(server_saw.len(), 1);
    assert_eq!(server_saw[0], call);
    // Intended change: answers go through the call, so a stopped one is `UnknownCall`.
    assert_eq!(
        pair.server
            .respond(pair.now, call, Ok(json!({ "content": [] }))),
        Err(UsageError::UnknownCall(call))
    );
}

#[test]
fn a_late_answer_is_ignored() {
    let mut d = Probe::ready_client(client(5_000), server_init());
    let id = d
        .host
        .call_tool(d.now, d.session, "slow", json!({}))
        .unwrap();
    d.drain();
    let out = d.advance(5_000);
    assert_eq!(with_method(&out, "notifications/cancelled").len(), 1);
    assert_eq!(timed_out(&d.take_events()), [id_json(&id)]);

    let out = d.reply(&id_json(&id), json!({ "content": [] }));
    assert!(out.is_empty());
    let events = d.take_events();
    assert!(
        !events.iter().any(|e| matches!(e, Event::Response { .. })),
        "{events:?}"
    );
    assert!(
        !events.iter().any(|e| matches!(e, Event::PeerError { .. })),
        "a late answer is not the peer's fault: {events:?}"
    );
}

#[test]
fn an_unanswered_poll_times_out_and_polling_goes_on() {
    let mut d = Probe::ready_client(client(3_000), server_init());
    let call = d
        .host
        .call_tool_as_task(d.now, d.session, "job", json!({}), None)
        .unwrap();
    d.drain();
    let task = json!({ "taskId": "t-1", "status": "working", "createdAt": "2026-01-15T09:00:00Z",
                       "lastUpdatedAt": "2026-01-15T09:00:00Z", "ttl": null, "pollInterval": 1000 });
    d.reply(&id_json(&call), json!({ "task": task }));
    d.take_events();
    // The scripted server never answers tasks/get.
    let out = d.advance(4_000);
    let gets = with_method(&out, "tasks/get");
    assert_eq!(gets.len(), 1, "one poll in flight at a time: {out:?}");
    assert_eq!(with_method(&out, "notifications/cancelled").len(), 1);
    let out = d.advance(1_000);
    assert_eq!(
        with_method(&out, "tasks/get").len(),
        1,
        "polling resumed: {out:?}"
    );
    assert!(
        timed_out(&d.take_events()).is_empty(),
        "the engine's own polls are not the application's requests"
    );
}

#[test]
fn a_parked_result_never_times_out() {
    let mut pair = Pair::connected(client(2_000), server_config(), |s| {
        s.add_tool(tool("job", TaskSupport::Optional))
    });
    pair.client
        .call_tool_as_task(pair.now, pair.cs, "job", json!({}), None)
        .unwrap();
    pair.deliver();
    let work = pair.work(Side::Server, "task-1");
    pair.server
        .request_input(pair.now, work, "elicitation/create",
            json!({ "mode": "form", "message": "?", "requestedSchema": { "type": "object", "properties": {} } }))
        .unwrap();
    pair.deliver();
    assert_eq!(pair.sent_method(Side::Client, "tasks/result").len(), 1);
    pair.advance(60_000);
    let cancels = pair.sent_method(Side::Client, "notifications/cancelled");
    assert!(cancels.is_empty(), "{}", pair.transcript());
}
