//! Interop with the TypeScript SDK, `@modelcontextprotocol/sdk@1.32.2`, as real processes.
//!
//! - its client (`ts_client.mjs`: explicit task mode, the SDK's automatic mode driven by
//!   `tools/list`, plain calls, `tasks/list`, cancel while running, unknown ids) ⇒ our `task-server`;
//! - our `task-client` and our client API ⇒ its server (`ts_server.mjs`: `registerToolTask` +
//!   `InMemoryTaskStore`);
//! - its client running the conformance suite's core scenarios (`core_client.mjs`, the 0.1.16
//!   checks through the client the suite uses) ⇒ our `conformance-server`.
//!
//! Our server's side of each conversation is recorded with `tap.py` and checked against the
//! 2025-11-25 schema. Test names: `<client>_to_<server>_<case>`.

use serde_json::{json, Value};
use taskwire_driver::engine::{Config, TaskStatus};
use taskwire_driver::{Client, ClientBuilder, TaskUpdate};
use taskwire_harness::Side;
use taskwire_tests::peers::demo::{assert_ran_to_completion, binary, DemoClient, RESULT, STEPS};
use taskwire_tests::peers::wire::Log;
use taskwire_tests::peers::{self, run, Argv, Peers, Run};

use crate::common::{cancel_on_ts_server, DEADLINE};

fn task_server(step_ms: &str) -> Argv {
    Argv::new(binary("task-server")).args(&["--required-tool", "--step-ms", step_ms])
}

/// `ts_client.mjs MODE ARGS -- tap.py LOG task-server`: the run and our server's traffic.
fn ts_client(p: &Peers, test: &str, mode: &str, args: &[&str], step_ms: &str) -> (Run, Log) {
    let log = p.scratch(&format!("{test}.jsonl"));
    let out = run(
        &p.ts_client(mode, args, &p.tap(&log, &task_server(step_ms))),
        DEADLINE,
    );
    let wire = Log::read(&log);
    wire.check_conformance(Side::Server);
    (out, wire)
}

#[test]
fn ts_client_to_task_server_explicit_task() {
    let test = "ts_client_to_task_server_explicit_task";
    let Some(p) = peers::ready(test) else { return };
    let (out, wire) = ts_client(p, test, "task", &["--ttl", "60000"], "300");
    out.assert_exit(0);
    assert_eq!(out.event("initialized")["protocolVersion"], "2025-11-25");
    let support = &out.event("tools")["taskSupport"];
    assert_eq!(support["long_running_task"], "optional", "{out}");
    assert_eq!(support["long_running_task_required"], "required", "{out}");
    let created = out.event("task_created");
    assert_eq!(created["status"], "working");
    assert_eq!(created["ttl"], 60_000);
    assert_eq!(created["pollInterval"], 500);
    assert_ran_to_completion(&out, &out.events("status"));
    // The SDK's quirk, live: its task option rides along in tasks/get and tasks/result.
    let get = wire.request("tasks/get");
    assert_eq!(get["params"]["task"], json!({ "ttl": 60_000 }));
    assert_eq!(wire.answer(get)["result"]["taskId"], created["taskId"]);
}

/// `callToolStream` without a task option: the SDK decides from `tools/list` and our
/// `tasks.requests.tools.call`, and sends `"task":{}`; our Task then carries our default ttl.
#[test]
fn ts_client_to_task_server_auto_mode_from_tools_list() {
    let test = "ts_client_to_task_server_auto_mode_from_tools_list";
    let Some(p) = peers::ready(test) else { return };
    for (tool, required) in [
        ("long_running_task", false),
        ("long_running_task_required", true),
    ] {
        let (out, wire) = ts_client(p, test, "auto", &["--tool", tool], "300");
        out.assert_exit(0);
        let auto = out.event("auto");
        assert_eq!(auto["task"], true, "{out}");
        assert_eq!(auto["required"], required, "{out}");
        assert_eq!(out.event("task_created")["ttl"], 300_000, "{out}");
        assert_ran_to_completion(&out, &out.events("status"));
        assert_eq!(wire.request("tools/call")["params"]["task"], json!({}));
    }
}

/// Plain calls: an optional tool answers after its steps; a required tool gets `-32601`, as the
/// spec says (the TS server answers an `isError` result instead).
#[test]
fn ts_client_to_task_server_plain_calls() {
    let test = "ts_client_to_task_server_plain_calls";
    let Some(p) = peers::ready(test) else { return };
    let (out, wire) = ts_client(p, test, "plain", &[], "200");
    out.assert_exit(0);
    assert_eq!(out.event("result")["text"], RESULT, "{out}");
    assert!(wire.with_method("notifications/tasks/status").is_empty());

    let (out, _) = ts_client(
        p,
        test,
        "plain",
        &["--tool", "long_running_task_required"],
        "200",
    );
    out.assert_exit(1);
    let error = out.event("error");
    assert_eq!(error["method"], "tools/call", "{out}");
    assert_eq!(error["code"], -32601, "{out}");
}

