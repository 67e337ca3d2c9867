//! Interop with the Python SDK, `mcp==1.30.0`, as real processes.
//!
//! - the seed's own client (unchanged) and the SDK client API (`py_client.py`) ⇒ our `task-server`;
//! - our `task-client` and our client API ⇒ the seed's Python server.
//!
//! Every line our side sends is recorded with `tap.py` where possible and checked against the
//! 2025-11-25 schema. Test names: `<client>_to_<server>[_<case>]`.

use std::path::PathBuf;

use serde_json::json;
use taskwire_demo::tools::DONE_MESSAGE;
use taskwire_driver::engine::{Config, TaskStatus, TaskSupport};
use taskwire_driver::{CallToolResult, ClientBuilder, RpcError, TaskUpdate};
use taskwire_harness::Side;
use taskwire_tests::peers::demo::{binary, DemoClient, RESULT, STEPS};
use taskwire_tests::peers::wire::Log;
use taskwire_tests::peers::{self, run, Argv, Peers};

use crate::common::{DEADLINE, STEP_MS};

fn task_server(runtime: &str) -> Argv {
    Argv::new(binary("task-server")).args(&["--runtime", runtime, "--step-ms", STEP_MS])
}

fn log_path(p: &Peers, test: &str) -> PathBuf {
    p.scratch(&format!("{test}.jsonl"))
}

/// The seed's `task_client.py`, byte for byte, next to a `task_server.py` that starts our
/// server (through `tap.py`): the seed client launches `task_server.py` beside itself.
#[test]
fn seed_client_unchanged_to_task_server() {
    let Some(p) = peers::ready("seed_client_unchanged_to_task_server") else {
        return;
    };
    let dir = p.scratch("seed-client");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(p.seed.join("task_client.py"), dir.join("task_client.py")).unwrap();
    let log = log_path(p, "seed_client_unchanged_to_task_server");
    let _ = std::fs::remove_file(&log);
    let shim = format!(
        "import os\nargv = {:?}\nos.execv(argv[0], argv)\n",
        [
            p.python.display().to_string(),
            p.kit.join("tap.py").display().to_string(),
            log.display().to_string(),
            binary("task-server").display().to_string(),
            "--step-ms".into(),
            STEP_MS.into(),
        ]
    );
    std::fs::write(dir.join("task_server.py"), shim).unwrap();

    let out = run(
        &Argv::new(&p.python).arg(dir.join("task_client.py")),
        DEADLINE,
    );
    out.assert_exit(0);
    let lines: Vec<&str> = out.stdout.lines().map(str::trim).collect();
    assert!(lines.contains(&"可用工具: ['long_running_task']"), "{out}");
    assert!(lines.iter().any(|l| l.starts_with("任务已创建: ")), "{out}");
    let statuses: Vec<&str> = lines
        .iter()
        .filter_map(|l| l.strip_prefix("状态: "))
        .collect();
    assert!(statuses.len() >= 2, "{out}");
    let done = format!("completed - {DONE_MESSAGE}");
    assert_eq!(statuses.last(), Some(&done.as_str()), "{out}");
    for s in &statuses[..statuses.len() - 1] {
        let message = s
            .strip_prefix("working - ")
            .unwrap_or_else(|| panic!("{s}\n{out}"));
        assert!(
            message.is_empty() || STEPS.contains(&message) || message == DONE_MESSAGE,
            "{s}"
        );
    }
    assert_eq!(lines.last(), Some(&"结果: 任务完成！"), "{out}");

    let wire = Log::read(&log);
    wire.check_conformance(Side::Server);
    assert_eq!(
        wire.request("initialize")["params"]["capabilities"],
        json!({})
    );
    assert_eq!(
        wire.request("tools/call")["params"]["task"],
        json!({ "ttl": 60_000 })
    );
}

