//! Interop with FastMCP, as real processes, both ways, each release in the era it speaks:
//! FastMCP 3.4.11 (`fastmcp[tasks]`, 2025-11-25 tasks on Docket's in-process `memory://`) and
//! FastMCP 4.1.4 (`fastmcp-tasks`, the 2026-07-28 tasks extension), on stdio and over
//! Streamable HTTP:
//!
//! - FastMCP's client (`fastmcp_client.py`) ⇒ our `task-server`: a task to its result, one
//!   cancelled (FastMCP 4: then a plain `call_tool` it resolves through our task by itself);
//! - our `task-client` (stdio), our client API (`HttpClient`) and `taskwire call` / `taskwire
//!   tasks cancel` (HTTP) ⇒ FastMCP's server (`fastmcp_server.py`: the seed's
//!   `long_running_task` as a FastMCP background task, and `echo`).
//!
//! Every message our side sends is checked against the schema of its era: through `tap.py` on
//! stdio, through the recording proxy (`peers::http_tap::Recorder`) over HTTP. Test names:
//! `<client>_to_<server>[_http]`.

use serde_json::json;
use taskwire_demo::tools::{CANCELLED_MESSAGE, DONE_MESSAGE};
use taskwire_driver::engine::{Config, TaskStatus};
use taskwire_driver::{ClientBuilder, RpcError};
use taskwire_harness::Side;
use taskwire_http::HttpClient;
use taskwire_tests::peers::demo::{assert_ran_to_completion, binary, DemoClient, RESULT, STEPS};
use taskwire_tests::peers::fastmcp::FastMcp;
use taskwire_tests::peers::http::HttpServer;
use taskwire_tests::peers::http_tap::{assert_one_session, with_method, Recorder};
use taskwire_tests::peers::wire::Log;
use taskwire_tests::peers::{self, run, Argv, Peers, Run};

use crate::common::DEADLINE;

/// Our server's status step.
const STEP_MS: &str = "300";
/// FastMCP's server: its status step, and the `pollInterval` its tasks advertise (much shorter,
/// so that a client polling at that pace hears every step, even on a loaded machine).
const PEER_STEP_MS: &str = "1000";
const PEER_POLL_MS: &str = "150";
const TOOL: &str = "long_running_task";

// ------------------------------------------------------------------ FastMCP's client ⇒ our server

/// What FastMCP's client printed from our server: connected in `release`'s era to
/// `task-server`; the task created `working` with our 500 ms poll interval (FastMCP 3: the
/// 60 s ttl it asks for); polled to `completed` with our closing message; our result; the
/// second task cancelled with our message; FastMCP 4: the transparent call's result too.
fn assert_fastmcp_client_run(out: &Run, release: FastMcp) {
    out.assert_exit(0);
    let connected = out.event("connected");
    assert_eq!(connected["protocolVersion"], release.era(), "{out}");
    assert_eq!(connected["server"]["name"], "task-server", "{out}");
    let tools = out.event("tools");
    assert!(
        tools["names"]
            .as_array()
            .is_some_and(|n| n.contains(&json!(TOOL))),
        "{out}"
    );
    let created = out.event("created");
    assert_eq!(created["status"], "working", "{out}");
    assert_eq!(created["pollInterval"], 500, "{out}");
    if release == FastMcp::V3 {
        assert_eq!(tools["taskSupport"][TOOL], "optional", "{out}");
        assert_eq!(created["ttl"], 60_000, "{out}");
    }
    assert_ran_to_completion(out, &out.events("status"));
    let cancelled = out.event("cancelled");
    assert_eq!(
        (&cancelled["status"], &cancelled["message"]),
        (&json!("cancelled"), &json!(CANCELLED_MESSAGE)),
        "{out}"
    );
    assert_ne!(cancelled["taskId"], created["taskId"], "{out}");
    if release == FastMcp::V4 {
        assert_eq!(out.event("transparent")["text"], RESULT, "{out}");
    }
}

