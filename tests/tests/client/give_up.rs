//! `Host::cancel_request`: the application gives up a request of its own (a plain
//! `tools/call` whose caller went away). The server is told (`notifications/cancelled`, its
//! tool stopped), the late answer passes quietly, and nothing is reported; in 2026-07-28 a
//! call between MRTR rounds forgets its inputs, and a later round is cancelled by its own id;
//! in 2025-11-25 a task call refused with -32601 and sent again plainly is cancelled by the
//! id it went again under, and a task call still waiting for its task (given up, or timed
//! out) is never sent `notifications/cancelled`: its task is cancelled once it exists.

use serde_json::{json, Value};
use taskwire_engine::{CallId, Event, RequestId, StopReason, TaskSupport};
use taskwire_harness::msg::id_json;
use taskwire_harness::setup::v2026_client_config;
use taskwire_harness::setup::{client_config, server_config, text_result, tool};
use taskwire_harness::{Pair, Probe, Side};

fn pair(client: taskwire_engine::Config) -> Pair {
    Pair::connected(client, server_config(), |s| {
        s.add_tool(tool("job", TaskSupport::Forbidden))
    })
}

fn form() -> Value {
    json!({ "mode": "form", "message": "Sure?",
            "requestedSchema": { "type": "object",
                "properties": { "confirm": { "type": "boolean" } } } })
}

/// The server's tool calls, in order.
fn tool_calls(pair: &Pair) -> Vec<CallId> {
    pair.find(Side::Server, |e| match e {
        Event::ToolCall(c) => Some(c.call),
        _ => None,
    })
}

/// The answers the client's application was given.
fn responses(pair: &Pair) -> Vec<RequestId> {
    pair.find(Side::Client, |e| match e {
        Event::Response { request, .. } => Some(request.clone()),
        _ => None,
    })
}

/// The server was told to stop `call` (and no other), with the client's reason.
fn assert_stopped(pair: &Pair, call: CallId) {
    let stops = pair.find(Side::Server, |e| match e {
        Event::Stop {
            call,
            reason: StopReason::Cancelled,
            message,
        } => Some((*call, message.clone())),
        _ => None,
    });
    let reason = Some("Request cancelled by the client".to_owned());
    assert_eq!(stops, [(call, reason)]);
}

#[test]
fn a_plain_call_given_up_stops_the_tool_and_its_late_answer_passes_quietly() {
    for config in [client_config(), v2026_client_config()] {
        let mut pair = pair(config);
        let request = pair
            .client
            .call_tool(pair.now, pair.cs, "job", json!({}))
            .unwrap();
        pair.deliver();
        let call = tool_calls(&pair)[0];
        assert!(pair
            .client
            .cancel_request(pair.now, pair.cs, &request)
            .unwrap());
        pair.deliver();
        let cancelled = pair.sent_method(Side::Client, "notifications/cancelled");
        assert_eq!(cancelled.len(), 1);
        assert_eq!(cancelled[0].json["params"]["requestId"], json!(request));
        assert_stopped(&pair, call);

        // The tool answers anyway (it had finished): nothing reaches the application.
        let _ = pair.server.respond(pair.now, call, Ok(text_result("late")));
        pair.deliver();
        assert!(responses(&pair).is_empty());
        assert!(
            pair.sent_method(Side::Client, "notifications/cancelled")
                .len()
                == 1
        );
        assert!(!pair
            .client
            .cancel_request(pair.now, pair.cs, &request)
            .unwrap());
    }
}

/// A 2026-07-28 plain call whose tool asked for input (MRTR): the pair, the call, and the
/// input the client's application holds.
fn asked_for_input() -> (Pair, RequestId, CallId) {
    let mut pair = pair(v2026_client_config());
    let request = pair
        .client
        .call_tool(pair.now, pair.cs, "job", json!({}))
        .unwrap();
    pair.deliver();
    let first = tool_calls(&pair)[0];
    pair.server
        .request_input(pair.now, first, "elicitation/create", form())
        .unwrap();
    pair.deliver();
    let inputs = pair.find(Side::Client, |e| match e {
        Event::Request(r) => Some(r.call),
        _ => None,
    });
    assert_eq!(inputs.len(), 1);
    (pair, request, inputs[0])
}

#[test]
fn a_v2026_call_waiting_for_its_inputs_forgets_them_and_sends_no_round() {
    let (mut pair, request, input) = asked_for_input();
    assert!(pair
        .client
        .cancel_request(pair.now, pair.cs, &request)
        .unwrap());
    // The input's answer, coming after, sends no second round.
    let answer = json!({ "action": "accept", "content": { "confirm": true } });
    assert!(pair.client.respond(pair.now, input, Ok(answer)).is_err());
    pair.deliver();
    assert_eq!(pair.sent_method(Side::Client, "tools/call").len(), 1);
    assert!(responses(&pair).is_empty());
}

