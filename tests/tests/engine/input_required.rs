//! The `input_required` flow (spec §2.13, §2.14, §5.9): `request_input` sends an
//! `elicitation/create` or `sampling/createMessage` tagged with the task, the task waits in
//! `input_required` until every answer is in, then goes back to `working`.

use serde_json::{json, Value};
use taskwire_engine::{CallId, Event, InputId, RpcError, TaskStatus, TaskSupport, UsageError};
use taskwire_harness::msg::{related_task, response, statuses, with_method};
use taskwire_harness::setup::{initialize_params, server_config, text_result, tool};
use taskwire_harness::Probe;

fn with_task() -> Probe {
    let mut d = Probe::ready_server(server_config(), |s| {
        s.add_tool(tool("job", TaskSupport::Optional))
    });
    d.call(
        "tools/call",
        json!({ "name": "job", "arguments": {}, "task": {} }),
    );
    d.take_events();
    d
}

fn elicit(message: &str) -> Value {
    json!({ "mode": "form", "message": message,
            "requestedSchema": { "type": "object", "properties": { "ok": { "type": "boolean" } } } })
}

fn sample() -> Value {
    json!({ "messages": [{ "role": "user", "content": { "type": "text", "text": "hi" } }],
            "maxTokens": 10 })
}

fn status(d: &mut Probe) -> String {
    let reply = d.call("tasks/get", json!({ "taskId": "task-1" }));
    reply["result"]["status"].as_str().unwrap().to_owned()
}

type Answered = (CallId, InputId, Result<Value, RpcError>);

fn inputs(events: Vec<Event>) -> Vec<Answered> {
    events
        .into_iter()
        .filter_map(|e| match e {
            Event::InputResponse {
                call,
                input,
                outcome,
            } => Some((call, input, outcome)),
            _ => None,
        })
        .collect()
}

/// The wire id of the only request with `method` in `out`.
fn sent_id(out: &[Value], method: &str) -> Value {
    let sent = with_method(out, method);
    assert_eq!(sent.len(), 1, "{out:?}");
    sent[0]["id"].clone()
}

#[test]
fn elicitation_round_trip() {
    let mut d = with_task();
    let (parked, _) = d.send("tasks/result", json!({ "taskId": "task-1" }));
    let work = d.work("task-1");
    let input = d
        .host
        .request_input(d.now, work, "elicitation/create", elicit("Reindex?"))
        .unwrap();
    let out = d.drain();
    assert_eq!(statuses(&out), ["input_required"]);
    let request = with_method(&out, "elicitation/create");
    assert_eq!(request.len(), 1);
    let id = request[0]["id"].clone();
    assert_eq!(request[0]["params"]["message"], "Reindex?");
    assert_eq!(related_task(&request[0]["params"]), Some("task-1"));
    assert_eq!(status(&mut d), "input_required");

    let answer = json!({ "action": "accept", "content": { "ok": true },
        "_meta": { "io.modelcontextprotocol/related-task": { "taskId": "task-1" } } });
    let out = d.reply(&id, answer.clone());
    assert_eq!(statuses(&out), ["working"]);
    assert_eq!(inputs(d.take_events()), [(work, input, Ok(answer))]);
    assert_eq!(status(&mut d), "working");

    d.host
        .respond(d.now, work, Ok(text_result("Reindexed")))
        .unwrap();
    let out = d.drain();
    let result = response(&out, &parked).expect("the parked tasks/result is answered");
    assert_eq!(result["result"]["content"][0]["text"], "Reindexed");
}

#[test]
fn stays_input_required_until_every_answer_is_in() {
    let mut d = with_task();
    let now = d.now;
    let work = d.work("task-1");
    let a = d
        .host
        .request_input(now, work, "elicitation/create", elicit("a"))
        .unwrap();
    let b = d
        .host
        .request_input(now, work, "sampling/createMessage", sample())
        .unwrap();
    let out = d.drain();
    let (a_id, b_id) = (
        sent_id(&out, "elicitation/create"),
        sent_id(&out, "sampling/createMessage"),
    );
    assert_eq!(
        statuses(&out),
        ["input_required"],
        "one transition for two requests"
    );
    assert_eq!(
        related_task(&with_method(&out, "sampling/createMessage")[0]["params"]),
        Some("task-1")
    );

    let out = d.reply(
        &b_id,
        json!({ "role": "assistant",
        "content": { "type": "text", "text": "yo" }, "model": "m" }),
    );
    assert!(statuses(&out).is_empty());
    assert_eq!(status(&mut d), "input_required");
    let out = d.feed_json(json!({ "jsonrpc": "2.0", "id": a_id,
        "error": { "code": -1, "message": "user closed the dialog" } }));
    assert_eq!(statuses(&out), ["working"]);
    let got = inputs(d.take_events());
    assert_eq!(got.len(), 2);
    assert_eq!((got[0].0, got[0].1), (work, b));
    assert!(got[0].2.is_ok());
    assert_eq!((got[1].0, got[1].1), (work, a));
    assert_eq!(
        got[1].2.as_ref().unwrap_err().message,
        "user closed the dialog"
    );
}

