//! The task dashboard in a real browser: headless Chromium (the system `chromium`, driven by
//! playwright-core through `tests/peers/dashboard.mjs`) opens `/tasks` of `task-server --http
//! ADDR --dashboard --extra-tools` while our client API (`HttpClient`) runs tasks there: the
//! page shows them appear, change and complete, and an operator's Cancel stops a task that
//! waits for its input (the client sees it cancelled); and, with `--auth-*`, the page asks
//! for a token, refuses one without the dashboard's scope and goes live with one that has it
//! (issue 41). Screenshots under `<target>/tmp/interop/<test>/screenshots/`.
//!
//! Test names: `dashboard_<case>`.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use taskwire_demo::extra_tools::{CONFIRM_TASK, PROGRESS_TASK};
use taskwire_demo::tools::{DONE_MESSAGE, RESULT_TEXT, STEPS, TOOL};
use taskwire_driver::engine::RpcError;
use taskwire_driver::{ClientBuilder, Config, ElicitationAnswer, TaskStatus, TaskUpdate};
use taskwire_http::HttpClient;
use taskwire_tests::oauth::{MockIssuer, TestKey};
use taskwire_tests::peers::demo::binary;
use taskwire_tests::peers::http::HttpServer;
use taskwire_tests::peers::{self, run, Argv, Peers, Run};

/// The demo's step: the page sees each status message of a task for most of a second.
const STEP_MS: &str = "700";

/// How long the browser script may run in all.
const SCRIPT_DEADLINE: Duration = Duration::from_secs(180);

/// How many steps the progress task takes.
const PROGRESS_STEPS: u32 = 6;

/// `dashboard.mjs` against the dashboard at `url`, its screenshots in `shots`, with `extra`
/// options.
fn watch(p: &Peers, url: &str, shots: &Path, extra: &[&str]) -> Run {
    run(
        &Argv::new("node")
            .env("TASKWIRE_PEERS_NODE", &p.node_dir)
            .arg(p.kit.join("dashboard.mjs"))
            .args(&["--url", url, "--shots"])
            .arg(shots)
            .args(extra),
        SCRIPT_DEADLINE,
    )
}

