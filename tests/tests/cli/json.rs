//! `taskwire --json …`: one JSON object per event, the outcome last, and the exit codes.

use std::time::Duration;

use serde_json::Value;
use taskwire_demo::tools::{DONE_MESSAGE, STEPS};
use taskwire_tests::peers::{self, run, Argv, Run};
use taskwire_tests::procs;

const LIMIT: Duration = Duration::from_secs(60);

/// `taskwire ARGS… -- task-server --step-ms 100 [SERVER_ARGS…]`.
fn against_ours(args: &[&str], server_args: &[&str]) -> Run {
    let argv = Argv::new(procs::taskwire())
        .args(args)
        .arg("--")
        .arg(procs::task_server())
        .args(&["--step-ms", "100"])
        .args(server_args);
    run(&argv, LIMIT)
}

fn events(run: &Run) -> Vec<Value> {
    run.json_lines()
}

fn kinds(run: &Run) -> Vec<String> {
    events(run)
        .iter()
        .map(|e| e["event"].as_str().unwrap_or("?").to_owned())
        .collect()
}

fn last(run: &Run) -> Value {
    events(run).pop().unwrap_or(Value::Null)
}

#[test]
fn a_task_runs_to_its_result_in_both_eras() {
    for era in ["2025-11-25", "2026-07-28"] {
        let run = against_ours(&["--json", "call", "long_running_task", "--era", era], &[]);
        assert_eq!(run.code, Some(0), "{run}");
        let events = events(&run);
        assert_eq!(events[0]["event"], "connected", "{run}");
        assert_eq!(events[0]["protocol"], era, "{run}");
        assert_eq!(events[1]["event"], "task", "{run}");
        assert_eq!(events[1]["task"]["status"], "working", "{run}");
        let messages: Vec<&str> = events
            .iter()
            .filter(|e| e["event"] == "message" || e["event"] == "status")
            .filter_map(|e| e["task"]["statusMessage"].as_str())
            .collect();
        for step in STEPS.iter().chain([&DONE_MESSAGE]) {
            assert!(messages.contains(step), "{era}: no {step:?}\n{run}");
        }
        let outcome = last(&run);
        assert_eq!(outcome["event"], "outcome", "{run}");
        assert_eq!(outcome["outcome"], "completed", "{run}");
        // Every event says when it happened, and the times are real: the three 100 ms steps
        // show between the task and its outcome. (Two of them are asserted: the client times
        // each event as it reads it, and a late first read shortens the span it sees.)
        let times: Vec<u64> = events
            .iter()
            .filter_map(|e| e["elapsedMs"].as_u64())
            .collect();
        assert_eq!(times.len(), events.len(), "{run}");
        assert!(times.windows(2).all(|w| w[0] <= w[1]), "{run}");
        assert!(times[times.len() - 1] - times[1] >= 200, "{run}");
        assert_eq!(outcome["exitCode"], 0, "{run}");
        assert_eq!(
            outcome["result"]["content"][0]["text"], "任务完成！",
            "{run}"
        );
        assert!(outcome["result"].get("resultType").is_none(), "{run}");
    }
}

#[test]
fn plain_calls_and_tool_errors() {
    let run = against_ours(&["--json", "call", "long_running_task", "--plain"], &[]);
    assert_eq!(run.code, Some(0), "{run}");
    assert_eq!(kinds(&run), ["connected", "outcome"], "{run}");

    // The demo server answers an unknown tool with a tool error (`isError`): exit 1.
    let run = against_ours(&["--json", "call", "no_such_tool"], &[]);
    assert_eq!(run.code, Some(1), "{run}");
    let outcome = last(&run);
    assert_eq!(outcome["outcome"], "failed", "{run}");
    assert_eq!(outcome["result"]["isError"], true, "{run}");
}

#[test]
fn detach_prints_the_task_and_tasks_result_reads_a_kept_one() {
    let run = against_ours(&["call", "long_running_task", "--detach"], &[]);
    assert_eq!(run.code, Some(0), "{run}");
    let id = run.stdout.trim_end();
    assert!(run.stderr.contains(&format!("task created: {id}")), "{run}");

    // Each command starts its own server: the demo's pre-made task is there to read.
    let run = against_ours(&["tasks", "result", "demo-task"], &[]);
    assert_eq!(run.code, Some(0), "{run}");
    assert!(run.stdout.contains("此任务用于List Tasks 功能"), "{run}");
    let run = against_ours(&["--json", "tasks", "list", "--era", "2025-11-25"], &[]);
    assert_eq!(run.code, Some(0), "{run}");
    assert_eq!(events(&run)[1]["task"]["taskId"], "demo-task", "{run}");
    let run = against_ours(&["tasks", "list"], &[]);
    assert_eq!(run.code, Some(1), "{run}");
    assert!(run.stderr.contains("2026-07-28 has no tasks/list"), "{run}");
    let run = against_ours(&["--json", "tasks", "get", "nope"], &[]);
    assert_eq!(run.code, Some(4), "an unknown task is lost: {run}");
}

