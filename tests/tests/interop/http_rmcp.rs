//! Interop with rmcp 3.11.0 (the official Rust SDK) over Streamable HTTP, in protocol
//! 2026-07-28 with the tasks extension, as real processes, both ways:
//!
//! - rmcp's client (`rmcp-task-client --url`: `StreamableHttpClientTransport` on reqwest)
//!   ⇒ our `task-server --http`: a whole task (`server/discover`, the call answered with a
//!   task, `tasks/get` until completed, the result inline), a cancelled one, rmcp's `Auto`
//!   lifecycle; and rmcp's legacy lifecycle, which our endpoint serves as a 2025-11-25
//!   session on the same URL;
//! - our `task-client --url` and our client API (`taskwire_http::HttpClient`, 2026-07-28)
//!   ⇒ rmcp's `StreamableHttpService` serving the task tools of `rmcp-task-server` (its
//!   `TaskManager`): `echo`, a task to its inline result, a cancel; with SSE answers (rmcp's
//!   default) and with JSON answers.
//!
//! Every HTTP exchange goes through a recording proxy (`peers::http_tap::Recorder`) in this process: each
//! request body and each message of its answer (JSON or SSE) is logged with its HTTP headers
//! and status, and every message our side sent is checked against the schemas as in the other
//! suites. Test names: `<client>_to_<server>[_<case>]`.

use serde_json::json;
use taskwire_driver::engine::{ClientEra, Config, Era, TaskStatus};
use taskwire_driver::{ClientBuilder, RpcError};
use taskwire_harness::Side;
use taskwire_http::HttpClient;
use taskwire_tests::peers::demo::{binary, DemoClient, RESULT, STEPS};
use taskwire_tests::peers::http::HttpServer;
use taskwire_tests::peers::http_tap::{Exchange, Recorder};
use taskwire_tests::peers::wire::Log;
use taskwire_tests::peers::{self, run, Argv, Peers, Run};

use crate::common::DEADLINE;

/// The status step of both task servers here: rmcp's polls every half step, ours every
/// 500 ms, so with one-second steps rmcp's client hears each step of ours.
const STEP_MS: &str = "1000";
/// A shorter step where the steps' messages are not checked.
const SHORT_STEP_MS: &str = "200";

/// Every POST of a 2026-07-28 conversation: no `Mcp-Session-Id` either way, and each
/// request carries `MCP-Protocol-Version: 2026-07-28`, `Mcp-Method` naming its method, and
/// the per-request `_meta` with that version; each answered `200`, but for
/// `subscriptions/listen` when `listen_refused`: then each is answered `404` with -32601
/// (rmcp 3.11's default, see [`assert_listen_refused`]). No GET, no DELETE.
fn assert_stateless_2026(exchanges: &[Exchange], listen_refused: bool) {
    assert!(!exchanges.is_empty(), "nothing went through the proxy");
    for x in exchanges {
        assert_eq!(x.method, "POST", "{x:#?}");
        assert_eq!(x.header("mcp-session-id"), None, "{x:#?}");
        assert_eq!(x.session, None, "{x:#?}");
        let Some(body) = &x.body else {
            panic!("a POST that is not JSON: {x:#?}")
        };
        if body.get("id").is_none() || body.get("method").is_none() {
            continue;
        }
        if listen_refused && x.rpc_method() == Some("subscriptions/listen") {
            assert_listen_refused(x);
        } else {
            assert_eq!(x.status, 200, "{x:#?}");
        }
        assert_eq!(
            x.header("mcp-protocol-version"),
            Some("2026-07-28"),
            "{x:#?}"
        );
        assert_eq!(x.header("mcp-method"), x.rpc_method(), "{x:#?}");
        assert_eq!(
            body["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"], "2026-07-28",
            "{x:#?}"
        );
        if x.rpc_method() == Some("tools/call") {
            assert_eq!(
                x.header("mcp-name"),
                body["params"]["name"].as_str(),
                "{x:#?}"
            );
        }
    }
}

