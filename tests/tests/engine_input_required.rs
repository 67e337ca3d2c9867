//! The `input_required` flow (spec §2.13, §2.14, §5.9): `request_input` sends an
//! `elicitation/create` or `sampling/createMessage` tagged with the task, the task waits in
//! `input_required` until every answer is in, then goes back to `working`.

use serde_json::{json, Value};
use taskwire_engine::{Event, RpcError, TaskSupport, UsageError};
use taskwire_tests::msg::{id_json, related_task, response, statuses, with_method};
use taskwire_tests::setup::{initialize_params, server_config, text_result, tool};
use taskwire_tests::Driver;

fn with_task() -> Driver {
    let mut d = Driver::ready_server(server_config(), |s| {
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

fn status(d: &mut Driver) -> String {
    let reply = d.call("tasks/get", json!({ "taskId": "task-1" }));
    reply["result"]["status"].as_str().unwrap().to_owned()
}

fn inputs(events: Vec<Event>) -> Vec<(String, Result<Value, RpcError>)> {
    events
        .into_iter()
        .filter_map(|e| match e {
            Event::InputResponse { task, outcome, .. } => Some((task, outcome)),
            _ => None,
        })
        .collect()
}

#[test]
fn elicitation_round_trip() {
    let mut d = with_task();
    let (parked, _) = d.send("tasks/result", json!({ "taskId": "task-1" }));
    let id = d
        .session
        .request_input(d.now, "task-1", "elicitation/create", elicit("Reindex?"))
        .unwrap();
    let out = d.drain();
    assert_eq!(statuses(&out), ["input_required"]);
    let request = with_method(&out, "elicitation/create");
    assert_eq!(request.len(), 1);
    assert_eq!(request[0]["id"], id_json(&id));
    assert_eq!(request[0]["params"]["message"], "Reindex?");
    assert_eq!(related_task(&request[0]["params"]), Some("task-1"));
    assert_eq!(status(&mut d), "input_required");

    let answer = json!({ "action": "accept", "content": { "ok": true },
        "_meta": { "io.modelcontextprotocol/related-task": { "taskId": "task-1" } } });
    let out = d.reply(&id_json(&id), answer.clone());
    assert_eq!(statuses(&out), ["working"]);
    assert_eq!(inputs(d.take_events()), [("task-1".to_owned(), Ok(answer))]);
    assert_eq!(status(&mut d), "working");

    d.session
        .complete_task(d.now, "task-1", text_result("Reindexed"))
        .unwrap();
    let out = d.drain();
    let result = response(&out, &parked).expect("the parked tasks/result is answered");
    assert_eq!(result["result"]["content"][0]["text"], "Reindexed");
}

#[test]
fn stays_input_required_until_every_answer_is_in() {
    let mut d = with_task();
    let now = d.now;
    let a = d
        .session
        .request_input(now, "task-1", "elicitation/create", elicit("a"))
        .unwrap();
    let b = d
        .session
        .request_input(now, "task-1", "sampling/createMessage", sample())
        .unwrap();
    let out = d.drain();
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
        &id_json(&b),
        json!({ "role": "assistant",
        "content": { "type": "text", "text": "yo" }, "model": "m" }),
    );
    assert!(statuses(&out).is_empty());
    assert_eq!(status(&mut d), "input_required");
    let out = d.feed_json(json!({ "jsonrpc": "2.0", "id": id_json(&a),
        "error": { "code": -1, "message": "user closed the dialog" } }));
    assert_eq!(statuses(&out), ["working"]);
    let got = inputs(d.take_events());
    assert_eq!(got.len(), 2);
    assert!(got[0].1.is_ok());
    assert_eq!(
        got[1].1.as_ref().unwrap_err().message,
        "user closed the dialog"
    );
}

#[test]
fn input_requests_never_time_out() {
    let mut d = with_task();
    d.session
        .request_input(d.now, "task-1", "elicitation/create", elicit("slow human"))
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
    let mut d = Driver::server(server_config());
    d.session.add_tool(tool("job", TaskSupport::Optional));
    d.call("initialize", initialize_params("2025-11-25", json!({})));
    d.call(
        "tools/call",
        json!({ "name": "job", "arguments": {}, "task": {} }),
    );
    let now = d.now;
    assert_eq!(
        d.session
            .request_input(now, "task-1", "elicitation/create", elicit("x")),
        Err(UsageError::NotNegotiated("elicitation"))
    );
    assert_eq!(
        d.session
            .request_input(now, "task-1", "sampling/createMessage", sample()),
        Err(UsageError::NotNegotiated("sampling"))
    );

    let mut d = with_task();
    let now = d.now;
    assert!(matches!(
        d.session
            .request_input(now, "task-1", "roots/list", json!({})),
        Err(UsageError::Invalid(_))
    ));
    assert!(matches!(
        d.session
            .request_input(now, "nope", "elicitation/create", elicit("x")),
        Err(UsageError::UnknownTask(_))
    ));
    d.session
        .complete_task(now, "task-1", text_result("done"))
        .unwrap();
    assert!(matches!(
        d.session
            .request_input(now, "task-1", "elicitation/create", elicit("x")),
        Err(UsageError::TaskTerminal(..))
    ));
    assert_eq!(statuses(&d.drain()), ["completed"], "refusals send nothing");
}

#[test]
fn finishing_withdraws_unanswered_input_requests() {
    let mut d = with_task();
    let id = d
        .session
        .request_input(
            d.now,
            "task-1",
            "elicitation/create",
            elicit("still there?"),
        )
        .unwrap();
    d.drain();
    d.session
        .complete_task(d.now, "task-1", text_result("done without you"))
        .unwrap();
    let out = d.drain();
    assert_eq!(statuses(&out), ["completed"]);
    let withdrawn = with_method(&out, "notifications/cancelled");
    assert_eq!(withdrawn.len(), 1, "{out:?}");
    assert_eq!(withdrawn[0]["params"]["requestId"], id_json(&id));
    assert!(d
        .reply(&id_json(&id), json!({ "action": "cancel" }))
        .is_empty());
    assert!(
        inputs(d.take_events()).is_empty(),
        "the late answer is dropped"
    );
}

#[test]
fn capability_leaves_written_as_true_count() {
    let mut d = Driver::server(server_config());
    d.session.add_tool(tool("job", TaskSupport::Optional));
    d.call(
        "initialize",
        initialize_params("2025-11-25", json!({ "elicitation": true })),
    );
    d.call(
        "tools/call",
        json!({ "name": "job", "arguments": {}, "task": {} }),
    );
    assert!(d
        .session
        .request_input(d.now, "task-1", "elicitation/create", elicit("ok?"))
        .is_ok());
}