#[test]
fn tools_are_listed_with_their_task_support() {
    let args = ["--json", "tools", "--era", "2025-11-25"];
    let run = against_ours(&args, &["--extra-tools"]);
    assert_eq!(run.code, Some(0), "{run}");
    let tools: Vec<(String, String)> = events(&run)
        .iter()
        .filter(|e| e["event"] == "tool")
        .map(|e| {
            let name = e["tool"]["name"].as_str().unwrap_or("").to_owned();
            (name, e["taskSupport"].as_str().unwrap_or("").to_owned())
        })
        .collect();
    assert!(
        tools.contains(&("long_running_task".into(), "optional".into())),
        "{run}"
    );
    assert!(
        tools.iter().any(|(name, _)| name == "confirm_task"),
        "{run}"
    );
    let run = against_ours(&["tools"], &[]);
    assert!(
        run.stdout
            .contains("long_running_task  (tasks: decided by the server)"),
        "2026-07-28 lists no task support: {run}"
    );
}

#[test]
fn answers_from_a_file_reach_the_form_in_both_eras() {
    let dir = peers::target_dir().join("tmp/cli");
    std::fs::create_dir_all(&dir).unwrap();
    let answers = dir.join("answers.json");
    std::fs::write(
        &answers,
        r#"[{"action": "accept", "content": {"confirm": true}}, {"action": "decline"}]"#,
    )
    .unwrap();
    for era in ["2025-11-25", "2026-07-28"] {
        let file = answers.to_str().unwrap();
        let args = [
            "--json",
            "call",
            "confirm_task",
            "--arg",
            "question=Ship it?",
            "--answers",
            file,
            "--era",
            era,
        ];
        let run = against_ours(&args, &["--extra-tools"]);
        assert_eq!(run.code, Some(0), "{run}");
        let events = events(&run);
        let input = events
            .iter()
            .find(|e| e["event"] == "input")
            .expect("asked");
        assert_eq!(input["params"]["message"], "Ship it?", "{run}");
        let answer = events
            .iter()
            .find(|e| e["event"] == "answer")
            .expect("answered");
        assert_eq!(answer["action"], "accept", "{run}");
        assert_eq!(
            last(&run)["result"]["content"][0]["text"],
            "Ship it? confirmed",
            "{run}"
        );
    }
}

#[test]
fn bad_arguments_are_usage_errors() {
    for (args, says) in [
        (
            &["call", "long_running_task", "--arg", "x"][..],
            r#"--arg "x" is not NAME=VALUE"#,
        ),
        (
            &["call", "long_running_task", "--args", "[1]"][..],
            "--args must be a JSON object",
        ),
        (
            &["call", "progress_task", "--arg", "steps=many"][..],
            r#""many" is not an integer"#,
        ),
    ] {
        let run = against_ours(args, &["--extra-tools"]);
        assert_eq!(run.code, Some(2), "{run}");
        assert!(run.stderr.contains(says), "{run}");
    }
    let run = run(&Argv::new(procs::taskwire()).args(&["call", "x"]), LIMIT);
    assert_eq!(run.code, Some(2), "no server named: {run}");
    assert!(run.stderr.contains("name the server"), "{run}");
    let run = run_taskwire(&["call"]);
    assert_eq!(run.code, Some(2), "{run}");
    let run = run_taskwire(&["--help"]);
    assert_eq!(run.code, Some(0), "{run}");
    for line in ["Exit codes:", "3  cancelled", "5  connection error"] {
        assert!(run.stdout.contains(line), "{run}");
    }
    let run = run_taskwire(&["--version"]);
    assert_eq!(
        run.stdout.trim(),
        format!("taskwire {}", env!("CARGO_PKG_VERSION"))
    );
}

fn run_taskwire(args: &[&str]) -> Run {
    run(&Argv::new(procs::taskwire()).args(args), LIMIT)
}

#[test]
fn a_server_that_exits_or_never_answers_is_a_connection_error() {
    let run = run_taskwire(&["--json", "call", "x", "--", "sh", "-c", "exit 0"]);
    assert_eq!(run.code, Some(5), "{run}");
    assert_eq!(last(&run)["event"], "error", "{run}");

    let run = run_taskwire(&["call", "x", "--", "/no/such/server"]);
    assert_eq!(run.code, Some(5), "{run}");
    assert!(run.stderr.contains("cannot start"), "{run}");

    let args = [
        "--json",
        "call",
        "x",
        "--era",
        "2025-11-25",
        "--request-timeout-ms",
        "500",
        "--",
        "sleep",
        "30",
    ];
    let run = run_taskwire(&args);
    assert_eq!(run.code, Some(5), "{run}");
    assert_eq!(last(&run)["error"]["kind"], "negotiation", "{run}");
    assert!(run.elapsed < Duration::from_secs(5), "{run}");
}

#[test]
fn the_seed_server_runs_a_task_for_it() {
    let Some(p) = peers::ready("the_seed_server_runs_a_task_for_it") else {
        return;
    };
    let argv = Argv::new(procs::taskwire())
        .args(&["--json", "call", "long_running_task"])
        .arg("--")
        .extend(&p.seed_server());
    let run = run(&argv, LIMIT);
    assert_eq!(run.code, Some(0), "{run}");
    assert_eq!(events(&run)[0]["protocol"], "2025-11-25", "{run}");
    assert_eq!(
        last(&run)["result"]["content"][0]["text"],
        "任务完成！",
        "{run}"
    );
}
