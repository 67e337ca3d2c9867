//! Listen streams (`subscriptions/listen`): each change of the caller's tasks, the
//! extension required, the client cancelling the stream, and an expired task let go.

use serde_json::{json, Value};
use taskwire_engine::{Event, Output, Role};
use taskwire_harness::schema::{assert_valid_in, CORE_2026, TASKS_2026};

use super::{ask_name, error_code, result_of, EXT, V2026};

/// The notifications of `method` among `out`.
fn notifications(out: &[Value], method: &str) -> Vec<Value> {
    out.iter()
        .filter(|m| m["method"] == method)
        .cloned()
        .collect()
}

#[test]
fn a_listen_stream_reports_each_change_of_the_callers_tasks_then_ends() {
    let mut m = V2026::new();
    let caps = json!({ "elicitation": {}, "extensions": { EXT: {} } });
    m.request("tools/call", json!({ "name": "slow" }), caps.clone());
    let call = m.tool_call().call;
    // Another owner's task, on another session of the host.
    let bob = m
        .host
        .open(m.now, Role::Server, "bob")
        .expect("the host takes sessions");
    let bob_call = json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow",
        "_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",
                 "io.modelcontextprotocol/clientCapabilities":{"extensions":{EXT:{}}}}}});
    m.host
        .handle_message(m.now, bob, bob_call.to_string().as_bytes())
        .expect("the host takes input");
    while m.host.poll_output().is_some() {}

    m.next_id += 1;
    let listen_id = m.next_id;
    let listen = json!({"jsonrpc":"2.0","id":listen_id,"method":"subscriptions/listen","params":{
        "notifications": { "taskIds": ["task-1", "task-2", "nope"] },
        "_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",
                 "io.modelcontextprotocol/clientCapabilities": caps.clone()}}});
    assert_valid_in(CORE_2026, "SubscriptionsListenRequest", &listen);
    let out = m.raw(&listen.to_string());
    assert_eq!(
        out.len(),
        2,
        "the acknowledgement, then the task as it stands: {out:?}"
    );
    assert_valid_in(CORE_2026, "SubscriptionsAcknowledgedNotification", &out[0]);
    assert_valid_in(TASKS_2026, "TaskStatusNotification", &out[1]);
    assert_eq!(out[1]["params"]["taskId"], "task-1");
    assert_eq!(out[1]["params"]["status"], "working");
    assert_eq!(
        out[0]["params"]["notifications"]["taskIds"],
        json!(["task-1"])
    );
    assert_eq!(
        out[0]["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        listen_id
    );

    // A status message, an input request, its answer, the end: one notification each.
    m.host
        .set_task_message(m.now, call, Some("step 1".into()))
        .unwrap();
    let input = ask_name(&mut m, call, 1);
    let out = m.drain();
    let told = notifications(&out, "notifications/tasks");
    assert_eq!(told.len(), 2, "{out:?}");
    for n in &told {
        assert_valid_in(TASKS_2026, "TaskStatusNotification", n);
        assert_eq!(
            n["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
            listen_id
        );
        assert!(n["params"].get("resultType").is_none());
    }
    assert_eq!(told[0]["params"]["statusMessage"], "step 1");
    assert_eq!(told[1]["params"]["status"], "input_required");
    let key = told[1]["params"]["inputRequests"]
        .as_object()
        .unwrap()
        .keys()
        .next()
        .unwrap()
        .clone();
    m.next_id += 1;
    let update = json!({"jsonrpc":"2.0","id":m.next_id,"method":"tasks/update","params":{
        "taskId": "task-1", "inputResponses": { key: { "action": "accept", "content": {} } },
        "_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",
                 "io.modelcontextprotocol/clientCapabilities": caps.clone()}}});
    let out = m.raw(&update.to_string());
    // Working again is reported on the stream, then the update is acknowledged.
    assert_eq!(out.len(), 2, "{out:?}");
    assert_eq!(out[0]["params"]["status"], "working");
    assert!(out[0]["params"].get("inputRequests").is_none());
    assert_eq!(result_of(&out[1])["resultType"], "complete");
    assert!(m
        .events
        .iter()
        .any(|e| matches!(e, Event::InputResponse { input: i, .. } if *i == input)));
    m.host
        .respond(
            m.now,
            call,
            Ok(json!({"content":[{"type":"text","text":"done"}]})),
        )
        .unwrap();
    let out = m.drain();
    let last = notifications(&out, "notifications/tasks");
    assert_eq!(last.len(), 1, "{out:?}");
    assert_eq!(last[0]["params"]["status"], "completed");
    assert_eq!(last[0]["params"]["result"]["content"][0]["text"], "done");
    // Every task it follows is terminal: the stream ends with its result.
    let end = out
        .iter()
        .find(|o| o["id"] == listen_id)
        .expect("the stream's end");
    assert_valid_in(CORE_2026, "SubscriptionsListenResultResponse", end);
}

