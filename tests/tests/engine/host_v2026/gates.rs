//! Opening and the gates: `server/discover`, `tools/list`, the per-request `_meta` and
//! version checks and the error gates in the order the checklist fixes, and a 2025-11-25
//! session on the same host keeping its own era.

use serde_json::{json, Value};
use taskwire_engine::{Output, Role};
use taskwire_harness::schema::{assert_valid, assert_valid_in, CORE_2026, TASKS_2026};

use super::{error_code, result_of, server_info, EXT, V2026};

#[test]
fn discover_names_the_version_and_the_extension_but_no_v2025_tasks() {
    let mut m = V2026::new();
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
    let mut m = V2026::new();
    // No _meta at all: a v2026-only method is a malformed v2026 request.
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
    // Another version, even a v2025 one, without initialize: -32022 with the data.
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
    let mut m = V2026::new();
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
fn the_gates_come_in_the_checklists_order() {
    let mut m = V2026::new();
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
fn each_request_is_judged_by_its_own_meta_when_the_last_one_is_known() {
    // The host keeps the last `_meta` it read; requests that alternate must still each be
    // answered as their own `_meta` declares.
    let mut m = V2026::new();
    for _ in 0..2 {
        let declared = m.declared("tasks/get", json!({ "taskId": "gate-test" }));
        assert_eq!(
            declared["error"]["message"],
            "Failed to retrieve task: Task not found"
        );
        let undeclared = m.request("tasks/get", json!({ "taskId": "gate-test" }), json!({}));
        assert_eq!(error_code(&undeclared), -32021);
    }
    let declared = m.declared("tasks/get", json!({ "taskId": "gate-test" }));
    let again = m.declared("tasks/get", json!({ "taskId": "gate-test" }));
    assert_eq!(declared["error"], again["error"]);
    let other_version = json!({"jsonrpc":"2.0","id":9,"method":"tasks/get","params":{"taskId":"gate-test","_meta":{
        "io.modelcontextprotocol/protocolVersion": "2026-01-01",
        "io.modelcontextprotocol/clientCapabilities": {"extensions": {EXT: {}}}}}});
    assert_eq!(error_code(&m.raw(&other_version.to_string())[0]), -32022);
}

#[test]
fn a_meta_known_from_the_last_request_changes_no_answer() {
    // The `_meta` `declared` sends, as the host saw it last: lines carrying it in places the
    // host's shortcut takes (first, last, alone) and ones it leaves (between, twice) are each
    // answered as by a host that never saw it.
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": { "extensions": { EXT: {} } },
    })
    .to_string();
    let line = |params: String| {
        format!(r#"{{"jsonrpc":"2.0","id":"x","method":"tasks/get","params":{params}}}"#)
    };
    let lines = [
        line(format!(r#"{{"taskId":"gate-test","_meta":{meta}}}"#)),
        line(format!(r#"{{"_meta":{meta},"taskId":"gate-test"}}"#)),
        line(format!(
            r#"{{"_meta": {meta}, "taskId": "gate-test", "x": [1, {{}}]}}"#
        )),
        line(format!(r#"{{"_meta":{meta}}}"#)),
        line(format!(r#"{{"a":1,"_meta":{meta},"taskId":"gate-test"}}"#)),
        line(format!(
            r#"{{"_meta":{meta},"taskId":"gate-test","_meta":{meta}}}"#
        )),
        line(format!(r#"{{"_meta":{meta},"taskId":7}}"#)),
        line(format!(r#"{{"_meta":{meta},}}"#)),
        line(format!(r#"{{,"_meta":{meta}}}"#)),
    ];
    for line in lines {
        let fresh = V2026::new().raw(&line);
        let mut warm = V2026::new();
        warm.declared("tasks/get", json!({ "taskId": "gate-test" }));
        assert_eq!(warm.raw(&line), fresh, "{line}");
        assert_eq!(fresh.len(), 1, "{line}: {fresh:?}");
    }
}

#[test]
fn a_v2025_session_on_the_same_host_keeps_2025_11_25() {
    let mut m = V2026::new();
    let v2025 = m
        .host
        .open(m.now, Role::Server, "alice")
        .expect("the host takes sessions");
    let init = json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{
        "protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}});
    m.host
        .handle_message(m.now, v2025, init.to_string().as_bytes())
        .expect("the host takes input");
    m.host.handle_message(
        m.now,
        v2025,
        br#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","task":{"ttl":60000}}}"#,
    ).expect("the host takes input");
    let mut v2025_out = Vec::new();
    while let Some(o) = m.host.poll_output() {
        if let Output::Send(t) = o {
            assert_eq!(t.session, v2025);
            v2025_out.push(serde_json::from_str::<Value>(&t.message).unwrap());
        }
    }
    let created = &v2025_out[1]["result"];
    assert_valid("CreateTaskResult", created);
    assert_eq!(created["task"]["ttl"], 60000);
    // A v2026 request of the same owner without the extension may still read and cancel
    // that v2025-created task, in 2026 shapes.
    let got = m.request("tasks/get", json!({ "taskId": "task-1" }), json!({}));
    assert_valid_in(TASKS_2026, "GetTaskResult", result_of(&got));
    assert_eq!(result_of(&got)["ttlMs"], 60000);
    // A task the same owner made in 2026-07-28 is not in the v2025 tasks/list (§3.2 r10).
    let v2026 = m.declared("tools/call", json!({ "name": "slow" }));
    assert_eq!(result_of(&v2026)["taskId"], "task-2");
    m.host
        .handle_message(
            m.now,
            v2025,
            br#"{"jsonrpc":"2.0","id":3,"method":"tasks/list","params":{}}"#,
        )
        .expect("the host takes input");
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
fn removed_methods_are_method_not_found() {
    let mut m = V2026::new();
    for method in [
        "ping",
        "initialize",
        "logging/setLevel",
        "resources/subscribe",
    ] {
        let answer = m.request(method, json!({}), json!({}));
        assert_eq!(error_code(&answer), -32601, "{method}: {answer}");
        assert_valid_in(CORE_2026, "JSONRPCErrorResponse", &answer);
    }
    // A ping without this era's _meta is the 2025-11-25 one, answered at any time.
    let out = m.raw(r#"{"jsonrpc":"2.0","id":"p","method":"ping"}"#);
    assert_eq!(out[0]["result"], json!({}), "{out:?}");
}
