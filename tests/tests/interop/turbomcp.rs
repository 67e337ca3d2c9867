//! Interop with turbomcp 4.0.0-alpha.5 (`turbomcp-ext-tasks`) in 2026-07-28 with the tasks
//! extension, as real processes, both ways:
//!
//! - turbomcp's v2026 client (`turbomcp-task-client`, `tests/peers/turbomcp`) ⇒ our
//!   `task-server`: a whole task, and a cancelled one;
//! - our `task-client` and our client API ⇒ turbomcp's server (`turbomcp-task-server`).
//!
//! Every line our side sends is recorded with `tap.py` and checked against the 2026 schemas.
//! turbomcp gives a running task no status message, so only statuses and outcomes are compared.

use taskwire_driver::engine::ClientEra;
use taskwire_harness::Side;
use taskwire_tests::peers::demo::{binary, DemoClient, RESULT};
use taskwire_tests::peers::task_peers::{client_api_to_peer_server, peer_client_to_task_server};
use taskwire_tests::peers::wire::Log;
use taskwire_tests::peers::{self, run, Argv, Peers};

use crate::common::{DEADLINE, STEP_MS};

fn turbomcp_client_to_task_server(
    p: &Peers,
    runtime: &str,
    args: &[&str],
    test: &str,
) -> Vec<String> {
    let client = |server: &Argv| p.turbomcp_task_client(args, server);
    peer_client_to_task_server(p, client, runtime, STEP_MS, test).kinds()
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
    client_api_to_peer_server(
        p.turbomcp_task_server(STEP_MS),
        ClientEra::Only(taskwire_engine::Era::V2026_07_28),
    );
}
