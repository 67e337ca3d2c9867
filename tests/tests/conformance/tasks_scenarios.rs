//! `conformance-server` over real stdio, driven the way the conformance suite's tasks
//! scenarios drive a server (`../shared/spec/tasks-ext-2026.md` §5.4: the same requests,
//! capability sets and assertions, minus the HTTP header checks, which need the HTTP
//! transport). Every answer is checked against the 2026 schemas, as the suite's
//! `wire-schema-valid` check does.

use std::time::{Duration, Instant};

use serde_json::{json, Value};
use taskwire_harness::schema::{assert_valid_in, CORE_2026, TASKS_2026};
use taskwire_tests::peers::demo::binary;
use taskwire_tests::procs::{self, Raw};

use crate::common::HANG;

const EXT: &str = "io.modelcontextprotocol/tasks";

/// The suite's capability sets: E+, X and none.
fn full() -> Value {
    json!({ "elicitation": {}, "sampling": {}, "extensions": { EXT: {} } })
}
fn tasks_only() -> Value {
    json!({ "extensions": { EXT: {} } })
}
fn none() -> Value {
    json!({})
}

struct Suite {
    raw: Raw,
    id: u64,
}

impl Suite {
    fn start() -> Suite {
        let raw = Raw::spawn(&binary("conformance-server"), &[], None);
        Suite { raw, id: 0 }
    }

