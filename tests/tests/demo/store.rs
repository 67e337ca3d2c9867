//! `task-server --store sqlite:PATH` and `--store postgres://…`: tasks that survive the
//! process. A server killed with
//! SIGKILL (one task done, one running) and started again on the same file answers a new
//! client, in either era: the finished task's outcome exactly as before (same result, same
//! `createdAt` and `ttl`), the running one started over by its resume hook, as its second
//! attempt. A file that is
//! no task store is refused at start with a message naming it, and left as it was. A second
//! server on a SQLite file another one holds exits at once, saying so, and the first serves
//! on; one started while the file is still held waits for it. A server that crashes right
//! after the database commits a write, before any reply waiting for it goes out, loses
//! nothing it acknowledged.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::json;
use taskwire_driver::engine::{ClientEra, Era, TaskStatus};
use taskwire_driver::CallToolResult;
use taskwire_tests::procs::{self, Rt};

const LIMIT: Duration = Duration::from_secs(60);

/// A fresh path for a database file of this test.
fn database(test: &str) -> PathBuf {
    let dir = taskwire_tests::peers::target_dir().join("tmp/store");
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    let path = dir.join(format!("{test}.db"));
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
    }
    path
}

/// `task-server --store SPEC` killed with one task done and one running, then started again.
fn survives_a_kill(era: Era, store: String) {
    let args = vec![
        "--store".to_owned(),
        store,
        "--step-ms".to_owned(),
        "100".to_owned(),
    ];
    let rt = Rt::Smol;
    rt.block_on(LIMIT, async {
        let server = procs::task_server();
        let (client, mut process) = rt.spawn_in(ClientEra::Only(era), &server, &args);
        client.initialize().await.expect("initialize");
        let call = client
            .call_tool_as_task("long_running_task", json!({}), Some(60_000))
            .await
            .expect("a task");
        let done = call.task.clone().expect("a task").id.to_string();
        let outcome = call.result().await.expect("its result");
        let before = client.get_task(&done).await.expect("tasks/get");
        let running = client
            .call_tool_as_task("long_running_task", json!({}), Some(60_000))
            .await
            .expect("a task")
            .task
            .expect("a task")
            .id
            .to_string();
        process.kill();

        let (client, _process) = rt.spawn_in(ClientEra::Only(era), &server, &args);
        client.initialize().await.expect("initialize again");
        let after = client.get_task(&done).await.expect("the finished task");
        assert_eq!(after.status, TaskStatus::Completed);
        assert_eq!(
            (after.created_at, after.ttl_ms),
            (before.created_at, before.ttl_ms)
        );
        // 2025-11-25 reads it with tasks/result; 2026-07-28 carries it inline in tasks/get.
        let again = match era {
            Era::V2025_11_25 => client.task_result(&done).await.expect("tasks/result"),
            _ => {
                let got = client
                    .request("tasks/get", Some(json!({ "taskId": done })))
                    .await
                    .expect("tasks/get");
                CallToolResult::from_value(got["result"].clone()).expect("a tool result")
            }
        };
        assert_eq!(
            serde_json::to_string(&again).unwrap(),
            serde_json::to_string(&outcome).unwrap(),
            "the same result"
        );
        // The running one starts over on the new process (the demo tool's resume hook),
        // saying it is the second attempt, and completes.
        let mut said = Vec::new();
        let resumed = loop {
            let got = client.get_task(&running).await.expect("the running task");
            said.extend(got.status_message.clone());
            if got.status.is_terminal() {
                break got;
            }
            smol::Timer::after(Duration::from_millis(20)).await;
        };
        assert_eq!(resumed.status, TaskStatus::Completed, "{resumed:?}");
        assert!(said.iter().any(|m| m.contains("第 2 次尝试")), "{said:?}");
    });
}

fn sqlite(test: &str) -> String {
    format!("sqlite:{}", database(test).display())
}

#[test]
fn a_finished_task_survives_a_kill_and_a_running_one_resumes_2025_11_25() {
    survives_a_kill(Era::V2025_11_25, sqlite("kill-2025"));
}

#[test]
fn a_finished_task_survives_a_kill_and_a_running_one_resumes_2026_07_28() {
    survives_a_kill(Era::V2026_07_28, sqlite("kill-2026"));
}

#[test]
fn on_postgres_a_finished_task_survives_a_kill_and_a_running_one_resumes_2025_11_25() {
    if let Some(url) = taskwire_tests::postgres::fresh_database("kill_2025") {
        survives_a_kill(Era::V2025_11_25, url);
    }
}

#[test]
fn on_postgres_a_finished_task_survives_a_kill_and_a_running_one_resumes_2026_07_28() {
    if let Some(url) = taskwire_tests::postgres::fresh_database("kill_2026") {
        survives_a_kill(Era::V2026_07_28, url);
    }
}

#[test]
fn a_file_that_is_no_task_store_is_refused_at_start_and_left_alone() {
    let path = database("not-a-store");
    let junk = "these are not the bytes of a database\n".repeat(200);
    std::fs::write(&path, &junk).expect("written");
    let out = std::process::Command::new(procs::task_server())
        .args(["--store", &format!("sqlite:{}", path.display())])
        .stdin(std::process::Stdio::null())
        .output()
        .expect("task-server runs");
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("sqlite:{}", path.display())) && stderr.contains("not a"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        junk,
        "left as it was"
    );
}

