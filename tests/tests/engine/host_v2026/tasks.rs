//! Tasks in 2026-07-28: the per-request task decision, the flat `CreateTaskResult`,
//! `tasks/get` with the outcome inline, early polls, and the cancel and update acks.

use serde_json::json;
use taskwire_engine::Event;
use taskwire_harness::schema::{assert_valid_in, CORE_2026, TASKS_2026};
use taskwire_harness::setup::stamp;

use super::{error_code, result_of, EXT, V2026};

#[test]
fn a_call_becomes_a_task_only_when_its_own_request_declares_the_extension() {
    let mut m = V2026::new();
    // Declared: the optional tool becomes a task, answered with the flat CreateTaskResult.
    let answer = m.declared("tools/call", json!({ "name": "slow", "arguments": {} }));
    assert_valid_in(CORE_2026, "JSONRPCResultResponse", &answer);
    assert_valid_in(TASKS_2026, "CreateTaskResult", result_of(&answer));
    let created = result_of(&answer);
    assert_eq!(created["resultType"], "task");
    assert_eq!(created["taskId"], "task-1");
    assert_eq!(created["status"], "working");
    assert_eq!(created["createdAt"], stamp(0));
    assert_eq!(created["pollIntervalMs"], 200);
    assert!(
        created.get("ttl").is_none() && created.get("task").is_none(),
        "{created}"
    );
    let call = m.tool_call();
    assert_eq!(call.task.as_deref(), Some("task-1"));
    // The very next tasks/get finds it.
    let got = m.declared("tasks/get", json!({ "taskId": "task-1" }));
    assert_valid_in(TASKS_2026, "GetTaskResult", result_of(&got));
    assert_eq!(result_of(&got)["status"], "working");

    // The next request does not declare it: a plain call, answered with resultType.
    let before = m.host.task_count();
    m.next_id += 1;
    let line = json!({"jsonrpc":"2.0","id":m.next_id,"method":"tools/call","params":{
        "name":"slow","arguments":{},"task":{"ttl":1000},
        "_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",
                 "io.modelcontextprotocol/clientCapabilities":{}}}});
    assert!(
        m.raw(&line.to_string()).is_empty(),
        "no answer before the app's"
    );
    let plain = m.tool_call();
    assert_eq!(plain.task, None, "params.task means nothing in this era");
    assert_eq!(m.host.task_count(), before);
    m.host
        .respond(
            m.now,
            plain.call,
            Ok(json!({"content":[{"type":"text","text":"hi"}]})),
        )
        .unwrap();
    let out = m.drain();
    assert_valid_in(CORE_2026, "CallToolResultResponse", &out[0]);
    assert_eq!(
        out[0]["result"],
        json!({"resultType":"complete","content":[{"type":"text","text":"hi"}]})
    );
}

#[test]
fn a_task_only_tool_needs_the_extension_and_a_forbidden_one_never_is_a_task() {
    let mut m = V2026::new();
    let answer = m.request("tools/call", json!({ "name": "job" }), json!({}));
    assert_valid_in(CORE_2026, "MissingRequiredClientCapabilityError", &answer);
    assert_eq!(
        answer["error"]["data"],
        json!({ "requiredCapabilities": { "extensions": { EXT: {} } } })
    );
    assert_eq!(m.host.task_count(), 0);

    m.next_id += 1;
    let line = json!({"jsonrpc":"2.0","id":m.next_id,"method":"tools/call","params":{"name":"greet",
        "_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",
                 "io.modelcontextprotocol/clientCapabilities":{"extensions":{EXT:{}}}}}});
    assert!(m.raw(&line.to_string()).is_empty());
    assert_eq!(m.tool_call().task, None);
    assert_eq!(m.host.task_count(), 0);
}

