//! Interop with `@modelcontextprotocol/ext-tasks` 0.2.2, the official requester of both task
//! eras (on the TypeScript SDK v2 client 2.3.1; what MCP Inspector 2.12 is built on), against
//! our `task-server`, as real processes (`ext_tasks_client.mjs`):
//!
//! - in 2025-11-25 (the SDK's `initialize`; ext-tasks' "v1" generation: `params.task`,
//!   `tasks/get`, `tasks/result`, `tasks/cancel`) and in 2026-07-28 (`server/discover`; "v2":
//!   the call answered with a task, `tasks/get` with the outcome inline), on stdio and over
//!   Streamable HTTP: a task to its result, one cancelled;
//! - `resumeTask` after the client process is restarted: a running task by the next process
//!   over HTTP in 2026-07-28 (every request is its own, so tasks outlive connections); in
//!   2025-11-25 a finished task from a stdio server with a durable store (a stdio server's
//!   running work ends with the client that started it), and over HTTP the refusal a new
//!   session gets (a 2025-11-25 task belongs to the session that made it).
//!
//! Every message our server sends is checked against the schema of its era (`tap.py` on stdio,
//! the recording proxy over HTTP). Test names: `ext_tasks_[resume_]to_<server>_<era>`.

use serde_json::Value;
use taskwire_harness::Side;
use taskwire_tests::peers::demo::{assert_ran_to_completion, binary};
use taskwire_tests::peers::http::HttpServer;
use taskwire_tests::peers::http_tap::{assert_one_session, with_method, Recorder};
use taskwire_tests::peers::wire::Log;
use taskwire_tests::peers::{self, run, Argv, Run};

use crate::common::DEADLINE;

const V2025: &str = "2025-11-25";
const V2026: &str = "2026-07-28";
/// Our server's status step: longer than our 500 ms poll interval, so that a v2 requester
/// (which only polls) sees the task working before it completes.
const STEP_MS: &str = "600";

/// ext-tasks connected in `era`, to `task-server`, with that era's task generation.
fn assert_connected(out: &Run, era: &str) {
    let connected = out.event("connected");
    assert_eq!(connected["protocolVersion"], era, "{out}");
    assert_eq!(connected["server"]["name"], "task-server", "{out}");
    let generation = if era == V2025 { "v1" } else { "v2" };
    assert_eq!(connected["generation"], generation, "{out}");
}

/// The task views ext-tasks printed for `id`: `working` (no message yet, a step, or our
/// closing message), then `completed` with our closing message; then our result.
fn assert_completed(out: &Run, id: &Value) {
    let views: Vec<Value> = out
        .events("task")
        .into_iter()
        .filter(|v| &v["taskId"] == id)
        .collect();
    assert_ran_to_completion(out, &views);
}

/// `run`: the first task to its result, the second cancelled; exit 0.
fn assert_run(out: &Run, era: &str) {
    out.assert_exit(0);
    assert_connected(out, era);
    let created = out.events("created");
    assert_eq!(created.len(), 2, "{out}");
    for c in &created {
        assert_eq!(c["kind"], "task", "{out}");
    }
    assert_completed(out, &created[0]["taskId"]);
    assert_eq!(
        out.event("cancelled")["taskId"],
        created[1]["taskId"],
        "{out}"
    );
}

/// What ext-tasks sent and we answered, by era; every message of ours schema-valid.
fn assert_wire(wire: &Log, era: &str) {
    wire.check_conformance(Side::Server);
    let call = wire.request("tools/call");
    let answer = wire.answer(call);
    if era == V2025 {
        assert!(call["params"]["task"].is_object(), "{call}");
        assert!(answer["result"]["task"]["taskId"].is_string(), "{answer}");
        assert!(!wire.with_method("tasks/result").is_empty());
    } else {
        assert!(wire.with_method("initialize").is_empty());
        let extensions =
            &call["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"]["extensions"];
        assert!(
            extensions.get("io.modelcontextprotocol/tasks").is_some(),
            "{call}"
        );
        assert_eq!(answer["result"]["resultType"], "task", "{answer}");
        assert!(wire.with_method("tasks/result").is_empty());
    }
    let cancel = wire.request("tasks/cancel");
    assert!(wire.answer(cancel).get("result").is_some(), "{cancel}");
}

