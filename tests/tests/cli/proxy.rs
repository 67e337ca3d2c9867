//! `taskwire proxy` between a client of one era and a server of the other: a 2025-11-25
//! client's task on a 2026-07-28 server and the reverse (status messages mirrored, the
//! outcome carried), the question a task asks behind answered by the client in front in its
//! own era, the seed server's tool a task for a 2026-07-28 client (its `task_support` read), a
//! cancel in front cancelling the task behind, a server behind that exits (the front calls
//! fail saying so, at once, and the proxy answers on; with `--restart` the next call runs on
//! a new one), and `--store` (an outcome read after
//! a restart of the proxy, a call cut off by it failed, a wrong spec refused), and the task
//! caps in front set on its command line.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::Value;
use taskwire_demo::tools::{DONE_MESSAGE, STEPS};
use taskwire_driver::RpcError;
use taskwire_tests::peers::http::HttpServer;
use taskwire_tests::peers::{self, run, Argv, Run};
use taskwire_tests::procs;

const LIMIT: Duration = Duration::from_secs(60);

/// `taskwire proxy ARGS… -- SERVER…` as a command line.
fn proxy(args: &[&str], server: &Argv) -> Argv {
    Argv::new(procs::taskwire())
        .arg("proxy")
        .args(args)
        .arg("--")
        .extend(server)
}

/// Our `task-server --step-ms 100 --extra-tools`.
fn our_server() -> Argv {
    Argv::new(procs::task_server()).args(&["--step-ms", "100", "--extra-tools"])
}

/// `taskwire --json call ARGS… --era ERA -- SERVER…`.
fn call(era: &str, args: &[&str], server: &Argv) -> Run {
    let argv = Argv::new(procs::taskwire())
        .args(&["--json", "call", "--era", era])
        .args(args)
        .arg("--")
        .extend(server);
    run(&argv, LIMIT)
}

/// The status messages a `--json` run saw, and its outcome event.
fn messages_and_outcome(run: &Run) -> (Vec<String>, Value) {
    let mut events = run.json_lines();
    let outcome = events.pop().unwrap_or(Value::Null);
    let messages = events
        .iter()
        .filter_map(|e| e["task"]["statusMessage"].as_str())
        .map(str::to_owned)
        .collect();
    (messages, outcome)
}

#[test]
fn a_task_crosses_the_eras_both_ways_with_its_status_messages() {
    for (front, behind) in [("2025-11-25", "2026-07-28"), ("2026-07-28", "2025-11-25")] {
        let server = proxy(&["--era", behind], &our_server());
        let run = call(front, &["long_running_task"], &server);
        assert_eq!(run.code, Some(0), "{front} → {behind}: {run}");
        let events = run.json_lines();
        assert_eq!(events[0]["protocol"], front, "{run}");
        assert_eq!(events[0]["server"]["name"], "taskwire-proxy", "{run}");
        assert_eq!(events[1]["event"], "task", "a task in front: {run}");
        let (messages, outcome) = messages_and_outcome(&run);
        for step in STEPS.iter().chain([&DONE_MESSAGE]) {
            assert!(messages.iter().any(|m| m == step), "no {step:?}: {run}");
        }
        assert_eq!(outcome["outcome"], "completed", "{run}");
        assert_eq!(
            outcome["result"]["content"][0]["text"], "任务完成！",
            "{run}"
        );
    }
}

#[test]
fn a_question_asked_behind_is_answered_in_front_in_the_front_era() {
    let dir = peers::target_dir().join("tmp/cli-proxy");
    std::fs::create_dir_all(&dir).unwrap();
    let answers: PathBuf = dir.join("answers.json");
    std::fs::write(
        &answers,
        r#"{"action": "accept", "content": {"confirm": true}}"#,
    )
    .unwrap();
    let answers = answers.to_str().unwrap();
    for (front, behind) in [("2025-11-25", "2026-07-28"), ("2026-07-28", "2025-11-25")] {
        let server = proxy(&["--era", behind], &our_server());
        let args = [
            "confirm_task",
            "--arg",
            "question=Ship it?",
            "--answers",
            answers,
        ];
        let run = call(front, &args, &server);
        assert_eq!(run.code, Some(0), "{front} → {behind}: {run}");
        let events = run.json_lines();
        let input = events.iter().find(|e| e["event"] == "input");
        assert_eq!(
            input.map(|e| e["params"]["message"].clone()),
            Some("Ship it?".into()),
            "{run}"
        );
        let statuses: Vec<&str> = events
            .iter()
            .filter_map(|e| e["task"]["status"].as_str())
            .collect();
        assert!(statuses.contains(&"input_required"), "{run}");
        let (_, outcome) = messages_and_outcome(&run);
        assert_eq!(
            outcome["result"]["content"][0]["text"], "Ship it? confirmed",
            "{run}"
        );
    }
}

