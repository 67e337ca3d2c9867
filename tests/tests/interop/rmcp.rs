//! Interop with rmcp 3.11.0 (the official Rust SDK) in 2026-07-28 with the tasks extension,
//! as real processes, both ways:
//!
//! - rmcp's client (`rmcp-task-client`, `tests/peers/rmcp`) ⇒ our `task-server`: a whole
//!   task (discover, create, poll, inline result), a cancelled one, and rmcp's `Auto` mode;
//! - our `task-client` and our client API ⇒ rmcp's `TaskManager` server (`rmcp-task-server`):
//!   the seed flow, a plain call, a task, a cancel.
//!
//! Every line our side sends is recorded with `tap.py` and checked against the 2026 schemas.
//! Test names: `<client>_to_<server>[_<case>]`.

use serde_json::json;
use taskwire_driver::engine::ClientEra;
use taskwire_harness::Side;
use taskwire_tests::peers::demo::{binary, DemoClient, RESULT, STEPS};
use taskwire_tests::peers::task_peers::{client_api_to_peer_server, peer_client_to_task_server};
use taskwire_tests::peers::wire::Log;
use taskwire_tests::peers::{self, run, Argv, Peers};

use crate::common::{DEADLINE, STEP_MS};

fn rmcp_client_to_task_server(p: &Peers, runtime: &str, args: &[&str], test: &str) -> Vec<String> {
    let client = |server: &Argv| p.rmcp_task_client(args, server);
    let out = peer_client_to_task_server(p, client, runtime, STEP_MS, test);
    assert_eq!(out.event("connected")["tasksExtension"], true, "{out}");
    assert_eq!(out.event("created")["pollIntervalMs"], 500, "{out}");
    out.kinds()
}

fn rmcp_client_runs_a_whole_task(runtime: &str) {
    let Some(p) = peers::ready("rmcp_client_to_task_server") else {
        return;
    };
    let test = format!("rmcp_client_to_task_server_{runtime}");
    let kinds = rmcp_client_to_task_server(p, runtime, &[], &test);
    assert_eq!(kinds.first().map(String::as_str), Some("connected"));
    assert_eq!(
        kinds.last().map(String::as_str),
        Some("result"),
        "{kinds:?}"
    );
}

#[test]
fn rmcp_client_to_task_server_smol() {
    rmcp_client_runs_a_whole_task("smol");
}

#[test]
fn rmcp_client_to_task_server_tokio() {
    rmcp_client_runs_a_whole_task("tokio");
}

/// The result itself, and each step message heard by rmcp's polls.
#[test]
fn rmcp_client_to_task_server_result_and_steps() {
    let Some(p) = peers::ready("rmcp_client_to_task_server_result_and_steps") else {
        return;
    };
    let log = p.scratch("rmcp_client_to_task_server_result_and_steps.jsonl");
    let server = Argv::new(binary("task-server")).args(&["--step-ms", "1000"]);
    let out = run(&p.rmcp_task_client(&[], &p.tap(&log, &server)), DEADLINE);
    out.assert_exit(0);
    let result = out.event("result");
    assert_eq!(
        (&result["text"], &result["isError"]),
        (&json!(RESULT), &json!(false)),
        "{out}"
    );
    let messages: Vec<String> = out
        .events("status")
        .iter()
        .filter_map(|s| s["statusMessage"].as_str().map(str::to_owned))
        .collect();
    for step in STEPS {
        assert!(
            messages.iter().any(|m| m == step),
            "{step} not heard: {out}"
        );
    }
    Log::read(&log).check_conformance(Side::Server);
}

#[test]
fn rmcp_client_to_task_server_cancel() {
    let Some(p) = peers::ready("rmcp_client_to_task_server_cancel") else {
        return;
    };
    let kinds = rmcp_client_to_task_server(p, "smol", &["--cancel"], "rmcp_client_cancel");
    assert!(kinds.contains(&"cancel_acked".to_owned()), "{kinds:?}");
    assert_eq!(
        kinds.last().map(String::as_str),
        Some("cancelled"),
        "{kinds:?}"
    );
}

/// rmcp's `Auto` mode discovers us as a 2026-07-28 server (no fallback).
#[test]
fn rmcp_client_auto_to_task_server() {
    let Some(p) = peers::ready("rmcp_client_auto_to_task_server") else {
        return;
    };
    let args = ["--lifecycle", "auto"];
    let kinds = rmcp_client_to_task_server(p, "tokio", &args, "rmcp_client_auto");
    assert_eq!(
        kinds.last().map(String::as_str),
        Some("result"),
        "{kinds:?}"
    );
}

/// Our `task-client` (the seed flow, era chosen by discovery) against rmcp's server.
fn task_client_to_rmcp_server(runtime: &str) {
    let Some(p) = peers::ready("task_client_to_rmcp_server") else {
        return;
    };
    let log = p.scratch(&format!("task_client_to_rmcp_server_{runtime}.jsonl"));
    let server = p.tap(&log, &p.rmcp_task_server(STEP_MS));
    let client = Argv::new(binary("task-client"))
        .args(&["--runtime", runtime, "--"])
        .extend(&server);
    let out = run(&client, DEADLINE);
    out.assert_exit(0);
    let demo = DemoClient::parse(&out);
    let connected = demo.connected.as_deref().unwrap_or_default();
    assert!(connected.ends_with("(protocol 2026-07-28)"), "{out}");
    assert_eq!(
        demo.tools.as_deref(),
        Some(r#"["long_running_task", "echo"]"#),
        "{out}"
    );
    assert!(demo.task.is_some(), "{out}");
    assert_eq!(demo.status_path().last(), Some(&"completed"), "{out}");
    assert_eq!(demo.result.as_deref(), Some(RESULT), "{out}");
    let wire = Log::read(&log);
    wire.check_conformance(Side::Client);
    assert!(wire.with_method("tasks/result").is_empty());
    assert!(!wire.with_method("tasks/get").is_empty());
}

#[test]
fn task_client_smol_to_rmcp_server() {
    task_client_to_rmcp_server("smol");
}

#[test]
fn task_client_tokio_to_rmcp_server() {
    task_client_to_rmcp_server("tokio");
}

/// Our client API against rmcp's server: a plain call, a task to its end, a cancelled task.
#[test]
fn client_api_to_rmcp_server() {
    let Some(p) = peers::ready("client_api_to_rmcp_server") else {
        return;
    };
    client_api_to_peer_server(p.rmcp_task_server(STEP_MS), ClientEra::Auto);
}