/// rmcp 3.11 serves no `subscriptions/listen` unless the handler overrides
/// `ServerHandler::accepted_subscription_filter` (its default, `None`, answers -32601:
/// `handler/server.rs` lines 178-187 and 540-545), and its `SubscriptionFilter` has no `taskIds`
/// (`model.rs` lines 2272-2285), so no rmcp server can push `notifications/tasks`. Over
/// HTTP -32601 is answered `404` (`streamable_http_server/tower.rs` line 802). Our client
/// asks for each task's status stream, takes the refusal, and polls.
fn assert_listen_refused(x: &Exchange) {
    assert_eq!(x.status, 404, "{x:#?}");
    assert_eq!(x.answers.len(), 1, "{x:#?}");
    assert_eq!(x.answers[0]["error"]["code"], -32601, "{x:#?}");
    let body = x.body.as_ref().expect("a JSON body");
    assert!(
        body["params"]["notifications"]["taskIds"].is_array(),
        "{x:#?}"
    );
}

/// The exchanges whose request has JSON-RPC method `method`.
fn with_method<'a>(exchanges: &'a [Exchange], method: &str) -> Vec<&'a Exchange> {
    exchanges
        .iter()
        .filter(|x| x.rpc_method() == Some(method))
        .collect()
}

// ------------------------------------------------------------------ rmcp's client ⇒ our server

/// Our `task-server --http 127.0.0.1:PORT --step-ms STEP`.
fn our_server(p: &Peers, test: &str, step_ms: &str) -> HttpServer {
    let log = p.scratch(&format!("{test}.task-server.log"));
    HttpServer::start(
        |port| {
            Argv::new(binary("task-server"))
                .args(&["--http", &format!("127.0.0.1:{port}"), "--step-ms", step_ms])
                .env("RUST_LOG", "info")
        },
        Some(&log),
    )
}

/// Runs `rmcp-task-client ARGS --url` against our server (steps of `step_ms`) through the
/// proxy; checks that every message our server sent is schema-valid. Returns the run, the
/// traffic and the exchanges.
fn rmcp_client_to_our_server(
    p: &Peers,
    test: &str,
    args: &[&str],
    step_ms: &str,
) -> (Run, Log, Vec<Exchange>) {
    let server = our_server(p, test, step_ms);
    let proxy = Recorder::start(&server.url);
    let out = run(&p.rmcp_task_client_url(args, &proxy.url), DEADLINE);
    let wire = proxy.log(test);
    wire.check_conformance(Side::Server);
    (out, wire, proxy.exchanges())
}

/// rmcp's 2026 run against our server: connected in 2026-07-28 to `task-server` with the
/// tasks extension, by `server/discover` (no `initialize`), statelessly; the task created
/// `working` with our 500 ms poll interval.
fn assert_rmcp_2026_run(out: &Run, wire: &Log, exchanges: &[Exchange]) {
    let connected = out.event("connected");
    assert_eq!(connected["protocolVersion"], "2026-07-28", "{out}");
    assert_eq!(connected["server"]["name"], "task-server", "{out}");
    assert_eq!(connected["tasksExtension"], true, "{out}");
    let created = out.event("created");
    assert_eq!(created["status"], "working", "{out}");
    assert_eq!(created["pollIntervalMs"], 500, "{out}");
    assert!(wire.with_method("initialize").is_empty(), "{out}");
    let first = exchanges
        .iter()
        .filter_map(Exchange::rpc_method)
        .next()
        .unwrap_or_default();
    assert_eq!(first, "server/discover", "{exchanges:#?}");
    assert_stateless_2026(exchanges, false);
    // Its call declared the tasks extension and was answered with a task.
    let call = wire.request("tools/call");
    let extensions =
        &call["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"]["extensions"];
    assert!(
        extensions.get("io.modelcontextprotocol/tasks").is_some(),
        "{call}"
    );
    let answer = wire.answer(call);
    assert_eq!(answer["result"]["resultType"], "task", "{answer}");
    assert_eq!(answer["result"]["taskId"], created["taskId"], "{answer}");
}