/// FastMCP 3 hears our status notifications (registered once the call returned a task): the
/// later steps while working, then `completed` with our closing message.
fn assert_fastmcp3_heard_notifications(out: &Run) {
    let notified = out.events("notification");
    let (last, before) = notified
        .split_last()
        .unwrap_or_else(|| panic!("no status notification\n{out}"));
    assert_eq!(
        (&last["status"], &last["message"]),
        (&json!("completed"), &json!(DONE_MESSAGE)),
        "{out}"
    );
    let working: Vec<&str> = before
        .iter()
        .filter_map(|n| n["message"].as_str())
        .collect();
    for step in &STEPS[1..] {
        assert!(working.contains(step), "{step} not notified\n{out}");
    }
}

/// What FastMCP's client sent and we answered, by era: FastMCP 3 opens with `initialize` and
/// asks for a 60 s task, reading the result with `tasks/result`; FastMCP 4 opens with
/// `server/discover`, declares the tasks extension on its call, is answered with a task and
/// reads the outcome inline from `tasks/get`.
fn assert_fastmcp_wire(wire: &Log, release: FastMcp) {
    wire.check_conformance(Side::Server);
    let call = wire.request("tools/call");
    match release {
        FastMcp::V3 => {
            assert!(!wire.with_method("initialize").is_empty());
            assert_eq!(call["params"]["task"]["ttl"], 60_000, "{call}");
            assert!(!wire.with_method("tasks/result").is_empty());
        }
        FastMcp::V4 => {
            assert!(wire.with_method("initialize").is_empty());
            assert_eq!(wire.lines[0].msg["method"], "server/discover");
            let extensions = &call["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"]
                ["extensions"];
            assert!(
                extensions.get("io.modelcontextprotocol/tasks").is_some(),
                "{call}"
            );
            assert_eq!(wire.answer(call)["result"]["resultType"], "task");
            assert!(wire.with_method("tasks/result").is_empty());
        }
    }
    assert!(!wire.with_method("tasks/cancel").is_empty());
}

/// FastMCP's client runs `task-server --step-ms 300` on stdio, through `tap.py`.
fn fastmcp_client_to_task_server(release: FastMcp, test: &str) {
    let Some(p) = peers::ready(test) else { return };
    let log = p.scratch(&format!("{test}.jsonl"));
    let server = Argv::new(binary("task-server")).args(&["--step-ms", STEP_MS]);
    let out = run(&p.fastmcp_client(release, &p.tap(&log, &server)), DEADLINE);
    assert_fastmcp_client_run(&out, release);
    if release == FastMcp::V3 {
        assert_fastmcp3_heard_notifications(&out);
    }
    assert_fastmcp_wire(&Log::read(&log), release);
}

#[test]
fn fastmcp3_client_to_task_server() {
    fastmcp_client_to_task_server(FastMcp::V3, "fastmcp3_client_to_task_server");
}

#[test]
fn fastmcp4_client_to_task_server() {
    fastmcp_client_to_task_server(FastMcp::V4, "fastmcp4_client_to_task_server");
}

/// FastMCP's client runs our `task-server --http` through the recording proxy. FastMCP 3
/// works in one session (its id on every later request, our notifications on its `GET`
/// stream); FastMCP 4 posts each request statelessly, and sends no `Mcp-Name` on `tasks/get`
/// and `tasks/cancel` (its `fastmcp_tasks.client_models` request types declare no
/// `name_param`), which we accept.
fn fastmcp_client_to_task_server_http(release: FastMcp, test: &str) {
    let Some(p) = peers::ready(test) else { return };
    let server = HttpServer::task_server(p, test, &["--step-ms", STEP_MS]);
    let proxy = Recorder::start(&server.url);
    let out = run(&p.fastmcp_client_url(release, &proxy.url), DEADLINE);
    assert_fastmcp_client_run(&out, release);
    assert_fastmcp_wire(&proxy.log(test), release);
    let exchanges = proxy.exchanges();
    match release {
        FastMcp::V3 => {
            assert_fastmcp3_heard_notifications(&out);
            assert_one_session(&exchanges);
        }
        FastMcp::V4 => {
            for method in ["tasks/get", "tasks/cancel"] {
                let sent = with_method(&exchanges, method);
                assert!(!sent.is_empty(), "no {method}: {exchanges:#?}");
                for x in sent {
                    assert_eq!(x.header("mcp-name"), None, "{x:#?}");
                    assert_eq!(x.status, 200, "{x:#?}");
                }
            }
        }
    }
}