fn py_client_to_task_server(runtime: &str) {
    let test = format!("py_client_to_task_server_{runtime}");
    let Some(p) = peers::ready(&test) else { return };
    let log = log_path(p, &test);
    let out = run(
        &p.py_client(&[], &p.tap(&log, &task_server(runtime))),
        DEADLINE,
    );
    out.assert_exit(0);
    let init = out.event("initialized");
    assert_eq!(init["protocolVersion"], "2025-11-25", "{out}");
    assert_eq!(init["serverInfo"]["name"], "task-server");
    assert!(init["capabilities"]["tasks"]["requests"]["tools"]["call"].is_object());
    assert_eq!(out.event("tools")["names"], json!(["long_running_task"]));
    let created = out.event("task_created");
    assert_eq!(created["status"], "working", "{out}");
    assert_eq!(created["ttl"], 60_000);
    assert_eq!(created["pollInterval"], 500);
    let polled = out.events("status");
    let (last, before) = polled.split_last().expect("polled at least once");
    assert_eq!(last["status"], "completed", "{out}");
    assert_eq!(last["message"], DONE_MESSAGE);
    assert!(before.iter().all(|s| s["status"] == "working"), "{out}");
    let result = out.event("result");
    assert_eq!(result["text"], RESULT);
    assert_eq!(result["isError"], false);

    let wire = Log::read(&log);
    wire.check_conformance(Side::Server);
    let notified = wire.notified_statuses();
    assert_eq!(
        notified.last().map(String::as_str),
        Some("completed"),
        "{notified:?}"
    );
    assert!(notified[..notified.len() - 1]
        .iter()
        .all(|s| s == "working"));
}

#[test]
fn py_client_to_task_server_smol() {
    py_client_to_task_server("smol");
}

#[test]
fn py_client_to_task_server_tokio() {
    py_client_to_task_server("tokio");
}