/// A whole task: rmcp's polls hear each of our steps, then `completed` with the result
/// inline in the last `tasks/get` answer.
#[test]
fn rmcp_client_to_task_server_http() {
    let test = "rmcp_client_to_task_server_http";
    let Some(p) = peers::ready(test) else { return };
    let (out, wire, exchanges) = rmcp_client_to_our_server(p, test, &[], STEP_MS);
    out.assert_exit(0);
    assert_rmcp_2026_run(&out, &wire, &exchanges);
    let result = out.event("result");
    assert_eq!(
        (&result["text"], &result["isError"]),
        (&json!(RESULT), &json!(false)),
        "{out}"
    );
    assert_eq!(
        out.kinds().last().map(String::as_str),
        Some("result"),
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
    let gets = wire.with_method("tasks/get");
    let last = wire.answer(gets.last().expect("rmcp polled"));
    assert_eq!(last["result"]["status"], "completed", "{last}");
    assert_eq!(
        last["result"]["result"]["content"][0]["text"], RESULT,
        "{last}"
    );
    assert!(wire.with_method("tasks/result").is_empty(), "{out}");
}

/// `tasks/cancel` right after creation: acked, then `tasks/get` shows `cancelled`.
#[test]
fn rmcp_client_to_task_server_http_cancel() {
    let test = "rmcp_client_to_task_server_http_cancel";
    let Some(p) = peers::ready(test) else { return };
    let (out, wire, exchanges) = rmcp_client_to_our_server(p, test, &["--cancel"], SHORT_STEP_MS);
    out.assert_exit(0);
    assert_rmcp_2026_run(&out, &wire, &exchanges);
    let kinds = out.kinds();
    assert!(kinds.contains(&"cancel_acked".to_owned()), "{out}");
    assert_eq!(kinds.last().map(String::as_str), Some("cancelled"), "{out}");
    let cancel = wire.request("tasks/cancel");
    let acked = wire.answer(cancel);
    assert!(acked.get("result").is_some(), "{acked}");
    let cancels = with_method(&exchanges, "tasks/cancel");
    assert_eq!(
        cancels[0].header("mcp-name"),
        cancel["params"]["taskId"].as_str(),
        "{cancels:#?}"
    );
    assert!(out.events("result").is_empty(), "{out}");
}

/// rmcp's `Auto` lifecycle discovers us as a 2026-07-28 server over HTTP too (no fallback).
#[test]
fn rmcp_client_auto_to_task_server_http() {
    let test = "rmcp_client_auto_to_task_server_http";
    let Some(p) = peers::ready(test) else { return };
    let args = ["--lifecycle", "auto"];
    let (out, wire, exchanges) = rmcp_client_to_our_server(p, test, &args, SHORT_STEP_MS);
    out.assert_exit(0);
    assert_rmcp_2026_run(&out, &wire, &exchanges);
    assert_eq!(out.event("connected")["lifecycle"], "auto", "{out}");
    assert_eq!(out.event("result")["text"], RESULT, "{out}");
}

/// rmcp's legacy lifecycle on the same URL: `initialize` opens a 2025-11-25 session of ours
/// (its `Mcp-Session-Id` on every later request, `DELETE` at the end). rmcp 3.11 has no
/// 2025-11-25 tasks (its tasks are the 2026 extension's, which a legacy session does not
/// declare), so its `tools/call` is plain and our server answers it synchronously: the client
/// prints the result, then exits 1 because it wanted a task.
#[test]
fn rmcp_client_initialize_to_task_server_http_session() {
    let test = "rmcp_client_initialize_to_task_server_http_session";
    let Some(p) = peers::ready(test) else { return };
    let args = ["--lifecycle", "initialize"];
    let (out, wire, exchanges) = rmcp_client_to_our_server(p, test, &args, SHORT_STEP_MS);
    out.assert_exit(1);
    assert!(out.stderr.contains("answered synchronously"), "{out}");
    let connected = out.event("connected");
    assert_eq!(connected["protocolVersion"], "2025-11-25", "{out}");
    assert_eq!(connected["tasksExtension"], false, "{out}");
    assert_eq!(out.event("result")["text"], RESULT, "{out}");

    let init = wire.request("initialize");
    assert_eq!(wire.answer(init)["result"]["protocolVersion"], "2025-11-25");
    assert!(wire.request("tools/call")["params"].get("task").is_none());
    let opened = with_method(&exchanges, "initialize");
    let session = opened[0].session.clone().expect("an Mcp-Session-Id");
    let later: Vec<&Exchange> = exchanges
        .iter()
        .filter(|x| x.rpc_method() != Some("initialize"))
        .collect();
    assert!(!later.is_empty(), "{exchanges:#?}");
    for x in &later {
        assert_eq!(x.header("mcp-session-id"), Some(session.as_str()), "{x:#?}");
    }
    assert!(
        exchanges
            .iter()
            .any(|x| x.method == "DELETE" && x.status == 200),
        "{exchanges:#?}"
    );
}

// ------------------------------------------------------------------ our clients ⇒ rmcp's server

/// `rmcp-task-server --http 127.0.0.1:PORT --step-ms STEP [ARGS]`.
fn rmcp_server(p: &Peers, test: &str, step_ms: &str, args: &[&str]) -> HttpServer {
    let log = p.scratch(&format!("{test}.rmcp-server.log"));
    HttpServer::start(
        |port| p.rmcp_http_task_server(port, step_ms, args),
        Some(&log),
    )
}

/// Our `task-client ARGS --url URL` against rmcp's server through the proxy: the seed flow in
/// 2026-07-28 (each step's message heard, the result inline, no `tasks/result`), every
/// message of ours schema-valid, every POST stateless with its routing headers.
fn task_client_to_rmcp_server(test: &str, args: &[&str]) {
    let Some(p) = peers::ready(test) else { return };
    let server = rmcp_server(p, test, SHORT_STEP_MS, &[]);
    let proxy = Recorder::start(&server.url);
    let client = Argv::new(binary("task-client"))
        .args(args)
        .args(&["--url", &proxy.url]);
    let out = run(&client, DEADLINE);
    out.assert_exit(0);
    let demo = DemoClient::parse(&out);
    assert_eq!(
        demo.connected.as_deref(),
        Some("rmcp-task-server 3.11.0 (protocol 2026-07-28)"),
        "{out}"
    );
    assert_eq!(
        demo.tools.as_deref(),
        Some(r#"["long_running_task", "echo"]"#),
        "{out}"
    );
    assert!(demo.task.is_some(), "{out}");
    assert_eq!(demo.status_path(), ["working", "completed"], "{out}");
    assert_eq!(demo.messages(), STEPS, "{out}");
    assert_eq!(demo.result.as_deref(), Some(RESULT), "{out}");
    let wire = proxy.log(test);
    wire.check_conformance(Side::Client);
    assert!(wire.with_method("initialize").is_empty());
    assert!(wire.with_method("tasks/result").is_empty());
    assert!(!wire.with_method("tasks/get").is_empty());
    let exchanges = proxy.exchanges();
    assert_stateless_2026(&exchanges, true);
    assert!(
        !with_method(&exchanges, "subscriptions/listen").is_empty(),
        "{exchanges:#?}"
    );
}

/// The default era: `server/discover` finds rmcp's 2026-07-28.
#[test]
fn task_client_to_rmcp_http_server() {
    task_client_to_rmcp_server("task_client_to_rmcp_http_server", &[]);
}

/// The era named on the command line.
#[test]
fn task_client_to_rmcp_http_server_era_2026() {
    task_client_to_rmcp_server(
        "task_client_to_rmcp_http_server_era_2026",
        &["--era", "2026-07-28"],
    );
}

/// Our client API over `HttpClient` in 2026-07-28 only, against rmcp's server (started with
/// `server_args`) through the proxy: `echo` plainly; `long_running_task` as a task to its
/// inline result, `tasks/get` agreeing; one cancelled; an unknown task id refused with
/// rmcp's -32602. Every message of ours schema-valid; every POST stateless with its
/// routing headers; every `200` answer of the `content_type` expected.
fn client_api_to_rmcp_server(test: &str, server_args: &[&str], content_type: &str) {
    let Some(p) = peers::ready(test) else { return };
    let server = rmcp_server(p, test, SHORT_STEP_MS, server_args);
    let proxy = Recorder::start(&server.url);
    let runtime = tokio::runtime::Runtime::new().expect("a tokio runtime");
    runtime.block_on(async {
        let mut config = Config::new("taskwire-interop", "0.1.0");
        config.client_era = ClientEra::Only(Era::V2026_07_28);
        config.request_timeout_ms = Some(10_000);
        let client = HttpClient::new(proxy.url.as_str()).connect(ClientBuilder::new(config));
        let body = async {
            let opened = client.initialize().await.expect("server/discover");
            assert_eq!(opened.protocol_version, "2026-07-28");
            assert_eq!(opened.server.name, "rmcp-task-server");
            let echoed = client
                .call_tool("echo", json!({ "text": "hi" }))
                .await
                .expect("echo");
            assert_eq!(echoed.all_text(), "hi");

            let call = client
                .call_tool_as_task("long_running_task", json!({}), None)
                .await
                .expect("the call is accepted");
            let task = call.task.clone().expect("rmcp made a task");
            assert_eq!(task.status, TaskStatus::Working);
            let result = call.result().await.expect("the outcome");
            // The same typed result from every peer, in either era.
            assert_eq!(result, taskwire_driver::CallToolResult::text(RESULT));
            let got = client.get_task(&task.id).await.expect("tasks/get");
            assert_eq!(got.status, TaskStatus::Completed);

            let call = client
                .call_tool_as_task("long_running_task", json!({}), None)
                .await
                .expect("the call is accepted");
            let task = call.task.clone().expect("rmcp made a task");
            let cancelled = client.cancel_task(&task.id).await.expect("tasks/cancel");
            assert_eq!(cancelled.status, TaskStatus::Cancelled);
            let error = RpcError::from(call.result().await.expect_err("cancelled"));
            assert_eq!(error.message, "Task was cancelled");

            let unknown = client
                .get_task("taskwire-no-such-task")
                .await
                .map_err(RpcError::from)
                .expect_err("an unknown task");
            assert_eq!(unknown.code, -32602, "{unknown:?}");
        };
        if tokio::time::timeout(DEADLINE, body).await.is_err() {
            panic!("timed out against {}", server.command);
        }
        client.close().await;
    });
    drop(runtime);
    let wire = proxy.log(test);
    wire.check_conformance(Side::Client);
    let exchanges = proxy.exchanges();
    assert_stateless_2026(&exchanges, true);
    for x in exchanges.iter().filter(|x| x.status == 200) {
        assert!(x.content_type.starts_with(content_type), "{x:#?}");
    }
    let gets = wire.with_method("tasks/get");
    assert!(!gets.is_empty());
    assert!(wire.with_method("tasks/result").is_empty());
}

/// rmcp's default: every answer an SSE stream.
#[test]
fn client_api_to_rmcp_http_server() {
    client_api_to_rmcp_server("client_api_to_rmcp_http_server", &[], "text/event-stream");
}

/// With `json_response`: a plain reply as `application/json`.
#[test]
fn client_api_to_rmcp_http_server_json_responses() {
    client_api_to_rmcp_server(
        "client_api_to_rmcp_http_server_json_responses",
        &["--json-response"],
        "application/json",
    );
}
