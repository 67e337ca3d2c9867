//! Interop over Streamable HTTP, protocol 2025-11-25, with the official SDKs as real
//! processes (they do not speak 2026-07-28):
//!
//! - the TypeScript SDK 1.32.2 client (`ts_client.mjs --url`, `StreamableHTTPClientTransport`)
//!   and the Python SDK 1.30.0 client (`py_client.py --url`, `streamable_http_client`) ⇒ our
//!   `task-server --http`;
//! - our `task-client --url` and our client API (`taskwire_http::HttpClient`) ⇒ the
//!   TypeScript SDK's server (`ts_server.mjs --http`: `StreamableHTTPServerTransport`, one
//!   transport and `McpServer` per session) and the seed's Python server served by the Python
//!   SDK (`py_http_server.py`: `StreamableHTTPSessionManager` under uvicorn).
//!
//! Both SDK servers answer every request with an SSE stream by default; with
//! `--json-response` they answer with `application/json`. Every server here runs as a child
//! process on a free local port ([`HttpServer`]), its stderr in `<target>/tmp/interop/`.
//! Test names: `<client>_to_<server>[_<case>]`.

use serde_json::json;
use taskwire_demo::tools::DONE_MESSAGE;
use taskwire_driver::engine::{ClientEra, Config, Era, TaskStatus};
use taskwire_driver::{Client, ClientBuilder, RpcError, TaskUpdate};
use taskwire_harness::Side;
use taskwire_http::HttpClient;
use taskwire_tests::peers::demo::{assert_ran_to_completion, binary, DemoClient, RESULT, STEPS};
use taskwire_tests::peers::http::HttpServer;
use taskwire_tests::peers::wire::Log;
use taskwire_tests::peers::{self, run, Argv, Peers, Run};
use taskwire_tests::procs::{stamped, updates};

use crate::common::{cancel_on_ts_server, DEADLINE};

/// Our server's status step.
const STEP_MS: &str = "200";

/// Our `task-server --http 127.0.0.1:PORT --step-ms 200`.
fn our_server(p: &Peers, test: &str) -> HttpServer {
    let program = binary("task-server");
    let log = p.scratch(&format!("{test}.task-server.log"));
    HttpServer::start(
        |port| {
            Argv::new(program)
                .args(&["--http", &format!("127.0.0.1:{port}"), "--step-ms", STEP_MS])
                .env("RUST_LOG", "info")
        },
        Some(&log),
    )
}

/// `ts_server.mjs --http PORT ARGS`.
fn ts_server(p: &Peers, test: &str, args: &[&str]) -> HttpServer {
    let log = p.scratch(&format!("{test}.ts-server.log"));
    HttpServer::start(|port| p.ts_http_server(port, args), Some(&log))
}

/// `py_http_server.py --port PORT ARGS` (the seed's server, one-second steps).
fn py_server(p: &Peers, test: &str, args: &[&str]) -> HttpServer {
    let log = p.scratch(&format!("{test}.py-server.log"));
    HttpServer::start(|port| p.py_http_server(port, args), Some(&log))
}

/// The `session` event's `Mcp-Session-Id` (a non-empty string).
fn session_id(out: &Run) -> String {
    let id = out.event("session")["sessionId"].clone();
    match id.as_str() {
        Some(id) if !id.is_empty() => id.to_owned(),
        _ => panic!("no session id\n{out}"),
    }
}

// ------------------------------------------------------------------ SDK clients ⇒ our server

