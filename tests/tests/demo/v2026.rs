//! The demo `task-server` over real stdio pipes, spoken to in the 2026-07-28 era with the
//! tasks extension: no `initialize`; `server/discover`, then the seed's tool as a task,
//! polled with `tasks/get` until `completed` with the result inline, and `confirm_task`,
//! whose elicitation shows in `tasks/get` and is answered with `tasks/update`, while a
//! 2025-11-25 client on the same process runs a task of its own at the same time. Every
//! 2026 answer is checked against the 2026 schemas.

use std::time::Duration;

use serde_json::{json, Value};
use taskwire_demo::extra_tools::CONFIRM_TASK;
use taskwire_demo::tools::{DONE_MESSAGE, RESULT_TEXT, TOOL};
use taskwire_harness::schema::{assert_valid_in, CORE_2026, TASKS_2026};
use taskwire_tests::procs::{self, Raw, Rt};

use crate::common::HANG;

fn v2026(id: u64, method: &str, mut params: Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {
            "elicitation": { "form": {} },
            "extensions": { "io.modelcontextprotocol/tasks": {} }
        }
    });
    procs::request(id, method, params)
}

/// Polls `tasks/get` every 50 ms from id `*id` on until `done` holds for the task.
fn poll_until(raw: &mut Raw, id: &mut u64, task: &str, done: impl Fn(&Value) -> bool) -> Value {
    for _ in 0..200 {
        std::thread::sleep(Duration::from_millis(50));
        *id += 1;
        raw.send(&v2026(*id, "tasks/get", json!({ "taskId": task })))
            .expect("tasks/get");
        let want = *id;
        let got = raw.expect(HANG, "a tasks/get answer", |m| m["id"] == want);
        assert_valid_in(TASKS_2026, "GetTaskResult", &got["result"]);
        if done(&got["result"]) {
            return got["result"].clone();
        }
    }
    panic!("task {task} never reached the state wanted");
}

fn whole_task(runtime: Rt) {
    let mut raw = Raw::spawn(
        &procs::task_server(),
        &[
            procs::server_args(runtime, 50),
            vec!["--extra-tools".into()],
        ]
        .concat(),
        None,
    );
    raw.send(&v2026(1, "server/discover", json!({})))
        .expect("discover");
    let discovered = raw.expect(HANG, "the discover answer", |m| m["id"] == 1);
    assert_valid_in(CORE_2026, "DiscoverResultResponse", &discovered);

    // A 2025-11-25 client on the same process at the same time: its task runs beside ours.
    raw.handshake();
    raw.send(&procs::call_as_task(200, TOOL))
        .expect("v2025 call");
    let v2025 = raw.expect(HANG, "a v2025 CreateTaskResult", |m| m["id"] == 200);
    assert_eq!(v2025["result"]["task"]["status"], "working", "{v2025}");
    let v2025_task = v2025["result"]["task"]["taskId"]
        .as_str()
        .unwrap()
        .to_owned();

    raw.send(&v2026(
        2,
        "tools/call",
        json!({ "name": TOOL, "arguments": {} }),
    ))
    .expect("tools/call");
    let created = raw.expect(HANG, "CreateTaskResult", |m| m["id"] == 2);
    assert_valid_in(TASKS_2026, "CreateTaskResult", &created["result"]);
    let task = created["result"]["taskId"].as_str().unwrap().to_owned();

    let mut id = 10;
    let done = poll_until(&mut raw, &mut id, &task, |t| t["status"] == "completed");
    let done = json!({ "result": done });
    let result = &done["result"]["result"];
    assert_valid_in(CORE_2026, "CallToolResult", result);
    assert_eq!(result["resultType"], "complete");
    assert!(
        result["content"][0]["text"].is_string(),
        "the tool's text is inline: {done}"
    );
    assert_eq!(done["result"]["statusMessage"], DONE_MESSAGE);

    // A tool that asks for a confirmation mid-task.
    raw.send(&v2026(
        100,
        "tools/call",
        json!({ "name": CONFIRM_TASK, "arguments": { "question": "Ship it?" } }),
    ))
    .expect("tools/call");
    let created = raw.expect(HANG, "CreateTaskResult", |m| m["id"] == 100);
    let task = created["result"]["taskId"].as_str().unwrap().to_owned();
    let mut id = 100;
    let waiting = poll_until(&mut raw, &mut id, &task, |t| {
        t["status"] == "input_required"
    });
    let requests = waiting["inputRequests"].as_object().expect("inputRequests");
    assert_eq!(requests.len(), 1, "{waiting}");
    let (key, request) = requests.iter().next().unwrap();
    assert_eq!(request["method"], "elicitation/create");
    assert_eq!(request["params"]["message"], "Ship it?");
    id += 1;
    let answer = json!({ key.clone(): { "action": "accept", "content": { "confirm": true } } });
    raw.send(&v2026(
        id,
        "tasks/update",
        json!({ "taskId": task, "inputResponses": answer }),
    ))
    .expect("tasks/update");
    let want = id;
    let ack = raw.expect(HANG, "the update ack", |m| m["id"] == want);
    assert_valid_in(TASKS_2026, "UpdateTaskResult", &ack["result"]);
    let done = poll_until(&mut raw, &mut id, &task, |t| t["status"] == "completed");
    assert_eq!(done["result"]["content"][0]["text"], "Ship it? confirmed");
    assert_eq!(done["result"]["structuredContent"]["confirmed"], true);

    // The same tool called plainly (no extension declared): MRTR. The request is answered
    // with the input it needs; the retry carries the answer and gets the result.
    let plain = |id: u64, extra: Value| {
        let mut params = json!({ "name": CONFIRM_TASK, "arguments": { "question": "Plain?" },
            "_meta": { "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                       "io.modelcontextprotocol/clientCapabilities": { "elicitation": {} } } });
        if let Value::Object(extra) = extra {
            params.as_object_mut().unwrap().extend(extra);
        }
        procs::request(id, "tools/call", params)
    };
    raw.send(&plain(150, json!({}))).expect("tools/call");
    let asked = raw.expect(HANG, "the InputRequiredResult", |m| m["id"] == 150);
    assert_valid_in(CORE_2026, "InputRequiredResult", &asked["result"]);
    let requests = asked["result"]["inputRequests"].as_object().unwrap();
    let key = requests.keys().next().unwrap().clone();
    let retry = json!({ "inputResponses": { key: { "action": "accept", "content": { "confirm": true } } } });
    raw.send(&plain(151, retry)).expect("the retry");
    let done = raw.expect(HANG, "the retried call's result", |m| m["id"] == 151);
    assert_valid_in(CORE_2026, "CallToolResultResponse", &done);
    assert_eq!(done["result"]["content"][0]["text"], "Plain? confirmed");

    // The v2025 task ran meanwhile, and its client reads the result the 2025-11-25 way.
    let fetch = procs::request(201, "tasks/result", json!({ "taskId": v2025_task }));
    raw.send(&fetch).expect("tasks/result");
    let result = raw.expect(HANG, "the v2025 result", |m| m["id"] == 201);
    assert_eq!(
        result["result"]["content"][0]["text"], RESULT_TEXT,
        "{result}"
    );
    let related = &result["result"]["_meta"]["io.modelcontextprotocol/related-task"];
    assert_eq!(related["taskId"], v2025_task.as_str());
}

#[test]
fn a_2026_client_runs_a_whole_task_smol_server() {
    whole_task(Rt::Smol);
}

#[test]
fn a_2026_client_runs_a_whole_task_tokio_server() {
    whole_task(Rt::Tokio);
}
