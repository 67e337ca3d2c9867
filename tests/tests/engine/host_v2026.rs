//! The 2026-07-28 era with the tasks extension, server role (checklist §1 and §2 of
//! `shared/spec/tasks-ext-2026.md`): stateless requests, `server/discover`, the per-request
//! task decision, the flat `CreateTaskResult`, `tasks/get` with the outcome inline, the
//! cancel and update acks, and the error gates in the order the checklist fixes. Every
//! message the engine writes is validated against the 2026 schemas by its definition.
//! A 2025-11-25 session on the same host keeps its own era.

use serde_json::{json, Value};
use taskwire_engine::{
    Config, Event, Host, Millis, Output, Role, SessionId, TaskDecision, TaskSupport, Tool, ToolDef,
};
use taskwire_harness::schema::{assert_valid, assert_valid_in, CORE_2026, TASKS_2026};
use taskwire_harness::setup::{counter_ids, stamp, T0};

const EXT: &str = "io.modelcontextprotocol/tasks";

/// A server host with `greet` (never a task), `slow` (a task when declared) and `job`
/// (only as a task), and one session that never says `initialize`.
struct Modern {
    host: Host,
    session: SessionId,
    now: Millis,
    next_id: i64,
    events: Vec<Event>,
}

impl Modern {
    fn new() -> Modern {
        let mut config = Config::new("taskwire-test", "1.0.0");
        config.tasks.poll_interval_ms = Some(200);
        let mut host = Host::new(config, counter_ids("task-"), T0);
        host.add_tool(Tool::new("greet", TaskSupport::Forbidden));
        host.add_tool(Tool::new("slow", TaskSupport::Optional));
        host.add_tool(Tool::new("job", TaskSupport::Required));
        host.add_tool(ToolDef {
            tool: Tool::new("ask", TaskSupport::Optional),
            immediate_response: None,
            decision: TaskDecision::App,
        });
        let session = host.open(T0, Role::Server, "alice");
        Modern {
            host,
            session,
            now: T0,
            next_id: 0,
            events: Vec::new(),
        }
    }

    /// Sends one request line; returns every message written back (all on our session).
    fn raw(&mut self, line: &str) -> Vec<Value> {
        self.host
            .handle_message(self.now, self.session, line.as_bytes());
        self.drain()
    }

    fn drain(&mut self) -> Vec<Value> {
        let mut out = Vec::new();
        while let Some(o) = self.host.poll_output() {
            match o {
                Output::Send(t) => {
                    assert_eq!(t.session, self.session);
                    assert!(!t.message.contains('\n'), "one line: {}", t.message);
                    out.push(serde_json::from_str(&t.message).expect("JSON"));
                }
                Output::Event(e) => self.events.push(e),
                other => panic!("unexpected {other:?}"),
            }
        }
        out
    }

    /// A request with `_meta` of this era; `caps` are its client capabilities.
    fn request(&mut self, method: &str, mut params: Value, caps: Value) -> Value {
        self.next_id += 1;
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": caps,
        });
        let line =
            json!({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params});
        let out = self.raw(&line.to_string());
        assert_eq!(out.len(), 1, "one answer to {method}: {out:?}");
        let answer = out.into_iter().next().unwrap();
        assert_eq!(answer["id"], self.next_id);
        answer
    }

    /// A request declaring the tasks extension.
    fn declared(&mut self, method: &str, params: Value) -> Value {
        self.request(method, params, json!({ "extensions": { EXT: {} } }))
    }

    /// The last tool call that reached the app.
    fn tool_call(&self) -> Seen {
        let call = self.events.iter().rev().find_map(|e| match e {
            Event::ToolCall(c) => Some(Seen {
                call: c.call,
                task: c.task.as_ref().map(|t| t.to_string()),
                task_offered: c.task_offered,
            }),
            _ => None,
        });
        call.expect("a tool call reached the app")
    }
}

/// What a test needs of a `ToolCall` event.
struct Seen {
    call: taskwire_engine::CallId,
    task: Option<String>,
    task_offered: bool,
}

fn result_of(answer: &Value) -> &Value {
    assert!(answer.get("error").is_none(), "an error: {answer}");
    &answer["result"]
}