#[test]
fn ts_client_to_task_server_tasks_list() {
    let test = "ts_client_to_task_server_tasks_list";
    let Some(p) = peers::ready(test) else { return };
    let (out, _) = ts_client(p, test, "list", &["--start", "2"], "1000");
    out.assert_exit(0);
    let started: Vec<Value> = out
        .events("task_created")
        .iter()
        .map(|t| t["taskId"].clone())
        .collect();
    assert_eq!(started.len(), 2, "{out}");
    let listed = out.events("task");
    let find = |id: &Value| listed.iter().find(|t| &t["taskId"] == id).cloned();
    let demo = find(&json!("demo-task")).unwrap_or_else(|| panic!("no demo-task\n{out}"));
    assert_eq!(demo["status"], "completed");
    assert_eq!(demo["message"], "已完成");
    for id in &started {
        assert_eq!(find(id).unwrap_or_default()["status"], "working", "{out}");
    }
    assert_eq!(listed.len(), 3, "{out}");
    assert_eq!(
        out.event("page"),
        json!({ "event": "page", "count": 3, "nextCursor": null })
    );
}

#[test]
fn ts_client_to_task_server_cancel_while_running() {
    let test = "ts_client_to_task_server_cancel_while_running";
    let Some(p) = peers::ready(test) else { return };
    let (out, wire) = ts_client(p, test, "cancel", &[], "1000");
    out.assert_exit(0);
    let cancels = out.events("cancel_result");
    assert_eq!(cancels.len(), 1, "{out}");
    assert_eq!(cancels[0]["status"], "cancelled");
    assert_eq!(out.event("final_status")["status"], "cancelled", "{out}");
    let again = out
        .events("error")
        .into_iter()
        .find(|e| e["method"] == "tasks/cancel")
        .unwrap_or_else(|| panic!("no second-cancel error\n{out}"));
    assert_eq!(again["code"], -32602, "{out}");
    assert!(out.events("result").is_empty(), "{out}");
    let notified = wire.notified_statuses();
    assert!(!notified.iter().any(|s| s == "completed"), "{notified:?}");
}

#[test]
fn ts_client_to_task_server_unknown_task_id() {
    let test = "ts_client_to_task_server_unknown_task_id";
    let Some(p) = peers::ready(test) else { return };
    let (out, _) = ts_client(p, test, "get-unknown", &[], "1000");
    out.assert_exit(0);
    let errors = out.events("error");
    let methods: Vec<&str> = errors.iter().filter_map(|e| e["method"].as_str()).collect();
    assert_eq!(
        methods,
        ["tasks/get", "tasks/result", "tasks/cancel"],
        "{out}"
    );
    assert!(errors.iter().all(|e| e["code"] == -32602), "{out}");
}

/// Our `task-client` binary against the TS server (status notifications and polls).
fn task_client_to_ts_server(runtime: &str) {
    let test = format!("task_client_{runtime}_to_ts_server");
    let Some(p) = peers::ready(&test) else { return };
    let log = p.scratch(&format!("{test}.jsonl"));
    let client = Argv::new(binary("task-client"))
        .args(&["--runtime", runtime, "--"])
        .extend(&p.tap(&log, &p.ts_server(&["--step-ms", "200"])));
    let out = run(&client, DEADLINE);
    out.assert_exit(0);
    let demo = DemoClient::parse(&out);
    assert_eq!(
        demo.connected.as_deref(),
        Some("taskwire-ts-peer-server 0.1.0 (protocol 2025-11-25)"),
        "{out}"
    );
    assert_eq!(demo.status_path(), ["working", "completed"], "{out}");
    assert_eq!(demo.messages(), STEPS, "{out}");
    assert_eq!(demo.result.as_deref(), Some(RESULT));
    let wire = Log::read(&log);
    wire.check_conformance(Side::Client);
    // The SDK answers `server/discover` with -32601; the client fell back to `initialize`.
    let discover = wire.answer(wire.request("server/discover"));
    assert_eq!(discover["error"]["code"], -32601, "{discover}");
    assert_eq!(wire.with_method("initialize").len(), 1);
}

#[test]
fn task_client_smol_to_ts_server() {
    task_client_to_ts_server("smol");
}

#[test]
fn task_client_tokio_to_ts_server() {
    task_client_to_ts_server("tokio");
}

/// Runs `body` against `ts_server.mjs ARGS` through our client API on tokio.
fn with_ts_server<F, Fut>(test: &str, args: &[&str], body: F)
where
    F: FnOnce(Client) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    let Some(p) = peers::ready(test) else { return };
    let stderr = p.scratch(&format!("{test}.stderr"));
    let server = p.ts_server(args).stderr_to(&stderr);
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let command = server.command();
        let builder = ClientBuilder::new(Config::new("taskwire-interop", "0.1.0"));
        let (client, mut child) = taskwire_tokio::spawn_server(command, builder).unwrap();
        let init = client.initialize().await.unwrap();
        assert_eq!(init.server.name, "taskwire-ts-peer-server");
        if tokio::time::timeout(DEADLINE, body(client.clone()))
            .await
            .is_err()
        {
            panic!("{test} timed out; server stderr in {}", stderr.display());
        }
        client.close().await;
        let _ = child.kill();
        let _ = child.wait().await;
    });
}

