//! Input in 2026-07-28: a task's `inputRequests` listed by `tasks/get` and answered by
//! `tasks/update`, and a plain call asking by MRTR (`input_required` results and the request
//! state the client sends back).

use serde_json::{json, Value};
use taskwire_engine::{Event, Output, Role};
use taskwire_harness::schema::{assert_valid_in, CORE_2026, TASKS_2026};

use super::{ask_name, error_code, result_of, EXT, V2026};

#[test]
fn input_requests_are_listed_by_get_and_answered_by_update() {
    let mut m = V2026::new();
    let caps = json!({ "elicitation": { "form": {} }, "extensions": { EXT: {} } });
    m.request("tools/call", json!({ "name": "slow" }), caps.clone());
    let call = m.tool_call().call;
    let ask = |m: &mut V2026, message: &str| {
        let params = json!({ "mode": "form", "message": message, "requestedSchema": {
            "type": "object", "properties": { "ok": { "type": "boolean" } }, "required": ["ok"] } });
        m.host
            .request_input(m.now, call, "elicitation/create", params)
            .unwrap()
    };
    let first = ask(&mut m, "Delete?");
    let second = ask(&mut m, "Really?");
    assert!(m.drain().is_empty(), "nothing is sent: the client polls");
    let got = m.request("tasks/get", json!({ "taskId": "task-1" }), caps.clone());
    let result = result_of(&got);
    assert_valid_in(TASKS_2026, "GetTaskResult", result);
    assert_eq!(result["status"], "input_required");
    let keys: Vec<&String> = result["inputRequests"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    assert_eq!(keys.len(), 2, "{result}");
    let (k1, k2) = (keys[0].clone(), keys[1].clone());
    assert_eq!(result["inputRequests"][&k1]["method"], "elicitation/create");

    // Unknown keys are ignored; a malformed value for an outstanding key is -32602 and
    // changes nothing.
    let update = |m: &mut V2026, responses: Value| {
        m.request(
            "tasks/update",
            json!({ "taskId": "task-1", "inputResponses": responses }),
            caps.clone(),
        )
    };
    let ack = update(&mut m, json!({ "unknown-key": { "ignored": true } }));
    assert_valid_in(TASKS_2026, "UpdateTaskResult", result_of(&ack));
    let bad = update(&mut m, json!({ k1.clone(): "yes" }));
    assert_eq!(error_code(&bad), -32602);
    // One answered: still input_required, with only the other key, before any poll.
    let ack = update(
        &mut m,
        json!({ k1.clone(): { "action": "accept", "content": { "ok": true } } }),
    );
    assert_eq!(result_of(&ack)["resultType"], "complete");
    let answered: Vec<_> = m
        .events
        .iter()
        .filter_map(|e| match e {
            Event::InputResponse { input, outcome, .. } => Some((*input, outcome.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(answered.len(), 1);
    assert_eq!(answered[0].0, first);
    assert_eq!(answered[0].1.as_ref().unwrap()["content"]["ok"], true);
    let got = m.request("tasks/get", json!({ "taskId": "task-1" }), caps.clone());
    assert_eq!(result_of(&got)["status"], "input_required");
    let left: Vec<&String> = result_of(&got)["inputRequests"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    assert_eq!(left, vec![&k2]);
    // The same key again is no longer outstanding: ignored.
    update(&mut m, json!({ k1.clone(): { "action": "decline" } }));
    // The last one: working again.
    update(
        &mut m,
        json!({ k2.clone(): { "action": "accept", "content": { "ok": true } } }),
    );
    assert!(m
        .events
        .iter()
        .any(|e| matches!(e, Event::InputResponse { input, .. } if *input == second)));
    let got = m.request("tasks/get", json!({ "taskId": "task-1" }), caps.clone());
    assert_valid_in(TASKS_2026, "GetTaskResult", result_of(&got));
    assert_eq!(result_of(&got)["status"], "working");
    assert!(result_of(&got).get("inputRequests").is_none());
    // A key is never reused within the task.
    let third = ask(&mut m, "Once more?");
    let got = m.request("tasks/get", json!({ "taskId": "task-1" }), caps);
    let keys: Vec<&String> = result_of(&got)["inputRequests"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    assert!(keys[0] != &k1 && keys[0] != &k2, "{keys:?} after {third}");
}

#[test]
fn input_the_creating_request_did_not_declare_cannot_be_asked() {
    let mut m = V2026::new();
    m.declared("tools/call", json!({ "name": "slow" }));
    let call = m.tool_call().call;
    let asked = m
        .host
        .request_input(m.now, call, "sampling/createMessage", json!({}));
    assert_eq!(
        asked,
        Err(taskwire_engine::UsageError::NotNegotiated("sampling"))
    );
    let got = m.declared("tasks/get", json!({ "taskId": "task-1" }));
    assert_eq!(result_of(&got)["status"], "working");
}

/// v2026_ops: a 2025-11-25 task waiting for input, read by a 2026 request, lacked
/// `inputRequests` (which the schema requires in that status). Its input requests went to
/// its own client as requests, so the map is empty.
#[test]
fn a_v2025_task_waiting_for_input_reads_with_empty_input_requests() {
    let mut m = V2026::new();
    let v2025 = m
        .host
        .open(m.now, Role::Server, "alice")
        .expect("the host takes sessions");
    let init = json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{
        "protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},
        "clientInfo":{"name":"c","version":"1"}}});
    m.host
        .handle_message(m.now, v2025, init.to_string().as_bytes())
        .expect("the host takes input");
    m.host
        .handle_message(
            m.now,
            v2025,
            br#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","task":{}}}"#,
        )
        .expect("the host takes input");
    while let Some(o) = m.host.poll_output() {
        if let Output::Event(e) = o {
            m.events.push(e);
        }
    }
    let call = m.tool_call().call;
    m.host
        .request_input(
            m.now,
            call,
            "elicitation/create",
            json!({"message": "ok?", "requestedSchema": {"type": "object", "properties": {}}}),
        )
        .unwrap();
    while m.host.poll_output().is_some() {}
    let got = m.request("tasks/get", json!({ "taskId": "task-1" }), json!({}));
    let result = result_of(&got);
    assert_valid_in(TASKS_2026, "GetTaskResult", result);
    assert_eq!(result["status"], "input_required");
    assert_eq!(result["inputRequests"], json!({}));
}

/// One `tools/call` line of this era declaring elicitation (and the extension when
/// `tasks`), with MRTR fields merged into `params`.
fn elicit_call(m: &mut V2026, name: &str, tasks: bool, mrtr: Value) -> Vec<Value> {
    m.next_id += 1;
    let mut caps = json!({ "elicitation": {} });
    if tasks {
        caps["extensions"] = json!({ EXT: {} });
    }
    let mut params = json!({ "name": name, "arguments": {}, "_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": caps } });
    if let Value::Object(extra) = mrtr {
        params.as_object_mut().unwrap().extend(extra);
    }
    let line = json!({"jsonrpc":"2.0","id":m.next_id,"method":"tools/call","params":params});
    m.raw(&line.to_string())
}

fn answers(m: &V2026) -> Vec<(taskwire_engine::InputId, Value)> {
    m.events
        .iter()
        .filter_map(|e| match e {
            Event::InputResponse { input, outcome, .. } => Some((*input, outcome.clone().unwrap())),
            _ => None,
        })
        .collect()
}

#[test]
fn a_plain_call_asks_for_input_by_mrtr_over_two_rounds() {
    let mut m = V2026::new();
    // Round 1: the tool asks; the request is answered with an InputRequiredResult.
    assert!(elicit_call(&mut m, "greet", false, json!({})).is_empty());
    let call = m.tool_call().call;
    ask_name(&mut m, call, 1);
    let out = m.drain();
    assert_eq!(out.len(), 1);
    assert_valid_in(CORE_2026, "InputRequiredResult", &out[0]["result"]);
    assert_eq!(out[0]["result"]["resultType"], "input_required");
    let request = &out[0]["result"]["inputRequests"]["input-1"];
    assert_eq!(request["method"], "elicitation/create");
    assert_eq!(request["params"]["message"], "question 1");
    assert!(
        out[0]["result"].get("requestState").is_none(),
        "nothing to carry yet"
    );
    assert!(m.events.iter().any(|e| matches!(e,
        Event::Stop { call: c, reason: taskwire_engine::StopReason::InputRequired, .. } if *c == call)));
    assert_eq!(
        m.host.respond(m.now, call, Ok(json!({"content": []}))),
        Err(taskwire_engine::UsageError::UnknownCall(call)),
        "the call is over"
    );

    // Round 2: the retry carries the answer; the same first ask gets it at once, a second
    // ask goes back to the client with the first answer in requestState.
    let first = json!({ "action": "accept", "content": { "a": "one" } });
    let mrtr = json!({ "inputResponses": { "input-1": first } });
    assert!(elicit_call(&mut m, "greet", false, mrtr).is_empty());
    let call = m.tool_call().call;
    m.events.clear();
    let input = ask_name(&mut m, call, 1);
    assert!(m.drain().is_empty());
    assert_eq!(answers(&m), vec![(input, first.clone())]);
    ask_name(&mut m, call, 2);
    let out = m.drain();
    assert_valid_in(CORE_2026, "InputRequiredResult", &out[0]["result"]);
    assert!(out[0]["result"]["inputRequests"].get("input-2").is_some());
    let state = out[0]["result"]["requestState"]
        .as_str()
        .unwrap()
        .to_owned();

    // Round 3: both answers; the tool finishes.
    let second = json!({ "action": "accept", "content": { "a": "two" } });
    let mrtr = json!({ "inputResponses": { "input-2": second }, "requestState": state });
    assert!(elicit_call(&mut m, "greet", false, mrtr).is_empty());
    let call = m.tool_call().call;
    m.events.clear();
    let (one, two) = (ask_name(&mut m, call, 1), ask_name(&mut m, call, 2));
    assert!(m.drain().is_empty());
    assert_eq!(answers(&m), vec![(one, first), (two, second)]);
    m.host
        .respond(
            m.now,
            call,
            Ok(json!({"content":[{"type":"text","text":"one two"}]})),
        )
        .unwrap();
    let out = m.drain();
    assert_valid_in(CORE_2026, "CallToolResultResponse", &out[0]);
    assert_eq!(out[0]["result"]["resultType"], "complete");
}

#[test]
fn mrtr_then_a_task_when_the_app_decides() {
    let mut m = V2026::new();
    elicit_call(&mut m, "ask", true, json!({}));
    let offered = m.tool_call();
    assert!(offered.task_offered);
    ask_name(&mut m, offered.call, 1);
    let out = m.drain();
    assert_eq!(out[0]["result"]["resultType"], "input_required");
    assert_eq!(m.host.task_count(), 0, "no task before the input");
    let mrtr = json!({ "inputResponses": { "input-1": { "action": "accept", "content": {} } } });
    elicit_call(&mut m, "ask", true, mrtr);
    let retried = m.tool_call();
    ask_name(&mut m, retried.call, 1);
    assert!(m.drain().is_empty(), "answered from the retry");
    m.host.start_task(m.now, retried.call).unwrap();
    let out = m.drain();
    assert_valid_in(TASKS_2026, "CreateTaskResult", &out[0]["result"]);
    assert!(out[0]["result"].get("requestState").is_none());
}

#[test]
fn a_request_state_we_did_not_write_is_refused() {
    let mut m = V2026::new();
    let out = elicit_call(
        &mut m,
        "greet",
        false,
        json!({ "requestState": "v1.not-ours" }),
    );
    assert_eq!(error_code(&out[0]), -32602, "{out:?}");
    assert!(
        !m.events.iter().any(|e| matches!(e, Event::ToolCall(_))),
        "the tool never ran"
    );
}
