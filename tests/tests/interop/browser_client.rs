//! A web page as the MCP client of our server, in a real browser: headless Chromium (the
//! system `chromium`, driven by playwright-core through `tests/peers/browser_client.mjs`)
//! opens a page served from another origin (`http://127.0.0.1:PAGE_PORT`, the script's own
//! server), whose TypeScript SDK 1.32.2 client connects with `StreamableHTTPClientTransport`
//! (the browser's fetch, so CORS applies) to `task-server --http --cors-origin ORIGIN`, runs
//! `long_running_task` as a task to its result with the SDK's experimental tasks API and ends
//! the session with `DELETE` (issue 41). Without the CORS flag, or allowing another origin,
//! the browser blocks the page's first request and no session opens.
//!
//! Test names: `browser_client_<case>`.

use std::time::Duration;

use serde_json::{json, Value};
use taskwire_demo::tools::{DONE_MESSAGE, RESULT_TEXT, STEPS, TOOL};
use taskwire_tests::peers::http::{free_port, HttpServer};
use taskwire_tests::peers::{self, run, Argv, Peers};

/// The demo's status step: short, the page polls the task to its end.
const STEP_MS: &str = "200";

/// How long the browser script may run in all (the build, the browser, the task).
const SCRIPT_DEADLINE: Duration = Duration::from_secs(120);

/// What the browser saw: the page at `page_port` running its client against `server`
/// (panics, with the script's and the server's output, when the script fails or prints no
/// summary).
fn page_against(p: &Peers, server: &HttpServer, page_port: u16) -> Value {
    let out = run(
        &Argv::new("node")
            .env("TASKWIRE_PEERS_NODE", &p.node_dir)
            .arg(p.kit.join("browser_client.mjs"))
            .args(&[
                "--server",
                &server.url,
                "--page-port",
                &page_port.to_string(),
                "--tool",
                TOOL,
            ]),
        SCRIPT_DEADLINE,
    );
    assert_eq!(
        out.code,
        Some(0),
        "the browser script failed\n{out}{}",
        server.log()
    );
    serde_json::from_str(out.stdout.trim()).unwrap_or_else(|e| {
        panic!(
            "the script printed no JSON summary ({e})\n{out}{}",
            server.log()
        )
    })
}

/// Whether the page's console says the browser blocked a request by CORS.
fn blocked_by_cors(summary: &Value) -> bool {
    summary["consoleErrors"].as_array().is_some_and(|errors| {
        errors
            .iter()
            .filter_map(Value::as_str)
            .any(|e| e.contains("blocked by CORS policy"))
    })
}

#[test]
fn browser_client_runs_a_task_when_its_origin_is_allowed() {
    let test = "browser_client_runs_a_task_when_its_origin_is_allowed";
    let Some(p) = peers::ready(test) else { return };
    let page_port = free_port();
    let origin = format!("http://127.0.0.1:{page_port}");
    let server =
        HttpServer::task_server(p, test, &["--step-ms", STEP_MS, "--cors-origin", &origin]);
    let summary = page_against(p, &server, page_port);
    let show = |what: &str| format!("{what}\n{summary:#}\n{}", server.log());

    assert_eq!(summary["pageOrigin"], origin.as_str());
    assert_eq!(
        summary["error"],
        Value::Null,
        "{}",
        show("the page's error")
    );
    assert_eq!(
        summary["steps"],
        json!(["connect", "tools/list", "callToolStream", "DELETE"]),
        "{}",
        show("steps")
    );
    // The session id came through (Access-Control-Expose-Headers), and every later request
    // carried it: the session's tools, its task and its DELETE.
    let connected = &summary["connected"];
    assert_eq!(connected["protocolVersion"], "2025-11-25");
    assert_eq!(connected["serverName"], "task-server");
    assert_eq!(connected["tasks"], true, "{}", show("task support"));
    assert!(
        connected["sessionId"]
            .as_str()
            .is_some_and(|s| !s.is_empty()),
        "{}",
        show("no Mcp-Session-Id read")
    );
    assert_eq!(
        summary["tools"],
        json!([{"name": TOOL, "taskSupport": "optional"}])
    );

    let task = &summary["task"];
    assert!(task["taskId"].as_str().is_some_and(|id| !id.is_empty()));
    let statuses = task["statuses"].as_array().expect("statuses");
    assert_eq!(
        statuses.first(),
        Some(&json!("working")),
        "{}",
        show("statuses")
    );
    assert_eq!(
        statuses.last(),
        Some(&json!("completed")),
        "{}",
        show("statuses")
    );
    let messages: Vec<&str> = task["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(messages.last(), Some(&DONE_MESSAGE), "{}", show("messages"));
    assert!(
        messages
            .iter()
            .all(|m| STEPS.contains(m) || *m == DONE_MESSAGE),
        "{}",
        show("messages")
    );
    assert_eq!(task["result"], RESULT_TEXT, "{}", show("result"));
    assert_eq!(task["isError"], false);
    assert_eq!(summary["terminated"], true, "{}", show("DELETE"));
    assert!(!blocked_by_cors(&summary), "{}", show("a request blocked"));
    let log = server.log();
    assert!(log.contains("session opened"), "{log}");
    assert!(log.contains("session closed"), "{log}");
}

/// The page's first request (the `initialize` POST, after its preflight) is blocked: with
/// no CORS policy, or one allowing another origin.
fn blocked(test: &str, cors: &[&str]) {
    let Some(p) = peers::ready(test) else { return };
    let page_port = free_port();
    let mut args = vec!["--step-ms", STEP_MS];
    args.extend_from_slice(cors);
    let server = HttpServer::task_server(p, test, &args);
    let summary = page_against(p, &server, page_port);
    let show = |what: &str| format!("{what}\n{summary:#}\n{}", server.log());

    assert_eq!(summary["steps"], json!([]), "{}", show("steps"));
    assert_eq!(summary["error"]["step"], "connect", "{}", show("error"));
    assert_eq!(summary["error"]["name"], "TypeError", "{}", show("error"));
    assert_eq!(summary["error"]["message"], "Failed to fetch");
    assert!(blocked_by_cors(&summary), "{}", show("no CORS error"));
    let log = server.log();
    assert!(!log.contains("session opened"), "{log}");
}

#[test]
fn browser_client_is_blocked_without_cors() {
    blocked("browser_client_is_blocked_without_cors", &[]);
}

#[test]
fn browser_client_is_blocked_when_another_origin_is_allowed() {
    blocked(
        "browser_client_is_blocked_when_another_origin_is_allowed",
        &["--cors-origin", "http://127.0.0.1:1"],
    );
}