#[test]
fn tasks_get_inlines_the_outcome_and_is_error_reads_completed() {
    let mut m = V2026::new();
    // A tool error result: completed, with the result inline (resultType added).
    m.declared("tools/call", json!({ "name": "slow" }));
    let call = m.tool_call().call;
    let tool_error = json!({"content":[{"type":"text","text":"empty input"}],"isError":true});
    m.host.respond(m.now, call, Ok(tool_error)).unwrap();
    m.drain();
    let got = m.declared("tasks/get", json!({ "taskId": "task-1" }));
    let result = result_of(&got);
    assert_valid_in(TASKS_2026, "GetTaskResult", result);
    assert_eq!(result["status"], "completed");
    assert_eq!(
        result["result"],
        json!({"resultType":"complete","content":[{"type":"text","text":"empty input"}],"isError":true})
    );
    assert_valid_in(CORE_2026, "CallToolResult", &result["result"]);
    assert!(result.get("error").is_none());

    // A JSON-RPC error: failed, carrying the error, no result.
    m.now = m.now.plus(1500);
    m.declared("tools/call", json!({ "name": "slow" }));
    let call = m.tool_call().call;
    let error = taskwire_engine::RpcError::internal("backend unavailable");
    m.host.respond(m.now, call, Err(error)).unwrap();
    m.drain();
    let got = m.declared("tasks/get", json!({ "taskId": "task-2" }));
    let result = result_of(&got);
    assert_valid_in(TASKS_2026, "GetTaskResult", result);
    assert_eq!(result["status"], "failed");
    assert_eq!(result["error"]["code"], -32603);
    assert!(result.get("result").is_none());
    assert_eq!(result["lastUpdatedAt"], stamp(1500));
}

#[test]
fn an_early_poll_is_answered_and_raises_the_tasks_poll_interval() {
    let mut m = V2026::new();
    m.declared("tools/call", json!({ "name": "slow" }));
    let call = m.tool_call().call;
    let poll = |m: &mut V2026, after_ms: u64| {
        m.now = m.now.plus(after_ms);
        let got = m.declared("tasks/get", json!({ "taskId": "task-1" }));
        assert_valid_in(TASKS_2026, "GetTaskResult", result_of(&got));
        result_of(&got)["pollIntervalMs"].as_u64()
    };
    // The suggested pace (200 ms), and the conformance suite's, leave it alone.
    assert_eq!(
        poll(&mut m, 0),
        Some(200),
        "the first poll has nothing to compare"
    );
    assert_eq!(poll(&mut m, 200), Some(200));
    assert_eq!(
        poll(&mut m, 100),
        Some(200),
        "half the interval is not early"
    );
    // Sooner than half the interval: served, and the interval doubles each time.
    assert_eq!(poll(&mut m, 99), Some(400));
    assert_eq!(poll(&mut m, 10), Some(800));
    assert_eq!(poll(&mut m, 1_000), Some(800), "never lowered");
    for _ in 0..10 {
        poll(&mut m, 0);
    }
    assert_eq!(poll(&mut m, 0), Some(30_000), "capped at 30 s");
    assert_eq!(
        m.host.task("task-1").unwrap().info.poll_interval_ms,
        Some(30_000),
        "the task says so everywhere"
    );
    m.host
        .respond(m.now, call, Ok(json!({ "content": [] })))
        .unwrap();
    m.drain();
    // A finished task is not paced: there is nothing more to wait for.
    m.declared("tools/call", json!({ "name": "slow" }));
    let call = m.tool_call().call;
    m.host
        .respond(m.now, call, Ok(json!({ "content": [] })))
        .unwrap();
    m.drain();
    for _ in 0..3 {
        let got = m.declared("tasks/get", json!({ "taskId": "task-2" }));
        assert_eq!(result_of(&got)["pollIntervalMs"], 200);
    }
}

