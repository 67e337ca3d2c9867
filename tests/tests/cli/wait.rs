//! `taskwire wait TASK_ID` and `tasks result`: a task made earlier followed to its outcome,
//! in both eras. 2026-07-28 over HTTP: a task detached by one command is followed live by
//! the next. 2025-11-25 over stdio with a durable store: a finished task read again by a
//! new server process; one the server does not know is lost (exit 4).

use std::time::Duration;

use serde_json::Value;
use taskwire_demo::tools::DONE_MESSAGE;
use taskwire_tests::peers::http::HttpServer;
use taskwire_tests::peers::{run, Argv, Run};
use taskwire_tests::procs;

const LIMIT: Duration = Duration::from_secs(60);

fn taskwire(args: &[&str]) -> Run {
    run(&Argv::new(procs::taskwire()).args(args), LIMIT)
}

/// The statuses and messages of a `--json` run's task events, and its outcome event.
fn task_events(run: &Run) -> (Vec<String>, Value) {
    let mut events = run.json_lines();
    let outcome = events.pop().unwrap_or(Value::Null);
    let seen = events
        .iter()
        .filter(|e| ["task", "status", "message"].contains(&e["event"].as_str().unwrap_or("")))
        .map(|e| {
            let task = &e["task"];
            let message = task["statusMessage"].as_str().unwrap_or("");
            format!("{} {message}", task["status"].as_str().unwrap_or("?"))
        })
        .collect();
    (seen, outcome)
}

#[test]
fn a_detached_task_is_followed_live_over_http_by_the_next_command() {
    let server = HttpServer::start(
        |port| {
            Argv::new(procs::task_server()).args(&[
                "--http",
                &format!("127.0.0.1:{port}"),
                "--step-ms",
                "400",
            ])
        },
        None,
    );
    let url = server.url.as_str();
    let run = taskwire(&["call", "long_running_task", "--detach", "--url", url]);
    assert_eq!(run.code, Some(0), "{run}");
    let id = run.stdout.lines().last().unwrap_or_default().to_owned();

    let run = taskwire(&["--json", "wait", &id, "--url", url]);
    assert_eq!(run.code, Some(0), "{run}");
    assert_eq!(run.json_lines()[0]["protocol"], "2026-07-28", "{run}");
    let (seen, outcome) = task_events(&run);
    assert!(seen[0].starts_with("working"), "{run}");
    assert_eq!(
        seen.last().map(String::as_str),
        Some(format!("completed {DONE_MESSAGE}").as_str()),
        "{run}"
    );
    assert!(
        seen.len() >= 2,
        "the status changes were followed live: {run}"
    );
    assert_eq!(outcome["outcome"], "completed", "{run}");
    assert_eq!(
        outcome["result"]["content"][0]["text"], "任务完成！",
        "{run}"
    );

    // Read again, finished: `tasks result` and `wait` give the same outcome at once.
    let run = taskwire(&["tasks", "result", &id, "--url", url]);
    assert_eq!(run.code, Some(0), "{run}");
    assert!(run.stdout.contains("任务完成！"), "{run}");
    let run = taskwire(&["--json", "wait", "no-such-task", "--url", url]);
    assert_eq!(run.code, Some(4), "{run}");
}

#[test]
fn a_finished_task_is_read_again_from_a_durable_stdio_server_in_2025() {
    let dir = taskwire_tests::peers::target_dir().join("tmp/cli-wait");
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    let path = dir.join("tasks.sqlite");
    let _ = std::fs::remove_file(&path);
    let store = format!("sqlite:{}", path.display());
    let on_server = |args: &[&str]| {
        let argv = Argv::new(procs::taskwire())
            .args(args)
            .args(&["--era", "2025-11-25", "--"])
            .arg(procs::task_server())
            .args(&["--store", &store, "--step-ms", "50"]);
        run(&argv, LIMIT)
    };
    let run = on_server(&["--json", "call", "long_running_task"]);
    assert_eq!(run.code, Some(0), "{run}");
    let id = run.json_lines()[1]["task"]["taskId"]
        .as_str()
        .expect("a task")
        .to_owned();

    let run = on_server(&["--json", "wait", &id]);
    assert_eq!(run.code, Some(0), "{run}");
    let (seen, outcome) = task_events(&run);
    assert_eq!(seen, [format!("completed {DONE_MESSAGE}")], "{run}");
    assert_eq!(
        outcome["result"]["content"][0]["text"], "任务完成！",
        "{run}"
    );
    let run = on_server(&["wait", "no-such-task"]);
    assert_eq!(run.code, Some(4), "{run}");
}