/// A task whose tool fails: statuses end `failed`, and `tasks/result` gives the `isError` result.
#[test]
fn client_api_to_ts_server_failing_task() {
    with_ts_server(
        "client_api_to_ts_server_failing_task",
        &["--failing", "--step-ms", "200"],
        |client| async move {
            let call = client
                .call_tool_as_task("failing_task", json!({}), Some(60_000))
                .await
                .unwrap();
            assert_eq!(call.task.as_ref().unwrap().status, TaskStatus::Working);
            let mut statuses = Vec::new();
            let mut outcome = None;
            while let Ok(update) = call.updates.recv().await {
                match update {
                    TaskUpdate::Status(t) => statuses.push(t.status),
                    TaskUpdate::Result(r) => outcome = Some(r),
                    _ => {}
                }
            }
            assert_eq!(statuses.last(), Some(&TaskStatus::Failed), "{statuses:?}");
            let result = outcome.expect("a result").expect("the isError result");
            assert!(result.is_error, "{result:?}");
            assert_eq!(result.all_text(), "任务失败！");
        },
    );
}

/// `tasks/list` (its result carries `"_meta":{}`), cancel while running, a second cancel, and an
/// unknown id: the TS server's errors carry its "MCP error -32602: " prefix on the wire.
#[test]
fn client_api_to_ts_server_list_cancel_unknown() {
    with_ts_server(
        "client_api_to_ts_server_list_cancel_unknown",
        &["--step-ms", "1000"],
        |client| async move {
            let call = client
                .call_tool_as_task("long_running_task", json!({}), Some(60_000))
                .await
                .unwrap();
            let id = call.task.clone().unwrap().id;
            let listed = client.list_tasks().await.unwrap();
            assert_eq!(listed.len(), 1);
            assert_eq!(listed[0].id, id);
            assert_eq!(listed[0].status, TaskStatus::Working);
            cancel_on_ts_server(&client, &id).await;
            let mut statuses = Vec::new();
            while let Ok(update) = call.updates.recv().await {
                if let TaskUpdate::Status(t) = update {
                    statuses.push(t.status);
                }
            }
            assert_eq!(
                statuses.last(),
                Some(&TaskStatus::Cancelled),
                "{statuses:?}"
            );
        },
    );
}

/// Plain calls: an optional tool answers plainly (the server's status notifications for its
/// internal task are ignored); a required tool gets the TS server's `isError` result, passed on.
#[test]
fn client_api_to_ts_server_plain_calls() {
    with_ts_server(
        "client_api_to_ts_server_plain_calls",
        &["--required", "--step-ms", "200"],
        |client| async move {
            let result = client
                .call_tool("long_running_task", json!({}))
                .await
                .unwrap();
            // The same typed result from every peer, in either era.
            assert_eq!(result, taskwire_driver::CallToolResult::text(RESULT));
            let refused = client
                .call_tool("long_running_task_required", json!({}))
                .await
                .unwrap();
            assert!(refused.is_error, "{refused:?}");
            let text = refused.all_text();
            assert!(text.starts_with("MCP error -32601: "), "{text}");
        },
    );
}

/// The conformance suite's 0.1.16 core server scenarios over stdio (all but the two that need
/// HTTP), through the TypeScript SDK client the suite itself runs: its zod schemas parse every
/// answer (strict `{}` results, the elicitation schema union), then the scenario's checks.
fn ts_core_scenarios_to_conformance_server(runtime: &str) {
    let Some(p) = peers::ready("ts_core_scenarios_to_conformance_server") else {
        return;
    };
    let server = Argv::new(binary("conformance-server")).args(&["--runtime", runtime]);
    let out = run(&p.ts_core_client(&server), DEADLINE);
    let scenarios = out.events("scenario");
    assert_eq!(scenarios.len(), 29, "{out}");
    for scenario in &scenarios {
        assert_eq!(
            scenario["failures"],
            json!([]),
            "{}\n{out}",
            scenario["name"]
        );
    }
    assert_eq!(
        out.event("summary"),
        json!({ "event": "summary", "passed": 29, "failed": 0 })
    );
    assert_eq!(out.code, Some(0), "{out}");
}

#[test]
fn ts_core_scenarios_to_conformance_server_smol() {
    ts_core_scenarios_to_conformance_server("smol");
}

#[test]
fn ts_core_scenarios_to_conformance_server_tokio() {
    ts_core_scenarios_to_conformance_server("tokio");
}