/// `run` on stdio against `task-server --step-ms 600`, through `tap.py`.
fn ext_tasks_to_task_server(era: &str, test: &str) {
    let Some(p) = peers::ready(test) else { return };
    let log = p.scratch(&format!("{test}.jsonl"));
    let server = Argv::new(binary("task-server")).args(&["--step-ms", STEP_MS]);
    let out = run(
        &p.ext_tasks_client("run", era, &[], &p.tap(&log, &server)),
        DEADLINE,
    );
    assert_run(&out, era);
    assert_wire(&Log::read(&log), era);
}

#[test]
fn ext_tasks_to_task_server_2025() {
    ext_tasks_to_task_server(V2025, "ext_tasks_to_task_server_2025");
}

#[test]
fn ext_tasks_to_task_server_2026() {
    ext_tasks_to_task_server(V2026, "ext_tasks_to_task_server_2026");
}

/// `run` over Streamable HTTP against `task-server --http`, through the recording proxy. In
/// 2026-07-28 every `tools/call` and `tasks/*` goes out on the SDK's transport, which sets
/// `Mcp-Method` and `Mcp-Name` from the body.
fn ext_tasks_to_task_server_http(era: &str, test: &str) {
    let Some(p) = peers::ready(test) else { return };
    let server = HttpServer::task_server(p, test, &["--step-ms", STEP_MS]);
    let proxy = Recorder::start(&server.url);
    let out = run(
        &p.ext_tasks_client_url("run", era, &[], &proxy.url),
        DEADLINE,
    );
    assert_run(&out, era);
    assert_wire(&proxy.log(test), era);
    let exchanges = proxy.exchanges();
    if era == V2026 {
        for x in exchanges
            .iter()
            .filter(|x| x.body.as_ref().is_some_and(|b| b.get("id").is_some()))
        {
            assert_eq!(x.header("mcp-session-id"), None, "{x:#?}");
            assert_eq!(x.header("mcp-protocol-version"), Some(V2026), "{x:#?}");
            assert_eq!(x.header("mcp-method"), x.rpc_method(), "{x:#?}");
            let body = x.body.as_ref().expect("a JSON body");
            let name = match x.rpc_method() {
                Some("tools/call") => body["params"]["name"].as_str(),
                Some("tasks/get" | "tasks/cancel") => body["params"]["taskId"].as_str(),
                _ => continue,
            };
            assert_eq!(x.header("mcp-name"), name, "{x:#?}");
        }
    } else {
        assert_one_session(&exchanges);
    }
}

#[test]
fn ext_tasks_to_task_server_http_2025() {
    ext_tasks_to_task_server_http(V2025, "ext_tasks_to_task_server_http_2025");
}

#[test]
fn ext_tasks_to_task_server_http_2026() {
    ext_tasks_to_task_server_http(V2026, "ext_tasks_to_task_server_http_2026");
}

/// The reference a `start` run printed (it exited 0, having created a task).
fn handed_off(out: &Run) -> String {
    out.assert_exit(0);
    let reference = out.event("reference")["reference"].clone();
    assert_eq!(reference["taskId"], out.event("created")["taskId"], "{out}");
    assert_eq!(reference["originalOperation"], "tools/call", "{out}");
    reference.to_string()
}