/// The script's JSON summary, once it succeeded (panics with its output and the server's
/// log otherwise).
fn summary_of(out: &Run, server: &HttpServer) -> Value {
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

/// A fresh scratch directory for `test`.
fn scratch(p: &Peers, test: &str) -> std::path::PathBuf {
    let dir = p.scratch(test);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create the scratch directory");
    dir
}

/// Waits until the server's log says that a browser reads the dashboard's feed (or the
/// script has ended, which its summary then explains).
fn wait_for_the_page(server: &HttpServer, script: &std::thread::JoinHandle<Run>) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !server
        .log()
        .contains("dashboard: a browser opened the live feed")
    {
        if script.is_finished() {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "no browser read the dashboard within 60 s{}",
            server.log()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Our client at `url`: a long_running_task and a progress_task to their results, then a
/// confirm_task whose question it never answers, until its end. The cancelled task's id and
/// its status message as `tasks/get` shows it.
fn run_tasks(url: &str) -> (String, Option<String>) {
    let runtime = tokio::runtime::Runtime::new().expect("a tokio runtime");
    runtime.block_on(async {
        let builder = ClientBuilder::new(Config::new("dashboard-interop", "1"))
            .on_elicitation(|_| futures::future::pending::<Result<ElicitationAnswer, RpcError>>());
        let client = HttpClient::new(url).connect(builder);
        client.initialize().await.expect("connected");
        let ttl = Some(60_000);
        let ran = client.call_tool_as_task(TOOL, json!({}), ttl).await;
        let steps = json!({ "steps": PROGRESS_STEPS });
        let progressed = client.call_tool_as_task(PROGRESS_TASK, steps, ttl).await;
        let ran = ran.expect("a task").result();
        let progressed = progressed.expect("a task").result();
        let (ran, progressed) = futures::join!(ran, progressed);
        assert_eq!(ran.expect("its result").all_text(), RESULT_TEXT);
        let done = format!("{PROGRESS_STEPS} steps done");
        assert_eq!(progressed.expect("its result").all_text(), done);

        let question = json!({ "question": "Ship it?" });
        let asking = client
            .call_tool_as_task(CONFIRM_TASK, question, ttl)
            .await
            .expect("a task");
        let id = asking.task.clone().expect("a task").id.to_string();
        let mut statuses = Vec::new();
        let ended = tokio::time::timeout(Duration::from_secs(120), async {
            while let Ok(update) = asking.updates.recv().await {
                match update {
                    TaskUpdate::Status(task) => statuses.push(task.status),
                    TaskUpdate::Result(outcome) => return outcome,
                    _ => {}
                }
            }
            panic!("the call ended without an outcome")
        })
        .await
        .expect("the operator cancelled the task within 120 s");
        assert!(ended.is_err(), "a cancelled task has no result: {ended:?}");
        assert_eq!(
            statuses.last(),
            Some(&TaskStatus::Cancelled),
            "{statuses:?}"
        );
        let seen = client.get_task(&id).await.expect("tasks/get");
        assert_eq!(seen.status, TaskStatus::Cancelled);
        client.close().await;
        (id, seen.status_message)
    })
}

/// The views of `id`'s row the page recorded.
fn views<'a>(summary: &'a Value, id: &str) -> &'a Vec<Value> {
    summary["seen"][id]
        .as_array()
        .unwrap_or_else(|| panic!("no row {id} seen: {summary:#}"))
}

#[test]
fn dashboard_shows_tasks_live_and_cancels_one() {
    let test = "dashboard_shows_tasks_live_and_cancels_one";
    let Some(p) = peers::ready(test) else { return };
    let dir = scratch(p, test);
    let server = HttpServer::start(
        |port| {
            Argv::new(binary("task-server"))
                .args(&["--http", &format!("127.0.0.1:{port}"), "--dashboard"])
                .args(&["--extra-tools", "--step-ms", STEP_MS])
                .env("RUST_LOG", "info")
        },
        Some(&dir.join("task-server.log")),
    );
    let page = server.url.replace("/mcp", "/tasks");
    let shots = dir.join("screenshots");
    let script = {
        let (page, shots) = (page.clone(), shots.clone());
        std::thread::spawn(move || watch(p, &page, &shots, &[]))
    };
    wait_for_the_page(&server, &script);
    let (cancelled, message) = run_tasks(&server.url);
    let out = script.join().expect("the script's thread");
    let summary = summary_of(&out, &server);
    let show = |what: &str| format!("{what}\n{summary:#}\n{out}{}", server.log());

    // The client saw the operator's cancel, in the operator's name.
    assert_eq!(message.as_deref(), Some("Cancelled by anonymous"));
    assert_eq!(summary["ids"]["confirm"], cancelled.as_str());

    // The long_running_task appeared working, went through the seed's steps, completed.
    let ran = views(
        &summary,
        summary["ids"]["longRunning"].as_str().expect("an id"),
    );
    let (first, last) = (&ran[0], ran.last().expect("a view"));
    assert_eq!(first["status"], "working", "{}", show("appeared"));
    assert_eq!(first["tool"], TOOL);
    assert_eq!(first["owner"], "anonymous");
    assert_eq!(last["status"], "completed", "{}", show("completed"));
    assert_eq!(last["message"], DONE_MESSAGE, "{}", show("closing message"));
    let messages: Vec<&str> = ran.iter().filter_map(|v| v["message"].as_str()).collect();
    assert!(
        messages.iter().any(|m| STEPS.contains(m)),
        "{}",
        show("no step shown")
    );
    assert!(
        messages
            .iter()
            .all(|m| m.is_empty() || STEPS.contains(m) || *m == DONE_MESSAGE),
        "{}",
        show("messages")
    );

    // The progress_task's bar moved to its total.
    let progressed = views(
        &summary,
        summary["ids"]["progress"].as_str().expect("an id"),
    );
    let shown: Vec<&str> = progressed
        .iter()
        .filter_map(|v| v["progress"].as_str())
        .collect();
    assert!(shown.contains(&"3/6"), "{}", show("progress"));
    let last = progressed.last().expect("a view");
    assert_eq!(
        (&last["status"], &last["progress"]),
        (&json!("completed"), &json!("6/6")),
        "{}",
        show("progress completed")
    );

    // The confirm_task waited for its input; its detail showed the question; the Cancel
    // button cancelled it.
    let asking = views(&summary, &cancelled);
    assert!(
        asking.iter().any(|v| v["status"] == "input_required"),
        "{}",
        show("input required")
    );
    let history = summary["detail"]["history"].as_array().expect("history");
    assert_eq!(history[0]["status"], "working", "{}", show("history"));
    assert!(
        history.iter().any(|h| h["kind"] == "asked"
            && h["text"]
                .as_str()
                .is_some_and(|t| t.ends_with("elicitation/create"))),
        "{}",
        show("asked")
    );
    assert_eq!(summary["cancelled"]["status"], "cancelled");
    assert_eq!(summary["cancelled"]["message"], "Cancelled by anonymous");
    assert_eq!(summary["cancelled"]["detailStatus"], "cancelled");

    // The counts (the demo's own finished task too) and the chart of tasks ended.
    assert_eq!(
        summary["counts"],
        json!({"all": 4, "working": 0, "input_required": 0, "completed": 3, "failed": 0,
            "cancelled": 1}),
        "{}",
        show("counts")
    );
    assert!(
        summary["chartBars"].as_u64() >= Some(2),
        "{}",
        show("chart")
    );
    assert_eq!(summary["title"], "taskwire · 0 live tasks");
    assert_eq!(summary["consoleErrors"], json!([]), "{}", show("console"));
    for shot in summary["screenshots"].as_array().expect("screenshots") {
        let path = shot.as_str().expect("a path");
        assert!(Path::new(path).is_file(), "{}", show(path));
    }
    let log = server.log();
    assert!(
        log.contains("dashboard: task cancelled") && log.contains("operator=\"anonymous\""),
        "{log}"
    );
}

#[test]
fn dashboard_asks_for_a_token_with_its_scope() {
    let test = "dashboard_asks_for_a_token_with_its_scope";
    let Some(p) = peers::ready(test) else { return };
    let dir = scratch(p, test);
    let issuer = MockIssuer::start();
    let mut audience = String::new();
    let server = HttpServer::start(
        |port| {
            audience = format!("http://127.0.0.1:{port}/mcp");
            Argv::new(binary("task-server"))
                .args(&["--http", &format!("127.0.0.1:{port}"), "--dashboard"])
                .args(&["--auth-issuer", &issuer.url, "--auth-audience", &audience])
                .args(&["--auth-scopes", "taskwire/dashboard=admin"])
                .env("RUST_LOG", "info")
        },
        Some(&dir.join("task-server.log")),
    );
    let token = |scope: &str| {
        let claims = issuer.claims("alice", "ops", &audience, scope);
        issuer.token(TestKey::Key1, &claims)
    };
    let page = server.url.replace("/mcp", "/tasks");
    let (bad, good) = (token("tasks"), token("tasks admin"));
    let extra = [
        "--scenario",
        "signin",
        "--bad-token",
        &bad,
        "--good-token",
        &good,
    ];
    let out = watch(p, &page, &dir.join("screenshots"), &extra);
    let summary = summary_of(&out, &server);
    let show = |what: &str| format!("{what}\n{summary:#}\n{out}{}", server.log());

    assert_eq!(summary["asked"]["conn"], "signin", "{}", show("asked"));
    let refused = summary["refused"].as_str().expect("a refusal");
    assert!(
        refused.starts_with("The server refused the token:") && refused.contains("admin"),
        "{}",
        show("refused")
    );
    assert_eq!(summary["live"], true);
    assert_eq!(summary["stored"], true, "{}", show("sessionStorage"));
    assert_eq!(summary["signoutShown"], true);
    let log = server.log();
    assert!(
        log.contains("dashboard: a browser opened the live feed"),
        "{log}"
    );
}