#[test]
fn input_requests_never_time_out() {
    let mut d = with_task();
    let work = d.work("task-1");
    d.host
        .request_input(d.now, work, "elicitation/create", elicit("slow human"))
        .unwrap();
    d.drain();
    let out = d.advance(200_000);
    assert!(
        with_method(&out, "notifications/cancelled").is_empty(),
        "{out:?}"
    );
    assert!(!d
        .take_events()
        .iter()
        .any(|e| matches!(e, Event::TimedOut { .. })));
    assert_eq!(status(&mut d), "input_required");
}

#[test]
fn refused_when_not_negotiated_unknown_or_terminal() {
    let mut d = Probe::server(server_config());
    d.host.add_tool(tool("job", TaskSupport::Optional));
    d.call("initialize", initialize_params("2025-11-25", json!({})));
    d.call(
        "tools/call",
        json!({ "name": "job", "arguments": {}, "task": {} }),
    );
    let now = d.now;
    let work = d.work("task-1");
    assert_eq!(
        d.host
            .request_input(now, work, "elicitation/create", elicit("x")),
        Err(UsageError::NotNegotiated("elicitation"))
    );
    assert_eq!(
        d.host
            .request_input(now, work, "sampling/createMessage", sample()),
        Err(UsageError::NotNegotiated("sampling"))
    );

    let mut d = with_task();
    let now = d.now;
    let work = d.work("task-1");
    // roots/list is now an input method too (precise errors, intended change 3): this peer
    // did not declare roots; a method that carries no input is refused as such.
    assert_eq!(
        d.host.request_input(now, work, "roots/list", json!({})),
        Err(UsageError::NotNegotiated("roots"))
    );
    assert_eq!(
        d.host.request_input(now, work, "tools/list", json!({})),
        Err(UsageError::NotAnInputMethod("tools/list".into()))
    );
    // Unknown work: a plain call already answered.
    let (plain, _) = d.send("tools/call", json!({ "name": "job", "arguments": {} }));
    let plain = d.call_for(&plain);
    d.host
        .respond(now, plain, Ok(text_result("plain")))
        .unwrap();
    d.drain();
    assert_eq!(
        d.host
            .request_input(now, plain, "elicitation/create", elicit("x")),
        Err(UsageError::UnknownCall(plain))
    );
    d.host.respond(now, work, Ok(text_result("done"))).unwrap();
    // Once the app answered, its call awaits nothing more.
    assert_eq!(
        d.host
            .request_input(now, work, "elicitation/create", elicit("x")),
        Err(UsageError::UnknownCall(work))
    );
    assert_eq!(statuses(&d.drain()), ["completed"], "refusals send nothing");

    // A task finished under the app (cancelled) refuses input with the one "finished" rule.
    let mut d = with_task();
    let work = d.work("task-1");
    d.call("tasks/cancel", json!({ "taskId": "task-1" }));
    let now = d.now;
    assert_eq!(
        d.host
            .request_input(now, work, "elicitation/create", elicit("x")),
        Err(UsageError::TaskFinished {
            task: "task-1".into(),
            status: TaskStatus::Cancelled
        })
    );
    assert!(d.drain().is_empty(), "refusals send nothing");
}

#[test]
fn finishing_withdraws_unanswered_input_requests() {
    let mut d = with_task();
    let work = d.work("task-1");
    d.host
        .request_input(d.now, work, "elicitation/create", elicit("still there?"))
        .unwrap();
    let id = sent_id(&d.drain(), "elicitation/create");
    d.host
        .respond(d.now, work, Ok(text_result("done without you")))
        .unwrap();
    let out = d.drain();
    assert_eq!(statuses(&out), ["completed"]);
    let withdrawn = with_method(&out, "notifications/cancelled");
    assert_eq!(withdrawn.len(), 1, "{out:?}");
    assert_eq!(withdrawn[0]["params"]["requestId"], id);
    assert!(d.reply(&id, json!({ "action": "cancel" })).is_empty());
    assert!(
        inputs(d.take_events()).is_empty(),
        "the late answer is dropped"
    );
}

#[test]
fn capability_leaves_written_as_true_count() {
    let mut d = Probe::server(server_config());
    d.host.add_tool(tool("job", TaskSupport::Optional));
    d.call(
        "initialize",
        initialize_params("2025-11-25", json!({ "elicitation": true })),
    );
    d.call(
        "tools/call",
        json!({ "name": "job", "arguments": {}, "task": {} }),
    );
    let work = d.work("task-1");
    assert!(d
        .host
        .request_input(d.now, work, "elicitation/create", elicit("ok?"))
        .is_ok());
}