#[test]
fn a_second_server_on_a_sqlite_file_exits_saying_another_holds_it_and_the_first_serves_on() {
    let path = database("held");
    let store = format!("sqlite:{}", path.display());
    let rt = Rt::Smol;
    rt.block_on(LIMIT, async {
        let server = procs::task_server();
        let args = ["--store".to_owned(), store.clone()];
        let (client, _first) = rt.spawn(&server, &args);
        client.initialize().await.expect("initialize");

        let started = Instant::now();
        let second = std::process::Command::new(&server)
            .args(["--store", &format!("{store}?lock_wait=500")])
            .stdin(std::process::Stdio::null())
            .output()
            .expect("task-server runs");
        assert_eq!(second.status.code(), Some(1), "{second:?}");
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "within seconds: {:?}",
            started.elapsed()
        );
        let stderr = String::from_utf8_lossy(&second.stderr);
        assert!(
            stderr.contains(&store)
                && stderr.contains("another process")
                && stderr.contains("holds this file"),
            "names the file and says another process holds it: {stderr}"
        );

        let call = client
            .call_tool_as_task("long_running_task", json!({}), Some(60_000))
            .await
            .expect("the first server still makes tasks");
        call.result().await.expect("and finishes them");
    });
}

#[test]
fn a_server_started_while_its_sqlite_file_is_held_waits_for_it() {
    let path = database("waited");
    // The file's holder: a store in this process, let go of after a while (as a server
    // shutting down would).
    let holder = taskwire_sqlite::SqliteStore::open(&path).expect("opens");
    let hold = Duration::from_millis(1500);
    let rt = Rt::Smol;
    rt.block_on(LIMIT, async {
        let args = ["--store".to_owned(), format!("sqlite:{}", path.display())];
        let started = Instant::now();
        let (client, _server) = rt.spawn(&procs::task_server(), &args);
        let release = std::thread::spawn(move || {
            std::thread::sleep(hold);
            drop(holder);
        });
        client
            .initialize()
            .await
            .expect("it serves once the file is free");
        assert!(
            started.elapsed() >= hold,
            "it waited for the file: {:?}",
            started.elapsed()
        );
        release.join().unwrap();
        let call = client
            .call_tool_as_task("long_running_task", json!({}), Some(60_000))
            .await
            .expect("a task");
        call.result().await.expect("its result");
    });
}

/// Five tasks, one after another, each read to its result, on `test-server`, which aborts
/// right after the database commits the sixth (the demo task is the first made); a new server
/// on the file has every task the client was told of, each result as the client read it, and
/// the task whose creation was stored but never acknowledged, failed.
#[test]
fn a_crash_between_the_database_and_the_reply_loses_nothing_acknowledged() {
    crash_between(sqlite("crash-between"));
}

#[test]
fn on_postgres_a_crash_between_the_database_and_the_reply_loses_nothing_acknowledged() {
    if let Some(url) = taskwire_tests::postgres::fresh_database("crash_between") {
        crash_between(url);
    }
}

fn crash_between(store: String) {
    let server = taskwire_tests::test_server!();
    let args = |crash: bool| {
        let mut args = vec!["--store".to_owned(), store.clone()];
        args.extend(["--step-ms".to_owned(), "5".to_owned()]);
        if crash {
            args.extend(["--crash-on-task".to_owned(), "7".to_owned()]);
        }
        args
    };
    let rt = Rt::Smol;
    rt.block_on(LIMIT, async {
        let (client, mut process) = rt.spawn(&server, &args(true));
        client.initialize().await.expect("initialize");
        let mut told: Vec<(String, CallToolResult)> = Vec::new();
        for _ in 0..5 {
            let call = client
                .call_tool_as_task("long_running_task", json!({}), Some(600_000))
                .await
                .expect("a task");
            let task = call.task.clone().expect("a task").id.to_string();
            told.push((task, call.result().await.expect("its result")));
        }
        let cut = client
            .call_tool_as_task("long_running_task", json!({}), Some(600_000))
            .await;
        assert!(
            cut.is_err(),
            "no CreateTaskResult: the server crashed first"
        );
        let status = process.wait(rt, Duration::from_secs(10)).await;
        assert!(
            status.is_some_and(|s| !s.success()),
            "the server crashed as asked: {status:?}"
        );

        let (client, _process) = rt.spawn(&server, &args(false));
        client.initialize().await.expect("initialize again");
        for (task, result) in &told {
            let info = client
                .get_task(task)
                .await
                .expect("an acknowledged task is kept");
            assert_eq!(info.status, TaskStatus::Completed, "{info:?}");
            let again = client.task_result(task).await.expect("its result");
            assert_eq!(&again, result, "the result read before the crash");
        }
        let listed = client.list_tasks().await.expect("tasks/list");
        let unacknowledged: Vec<_> = listed
            .iter()
            .filter(|t| {
                !told.iter().any(|(id, _)| t.id.as_str() == id) && t.id.as_str() != "demo-task"
            })
            .collect();
        // Its work starts over (the demo tool's resume hook).
        assert!(
            matches!(&unacknowledged[..],
                [t] if matches!(t.status, TaskStatus::Working | TaskStatus::Completed)),
            "the stored but unacknowledged task is there, resumed: {unacknowledged:?}"
        );
    });
}