/// 2026-07-28 over HTTP: one process starts a task and exits while it runs; the next resumes
/// it from the serialized reference, sees it still working, and reads its result.
#[test]
fn ext_tasks_resume_to_task_server_http_2026() {
    let test = "ext_tasks_resume_to_task_server_http_2026";
    let Some(p) = peers::ready(test) else { return };
    // Three seconds of work: the next process (Node's start included) resumes it running.
    let server = HttpServer::task_server(p, test, &["--step-ms", "1000"]);
    let proxy = Recorder::start(&server.url);
    let started = run(
        &p.ext_tasks_client_url("start", V2026, &[], &proxy.url),
        DEADLINE,
    );
    let reference = handed_off(&started);
    assert!(reference.contains(r#""generation":"v2""#), "{reference}");
    let resumed = run(
        &p.ext_tasks_client_url("resume", V2026, &["--ref", &reference], &proxy.url),
        DEADLINE,
    );
    resumed.assert_exit(0);
    assert_connected(&resumed, V2026);
    let id = started.event("created")["taskId"].clone();
    assert_eq!(resumed.event("created")["taskId"], id, "{resumed}");
    assert_completed(&resumed, &id);
    let still_working = resumed
        .events("task")
        .iter()
        .any(|v| v["status"] == "working");
    assert!(still_working, "resumed after it ended: {resumed}");
    proxy.log(test).check_conformance(Side::Server);
}

/// 2025-11-25 on stdio, with our server keeping its tasks in SQLite: one process (and the
/// server it started) runs a task until it completes and exits without reading its result;
/// the next one starts the server again on the same store and resumes the task to its result
/// (`tasks/get`, then `tasks/result`).
#[test]
fn ext_tasks_resume_to_durable_task_server_2025() {
    let test = "ext_tasks_resume_to_durable_task_server_2025";
    let Some(p) = peers::ready(test) else { return };
    let store = p.scratch(&format!("{test}.sqlite"));
    let _ = std::fs::remove_file(&store);
    let log = p.scratch(&format!("{test}.jsonl"));
    let store = format!("sqlite:{}", store.display());
    let server = Argv::new(binary("task-server")).args(&["--step-ms", "100", "--store", &store]);
    // The endpoint the references are scoped to: the server's store, whatever its command.
    let args = ["--until", "completed", "--endpoint", &store];
    let started = run(
        &p.ext_tasks_client("start", V2025, &args, &server),
        DEADLINE,
    );
    let reference = handed_off(&started);
    assert!(reference.contains(r#""generation":"v1""#), "{reference}");
    let resume = ["--ref", reference.as_str(), "--endpoint", &store];
    let resumed = run(
        &p.ext_tasks_client("resume", V2025, &resume, &p.tap(&log, &server)),
        DEADLINE,
    );
    resumed.assert_exit(0);
    assert_connected(&resumed, V2025);
    assert_completed(&resumed, &started.event("created")["taskId"]);
    let wire = Log::read(&log);
    wire.check_conformance(Side::Server);
    assert!(
        wire.with_method("tools/call").is_empty(),
        "resumed, not called again"
    );
    assert!(!wire.with_method("tasks/result").is_empty());
}

/// 2025-11-25 over HTTP: a task belongs to the session that made it, so the next process's
/// session cannot resume it: `tasks/get` is refused with -32602, as for an unknown task.
#[test]
fn ext_tasks_resume_to_task_server_http_2025_new_session_refused() {
    let test = "ext_tasks_resume_to_task_server_http_2025_new_session_refused";
    let Some(p) = peers::ready(test) else { return };
    let server = HttpServer::task_server(p, test, &["--step-ms", STEP_MS]);
    let proxy = Recorder::start(&server.url);
    let started = run(
        &p.ext_tasks_client_url("start", V2025, &[], &proxy.url),
        DEADLINE,
    );
    let reference = handed_off(&started);
    let resumed = run(
        &p.ext_tasks_client_url("resume", V2025, &["--ref", &reference], &proxy.url),
        DEADLINE,
    );
    resumed.assert_exit(1);
    assert_eq!(resumed.event("error")["code"], -32602, "{resumed}");
    let exchanges = proxy.exchanges();
    let sessions: Vec<_> = exchanges
        .iter()
        .filter(|x| x.rpc_method() == Some("initialize"))
        .filter_map(|x| x.session.clone())
        .collect();
    assert_eq!(sessions.len(), 2, "{exchanges:#?}");
    assert_ne!(sessions[0], sessions[1]);
    let get = with_method(&exchanges, "tasks/get")[0];
    assert_eq!(
        get.header("mcp-session-id"),
        Some(sessions[1].as_str()),
        "{get:#?}"
    );
    proxy.log(test).check_conformance(Side::Server);
}