#[test]
fn fastmcp3_client_to_task_server_http() {
    fastmcp_client_to_task_server_http(FastMcp::V3, "fastmcp3_client_to_task_server_http");
}

#[test]
fn fastmcp4_client_to_task_server_http() {
    fastmcp_client_to_task_server_http(FastMcp::V4, "fastmcp4_client_to_task_server_http");
}

// ------------------------------------------------------------------ our clients ⇒ FastMCP's server

/// `fastmcp_server.py --http PORT` of `release`, its stderr in the scratch directory.
fn fastmcp_server(p: &Peers, release: FastMcp, test: &str) -> HttpServer {
    let log = p.scratch(&format!("{test}.fastmcp-server.log"));
    HttpServer::start(
        |port| p.fastmcp_http_server(release, port, PEER_STEP_MS, PEER_POLL_MS),
        Some(&log),
    )
}

/// `task-client` on stdio, through `tap.py`: connected to FastMCP's server in its era, the
/// seed flow to `completed` with each step's message, the result; every message of ours
/// schema-valid.
fn task_client_to_fastmcp_server(release: FastMcp, test: &str) {
    let Some(p) = peers::ready(test) else { return };
    let log = p.scratch(&format!("{test}.jsonl"));
    let server = p.fastmcp_server(release, PEER_STEP_MS, PEER_POLL_MS);
    let client = Argv::new(binary("task-client"))
        .arg("--")
        .extend(&p.tap(&log, &server));
    let out = run(&client, DEADLINE);
    out.assert_exit(0);
    let demo = DemoClient::parse(&out);
    assert_eq!(
        demo.connected,
        Some(format!(
            "fastmcp-task-server {} (protocol {})",
            release.version(),
            release.era()
        )),
        "{out}"
    );
    assert_eq!(
        demo.tools.as_deref(),
        Some(r#"["long_running_task", "echo"]"#),
        "{out}"
    );
    assert_eq!(demo.status_path(), ["working", "completed"], "{out}");
    for step in STEPS {
        assert!(demo.messages().contains(&step), "{step} not heard\n{out}");
    }
    assert_eq!(demo.result.as_deref(), Some(RESULT), "{out}");
    Log::read(&log).check_conformance(Side::Client);
}

#[test]
fn task_client_to_fastmcp3_server() {
    task_client_to_fastmcp_server(FastMcp::V3, "task_client_to_fastmcp3_server");
}

#[test]
fn task_client_to_fastmcp4_server() {
    task_client_to_fastmcp_server(FastMcp::V4, "task_client_to_fastmcp4_server");
}

/// Our client API over `HttpClient`, in the default era (FastMCP 3 refuses `server/discover`
/// and gets `initialize`; FastMCP 4 is found by it), through the proxy: `echo` plainly; a
/// task to its result, `tasks/get` agreeing; one cancelled; every message of ours
/// schema-valid.
fn client_api_to_fastmcp_http_server(release: FastMcp, test: &str) {
    let Some(p) = peers::ready(test) else { return };
    let server = fastmcp_server(p, release, test);
    let proxy = Recorder::start(&server.url);
    let runtime = tokio::runtime::Runtime::new().expect("a tokio runtime");
    runtime.block_on(async {
        let mut config = Config::new("taskwire-interop", "0.1.0");
        config.request_timeout_ms = Some(10_000);
        let client = HttpClient::new(proxy.url.as_str()).connect(ClientBuilder::new(config));
        let body = async {
            let opened = client.initialize().await.expect("connected");
            assert_eq!(opened.protocol_version, release.era());
            assert_eq!(opened.server.name, "fastmcp-task-server");
            assert_eq!(opened.server.version, release.version());
            let echoed = client
                .call_tool("echo", json!({ "text": "hi" }))
                .await
                .expect("echo");
            assert_eq!(echoed.all_text(), "hi");

            let call = client
                .call_tool_as_task(TOOL, json!({}), None)
                .await
                .expect("the call is accepted");
            let task = call.task.clone().expect("FastMCP made a task");
            assert_eq!(task.status, TaskStatus::Working);
            let result = call.result().await.expect("the outcome");
            assert_eq!(result.all_text(), RESULT);
            assert!(!result.is_error);
            let got = client.get_task(&task.id).await.expect("tasks/get");
            assert_eq!(got.status, TaskStatus::Completed);

            let call = client
                .call_tool_as_task(TOOL, json!({}), None)
                .await
                .expect("the call is accepted");
            let task = call.task.clone().expect("FastMCP made a task");
            let cancelled = client.cancel_task(&task.id).await.expect("tasks/cancel");
            assert_eq!(cancelled.status, TaskStatus::Cancelled);
            let error = RpcError::from(call.result().await.expect_err("cancelled"));
            match release {
                // The spec leaves `tasks/result` of a cancelled task open; FastMCP 3 refuses it.
                FastMcp::V3 => assert_eq!(
                    (error.code, error.message.as_str()),
                    (-32602, "Task not completed yet (current state: cancelled)")
                ),
                // 2026-07-28 has no `tasks/result`: the cancelled status ends the call.
                FastMcp::V4 => assert_eq!(error.message, "Task was cancelled"),
            }
        };
        if tokio::time::timeout(DEADLINE, body).await.is_err() {
            panic!("timed out against {}{}", server.command, server.log());
        }
        client.close().await;
    });
    drop(runtime);
    proxy.log(test).check_conformance(Side::Client);
}

#[test]
fn client_api_to_fastmcp3_http_server() {
    client_api_to_fastmcp_http_server(FastMcp::V3, "client_api_to_fastmcp3_http_server");
}

#[test]
fn client_api_to_fastmcp4_http_server() {
    client_api_to_fastmcp_http_server(FastMcp::V4, "client_api_to_fastmcp4_http_server");
}

/// `taskwire --json call` through the proxy runs the task to FastMCP's result; `call --detach`
/// then `taskwire tasks cancel ID` (another process, so another session in 2025-11-25: FastMCP
/// keeps its tasks by id) ends the second one `cancelled` (exit 3). Every message of ours
/// schema-valid.
fn taskwire_to_fastmcp_http_server(release: FastMcp, test: &str) {
    let Some(p) = peers::ready(test) else { return };
    let server = fastmcp_server(p, release, test);
    let proxy = Recorder::start(&server.url);
    let taskwire = |args: &[&str]| {
        let argv = Argv::new(binary("taskwire"))
            .arg("--json")
            .args(args)
            .args(&["--url", &proxy.url]);
        run(&argv, DEADLINE)
    };

    let out = taskwire(&["call", TOOL]);
    out.assert_exit(0);
    let connected = out.event("connected");
    assert_eq!(connected["protocol"], release.era(), "{out}");
    assert_eq!(
        connected["server"],
        json!({ "name": "fastmcp-task-server", "version": release.version() }),
        "{out}"
    );
    let outcome = out.event("outcome");
    assert_eq!(outcome["outcome"], "completed", "{out}");
    assert_eq!(outcome["result"]["content"][0]["text"], RESULT, "{out}");

    let out = taskwire(&["call", TOOL, "--detach"]);
    out.assert_exit(0);
    let id = out.event("task")["task"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("no task id\n{out}"))
        .to_owned();
    let out = taskwire(&["tasks", "cancel", &id]);
    out.assert_exit(3);
    let task = &out.event("task")["task"];
    assert_eq!(
        (&task["taskId"], &task["status"]),
        (&json!(id), &json!("cancelled")),
        "{out}"
    );
    proxy.log(test).check_conformance(Side::Client);
}

#[test]
fn taskwire_to_fastmcp3_http_server() {
    taskwire_to_fastmcp_http_server(FastMcp::V3, "taskwire_to_fastmcp3_http_server");
}

#[test]
fn taskwire_to_fastmcp4_http_server() {
    taskwire_to_fastmcp_http_server(FastMcp::V4, "taskwire_to_fastmcp4_http_server");
}
