//! Interop with turbomcp 4.0.0-alpha.5 (`turbomcp-ext-tasks`) in 2026-07-28 with the tasks
//! extension, as real processes, both ways:
//!
//! - turbomcp's modern client (`turbomcp-task-client`, `tests/peers/turbomcp`) ⇒ our
//!   `task-server`: a whole task, and a cancelled one;
//! - our `task-client` and our client API ⇒ turbomcp's server (`turbomcp-task-server`).
//!
//! Every line our side sends is recorded with `tap.py` and checked against the 2026 schemas.
//! turbomcp gives a running task no status message, so only statuses and outcomes are compared.

use std::time::Duration;

use serde_json::json;
use taskwire_driver::engine::{ClientEra, Config, TaskStatus};
use taskwire_driver::ClientBuilder;
use taskwire_tests::peers::demo::{binary, DemoClient, RESULT};
use taskwire_tests::peers::wire::Log;
use taskwire_tests::peers::{self, run, Argv, Peers};
use taskwire_tests::Side;

const DEADLINE: Duration = Duration::from_secs(60);
const STEP_MS: &str = "300";

fn task_server(runtime: &str) -> Argv {
    Argv::new(binary("task-server")).args(&["--runtime", runtime, "--step-ms", STEP_MS])
}

fn turbomcp_client_to_task_server(
    p: &Peers,
    runtime: &str,
    args: &[&str],
    test: &str,
) -> Vec<String> {
    let log = p.scratch(&format!("{test}.jsonl"));
    let out = run(
        &p.turbomcp_task_client(args, &p.tap(&log, &task_server(runtime))),
        DEADLINE,
    );
    out.assert_exit(0);
    let connected = out.event("connected");
    assert_eq!(connected["protocolVersion"], "2026-07-28", "{out}");
    assert_eq!(connected["server"]["name"], "task-server", "{out}");
    assert_eq!(out.event("created")["status"], "working", "{out}");
    let wire = Log::read(&log);
    wire.check_conformance(Side::Server);
    assert!(
        wire.with_method("initialize").is_empty(),
        "no handshake in 2026-07-28"
    );
    out.kinds()
}

#[test]
fn turbomcp_client_to_task_server_smol() {
    let Some(p) = peers::ready("turbomcp_client_to_task_server_smol") else {
        return;
    };
    let kinds = turbomcp_client_to_task_server(p, "smol", &[], "turbomcp_client_smol");
    assert_eq!(
        kinds.last().map(String::as_str),
        Some("result"),
        "{kinds:?}"
    );
}

#[test]
fn turbomcp_client_to_task_server_tokio_cancel() {
    let Some(p) = peers::ready("turbomcp_client_to_task_server_tokio_cancel") else {
        return;
    };
    let kinds = turbomcp_client_to_task_server(p, "tokio", &["--cancel"], "turbomcp_client_cancel");
    assert!(kinds.contains(&"cancel_acked".to_owned()), "{kinds:?}");
    assert_eq!(
        kinds.last().map(String::as_str),
        Some("cancelled"),
        "{kinds:?}"
    );
}

/// Our `task-client` (the seed flow, era chosen by discovery) against turbomcp's server.
#[test]
fn task_client_to_turbomcp_server() {
    let Some(p) = peers::ready("task_client_to_turbomcp_server") else {
        return;
    };
    let log = p.scratch("task_client_to_turbomcp_server.jsonl");
    let server = p.tap(&log, &p.turbomcp_task_server(STEP_MS));
    let client = Argv::new(binary("task-client")).arg("--").extend(&server);
    let out = run(&client, DEADLINE);
    out.assert_exit(0);
    let demo = DemoClient::parse(&out);
    let connected = demo.connected.as_deref().unwrap_or_default();
    assert!(connected.ends_with("(protocol 2026-07-28)"), "{out}");
    assert!(demo.task.is_some(), "{out}");
    assert_eq!(demo.status_path(), ["working", "completed"], "{out}");
    assert_eq!(demo.result.as_deref(), Some(RESULT), "{out}");
    let wire = Log::read(&log);
    wire.check_conformance(Side::Client);
    assert!(wire.with_method("tasks/result").is_empty());
}

/// Our client API against turbomcp's server: a plain call, a task, a cancelled task.
#[test]
fn client_api_to_turbomcp_server() {
    let Some(p) = peers::ready("client_api_to_turbomcp_server") else {
        return;
    };
    let server = p.turbomcp_task_server(STEP_MS);
    smol::block_on(async {
        let builder = ClientBuilder::new(Config {
            client_era: ClientEra::Modern,
            ..Config::new("taskwire-interop", "0.1.0")
        });
        let (client, _child) = taskwire_smol::spawn_server(server.command(), builder)
            .expect("turbomcp-task-server starts");
        let opened = client.initialize().await.expect("server/discover");
        assert_eq!(opened.protocol_version, "2026-07-28");
        let echoed = client
            .call_tool("echo", json!({ "text": "hi" }))
            .await
            .expect("echo");
        assert_eq!(echoed["content"][0]["text"], "hi");

        let call = client
            .call_tool_as_task("long_running_task", json!({}), None)
            .await
            .expect("the call is accepted");
        let task = call.task.clone().expect("turbomcp made a task");
        let result = call.result().await.expect("the outcome");
        assert_eq!(result["content"][0]["text"], RESULT);
        assert_eq!(
            client.get_task(&task.id).await.expect("tasks/get").status,
            TaskStatus::Completed
        );

        let call = client
            .call_tool_as_task("long_running_task", json!({}), None)
            .await
            .expect("the call is accepted");
        let task = call.task.clone().expect("turbomcp made a task");
        client.cancel_task(&task.id).await.expect("tasks/cancel");
        let error = call.result().await.expect_err("cancelled");
        assert_eq!(error.message, "Task was cancelled");
        client.close().await;
    });
}