/// A whole task through the TS client's `StreamableHTTPClientTransport`: its session, our
/// status notifications on its `GET` stream, its polls, the result, its `DELETE`; every message
/// our server sent (recorded by the client) valid against the 2025-11-25 schema.
#[test]
fn ts_client_to_task_server_http_task() {
    let test = "ts_client_to_task_server_http_task";
    let Some(p) = peers::ready(test) else { return };
    let server = our_server(p, test);
    let log = p.scratch(&format!("{test}.jsonl"));
    let _ = std::fs::remove_file(&log);
    let log_arg = log.display().to_string();
    let out = run(
        &p.ts_client_url("task", &["--ttl", "60000", "--log", &log_arg], &server.url),
        DEADLINE,
    );
    assert_eq!(out.code, Some(0), "{out}");
    let init = out.event("initialized");
    assert_eq!(init["protocolVersion"], "2025-11-25", "{out}");
    assert_eq!(init["serverInfo"]["name"], "task-server", "{out}");
    assert!(
        init["capabilities"]["tasks"]["requests"]["tools"]["call"].is_object(),
        "{out}"
    );
    let session = session_id(&out);
    assert_eq!(
        out.event("tools")["taskSupport"],
        json!({ "long_running_task": "optional" }),
        "{out}"
    );
    let created = out.event("task_created");
    assert_eq!(created["status"], "working", "{out}");
    assert_eq!(created["ttl"], 60_000, "{out}");
    assert_eq!(created["pollInterval"], 500, "{out}");
    assert_ran_to_completion(&out, &out.events("status"));

    // Our status notifications reached it (on the session's GET stream): each step's message
    // and the closing one while working, then at most the completion.
    let notified = out.events("notification");
    assert!(!notified.is_empty(), "no status notification\n{out}");
    let mut working = Vec::new();
    for n in &notified {
        assert_eq!(n["method"], "notifications/tasks/status", "{out}");
        assert_eq!(n["taskId"], created["taskId"], "{out}");
        match n["status"].as_str() {
            Some("working") => working.push(n["message"].as_str().unwrap_or_default()),
            Some("completed") => assert_eq!(n["message"], DONE_MESSAGE, "{out}"),
            _ => panic!("unexpected notification {n}\n{out}"),
        }
    }
    assert_eq!(working, [&STEPS[..], &[DONE_MESSAGE]].concat(), "{out}");
    assert_eq!(
        out.event("terminated")["sessionId"],
        session.as_str(),
        "{out}"
    );

    let wire = Log::read(&log);
    wire.check_conformance(Side::Server);
    assert_eq!(
        wire.request("tools/call")["params"]["task"],
        json!({ "ttl": 60_000 })
    );
    assert_eq!(wire.with_method("tasks/result").len(), 1, "{out}");
    let result = wire.answer(wire.request("tasks/result"));
    assert_eq!(result["result"]["content"][0]["text"], RESULT, "{result}");
}

/// Cancel over HTTP: acked `cancelled`, `tasks/get` agrees, a second cancel gets -32602, no
/// result; no `completed` notification.
#[test]
fn ts_client_to_task_server_http_cancel_while_running() {
    let test = "ts_client_to_task_server_http_cancel_while_running";
    let Some(p) = peers::ready(test) else { return };
    let server = our_server(p, test);
    let log = p.scratch(&format!("{test}.jsonl"));
    let _ = std::fs::remove_file(&log);
    let log_arg = log.display().to_string();
    let out = run(
        &p.ts_client_url("cancel", &["--log", &log_arg], &server.url),
        DEADLINE,
    );
    assert_eq!(out.code, Some(0), "{out}");
    let cancels = out.events("cancel_result");
    assert_eq!(cancels.len(), 1, "{out}");
    assert_eq!(cancels[0]["status"], "cancelled", "{out}");
    assert_eq!(out.event("final_status")["status"], "cancelled", "{out}");
    let again = out
        .events("error")
        .into_iter()
        .find(|e| e["method"] == "tasks/cancel")
        .unwrap_or_else(|| panic!("no second-cancel error\n{out}"));
    assert_eq!(again["code"], -32602, "{out}");
    assert!(out.events("result").is_empty(), "{out}");
    assert!(
        out.events("notification")
            .iter()
            .all(|n| n["status"] != "completed"),
        "{out}"
    );
    session_id(&out);
    out.event("terminated");
    Log::read(&log).check_conformance(Side::Server);
}

/// The seed client's calls through the Python SDK's `streamable_http_client`.
#[test]
fn py_client_to_task_server_http() {
    let test = "py_client_to_task_server_http";
    let Some(p) = peers::ready(test) else { return };
    let server = our_server(p, test);
    let out = run(&p.py_client_url(&[], &server.url), DEADLINE);
    assert_eq!(out.code, Some(0), "{out}");
    let init = out.event("initialized");
    assert_eq!(init["protocolVersion"], "2025-11-25", "{out}");
    assert_eq!(init["serverInfo"]["name"], "task-server", "{out}");
    assert!(
        init["capabilities"]["tasks"]["requests"]["tools"]["call"].is_object(),
        "{out}"
    );
    session_id(&out);
    assert_eq!(
        out.event("tools")["names"],
        json!(["long_running_task"]),
        "{out}"
    );
    let created = out.event("task_created");
    assert_eq!(created["status"], "working", "{out}");
    assert_eq!(created["ttl"], 60_000, "{out}");
    assert_eq!(created["pollInterval"], 500, "{out}");
    assert_ran_to_completion(&out, &out.events("status"));
}