#[test]
fn a_listen_needs_the_extension_and_ends_when_the_client_cancels_it() {
    let mut m = V2026::new();
    let refused = m.request(
        "subscriptions/listen",
        json!({ "notifications": { "taskIds": ["task-1"] } }),
        json!({}),
    );
    assert_valid_in(CORE_2026, "MissingRequiredClientCapabilityError", &refused);

    m.declared("tools/call", json!({ "name": "slow" }));
    let call = m.tool_call().call;
    m.next_id += 1;
    let listen_id = m.next_id;
    let listen = json!({"jsonrpc":"2.0","id":listen_id,"method":"subscriptions/listen","params":{
        "notifications": { "taskIds": ["task-1"] },
        "_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",
                 "io.modelcontextprotocol/clientCapabilities":{"extensions":{EXT:{}}}}}});
    assert_eq!(m.raw(&listen.to_string()).len(), 2);
    let cancel = json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":listen_id}});
    assert!(m.raw(&cancel.to_string()).is_empty());
    m.host
        .set_task_message(m.now, call, Some("unheard".into()))
        .unwrap();
    m.host
        .respond(m.now, call, Ok(json!({"content": []})))
        .unwrap();
    assert!(m.drain().is_empty(), "nothing more on a cancelled stream");

    // A listen for a task already finished reports it once and ends at once.
    m.next_id += 1;
    let again = json!({"jsonrpc":"2.0","id":m.next_id,"method":"subscriptions/listen","params":{
        "notifications": { "taskIds": ["task-1"] },
        "_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",
                 "io.modelcontextprotocol/clientCapabilities":{"extensions":{EXT:{}}}}}});
    let out = m.raw(&again.to_string());
    assert_eq!(out.len(), 3, "{out:?}");
    assert_eq!(out[1]["params"]["status"], "completed");
    assert_eq!(out[2]["id"], m.next_id);
}

#[test]
fn a_listen_stream_lets_an_expired_task_go_and_its_owner_hears_it_expired() {
    let mut m = V2026::new();
    m.declared("tools/call", json!({ "name": "slow" }));
    m.next_id += 1;
    let listen_id = m.next_id;
    let listen = json!({"jsonrpc":"2.0","id":listen_id,"method":"subscriptions/listen","params":{
        "notifications": { "taskIds": ["task-1"] },
        "_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",
                 "io.modelcontextprotocol/clientCapabilities":{"extensions":{EXT:{}}}}}});
    assert_eq!(m.raw(&listen.to_string()).len(), 2);
    // The default retention (5 minutes) runs out while the task still works.
    m.now = m.now.plus(300_001);
    m.host.handle_timeout(m.now).expect("the host takes input");
    let out = m.drain();
    assert_eq!(out.len(), 1, "{out:?}");
    assert_eq!(out[0]["id"], listen_id);
    assert_valid_in(CORE_2026, "SubscriptionsListenResultResponse", &out[0]);
    // Its owner learns it expired (§2.14 r5); another owner, only that there is none.
    let gone = m.declared("tasks/get", json!({ "taskId": "task-1" }));
    assert_eq!(error_code(&gone), -32602);
    assert_eq!(
        gone["error"]["message"],
        "Failed to retrieve task: Task has expired"
    );
    let bob = m
        .host
        .open(m.now, Role::Server, "bob")
        .expect("the host takes sessions");
    let probe = json!({"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"taskId":"task-1",
        "_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",
                 "io.modelcontextprotocol/clientCapabilities":{"extensions":{EXT:{}}}}}});
    m.host
        .handle_message(m.now, bob, probe.to_string().as_bytes())
        .expect("the host takes input");
    let mut answers = Vec::new();
    while let Some(o) = m.host.poll_output() {
        if let Output::Send(t) = o {
            answers.push(serde_json::from_str::<Value>(&t.message).unwrap());
        }
    }
    assert_eq!(
        answers[0]["error"]["message"],
        "Failed to retrieve task: Task not found"
    );
}
