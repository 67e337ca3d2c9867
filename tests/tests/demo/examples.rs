//! The adapters' stdio examples run as a user would run them:
//! - `smol_client` drives `smol_server` (echo, then a countdown task's statuses and result),
//!   directly and across runtimes, through the proxy example (on tokio);
//! - `proxy_lib` offers a tool its server runs only plainly as a task, in both front eras;
//! - `tokio_client` answers `tokio_server`'s question mid-task, and its answer is in the
//!   tool's result, directly and through the proxy;
//! - `resume_server` (SQLite): a task running when the process is killed with SIGKILL runs
//!   again through its resume hook when the server starts on the same file.

use std::process::Command;
use std::time::Duration;

use serde_json::json;
use taskwire_driver::engine::{ClientEra, Config, Era, TaskStatus, TaskSupport};
use taskwire_driver::{ChildProcess, Client, ClientBuilder, TaskUpdate};
use taskwire_tests::examples::{binary, database};
use taskwire_tests::peers::{run, Argv, Run};

/// Runs `client` with `server` (and its arguments) as its server's command line.
fn client_of(client: &str, server: &[&str]) -> Run {
    let mut argv = Argv::new(binary(client));
    for example in server {
        argv = argv.arg(binary(example));
    }
    run(&argv, Duration::from_secs(30))
}

/// `smol_client`'s output: connected to `name`, the echo, the countdown's statuses, the
/// result.
fn counted_down(ran: &Run, name: &str) {
    assert_eq!(ran.code, Some(0), "{ran}");
    let lines: Vec<&str> = ran.stdout.lines().collect();
    assert_eq!(lines[0], format!("connected to {name}"), "{ran}");
    assert_eq!(lines[1], "echo: hello", "{ran}");
    let statuses: Vec<&str> = lines
        .iter()
        .filter_map(|l| l.strip_prefix("status: "))
        .collect();
    for step in ["working 3 to go", "working 2 to go", "working 1 to go"] {
        assert!(statuses.contains(&step), "no `{step}` status\n{ran}");
    }
    assert_eq!(lines.last(), Some(&"result: liftoff"), "{ran}");
}

#[test]
fn smol_client_drives_smol_server() {
    counted_down(&client_of("smol_client", &["smol_server"]), "smol-example");
}

/// Across runtimes: a smol client, the proxy's server and client on tokio, a smol server.
#[test]
fn smol_client_drives_smol_server_through_the_proxy_on_tokio() {
    let ran = client_of("smol_client", &["proxy_lib", "smol_server"]);
    counted_down(&ran, "proxy-example");
}

/// `tokio_client`'s output: the question asked, the task waiting for its answer, and the
/// answer in the result.
fn answered(ran: &Run, name: &str) {
    assert_eq!(ran.code, Some(0), "{ran}");
    let lines: Vec<&str> = ran.stdout.lines().collect();
    assert_eq!(lines[0], format!("connected to {name}"), "{ran}");
    assert!(lines.contains(&"asked: Release 1.2.0?"), "{ran}");
    let waited = lines
        .iter()
        .any(|l| l.starts_with("status: input_required"));
    assert!(waited, "no input_required status\n{ran}");
    let result = "result: released 1.2.0, approved by ada";
    assert_eq!(lines.last(), Some(&result), "{ran}");
}

#[test]
fn tokio_client_answers_the_question_of_tokio_server() {
    answered(
        &client_of("tokio_client", &["tokio_server"]),
        "tokio-example",
    );
}

#[test]
fn tokio_client_answers_the_question_of_tokio_server_through_the_proxy() {
    let ran = client_of("tokio_client", &["proxy_lib", "tokio_server"]);
    answered(&ran, "proxy-example");
}

/// Runs `body` on smol, failing after 60 s.
fn block_on<T>(body: impl std::future::Future<Output = T>) -> T {
    smol::block_on(smol::future::or(body, async {
        smol::Timer::after(Duration::from_secs(60)).await;
        panic!("the test body did not finish within 60 s")
    }))
}

/// Starts example `name` with `args` as a stdio server, and a client of it in `era`.
fn spawn(era: Era, name: &str, args: &[String]) -> (Client, Box<dyn ChildProcess>) {
    let mut command = Command::new(binary(name));
    command.args(args);
    let config = Config {
        client_era: ClientEra::Only(era),
        ..Config::new("example-tests", "0")
    };
    taskwire_smol::spawn_server(command, ClientBuilder::new(config)).expect("it starts")
}

#[test]
fn the_proxy_example_offers_a_plain_tool_as_a_task() {
    let server = vec![binary("smol_server").display().to_string()];
    block_on(async {
        for era in [Era::V2025_11_25, Era::V2026_07_28] {
            let (client, _proxy) = spawn(era, "proxy_lib", &server);
            client.initialize().await.expect("initialize");
            if era == Era::V2025_11_25 {
                // 2026-07-28 lists no task support: the server decides per call.
                let tools = client.list_tools().await.expect("tools/list");
                let echo = tools.iter().find(|t| t.name == "echo").expect("echo");
                assert_eq!(echo.execution.task_support, TaskSupport::Optional);
            }
            let call = client.call_tool_as_task("echo", json!({"text": "hi"}), None);
            let call = call.await.expect("a call");
            assert!(call.task.is_some(), "{era:?}: not a task: {:?}", call.plain);
            let result = call.result().await.expect("its result");
            assert_eq!(result.all_text(), "hi", "{era:?}");
            client.close().await;
        }
    });
}

#[test]
fn the_resume_example_runs_a_killed_task_again() {
    let args = vec![database("resume_server").display().to_string()];
    block_on(async {
        let (client, mut process) = spawn(Era::V2025_11_25, "resume_server", &args);
        client.initialize().await.expect("initialize");
        let call = client.call_tool_as_task("backup", json!({"files": 5}), Some(600_000));
        let call = call.await.expect("a call");
        let task = call.task.clone().expect("a task").id.to_string();
        // Killed once the work is under way.
        loop {
            match call.updates.recv().await.expect("an update") {
                TaskUpdate::Status(info) | TaskUpdate::Message(info)
                    if info.status_message.as_deref() == Some("1 of 5 files copied") =>
                {
                    break
                }
                TaskUpdate::Result(outcome) => panic!("it ended before the kill: {outcome:?}"),
                _ => {}
            }
        }
        process.kill().expect("killed");
        process.wait().await.expect("its status");
        drop((call, client));

        let (client, _process) = spawn(Era::V2025_11_25, "resume_server", &args);
        client.initialize().await.expect("initialize again");
        let info = client.get_task(&task).await.expect("the task, still there");
        assert_eq!(info.status, TaskStatus::Working, "running again: {info:?}");
        let result = client.follow_task(&task).await.expect("followed").result();
        let result = result.await.expect("its result").all_text();
        assert_eq!(result, "backed up 5 files, resumed after a restart");
        client.close().await;
    });
}