fn error_code(answer: &Value) -> i64 {
    answer["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("no error: {answer}"))
}

fn server_info() -> Value {
    json!({ "io.modelcontextprotocol/serverInfo": { "name": "taskwire-test", "version": "1.0.0" } })
}

#[test]
fn discover_names_the_version_and_the_extension_but_no_legacy_tasks() {
    let mut m = Modern::new();
    let answer = m.request("server/discover", json!({}), json!({}));
    assert_valid_in(CORE_2026, "DiscoverResultResponse", &answer);
    let result = result_of(&answer);
    assert_eq!(result["resultType"], "complete");
    assert_eq!(result["supportedVersions"], json!(["2026-07-28"]));
    assert_eq!(result["capabilities"]["extensions"][EXT], json!({}));
    assert!(result["capabilities"].get("tasks").is_none(), "{result}");
    assert_eq!(result["_meta"], server_info());
    assert_eq!(
        m.host.protocol_version(m.session),
        None,
        "no handshake happened"
    );
}

#[test]
fn required_meta_and_version_are_checked_first() {
    let mut m = Modern::new();
    // No _meta at all: a modern-only method is a malformed modern request.
    let out = m.raw(r#"{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{}}"#);
    assert_eq!(error_code(&out[0]), -32602, "{out:?}");
    assert_valid_in(CORE_2026, "JSONRPCErrorResponse", &out[0]);
    // The version but no capabilities.
    let out = m.raw(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#);
    assert_eq!(error_code(&out[0]), -32602, "{out:?}");
    assert!(out[0]["error"]["message"]
        .as_str()
        .unwrap()
        .contains("clientCapabilities"));
    // Another version, even a legacy one, without initialize: -32022 with the data.
    for version in ["2026-01-01", "2025-11-25"] {
        let line = json!({"jsonrpc":"2.0","id":3,"method":"tasks/get","params":{"taskId":"x","_meta":{
            "io.modelcontextprotocol/protocolVersion": version,
            "io.modelcontextprotocol/clientCapabilities": {}}}});
        let out = m.raw(&line.to_string());
        assert_valid_in(CORE_2026, "UnsupportedProtocolVersionError", &out[0]);
        assert_eq!(
            out[0]["error"]["data"],
            json!({ "supported": ["2026-07-28"], "requested": version })
        );
    }
}

#[test]
fn tools_list_has_cache_fields_and_no_task_support() {
    let mut m = Modern::new();
    let answer = m.request("tools/list", json!({}), json!({}));
    assert_valid_in(CORE_2026, "ListToolsResultResponse", &answer);
    let result = result_of(&answer);
    assert_eq!(result["resultType"], "complete");
    assert_eq!(result["cacheScope"], "public");
    assert!(result["ttlMs"].as_u64().is_some());
    let tools = result["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 4);
    assert!(
        tools.iter().all(|t| t.get("execution").is_none()),
        "{tools:?}"
    );
}

#[test]
fn a_call_becomes_a_task_only_when_its_own_request_declares_the_extension() {
    let mut m = Modern::new();
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
    let mut m = Modern::new();
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
    let mut m = Modern::new();
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
    let mut m = Modern::new();
    m.declared("tools/call", json!({ "name": "slow" }));
    let call = m.tool_call().call;
    let poll = |m: &mut Modern, after_ms: u64| {
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
    let mut m = Modern::new();
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
    let mut m = Modern::new();
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
fn the_gates_come_in_the_checklists_order() {
    let mut m = Modern::new();
    // Method first: tasks/result and tasks/list do not exist in this era.
    for method in ["tasks/result", "tasks/list"] {
        let answer = m.request(method, json!({ "taskId": "x" }), json!({}));
        assert_eq!(error_code(&answer), -32601, "{method}");
    }
    // Then the extension, before the task lookup (the suite's gate-test id).
    let get = m.request("tasks/get", json!({ "taskId": "gate-test" }), json!({}));
    assert_valid_in(CORE_2026, "MissingRequiredClientCapabilityError", &get);
    let update = m.request(
        "tasks/update",
        json!({ "taskId": "gate-test", "inputResponses": {} }),
        json!({}),
    );
    assert_eq!(error_code(&update), -32021);
    let cancel = m.request("tasks/cancel", json!({ "taskId": "gate-test" }), json!({}));
    assert_eq!(error_code(&cancel), -32021);
    // Then params, then the lookup.
    let bad = m.declared("tasks/get", json!({}));
    assert_eq!(error_code(&bad), -32602);
    let unknown = m.declared("tasks/get", json!({ "taskId": "gate-test" }));
    assert_eq!(error_code(&unknown), -32602);
    assert_eq!(
        unknown["error"]["message"],
        "Failed to retrieve task: Task not found"
    );
}

#[test]
fn the_app_decides_when_it_asks_to_and_its_task_is_modern() {
    let mut m = Modern::new();
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
    // The work of a 2026 task sends no progress (the era has none for tasks).
    m.host
        .notify_progress(m.now, offered.call, 1.0, Some(2.0), None)
        .unwrap();
    assert!(m.drain().is_empty());
    // Nor input: its request declared no elicitation.
    assert!(m
        .host
        .request_input(m.now, offered.call, "elicitation/create", json!({}))
        .is_err());
}

#[test]
fn a_legacy_session_on_the_same_host_keeps_2025_11_25() {
    let mut m = Modern::new();
    let legacy = m.host.open(m.now, Role::Server, "alice");
    let init = json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{
        "protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}});
    m.host
        .handle_message(m.now, legacy, init.to_string().as_bytes());
    m.host.handle_message(
        m.now,
        legacy,
        br#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","task":{"ttl":60000}}}"#,
    );
    let mut legacy_out = Vec::new();
    while let Some(o) = m.host.poll_output() {
        if let Output::Send(t) = o {
            assert_eq!(t.session, legacy);
            legacy_out.push(serde_json::from_str::<Value>(&t.message).unwrap());
        }
    }
    let created = &legacy_out[1]["result"];
    assert_valid("CreateTaskResult", created);
    assert_eq!(created["task"]["ttl"], 60000);
    // A modern request of the same owner without the extension may still read and cancel
    // that legacy-created task, in 2026 shapes.
    let got = m.request("tasks/get", json!({ "taskId": "task-1" }), json!({}));
    assert_valid_in(TASKS_2026, "GetTaskResult", result_of(&got));
    assert_eq!(result_of(&got)["ttlMs"], 60000);
    // A task the same owner made in 2026-07-28 is not in the legacy tasks/list (§3.2 r10).
    let modern = m.declared("tools/call", json!({ "name": "slow" }));
    assert_eq!(result_of(&modern)["taskId"], "task-2");
    m.host.handle_message(
        m.now,
        legacy,
        br#"{"jsonrpc":"2.0","id":3,"method":"tasks/list","params":{}}"#,
    );
    let mut listed = Vec::new();
    while let Some(o) = m.host.poll_output() {
        if let Output::Send(t) = o {
            listed.push(serde_json::from_str::<Value>(&t.message).unwrap());
        }
    }
    let page = listed.iter().find(|o| o["id"] == 3).expect("the list");
    assert_valid("ListTasksResult", &page["result"]);
    let ids: Vec<&Value> = page["result"]["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| &t["taskId"])
        .collect();
    assert_eq!(ids, [&json!("task-1")]);
}

#[test]
fn input_requests_are_listed_by_get_and_answered_by_update() {
    let mut m = Modern::new();
    let caps = json!({ "elicitation": { "form": {} }, "extensions": { EXT: {} } });
    m.request("tools/call", json!({ "name": "slow" }), caps.clone());
    let call = m.tool_call().call;
    let ask = |m: &mut Modern, message: &str| {
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
    let update = |m: &mut Modern, responses: Value| {
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
    let mut m = Modern::new();
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

/// modern_ops: a 2025-11-25 task waiting for input, read by a 2026 request, lacked
/// `inputRequests` (which the schema requires in that status). Its input requests went to
/// its own client as requests, so the map is empty.
#[test]
fn a_legacy_task_waiting_for_input_reads_with_empty_input_requests() {
    let mut m = Modern::new();
    let legacy = m.host.open(m.now, Role::Server, "alice");
    let init = json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{
        "protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},
        "clientInfo":{"name":"c","version":"1"}}});
    m.host
        .handle_message(m.now, legacy, init.to_string().as_bytes());
    m.host.handle_message(
        m.now,
        legacy,
        br#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","task":{}}}"#,
    );
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
fn elicit_call(m: &mut Modern, name: &str, tasks: bool, mrtr: Value) -> Vec<Value> {
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

fn ask_name(m: &mut Modern, call: taskwire_engine::CallId, n: u32) -> taskwire_engine::InputId {
    let params = json!({ "mode": "form", "message": format!("question {n}"),
        "requestedSchema": { "type": "object", "properties": { "a": { "type": "string" } } } });
    m.host
        .request_input(m.now, call, "elicitation/create", params)
        .unwrap()
}

fn answers(m: &Modern) -> Vec<(taskwire_engine::InputId, Value)> {
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
    let mut m = Modern::new();
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
    let mut m = Modern::new();
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
    let mut m = Modern::new();
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

/// The notifications of `method` among `out`.
fn notifications(out: &[Value], method: &str) -> Vec<Value> {
    out.iter()
        .filter(|m| m["method"] == method)
        .cloned()
        .collect()
}

#[test]
fn a_listen_stream_reports_each_change_of_the_callers_tasks_then_ends() {
    let mut m = Modern::new();
    let caps = json!({ "elicitation": {}, "extensions": { EXT: {} } });
    m.request("tools/call", json!({ "name": "slow" }), caps.clone());
    let call = m.tool_call().call;
    // Another owner's task, on another session of the host.
    let bob = m.host.open(m.now, Role::Server, "bob");
    let bob_call = json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow",
        "_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",
                 "io.modelcontextprotocol/clientCapabilities":{"extensions":{EXT:{}}}}}});
    m.host
        .handle_message(m.now, bob, bob_call.to_string().as_bytes());
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
    let mut m = Modern::new();
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
    let mut m = Modern::new();
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
    m.host.handle_timeout(m.now);
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
    let bob = m.host.open(m.now, Role::Server, "bob");
    let probe = json!({"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"taskId":"task-1",
        "_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",
                 "io.modelcontextprotocol/clientCapabilities":{"extensions":{EXT:{}}}}}});
    m.host
        .handle_message(m.now, bob, probe.to_string().as_bytes());
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