#[test]
fn cancel_is_an_ack_and_idempotent_on_finished_tasks() {
    let mut m = V2026::new();
    m.declared("tools/call", json!({ "name": "slow" }));
    let call = m.tool_call().call;
    for _ in 0..2 {
        let ack = m.declared("tasks/cancel", json!({ "taskId": "task-1" }));
        assert_valid_in(TASKS_2026, "CancelTaskResult", result_of(&ack));
        assert_eq!(result_of(&ack)["resultType"], "complete");
        assert!(result_of(&ack).get("status").is_none());
    }
    assert!(
        m.events
            .iter()
            .any(|e| matches!(e, Event::Stop { call: c, .. } if *c == call)),
        "the work was told to stop: {:?}",
        m.events
    );
    let got = m.declared("tasks/get", json!({ "taskId": "task-1" }));
    let result = result_of(&got);
    assert_valid_in(TASKS_2026, "GetTaskResult", result);
    assert_eq!(result["status"], "cancelled");
    assert!(result.get("error").is_none() && result.get("result").is_none());
    // Unknown ids stay -32602.
    let unknown = m.declared("tasks/cancel", json!({ "taskId": "nope" }));
    assert_eq!(error_code(&unknown), -32602);
}

#[test]
fn update_acks_and_ignores_keys_that_are_not_outstanding() {
    let mut m = V2026::new();
    m.declared("tools/call", json!({ "name": "slow" }));
    let params =
        json!({ "taskId": "task-1", "inputResponses": { "unknown-key": { "ignored": true } } });
    let ack = m.declared("tasks/update", params);
    assert_valid_in(TASKS_2026, "UpdateTaskResult", result_of(&ack));
    let unknown = m.declared(
        "tasks/update",
        json!({ "taskId": "nope", "inputResponses": {} }),
    );
    assert_eq!(error_code(&unknown), -32602);
    let missing = m.declared("tasks/update", json!({ "taskId": "task-1" }));
    assert_eq!(error_code(&missing), -32602);
}

#[test]
fn the_app_decides_when_it_asks_to_and_its_task_is_v2026() {
    let mut m = V2026::new();
    m.next_id += 1;
    let line = json!({"jsonrpc":"2.0","id":m.next_id,"method":"tools/call","params":{"name":"ask",
        "_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",
                 "io.modelcontextprotocol/clientCapabilities":{"extensions":{EXT:{}}}}}});
    assert!(m.raw(&line.to_string()).is_empty());
    let offered = m.tool_call();
    assert!(offered.task_offered);
    let task = m.host.start_task(m.now, offered.call).unwrap();
    let out = m.drain();
    assert_valid_in(TASKS_2026, "CreateTaskResult", &out[0]["result"]);
    assert_eq!(out[0]["result"]["taskId"], task.as_str());
    // The work of a 2026 task sends no progress (the era has none for tasks): its status
    // message shows it, until the application sets a message of its own.
    let shown = |m: &mut V2026| {
        let got = m.declared("tasks/get", json!({ "taskId": task.as_str() }));
        assert_valid_in(TASKS_2026, "GetTaskResult", result_of(&got));
        result_of(&got)["statusMessage"].clone()
    };
    m.host
        .notify_progress(m.now, offered.call, 1.0, Some(2.0), None)
        .unwrap();
    assert!(m.drain().is_empty());
    assert_eq!(shown(&mut m), "1 of 2");
    m.host
        .notify_progress(m.now, offered.call, 1.5, None, None)
        .unwrap();
    assert_eq!(shown(&mut m), "1.5");
    m.host
        .notify_progress(m.now, offered.call, 2.0, Some(2.0), Some("copying".into()))
        .unwrap();
    assert_eq!(shown(&mut m), "copying");
    m.host
        .set_task_message(m.now, offered.call, Some("mine".into()))
        .unwrap();
    m.host
        .notify_progress(m.now, offered.call, 3.0, Some(4.0), None)
        .unwrap();
    assert_eq!(
        shown(&mut m),
        "mine",
        "the application's own message stands"
    );
    m.host.set_task_message(m.now, offered.call, None).unwrap();
    m.host
        .notify_progress(m.now, offered.call, 4.0, Some(4.0), None)
        .unwrap();
    assert_eq!(shown(&mut m), "4 of 4", "cleared: progress shows again");
    // Nor input: its request declared no elicitation.
    assert!(m
        .host
        .request_input(m.now, offered.call, "elicitation/create", json!({}))
        .is_err());
}
