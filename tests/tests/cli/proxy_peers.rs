//! `taskwire proxy` accepted by real peers, every message it writes on each side tapped and
//! validated against that side's schema: the MCP Inspector 2.12 CLI (2025-11-25) calling
//! rmcp 3.11's task server (2026-07-28) through it, the task made behind; the seed client's
//! calls (Python SDK, 2025-11-25) running a task on that server; rmcp 3.11's client
//! (2026-07-28) running a task on the seed's Python server (2025-11-25) through it (the
//! seed's `task_support` read as `taskSupport`); the TypeScript SDK 1.32.2 client running
//! server-everything's `trigger-long-running-operation` as a task with `--as-task`, and
//! cancelling another (the plain call behind is cancelled with `notifications/cancelled`);
//! server-everything's resource updates reaching a subscribed client in front, and its log
//! messages about no call (the proxy asks it for every level; the front filters per client);
//! server-everything's `simulate-research-query`, which requires a task, called plainly in
//! front by the TypeScript SDK client (2025-11-25) and by our client (2026-07-28), its
//! question answered in each client's era.

use serde_json::{json, Value};
use std::time::Duration;
use taskwire_harness::conformance::Side;
use taskwire_tests::peers::wire::Log;
use taskwire_tests::peers::{self, run, Argv, Peers, Run};
use taskwire_tests::procs;

const LIMIT: Duration = Duration::from_secs(90);
const RESULT: &str = "任务完成！";

/// `server` behind the proxy (`args`), both sides tapped to `<name>-{front,behind}.jsonl`:
/// the command line, and the two logs' paths.
fn tapped_proxy(
    p: &Peers,
    name: &str,
    args: &[&str],
    server: &Argv,
) -> (Argv, std::path::PathBuf, std::path::PathBuf) {
    let front = p.scratch(&format!("{name}-front.jsonl"));
    let behind = p.scratch(&format!("{name}-behind.jsonl"));
    let proxy = Argv::new(procs::taskwire())
        .arg("proxy")
        .args(args)
        .arg("--")
        .extend(&p.tap(&behind, server));
    (p.tap(&front, &proxy), front, behind)
}

/// Both logs, each side's messages from the proxy validated.
fn checked(front: &std::path::Path, behind: &std::path::Path) -> (Log, Log) {
    let (front, behind) = (Log::read(front), Log::read(behind));
    front.check_conformance(Side::Server);
    behind.check_conformance(Side::Client);
    (front, behind)
}

/// The statuses the server behind answered `tasks/get` with.
fn polled(log: &Log) -> Vec<String> {
    log.with_method("tasks/get")
        .into_iter()
        .filter_map(|get| {
            log.answer(get)["result"]["status"]
                .as_str()
                .map(str::to_owned)
        })
        .collect()
}

fn assert_ok(run: &Run) {
    assert_eq!(run.code, Some(0), "{run}");
}