#[test]
fn a_v2026_call_in_its_second_round_is_cancelled_by_that_rounds_id() {
    let (mut pair, request, input) = asked_for_input();
    let answer = json!({ "action": "accept", "content": { "confirm": true } });
    pair.client.respond(pair.now, input, Ok(answer)).unwrap();
    pair.deliver();
    let rounds = pair.sent_method(Side::Client, "tools/call");
    assert_eq!(rounds.len(), 2);
    let second_id = rounds[1].json["id"].clone();
    assert_ne!(second_id, json!(request));
    let second = tool_calls(&pair)[1];

    assert!(pair
        .client
        .cancel_request(pair.now, pair.cs, &request)
        .unwrap());
    pair.deliver();
    let cancelled = pair.sent_method(Side::Client, "notifications/cancelled");
    assert_eq!(cancelled.len(), 1);
    assert_eq!(cancelled[0].json["params"]["requestId"], second_id);
    assert_stopped(&pair, second);
    assert!(responses(&pair).is_empty());
}

#[test]
fn a_task_call_sent_again_plainly_is_cancelled_by_its_new_id() {
    // The tool's support is listed unreadably: the engine tries a task and, refused with
    // -32601, sends the call again plainly.
    let (mut d, request) = task_call_pending("sometimes");
    let refused = d.feed_json(json!({ "jsonrpc": "2.0", "id": id_json(&request),
        "error": { "code": -32601, "message": "Method not found" } }));
    assert_eq!(refused.len(), 1, "{refused:?}");
    assert!(refused[0]["params"].get("task").is_none(), "{refused:?}");
    let again = refused[0]["id"].clone();
    assert_ne!(again, id_json(&request));
    d.take_events();

    assert!(d.host.cancel_request(d.now, d.session, &request).unwrap());
    let cancelled = d.drain();
    assert_eq!(cancelled.len(), 1, "{cancelled:?}");
    assert_eq!(cancelled[0]["method"], "notifications/cancelled");
    assert_eq!(cancelled[0]["params"]["requestId"], again);
    // The late plain answer passes quietly: the application gave the call up.
    d.reply(&again, text_result("late"));
    let events = d.take_events();
    assert!(
        !events.iter().any(|e| matches!(e, Event::Response { .. })),
        "{events:?}"
    );
    assert!(!d.host.cancel_request(d.now, d.session, &request).unwrap());
}

/// A scripted 2025-11-25 server whose `job` is listed with task support `support`, and the
/// client's task call of it, still waiting for its answer.
fn task_call_pending(support: &str) -> (Probe, RequestId) {
    let mut d = Probe::ready_client(
        client_config(),
        json!({ "protocolVersion": "2025-11-25",
                "capabilities": { "tools": {}, "tasks": { "requests": { "tools": { "call": {} } } } },
                "serverInfo": { "name": "scripted", "version": "1" } }),
    );
    let list = d.host.list_tools(d.now, d.session, None).unwrap();
    d.drain();
    d.reply(
        &id_json(&list),
        json!({ "tools": [{ "name": "job", "inputSchema": { "type": "object" },
                            "execution": { "taskSupport": support } }] }),
    );
    let request = d
        .host
        .call_tool_as_task(d.now, d.session, "job", json!({}), None)
        .unwrap();
    let sent = d.drain();
    assert!(sent[0]["params"]["task"].is_object(), "{sent:?}");
    d.take_events();
    (d, request)
}

/// The server answers the task call late with `CreateTaskResult` for `task-9`: the client
/// cancels that task with `tasks/cancel` and reports nothing of it.
fn late_task_is_cancelled(d: &mut Probe, request: &RequestId) {
    let out = d.reply(
        &id_json(request),
        json!({ "task": { "taskId": "task-9", "status": "working", "ttl": 60000,
                          "createdAt": "2026-01-15T09:00:00Z",
                          "lastUpdatedAt": "2026-01-15T09:00:00Z" } }),
    );
    assert_eq!(out.len(), 1, "{out:?}");
    assert_eq!(out[0]["method"], "tasks/cancel");
    assert_eq!(out[0]["params"]["taskId"], "task-9");
    // Its answer passes quietly too.
    let out = d.reply(
        &out[0]["id"],
        json!({ "taskId": "task-9", "status": "cancelled", "ttl": 60000,
                "createdAt": "2026-01-15T09:00:00Z", "lastUpdatedAt": "2026-01-15T09:00:01Z" }),
    );
    assert!(out.is_empty(), "{out:?}");
    let events = d.take_events();
    assert!(
        !events.iter().any(|e| matches!(
            e,
            Event::Response { .. } | Event::TaskCreated { .. } | Event::TaskStatus { .. }
        )),
        "{events:?}"
    );
}

#[test]
fn a_task_call_given_up_before_its_task_came_cancels_the_task_once_it_exists() {
    let (mut d, request) = task_call_pending("optional");
    assert!(d.host.cancel_request(d.now, d.session, &request).unwrap());
    // No notifications/cancelled: it must not be used for a task-augmented request.
    let out = d.drain();
    assert!(out.is_empty(), "{out:?}");
    late_task_is_cancelled(&mut d, &request);
}

#[test]
fn a_task_call_that_times_out_is_reported_and_its_late_task_cancelled() {
    let (mut d, request) = task_call_pending("optional");
    let out = d.advance(600_000);
    assert!(
        !out.iter().any(|m| m["method"] == "notifications/cancelled"),
        "{out:?}"
    );
    let events = d.take_events();
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::TimedOut { request: r, .. } if *r == request)),
        "{events:?}"
    );
    late_task_is_cancelled(&mut d, &request);
}
