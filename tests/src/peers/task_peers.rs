//! What the 2026-07-28 SDK peers (`rmcp-*`, `turbomcp-*` in `tests/peers/`) are driven
//! through, whichever SDK: their task client against our `task-server`, and our client API
//! against their task server. Both peers print the same JSON event lines.

use std::time::Duration;

use serde_json::json;
use taskwire_driver::engine::{ClientEra, Config, TaskStatus};
use taskwire_driver::{ClientBuilder, RpcError};

use super::demo::{binary, RESULT};
use super::wire::Log;
use super::{run, Argv, Peers, Run};
use taskwire_harness::Side;

const DEADLINE: Duration = Duration::from_secs(60);

/// Runs a peer task client (`client(server)` builds its command line) against our
/// `task-server --runtime RUNTIME --step-ms STEP_MS`, through `tap.py` into `<test>.jsonl`:
/// it must exit 0 having connected in 2026-07-28 without `initialize` and seen the task
/// created `working`, and every message our server sent must be schema-valid. Returns the
/// run.
pub fn peer_client_to_task_server(
    p: &Peers,
    client: impl Fn(&Argv) -> Argv,
    runtime: &str,
    step_ms: &str,
    test: &str,
) -> Run {
    let log = p.scratch(&format!("{test}.jsonl"));
    let server =
        Argv::new(binary("task-server")).args(&["--runtime", runtime, "--step-ms", step_ms]);
    let out = run(&client(&p.tap(&log, &server)), DEADLINE);
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
    out
}

/// Our client API (opening in `era`) against a peer task server: `echo` plainly,
/// `long_running_task` as a task to its inline result, and one cancelled.
pub fn client_api_to_peer_server(server: Argv, era: ClientEra) {
    smol::block_on(async {
        let builder = ClientBuilder::new(Config {
            client_era: era,
            ..Config::new("taskwire-interop", "0.1.0")
        });
        let (client, _child) =
            taskwire_smol::spawn_server(server.command(), builder).expect("the peer starts");
        let opened = client.initialize().await.expect("server/discover");
        assert_eq!(opened.protocol_version, "2026-07-28");
        let echoed = client
            .call_tool("echo", json!({ "text": "hi" }))
            .await
            .expect("echo");
        assert_eq!(echoed.all_text(), "hi");

        let call = client
            .call_tool_as_task("long_running_task", json!({}), None)
            .await
            .expect("the call is accepted");
        let task = call.task.clone().expect("the peer made a task");
        let result = call.result().await.expect("the outcome");
        // The same typed result from every peer, in either era.
        assert_eq!(result, taskwire_driver::CallToolResult::text(RESULT));
        let got = client.get_task(&task.id).await.expect("tasks/get");
        assert_eq!(got.status, TaskStatus::Completed);

        let call = client
            .call_tool_as_task("long_running_task", json!({}), None)
            .await
            .expect("the call is accepted");
        let task = call.task.clone().expect("the peer made a task");
        client.cancel_task(&task.id).await.expect("tasks/cancel");
        let error = RpcError::from(call.result().await.expect_err("cancelled"));
        assert_eq!(error.message, "Task was cancelled");
        client.close().await;
    });
}