    /// One request with the suite's `_meta` for `caps`; the whole answer.
    fn ask(&mut self, method: &str, mut params: Value, caps: Value) -> Value {
        self.id += 1;
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": { "name": "conformance-test-client", "version": "1.0.0" },
            "io.modelcontextprotocol/clientCapabilities": caps,
        });
        let id = self.id;
        self.raw
            .send(&procs::request(id, method, params))
            .expect("the server reads");
        let answer = self.raw.expect(HANG, method, |m| m["id"] == id);
        assert_valid_in(CORE_2026, "JSONRPCMessage", &answer);
        if let Some(error) = answer.get("error") {
            let typed = match error["code"].as_i64() {
                Some(-32021) => Some("MissingRequiredClientCapabilityError"),
                Some(-32022) => Some("UnsupportedProtocolVersionError"),
                _ => None,
            };
            if let Some(definition) = typed {
                assert_valid_in(CORE_2026, definition, &answer);
            }
        }
        answer
    }

    fn result(&mut self, method: &str, params: Value, caps: Value) -> Value {
        let answer = self.ask(method, params, caps);
        let result = answer
            .get("result")
            .unwrap_or_else(|| panic!("{method}: no result: {answer}"))
            .clone();
        match method {
            "tools/call" => match result["resultType"].as_str() {
                Some("task") => assert_valid_in(TASKS_2026, "CreateTaskResult", &result),
                Some("input_required") => {
                    assert_valid_in(CORE_2026, "InputRequiredResult", &result)
                }
                _ => assert_valid_in(CORE_2026, "CallToolResult", &result),
            },
            "tasks/get" => assert_valid_in(TASKS_2026, "GetTaskResult", &result),
            "tasks/update" => assert_valid_in(TASKS_2026, "UpdateTaskResult", &result),
            "tasks/cancel" => assert_valid_in(TASKS_2026, "CancelTaskResult", &result),
            "server/discover" => assert_valid_in(CORE_2026, "DiscoverResult", &result),
            _ => {}
        }
        result
    }

    fn code(&mut self, method: &str, params: Value, caps: Value) -> i64 {
        let answer = self.ask(method, params, caps);
        answer["error"]["code"]
            .as_i64()
            .unwrap_or_else(|| panic!("{method}: not an error: {answer}"))
    }

    fn call(&mut self, tool: &str, arguments: Value, caps: Value) -> Value {
        self.result(
            "tools/call",
            json!({ "name": tool, "arguments": arguments }),
            caps,
        )
    }

    fn get(&mut self, task: &str) -> Value {
        self.result("tasks/get", json!({ "taskId": task }), full())
    }

    /// Polls every 200 ms for up to `limit` until `done` holds.
    fn poll(&mut self, task: &str, limit: Duration, done: impl Fn(&Value) -> bool) -> Value {
        let start = Instant::now();
        loop {
            let got = self.get(task);
            if done(&got) {
                return got;
            }
            assert!(start.elapsed() < limit, "task {task} stuck: {got}");
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    fn wait_terminal(&mut self, task: &str) -> Value {
        self.poll(task, Duration::from_secs(10), |t| {
            matches!(
                t["status"].as_str(),
                Some("completed" | "failed" | "cancelled")
            )
        })
    }

    fn wait_input(&mut self, task: &str) -> Value {
        self.poll(task, Duration::from_secs(5), |t| {
            t["status"] == "input_required"
        })
    }
}

fn task_id(created: &Value) -> String {
    assert_eq!(created["resultType"], "task", "{created}");
    created["taskId"].as_str().expect("a taskId").to_owned()
}

fn assert_bare_ack(ack: &Value) {
    assert_eq!(ack["resultType"], "complete", "{ack}");
    for key in ["taskId", "status", "result", "error", "inputRequests"] {
        assert!(ack.get(key).is_none(), "{key} in the ack {ack}");
    }
}

#[test]
fn tasks_lifecycle() {
    let mut s = Suite::start();
    let greeted = s.call("greet", json!({ "name": "World" }), full());
    assert_eq!(greeted["content"][0]["text"], "Hello, World!");
    assert!(greeted.get("taskId").is_none());

    let created = s.call(
        "slow_compute",
        json!({ "seconds": 2, "label": "lifecycle-create" }),
        full(),
    );
    let task = task_id(&created);
    for key in [
        "task",
        "result",
        "error",
        "inputRequests",
        "requestState",
        "ttl",
        "pollInterval",
    ] {
        assert!(created.get(key).is_none(), "{key} in {created}");
    }
    assert!(created["pollIntervalMs"]
        .as_u64()
        .is_some_and(|p| p > 0 && p <= 200));
    assert_eq!(s.get(&task)["taskId"], task.as_str(), "readable at once");
    let done = s.wait_terminal(&task);
    assert_eq!(done["status"], "completed");
    assert!(!done["result"]["content"].as_array().unwrap().is_empty());
    let meta = &done["result"]["_meta"];
    assert!(meta.get("io.modelcontextprotocol/related-task").is_none());
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(s.get(&task)["status"], "completed", "no early expiry");

    let failing = task_id(&s.call("failing_job", json!({}), full()));
    let done = s.wait_terminal(&failing);
    assert_eq!(
        (&done["status"], &done["result"]["isError"]),
        (&json!("completed"), &json!(true))
    );

    let protocol = task_id(&s.call("protocol_error_job", json!({}), full()));
    let done = s.wait_terminal(&protocol);
    assert_eq!(done["status"], "failed");
    assert!(done["error"]["code"].is_i64() && done["error"]["message"].is_string());
    assert!(done.get("result").is_none());

    let long = task_id(&s.call(
        "slow_compute",
        json!({ "seconds": 60, "label": "lifecycle-cancel" }),
        full(),
    ));
    assert_bare_ack(&s.result("tasks/cancel", json!({ "taskId": long }), full()));
    assert_eq!(s.wait_terminal(&long)["status"], "cancelled");
    assert_bare_ack(&s.result("tasks/cancel", json!({ "taskId": long }), full()));
}

#[test]
fn capability_negotiation_and_required_tasks() {
    let mut s = Suite::start();
    let discovered = s.result("server/discover", json!({}), full());
    assert_eq!(discovered["capabilities"]["extensions"][EXT], json!({}));
    assert!(discovered["capabilities"].get("tasks").is_none());
    assert_eq!(
        s.code("tasks/get", json!({ "taskId": "gate-test" }), none()),
        -32021
    );
    let update = json!({ "taskId": "gate-test", "inputResponses": {} });
    assert_eq!(s.code("tasks/update", update, none()), -32021);
    assert_eq!(
        s.code("tasks/cancel", json!({ "taskId": "gate-test" }), none()),
        -32021
    );
    let plain = s.call(
        "slow_compute",
        json!({ "seconds": 0, "label": "capability-no-ext" }),
        none(),
    );
    assert!(plain.get("taskId").is_none() && plain["content"].is_array());
    let opted = s.call(
        "slow_compute",
        json!({ "seconds": 1, "label": "capability-meta-opt" }),
        tasks_only(),
    );
    let task = task_id(&opted);
    s.result("tasks/cancel", json!({ "taskId": task }), full());
    let refused = s.ask(
        "tools/call",
        json!({ "name": "failing_job", "arguments": {} }),
        none(),
    );
    assert_eq!(refused["error"]["code"], -32021);
    assert_eq!(
        refused["error"]["data"]["requiredCapabilities"]["extensions"][EXT],
        json!({})
    );
}

#[test]
fn dispatch_and_envelope() {
    let mut s = Suite::start();
    let probe = json!({ "taskId": "tasks-conformance-isolation-probe" });
    assert_eq!(s.code("tasks/result", probe, full()), -32601);
    assert_eq!(s.code("tasks/list", json!({}), full()), -32601);
    let v2025_hint = json!({ "name": "greet", "arguments": { "name": "v2025-hint" },
                              "task": { "ttl": 60000, "pollInterval": 100 } });
    let greeted = s.result("tools/call", v2025_hint, full());
    assert_eq!(greeted["resultType"], "complete");
    let instant = s.call(
        "slow_compute",
        json!({ "seconds": 0, "label": "instant" }),
        full(),
    );
    assert!(instant["resultType"] == "task" || instant["content"].is_array());
    let long = task_id(&s.call(
        "slow_compute",
        json!({ "seconds": 60, "label": "consistency" }),
        full(),
    ));
    assert_eq!(s.get(&long)["taskId"], long.as_str());
    s.result("tasks/cancel", json!({ "taskId": long }), full());
    let unknown = json!({ "taskId": "tasks-conformance-nonexistent-12345" });
    assert_eq!(s.code("tasks/get", unknown, full()), -32602);
    let asking = task_id(&s.call("confirm_delete", json!({ "filename": "rt.txt" }), full()));
    s.wait_input(&asking);
    let ignored =
        json!({ "taskId": asking, "inputResponses": { "unknown-key": { "ignored": true } } });
    assert_bare_ack(&s.result("tasks/update", ignored, full()));
    assert_eq!(s.get(&asking)["status"], "input_required");
}

#[test]
fn input_by_tasks_update_whole_and_partial() {
    let mut s = Suite::start();
    let task = task_id(&s.call(
        "confirm_delete",
        json!({ "filename": "mrtr-resume.txt" }),
        full(),
    ));
    let waiting = s.wait_input(&task);
    assert!(waiting.get("requestState").is_none());
    let requests = waiting["inputRequests"].as_object().expect("inputRequests");
    let answers: serde_json::Map<String, Value> = requests
        .keys()
        .map(|k| {
            (
                k.clone(),
                json!({ "action": "accept", "content": { "confirm": true } }),
            )
        })
        .collect();
    let update = json!({ "taskId": task, "inputResponses": answers });
    assert_bare_ack(&s.result("tasks/update", update, full()));
    let done = s.wait_terminal(&task);
    assert_eq!(done["status"], "completed");
    assert_eq!(
        done["result"]["content"][0]["text"],
        "Deleted mrtr-resume.txt"
    );

    let task = task_id(&s.call("multi_input", json!({}), full()));
    let waiting = s.poll(&task, Duration::from_secs(5), |t| {
        t["inputRequests"].as_object().is_some_and(|r| r.len() >= 2)
    });
    let keys: Vec<String> = waiting["inputRequests"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    let answer =
        |name: &str| json!({ "action": "accept", "content": { "name": name, "confirm": true } });
    let first =
        json!({ "taskId": task, "inputResponses": { keys[0].clone(): answer("partial-1") } });
    assert_bare_ack(&s.result("tasks/update", first, full()));
    let after = s.get(&task);
    assert_eq!(after["status"], "input_required");
    let left = after["inputRequests"].as_object().unwrap();
    assert!(
        !left.contains_key(&keys[0]) && left.contains_key(&keys[1]),
        "{after}"
    );
    let second =
        json!({ "taskId": task, "inputResponses": { keys[1].clone(): answer("partial-2") } });
    s.result("tasks/update", second, full());
    let done = s.wait_terminal(&task);
    assert_eq!(
        done["result"]["content"][0]["text"],
        "Got partial-1 and partial-2"
    );
}

#[test]
fn mrtr_composition_then_a_task() {
    let mut s = Suite::start();
    let caps = json!({ "elicitation": {}, "extensions": { EXT: {} } });
    let round1 = s.call("test_tool_with_task", json!({}), caps.clone());
    assert_eq!(round1["resultType"], "input_required");
    assert!(round1.get("taskId").is_none());
    let key = round1["inputRequests"]
        .as_object()
        .unwrap()
        .keys()
        .next()
        .unwrap()
        .clone();
    let mut retry = json!({ "name": "test_tool_with_task", "arguments": {},
        "inputResponses": { key: { "action": "accept", "content": { "name": "Alice" } } } });
    if let Some(state) = round1.get("requestState") {
        retry["requestState"] = state.clone();
    }
    let round2 = s.result("tools/call", retry, caps);
    let task = task_id(&round2);
    assert!(round2.get("requestState").is_none() && round2.get("inputRequests").is_none());
    let done = s.wait_terminal(&task);
    assert_eq!(done["status"], "completed");
    assert!(done["result"]["content"][0]["text"]
        .as_str()
        .unwrap()
        .contains("Alice"));
}