/// The MCP Inspector 2.12 CLI over Streamable HTTP (`--transport http`) against
/// `task-server --http --required-tool`: it lists our tools, and runs the required tool as a
/// task (it declares tasks under `capabilities.extensions`) to its result.
#[test]
fn inspector_cli_to_task_server_http_lists_and_runs_a_task() {
    let test = "inspector_cli_to_task_server_http_lists_and_runs_a_task";
    let Some(p) = peers::ready(test) else { return };
    let log = p.scratch(&format!("{test}.task-server.log"));
    let server = HttpServer::start(
        |port| {
            Argv::new(binary("task-server")).args(&[
                "--http",
                &format!("127.0.0.1:{port}"),
                "--required-tool",
                "--step-ms",
                STEP_MS,
            ])
        },
        Some(&log),
    );
    let inspector = |args: &[&str]| {
        let out = run(
            &p.inspector(
                &Argv::new(&server.url),
                &[&["--transport", "http"], args].concat(),
            ),
            DEADLINE,
        );
        out.assert_exit(0);
        let printed: serde_json::Value = serde_json::from_str(&out.stdout)
            .unwrap_or_else(|e| panic!("the Inspector printed no JSON ({e})\n{out}"));
        printed
    };
    let listed = inspector(&["--method", "tools/list"]);
    let names: Vec<&str> = listed["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(names, ["long_running_task", "long_running_task_required"]);
    let called = inspector(&[
        "--method",
        "tools/call",
        "--tool-name",
        "long_running_task_required",
    ]);
    assert_eq!(called["content"][0]["text"], RESULT, "{called}");
    assert!(
        called["_meta"]["io.modelcontextprotocol/related-task"]["taskId"].is_string(),
        "it ran as a task: {called}"
    );
}

// ------------------------------------------------------------------ our clients ⇒ SDK servers

/// `task-client ARGS --url URL`.
fn task_client(url: &str, args: &[&str]) -> Argv {
    Argv::new(binary("task-client"))
        .args(args)
        .args(&["--url", url])
}

/// The seed flow as `task-client` printed it: connected to `server` in 2025-11-25, the tool
/// listed, statuses `working` then `completed` with every step's message, the result.
fn assert_demo_flow(out: &Run, server: &str) -> DemoClient {
    assert_eq!(out.code, Some(0), "{out}");
    let demo = DemoClient::parse(out);
    let connected = format!("{server} (protocol 2025-11-25)");
    assert_eq!(demo.connected.as_deref(), Some(connected.as_str()), "{out}");
    assert_eq!(
        demo.tools.as_deref(),
        Some(r#"["long_running_task"]"#),
        "{out}"
    );
    assert!(demo.task.is_some(), "{out}");
    assert_eq!(demo.status_path(), ["working", "completed"], "{out}");
    assert_eq!(demo.messages(), STEPS, "{out}");
    assert_eq!(demo.result.as_deref(), Some(RESULT), "{out}");
    demo
}

/// Against the TS SDK's server as its examples set it up (every answer an SSE stream). The
/// `initialize` answer arrives on an SSE stream with the `Mcp-Session-Id` header, which our
/// client must keep (it once kept it only from a JSON answer).
#[test]
fn task_client_to_ts_http_server() {
    let test = "task_client_to_ts_http_server";
    let Some(p) = peers::ready(test) else { return };
    let server = ts_server(p, test, &["--step-ms", "200"]);
    let out = run(&task_client(&server.url, &[]), DEADLINE);
    assert_demo_flow(&out, "taskwire-ts-peer-server 0.1.0");
}

/// The same with `enableJsonResponse`; our client's `server/discover` (no session) gets the
/// server's 400 with `"id":null` and falls back to `initialize` at once.
#[test]
fn task_client_to_ts_http_server_json_responses() {
    let test = "task_client_to_ts_http_server_json_responses";
    let Some(p) = peers::ready(test) else { return };
    let server = ts_server(p, test, &["--json-response", "--step-ms", "200"]);
    let out = run(&task_client(&server.url, &[]), DEADLINE);
    assert_demo_flow(&out, "taskwire-ts-peer-server 0.1.0");
    let connected = out
        .stdout
        .lines()
        .find(|l| l.contains("] connected to "))
        .unwrap_or_else(|| panic!("no connected line\n{out}"));
    assert!(stamped(connected).0 < 2.0, "a slow fallback\n{out}");
}

/// Against the seed's server on the Python SDK's session manager (SSE answers by default).
#[test]
fn task_client_to_py_http_server() {
    let test = "task_client_to_py_http_server";
    let Some(p) = peers::ready(test) else { return };
    let server = py_server(p, test, &[]);
    let out = run(
        &task_client(
            &server.url,
            &["--era", "2025-11-25", "--request-timeout-ms", "10000"],
        ),
        DEADLINE,
    );
    let demo = assert_demo_flow(&out, "task-server 1.30.0");
    assert!(
        demo.task.as_deref().is_some_and(|t| t.contains(':')),
        "{out}"
    );
}

/// The same with `json_response=True`.
#[test]
fn task_client_to_py_http_server_json_responses() {
    let test = "task_client_to_py_http_server_json_responses";
    let Some(p) = peers::ready(test) else { return };
    let server = py_server(p, test, &["--json-response"]);
    let out = run(
        &task_client(
            &server.url,
            &["--era", "2025-11-25", "--request-timeout-ms", "10000"],
        ),
        DEADLINE,
    );
    assert_demo_flow(&out, "task-server 1.30.0");
}

/// The default era (`server/discover` first) against the Python SDK's server: the POST
/// without a session is refused at once (`400`, a JSON-RPC error whose id is the SDK's
/// `"server-error"`), so the client falls back to `initialize` at once too (not after
/// `discover_timeout_ms`, 5 s).
#[test]
fn task_client_auto_era_to_py_http_server_falls_back_at_once() {
    let test = "task_client_auto_era_to_py_http_server_falls_back_at_once";
    let Some(p) = peers::ready(test) else { return };
    let server = py_server(p, test, &["--json-response"]);
    let out = run(
        &task_client(&server.url, &["--request-timeout-ms", "10000"]),
        DEADLINE,
    );
    assert_demo_flow(&out, "task-server 1.30.0");
    let connected = out
        .stdout
        .lines()
        .find(|l| l.contains("] connected to "))
        .unwrap_or_else(|| panic!("no connected line\n{out}"));
    assert!(
        stamped(connected).0 < 2.0,
        "the refused server/discover was not taken for a refusal\n{out}"
    );
}

/// Runs `body` with our client API over HTTP (tokio) against `server`, after `initialize`
/// (checked to name `server_name` in 2025-11-25). Requests time out after 10 s locally.
fn with_http_client<F, Fut>(server: &HttpServer, era: ClientEra, server_name: &str, body: F)
where
    F: FnOnce(Client) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    let rt = tokio::runtime::Runtime::new().expect("a tokio runtime");
    rt.block_on(async {
        let mut config = Config::new("taskwire-interop", "0.1.0");
        config.client_era = era;
        config.request_timeout_ms = Some(10_000);
        let client = HttpClient::new(server.url.as_str()).connect(ClientBuilder::new(config));
        let run = async {
            let init = client.initialize().await.expect("initialize");
            assert_eq!(init.protocol_version, "2025-11-25");
            assert_eq!(init.server.name, server_name);
            body(client.clone()).await;
        };
        if tokio::time::timeout(DEADLINE, run).await.is_err() {
            panic!("timed out against {}", server.command);
        }
        client.close().await;
    });
}

/// One task through our client API: created `working` with the ttl asked for, statuses from
/// notifications and polls (only the seed's messages), `completed`, then the result.
async fn one_task(client: &Client) {
    let call = client
        .call_tool_as_task("long_running_task", json!({}), Some(60_000))
        .await
        .expect("the task call");
    let task = call.task.clone().expect("a task");
    assert_eq!(task.status, TaskStatus::Working);
    assert_eq!(task.ttl_ms, Some(60_000));
    let seen = updates(&call).await;
    let (result, statuses) = seen.split_last().expect("updates");
    assert_eq!(result, &format!("result: {RESULT}"), "{seen:?}");
    let (done, working) = statuses.split_last().expect("statuses");
    assert_eq!(done, "completed: 处理步骤 2...", "{seen:?}");
    for s in working {
        let message = s
            .strip_prefix("working: ")
            .unwrap_or_else(|| panic!("{s}: {seen:?}"));
        assert!(message.is_empty() || STEPS.contains(&message), "{seen:?}");
    }
}

/// One task through `HttpClient` against the SDK's default (SSE answers).
#[test]
fn client_api_to_ts_http_server() {
    let test = "client_api_to_ts_http_server";
    let Some(p) = peers::ready(test) else { return };
    let server = ts_server(p, test, &["--step-ms", "200"]);
    with_http_client(
        &server,
        ClientEra::Auto,
        "taskwire-ts-peer-server",
        |client| async move { one_task(&client).await },
    );
}

/// With JSON answers: a task, `tasks/list` (this session's tasks), cancel while running (the
/// SDK's message), a second cancel (-32602 with the SDK's prefix), an unknown id, and a failing
/// tool (`failed`, then its `isError` result).
#[test]
fn client_api_to_ts_http_server_json_responses() {
    let test = "client_api_to_ts_http_server_json_responses";
    let Some(p) = peers::ready(test) else { return };
    let server = ts_server(
        p,
        test,
        &["--json-response", "--failing", "--step-ms", "200"],
    );
    with_http_client(
        &server,
        ClientEra::Auto,
        "taskwire-ts-peer-server",
        |client| async move {
            one_task(&client).await;

            let running = client
                .call_tool_as_task("long_running_task", json!({}), Some(60_000))
                .await
                .unwrap();
            let id = running.task.clone().unwrap().id;
            let listed = client.list_tasks().await.unwrap();
            let mine: Vec<_> = listed.iter().filter(|t| t.id == id).collect();
            assert_eq!(mine.len(), 1, "{listed:?}");
            assert_eq!(mine[0].status, TaskStatus::Working);
            assert_eq!(
                listed.len(),
                2,
                "the finished task and this one: {listed:?}"
            );
            cancel_on_ts_server(&client, &id).await;
            let mut last = None;
            while let Ok(update) = running.updates.recv().await {
                if let TaskUpdate::Status(t) = update {
                    last = Some(t.status);
                }
            }
            assert_eq!(last, Some(TaskStatus::Cancelled));

            let failing = client
                .call_tool_as_task("failing_task", json!({}), Some(60_000))
                .await
                .unwrap();
            let mut statuses = Vec::new();
            let mut outcome = None;
            while let Ok(update) = failing.updates.recv().await {
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

const ONLY_2025: ClientEra = ClientEra::Only(Era::V2025_11_25);

/// One task through `HttpClient` against the Python SDK's default (SSE answers).
#[test]
fn client_api_to_py_http_server() {
    let test = "client_api_to_py_http_server";
    let Some(p) = peers::ready(test) else { return };
    let server = py_server(p, test, &[]);
    with_http_client(&server, ONLY_2025, "task-server", |client| async move {
        one_task(&client).await
    });
}

/// With JSON answers: `"task":{}` gets a Task without `ttl` (unlimited), then the result;
/// `tasks/list` (this session's tasks only: no `demo-task`), cancel while running, a second
/// cancel and an unknown id (-32602 with the SDK's messages).
#[test]
fn client_api_to_py_http_server_json_responses() {
    let test = "client_api_to_py_http_server_json_responses";
    let Some(p) = peers::ready(test) else { return };
    let server = py_server(p, test, &["--json-response"]);
    with_http_client(&server, ONLY_2025, "task-server", |client| async move {
        let call = client
            .call_tool_as_task("long_running_task", json!({}), None)
            .await
            .unwrap();
        assert_eq!(call.task.as_ref().unwrap().ttl_ms, None);
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
        assert!(!ids.contains(&"demo-task"), "{ids:?}");
        let cancelled = client.cancel_task(&id).await.unwrap();
        assert_eq!(cancelled.status, TaskStatus::Cancelled);
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
        let unknown = client
            .get_task("taskwire-no-such-task")
            .await
            .map_err(RpcError::from)
            .unwrap_err();
        assert_eq!(unknown.code, -32602, "{unknown:?}");
        assert_eq!(unknown.message, "Task not found: taskwire-no-such-task");
        while running.updates.recv().await.is_ok() {}
    });
}