/// Our `task-client` binary against the seed's server (one-second steps, so about 3.5 s).
fn task_client_to_seed_server(runtime: &str) {
    let test = format!("task_client_{runtime}_to_seed_server");
    let Some(p) = peers::ready(&test) else { return };
    let log = log_path(p, &test);
    let client = Argv::new(binary("task-client"))
        .args(&["--runtime", runtime, "--"])
        .extend(&p.tap(&log, &p.seed_server()));
    let out = run(&client, DEADLINE);
    out.assert_exit(0);
    let demo = DemoClient::parse(&out);
    assert_eq!(
        demo.connected.as_deref(),
        Some("task-server 1.30.0 (protocol 2025-11-25)"),
        "{out}"
    );
    assert_eq!(demo.tools.as_deref(), Some(r#"["long_running_task"]"#));
    assert!(
        demo.task.as_deref().is_some_and(|t| t.contains(':')),
        "{out}"
    );
    assert_eq!(demo.status_path(), ["working", "completed"], "{out}");
    assert_eq!(demo.messages(), STEPS, "{out}");
    assert_eq!(demo.result.as_deref(), Some(RESULT));

    let wire = Log::read(&log);
    wire.check_conformance(Side::Client);
    let listed = wire.answer(wire.request("tools/list"));
    assert_eq!(
        listed["result"]["tools"][0]["execution"],
        json!({ "task_support": "optional" }),
        "the seed's quirk is still there"
    );
    assert!(!wire.with_method("tasks/get").is_empty());
    assert_eq!(wire.with_method("tasks/result").len(), 1);
    // The client tried 2026-07-28 first; mcp 1.30 refuses `server/discover` with -32602, so
    // it fell back to `initialize`.
    let discover = wire.answer(wire.request("server/discover"));
    assert_eq!(discover["error"]["code"], -32602, "{discover}");
    assert_eq!(wire.with_method("initialize").len(), 1);
}

#[test]
fn task_client_smol_to_seed_server() {
    task_client_to_seed_server("smol");
}

#[test]
fn task_client_tokio_to_seed_server() {
    task_client_to_seed_server("tokio");
}

/// Our client API on smol against the seed's server: `"task":{}` gets a Task without `ttl`
/// (read as unlimited); the snake_case `task_support` reads as optional; then `tasks/list`,
/// cancel while running, a second cancel, and unknown ids.
#[test]
fn client_api_to_seed_server_nottl_list_cancel_unknown() {
    let test = "client_api_to_seed_server_nottl_list_cancel_unknown";
    let Some(p) = peers::ready(test) else { return };
    let stderr = p.scratch(&format!("{test}.stderr"));
    let server = p.seed_server().stderr_to(&stderr);
    smol::block_on(async {
        let command = server.command();
        let builder = ClientBuilder::new(Config::new("taskwire-interop", "0.1.0"));
        let (client, mut child) = taskwire_smol::spawn_server(command, builder).unwrap();
        let body = async {
            let init = client.initialize().await.unwrap();
            assert_eq!(init.server.version, "1.30.0");
            let tools = client.list_tools().await.unwrap();
            assert_eq!(tools[0].execution.task_support, TaskSupport::Optional);

            let call = client
                .call_tool_as_task("long_running_task", json!({}), None)
                .await
                .unwrap();
            let task = call.task.clone().expect("a task");
            assert_eq!(task.ttl_ms, None, "mcp 1.30 omits ttl for task:{{}}");
            let outcome = call.result().await.unwrap();
            // The same typed result from every peer, in either era.
            assert_eq!(outcome, taskwire_driver::CallToolResult::text(RESULT));

            let running = client
                .call_tool_as_task("long_running_task", json!({}), Some(60_000))
                .await
                .unwrap();
            let id = running.task.clone().unwrap().id;
            let listed = client.list_tasks().await.unwrap();
            let ids: Vec<&str> = listed.iter().map(|t| t.id.as_str()).collect();
            assert!(ids.contains(&id.as_str()), "{ids:?}");
            assert!(
                !ids.contains(&"demo-task"),
                "session-bound since mcp 1.27.2: {ids:?}"
            );
            let cancelled = client.cancel_task(&id).await.unwrap();
            assert_eq!(cancelled.status, TaskStatus::Cancelled);
            assert_eq!(
                client.get_task(&id).await.unwrap().status,
                TaskStatus::Cancelled
            );
            let again = client
                .cancel_task(&id)
                .await
                .map_err(RpcError::from)
                .unwrap_err();
            assert_eq!(again.code, -32602, "{again:?}");
            assert_eq!(
                again.message,
                "Cannot cancel task in terminal state 'cancelled'"
            );
            let mut last = None;
            while let Ok(update) = running.updates.recv().await {
                last = Some(update);
            }
            // mcp 1.30 answers tasks/result of a cancelled task with an empty result (only
            // the related-task _meta, no content); our client passes it on, empty.
            match last {
                Some(TaskUpdate::Result(Ok(empty))) => {
                    assert_eq!(empty, CallToolResult::default());
                }
                other => panic!("expected the empty result, got {other:?}"),
            }

            for error in [
                client
                    .get_task("taskwire-no-such-task")
                    .await
                    .map_err(RpcError::from)
                    .unwrap_err(),
                client
                    .task_result("taskwire-no-such-task")
                    .await
                    .map_err(RpcError::from)
                    .unwrap_err(),
                client
                    .cancel_task("taskwire-no-such-task")
                    .await
                    .map_err(RpcError::from)
                    .unwrap_err(),
            ] {
                assert_eq!(error.code, -32602, "{error:?}");
                assert_eq!(error.message, "Task not found: taskwire-no-such-task");
            }
        };
        let timeout = async {
            smol::Timer::after(DEADLINE).await;
            panic!("{test} timed out; server stderr in {}", stderr.display());
        };
        smol::future::or(body, timeout).await;
        client.close().await;
        let _ = child.kill();
        let _ = child.wait().await;
    });
}