/// The seed's server lists its tool's task support as `task_support` (the Python SDK's
/// spelling), read as `taskSupport`: the proxy offers the tool as a task to a 2026-07-28
/// client without `--as-task`, and our client runs it as one.
#[test]
fn the_seed_servers_tool_is_a_task_for_a_2026_client_without_as_task() {
    let test = "the_seed_servers_tool_is_a_task_for_a_2026_client_without_as_task";
    let Some(p) = peers::ready(test) else {
        return;
    };
    let run = call(
        "2026-07-28",
        &["long_running_task"],
        &proxy(&[], &p.seed_server()),
    );
    assert_eq!(run.code, Some(0), "{run}");
    assert_eq!(run.json_lines()[1]["event"], "task", "{run}");
    let (messages, outcome) = messages_and_outcome(&run);
    assert!(messages.iter().any(|m| m == "处理步骤 1..."), "{run}");
    assert_eq!(
        outcome["result"]["content"][0]["text"], "任务完成！",
        "{run}"
    );
}

#[test]
fn a_cancel_in_front_cancels_the_task_behind() {
    let dir = peers::target_dir().join("tmp/cli-proxy");
    std::fs::create_dir_all(&dir).unwrap();
    let log = dir.join("cancel.log");
    let behind = Argv::new(procs::task_server())
        .args(&["--step-ms", "2000"])
        .env("RUST_LOG", "taskwire_driver=debug");
    let server = HttpServer::start(
        |port| proxy(&["--http", &format!("127.0.0.1:{port}")], &behind),
        Some(&log),
    );
    let url = server.url.as_str();
    let taskwire = |args: &[&str]| run(&Argv::new(procs::taskwire()).args(args), LIMIT);
    let made = taskwire(&["call", "long_running_task", "--detach", "--url", url]);
    assert_eq!(made.code, Some(0), "{made}");
    let id = made.stdout.lines().last().unwrap_or_default().to_owned();
    let cancelled = taskwire(&["--json", "tasks", "cancel", &id, "--url", url]);
    assert_eq!(cancelled.code, Some(3), "{cancelled}");
    // The server behind hears the cancel, and its tool stops.
    let deadline = Instant::now() + Duration::from_secs(10);
    while !server.log().contains("reason=Cancelled") {
        assert!(
            Instant::now() < deadline,
            "not cancelled behind:{}",
            server.log()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_server_behind_that_exits_fails_the_calls_in_front_saying_so_and_the_proxy_goes_on() {
    server_behind_exits(false);
}

#[test]
fn with_restart_a_server_behind_that_exited_is_started_again_for_the_next_call() {
    server_behind_exits(true);
}

/// Kills the server behind while a task runs on it: that task fails saying why; the next
/// call fails at once too, or, with `--restart`, runs on a new server, whose tools (more
/// than the first one's) are served.
fn server_behind_exits(restart: bool) {
    let dir = peers::target_dir().join("tmp/cli-proxy");
    std::fs::create_dir_all(&dir).unwrap();
    let pid_file = dir.join(format!("behind-{restart}.pid"));
    let started = dir.join(format!("behind-{restart}.started"));
    let _ = std::fs::remove_file(&pid_file);
    let _ = std::fs::remove_file(&started);
    // Started again, the server has the extra tools.
    let script = format!(
        "echo $$ > '{pid}'; extra=; [ -e '{started}' ] && extra=--extra-tools; : > '{started}'; \
         exec '{server}' --step-ms 300 $extra",
        pid = pid_file.display(),
        started = started.display(),
        server = procs::task_server().display()
    );
    let behind = Argv::new("sh").arg("-c").arg(script);
    let proxy = proxy(if restart { &["--restart"] } else { &[] }, &behind);
    let pid = || std::fs::read_to_string(&pid_file).unwrap();
    smol::block_on(async {
        let builder = taskwire_driver::ClientBuilder::new(taskwire_driver::Config::new("t", "0"));
        let (client, mut child) = taskwire_smol::spawn_server(proxy.command(), builder).unwrap();
        client.initialize().await.unwrap();
        let call = client
            .call_tool_as_task("long_running_task", serde_json::json!({}), None)
            .await
            .unwrap();
        assert!(call.task.is_some());
        let first = pid();
        let killed = std::process::Command::new("kill")
            .arg(first.trim())
            .status();
        assert!(killed.unwrap().success());

        let said = "The server behind the proxy closed its connection";
        let error = call.result().await.map_err(taskwire_driver::RpcError::from);
        let error = error.expect_err("the task fails");
        assert!(error.message.starts_with(said), "{error:?}");
        let started = Instant::now();
        let again = client.call_tool("long_running_task", serde_json::json!({}));
        let again = again.await.map_err(taskwire_driver::RpcError::from);
        if restart {
            assert_eq!(again.unwrap().all_text(), "任务完成！");
            assert_ne!(pid(), first, "a new server");
        } else {
            assert!(again.unwrap_err().message.starts_with(said));
            assert!(started.elapsed() < Duration::from_secs(2), "no hang");
        }
        // The proxy itself answers on; started again, the server's tools are listed again.
        let tools = if restart { 3 } else { 1 };
        let deadline = Instant::now() + Duration::from_secs(10);
        while client.list_tools().await.unwrap().len() != tools {
            assert!(Instant::now() < deadline, "not {tools} tools in front");
            smol::Timer::after(Duration::from_millis(50)).await;
        }
        if restart {
            let steps = client.call_tool("progress_task", serde_json::json!({"steps": 1}));
            assert_eq!(steps.await.unwrap().all_text(), "1 steps done");
        }
        client.close().await;
        child.wait().await.unwrap();
    });
}

#[test]
fn with_a_store_outcomes_survive_a_restart_of_the_proxy_and_a_call_cut_off_fails() {
    let dir = peers::target_dir().join("tmp/cli-proxy");
    std::fs::create_dir_all(&dir).unwrap();
    let db = dir.join("proxy-store.db");
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", db.display()));
    }
    let store = format!("sqlite:{}", db.display());
    let behind = Argv::new(procs::task_server()).args(&["--step-ms", "300"]);
    let start = |log: &str| {
        HttpServer::start(
            |port| {
                let http = format!("127.0.0.1:{port}");
                proxy(&["--store", &store, "--http", &http], &behind)
            },
            Some(&dir.join(log)),
        )
    };
    let taskwire = |args: &[&str]| run(&Argv::new(procs::taskwire()).args(args), LIMIT);

    let first = start("store-first.log");
    let done = taskwire(&["--json", "call", "long_running_task", "--url", &first.url]);
    assert_eq!(done.code, Some(0), "{done}");
    let done_id = done.json_lines()[1]["task"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("no task: {done}"))
        .to_owned();
    let cut = taskwire(&["call", "long_running_task", "--detach", "--url", &first.url]);
    assert_eq!(cut.code, Some(0), "{cut}");
    let cut_id = cut.stdout.lines().last().unwrap_or_default().to_owned();
    drop(first);

    let second = start("store-second.log");
    let result = taskwire(&["tasks", "result", &done_id, "--url", &second.url]);
    assert_eq!(result.code, Some(0), "{result}");
    assert!(result.stdout.contains("任务完成！"), "{result}");
    let lost = taskwire(&["--json", "wait", &cut_id, "--url", &second.url]);
    assert_eq!(lost.code, Some(1), "failed: {lost}");
    assert!(
        lost.stdout
            .contains("was running when its server process stopped"),
        "{lost}"
    );
    let bad = taskwire(&["proxy", "--store", "tasks.db", "--", "true"]);
    assert_eq!(bad.code, Some(2), "{bad}");
    assert!(bad.stderr.contains("sqlite:PATH"), "{bad}");
}

#[test]
fn the_task_caps_in_front_are_the_command_lines() {
    let behind = Argv::new(procs::task_server()).args(&["--step-ms", "2000"]);
    let proxy = proxy(&["--max-tasks-per-client", "1"], &behind);
    smol::block_on(async {
        let builder = taskwire_driver::ClientBuilder::new(taskwire_driver::Config::new("t", "0"));
        let (client, mut child) = taskwire_smol::spawn_server(proxy.command(), builder).unwrap();
        client.initialize().await.unwrap();
        let task = || client.call_tool_as_task("long_running_task", serde_json::json!({}), None);
        let first = task().await.unwrap();
        let first = first.task.expect("a task in front");
        let over = task().await.map(|_| ()).map_err(RpcError::from);
        let over = over.expect_err("a second task is over the cap");
        assert!(over.message.contains("max_tasks_per_owner"), "{over:?}");
        client.cancel_task(first.id.as_str()).await.unwrap();
        client.close().await;
        child.wait().await.unwrap();
    });
}