#[test]
fn the_inspector_cli_calls_rmcps_task_server_through_the_proxy() {
    let test = "the_inspector_cli_calls_rmcps_task_server_through_the_proxy";
    let Some(p) = peers::ready(test) else { return };
    let (proxy, front, behind) = tapped_proxy(p, test, &[], &p.rmcp_task_server("200"));

    let listed = run(&p.inspector(&proxy, &["--method", "tools/list"]), LIMIT);
    assert_ok(&listed);
    let tools: Value = serde_json::from_str(&listed.stdout).expect("JSON");
    let support: Vec<(&str, &str)> = tools["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("no tools: {listed}"))
        .iter()
        .map(|t| {
            let name = t["name"].as_str().unwrap_or_default();
            (name, t["execution"]["taskSupport"].as_str().unwrap_or("?"))
        })
        .collect();
    assert!(
        support.contains(&("long_running_task", "optional")),
        "{support:?}"
    );

    let args = ["--method", "tools/call", "--tool-name", "long_running_task"];
    let called = run(&p.inspector(&proxy, &args), LIMIT);
    assert_ok(&called);
    let printed: Value = serde_json::from_str(&called.stdout).expect("JSON");
    assert_eq!(printed["content"][0]["text"], RESULT, "{called}");
    let (front, behind) = checked(&front, &behind);
    assert_eq!(
        front.request("initialize")["params"]["protocolVersion"],
        "2025-11-25"
    );
    // In front a plain call; behind, where the server decides, a task polled to its end.
    assert!(front.request("tools/call")["params"].get("task").is_none());
    let made = behind.answer(behind.request("tools/call"));
    assert_eq!(made["result"]["resultType"], "task", "{made}");
    assert_eq!(
        polled(&behind).last().map(String::as_str),
        Some("completed")
    );
}

#[test]
fn the_seed_clients_calls_run_a_task_on_rmcps_server_through_the_proxy() {
    let test = "the_seed_clients_calls_run_a_task_on_rmcps_server_through_the_proxy";
    let Some(p) = peers::ready(test) else { return };
    let (proxy, front, behind) = tapped_proxy(p, test, &[], &p.rmcp_task_server("200"));
    let out = run(&p.py_client(&[], &proxy), LIMIT);
    assert_ok(&out);
    assert_eq!(
        out.event("initialized")["protocolVersion"],
        "2025-11-25",
        "{out}"
    );
    assert!(!out.events("task_created").is_empty(), "{out}");
    assert_eq!(out.event("result")["text"], RESULT, "{out}");
    let (_, behind) = checked(&front, &behind);
    assert!(
        behind.with_method("initialize").is_empty(),
        "2026-07-28 behind"
    );
    assert_eq!(
        polled(&behind).last().map(String::as_str),
        Some("completed")
    );
}

#[test]
fn rmcps_client_runs_a_task_on_the_seed_server_through_the_proxy() {
    let test = "rmcps_client_runs_a_task_on_the_seed_server_through_the_proxy";
    let Some(p) = peers::ready(test) else { return };
    // The seed lists `task_support`, read as `taskSupport`: no `--as-task` is needed.
    let (proxy, front, behind) = tapped_proxy(p, test, &[], &p.seed_server());
    let out = run(&p.rmcp_task_client(&[], &proxy), LIMIT);
    assert_ok(&out);
    assert_eq!(
        out.event("connected")["protocolVersion"],
        "2026-07-28",
        "{out}"
    );
    assert_eq!(out.event("result")["text"], RESULT, "{out}");
    let statuses = out.events("status");
    let messages: Vec<&str> = (statuses.iter())
        .filter_map(|s| s["statusMessage"].as_str())
        .collect();
    assert!(messages.contains(&"处理步骤 1..."), "{messages:?}\n{out}");
    let (front, behind) = checked(&front, &behind);
    assert!(!front.with_method("tasks/get").is_empty());
    assert_eq!(
        behind.request("initialize")["params"]["protocolVersion"],
        "2025-11-25"
    );
}

#[test]
fn the_typescript_client_runs_everythings_slow_tool_as_a_task_and_cancels_another() {
    let test = "the_typescript_client_runs_everythings_slow_tool_as_a_task";
    let Some(p) = peers::ready(test) else { return };
    let tool = "trigger-long-running-operation";
    let tool_args = ["--tool", tool, "--args", r#"{"duration": 1, "steps": 2}"#];

    let (proxy, front, behind) = tapped_proxy(p, test, &["--as-task", tool], &p.everything());
    let out = run(&p.ts_client("task", &tool_args, &proxy), LIMIT);
    assert_ok(&out);
    assert!(
        !out.events("task_created").is_empty(),
        "a task in front: {out}"
    );
    let text = out.event("result")["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(
        text.starts_with("Long running operation completed"),
        "{out}"
    );
    let (_, behind) = checked(&front, &behind);
    let call = behind.request("tools/call");
    assert!(call["params"].get("task").is_none(), "a plain call behind");
    // Progress is asked for behind (the front client asked for none here).
    assert!(
        call["params"]["_meta"]["progressToken"].is_number(),
        "{call}"
    );
    assert_eq!(behind.with_method("notifications/progress").len(), 2);

    let cancelling = format!("{test}-cancel");
    let slow = ["--tool", tool, "--args", r#"{"duration": 30, "steps": 30}"#];
    let (proxy, front, behind) =
        tapped_proxy(p, &cancelling, &["--as-task", tool], &p.everything());
    let out = run(&p.ts_client("cancel", &slow, &proxy), LIMIT);
    assert_ok(&out);
    assert_eq!(out.event("final_status")["status"], "cancelled", "{out}");
    let (_, behind) = checked(&front, &behind);
    let call_id = behind.request("tools/call")["id"].clone();
    let cancelled = behind.with_method("notifications/cancelled");
    assert_eq!(cancelled.len(), 1, "{cancelled:?}");
    assert_eq!(cancelled[0]["params"]["requestId"], call_id);
    assert_eq!(
        cancelled[0]["params"]["reason"],
        json!("Request cancelled by the client")
    );
}

/// server-everything's research tool requires a task (`taskSupport: required`) and, for an
/// ambiguous topic, asks which one is meant while its task is `input_required`. Through the
/// proxy it is `optional`, so a client that makes no task calls calls it plainly: the task
/// runs behind, made by the proxy's client, and the question reaches the front client in its
/// era (a 2025-11-25 `elicitation/create`; for 2026-07-28, MRTR: the call is made again with
/// the answer, and so is the task behind, the first one cancelled).
#[test]
fn everythings_research_tool_which_requires_a_task_is_called_plainly_through_the_proxy() {
    let test = "everythings_research_tool_which_requires_a_task";
    let Some(p) = peers::ready(test) else { return };
    let tool = "simulate-research-query";
    let topic = r#"{"topic": "python", "ambiguous": true}"#;

    let (proxy, front, behind) = tapped_proxy(p, test, &[], &p.everything());
    let out = run(
        &p.ts_client("plain", &["--tool", tool, "--args", topic], &proxy),
        LIMIT,
    );
    assert_ok(&out);
    assert_eq!(out.event("tools")["taskSupport"][tool], "optional", "{out}");
    let asked = out.event("server_request");
    assert_eq!(asked["method"], "elicitation/create", "{out}");
    // The TypeScript client picks the first interpretation offered.
    let text = out.event("result")["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(text.contains("python (programming)"), "{out}");
    let (front, behind) = checked(&front, &behind);
    assert!(front.request("tools/call")["params"].get("task").is_none());
    let call = behind.request("tools/call");
    assert!(call["params"]["task"].is_object(), "a task behind: {call}");
    assert_eq!(behind.with_method("elicitation/create").len(), 1);

    let newer = format!("{test}-2026");
    let (proxy, front, behind) = tapped_proxy(p, &newer, &[], &p.everything());
    let answers = p.scratch(&format!("{newer}-answers.json"));
    let answer = r#"{"action": "accept", "content": {"interpretation": "snake"}}"#;
    std::fs::write(&answers, answer).unwrap();
    let call = Argv::new(procs::taskwire())
        .args(&["--json", "call", "--plain", "--era", "2026-07-28", tool])
        .args(&[
            "--arg",
            "topic=python",
            "--arg",
            "ambiguous=true",
            "--answers",
        ])
        .arg(&answers)
        .arg("--")
        .extend(&proxy);
    let out = run(&call, LIMIT);
    assert_ok(&out);
    let events = out.json_lines();
    let inputs: Vec<&Value> = events.iter().filter(|e| e["event"] == "input").collect();
    assert_eq!(inputs.len(), 1, "asked once in front: {out}");
    let message = inputs[0]["params"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("python"), "{out}");
    let outcome = events.last().cloned().unwrap_or_default();
    let text = outcome["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(text.contains("python (snake)"), "{out}");
    let (_, behind) = checked(&front, &behind);
    let calls = behind.with_method("tools/call");
    assert_eq!(
        calls.len(),
        2,
        "made again behind with the answer: {calls:?}"
    );
    assert!(
        calls.iter().all(|c| c["params"]["task"].is_object()),
        "{calls:?}"
    );
    let first = behind.answer(calls[0])["result"]["task"]["taskId"].clone();
    let cancels = behind.with_method("tasks/cancel");
    assert_eq!(cancels.len(), 1, "{cancels:?}");
    assert_eq!(cancels[0]["params"]["taskId"], first);
}

#[test]
fn a_resource_update_behind_reaches_the_subscribed_client_in_front() {
    let test = "a_resource_update_behind_reaches_the_subscribed_client_in_front";
    let Some(p) = peers::ready(test) else { return };
    let (proxy, front, behind) = tapped_proxy(p, test, &[], &p.everything());
    let (builder, notices) = hearing_client("proxy-notices");
    smol::block_on(async {
        let (client, mut child) = taskwire_smol::spawn_server(proxy.command(), builder).unwrap();
        let opened = client.initialize().await.unwrap();
        assert_eq!(opened.capabilities["resources"]["subscribe"], true);
        let listed = client.request("resources/list", None).await.unwrap();
        let uri = listed["resources"][0]["uri"].clone();
        assert!(uri.is_string(), "{listed}");
        let params = json!({ "uri": uri });
        client
            .request("resources/subscribe", Some(params))
            .await
            .unwrap();
        let toggled = client
            .call_tool("toggle-subscriber-updates", json!({}))
            .await;
        assert!(toggled.unwrap().all_text().starts_with("Started"));
        let params = first_heard(&notices, "notifications/resources/updated").await;
        assert_eq!(params, Some(json!({ "uri": uri })));
        client.close().await;
        child.wait().await.unwrap();
    });
    let (front, _) = checked(&front, &behind);
    assert!(!front
        .with_method("notifications/resources/updated")
        .is_empty());
}

#[test]
fn a_log_message_behind_about_no_call_reaches_the_client_in_front() {
    let test = "a_log_message_behind_about_no_call_reaches_the_client_in_front";
    let Some(p) = peers::ready(test) else { return };
    let (proxy, front, behind) = tapped_proxy(p, test, &[], &p.everything());
    let (builder, notices) = hearing_client("proxy-logs");
    smol::block_on(async {
        let (client, mut child) = taskwire_smol::spawn_server(proxy.command(), builder).unwrap();
        let opened = client.initialize().await.unwrap();
        assert!(opened.capabilities["logging"].is_object(), "{opened:?}");
        let toggled = client.call_tool("toggle-simulated-logging", json!({}));
        assert!(toggled.await.unwrap().all_text().starts_with("Started"));
        // server-everything logs one message at once, at a random level.
        let params = first_heard(&notices, "notifications/message").await;
        let params = params.unwrap_or_default();
        assert!(params["level"].is_string(), "{params}");
        let data = params["data"].as_str().unwrap_or_default();
        assert!(data.contains("message"), "{params}");
        client.close().await;
        child.wait().await.unwrap();
    });
    let (front, behind) = checked(&front, &behind);
    assert!(!front.with_method("notifications/message").is_empty());
    // The proxy asked the server behind for every level; the front filters per client.
    let asked = behind.with_method("logging/setLevel");
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert_eq!(asked[0]["params"], json!({ "level": "debug" }));
}

/// A 2025-11-25 client that hears the notifications it does not act on itself.
fn hearing_client(
    name: &str,
) -> (
    taskwire_driver::ClientBuilder,
    async_channel::Receiver<(String, Option<Value>)>,
) {
    let (heard, notices) = async_channel::unbounded();
    let mut config = taskwire_driver::Config::new(name, "1.0.0");
    config.client_era =
        taskwire_driver::engine::ClientEra::Only(taskwire_driver::engine::Era::V2025_11_25);
    let builder = taskwire_driver::ClientBuilder::new(config).on_notification(move |m, p| {
        let _ = heard.try_send((m.to_owned(), p));
    });
    (builder, notices)
}

/// The params of the first notification `method` heard within 20 s.
async fn first_heard(
    notices: &async_channel::Receiver<(String, Option<Value>)>,
    method: &str,
) -> Option<Value> {
    let heard = async {
        loop {
            let (heard, params) = notices.recv().await.unwrap();
            if heard == method {
                return params;
            }
        }
    };
    let deadline = smol::Timer::after(Duration::from_secs(20));
    futures::pin_mut!(heard);
    match futures::future::select(heard, deadline).await {
        futures::future::Either::Left((params, _)) => params,
        futures::future::Either::Right(_) => panic!("no {method} within 20 s"),
    }
}
