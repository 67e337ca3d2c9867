//! The demo flow end to end over real processes: the release `task-server` under smol or
//! tokio, driven by a smol- or tokio-driven client, with short steps; and the README's
//! `task-client` with the real one-second steps.

use std::time::{Duration, Instant};

use serde_json::json;
use taskwire_demo::flow::{self, TTL_MS};
use taskwire_demo::tools::{DONE_MESSAGE, RESULT_TEXT, STEPS, TOOL};
use taskwire_driver::engine::{ClientEra, TaskStatus};
use taskwire_driver::CallToolResult;
use taskwire_tests::matrix;
use taskwire_tests::procs::{self, Rt};

use crate::common::{LIMIT, STEP_MS};

matrix!(seed_flow, seed_flow_2026, task_updates);

const V2025: &str = "2025-11-25";
const V2026: &str = "2026-07-28";

/// What `task-client` prints in the era `version`, minus the timestamps; `ID` stands for the
/// task id.
fn expected_lines(version: &str) -> Vec<String> {
    let mut lines = vec![
        format!(
            "connected to task-server {} (protocol {version})",
            env!("CARGO_PKG_VERSION")
        ),
        format!("tools: [\"{TOOL}\"]"),
        format!("calling {TOOL} as a task (ttl {TTL_MS} ms)"),
        "task created: ID".into(),
        "status: working - ".into(),
    ];
    lines.extend(STEPS.map(|step| format!("status: working - {step}")));
    lines.push(format!("status: working - {DONE_MESSAGE}"));
    lines.push(format!("status: completed - {DONE_MESSAGE}"));
    lines.push(format!("result: {RESULT_TEXT}"));
    lines
}

/// Replaces the (UUID v7) task id with `ID`, checking its shape.
fn mask_task_id(text: &str) -> String {
    match text.strip_prefix("task created: ") {
        Some(id) => {
            assert_eq!(id.len(), 36, "task id {id:?}");
            assert_eq!(&id[14..15], "7", "task id {id:?} is a UUID v7");
            "task created: ID".into()
        }
        None => text.to_owned(),
    }
}

/// The shared flow (`taskwire_demo::flow::run`, what `task-client` runs) prints the seed's
/// steps in order and reports success; the server exits 0 once the client closes.
fn seed_flow(server: Rt, client: Rt) {
    seed_flow_in(
        server,
        client,
        ClientEra::Only(taskwire_engine::Era::V2025_11_25),
        V2025,
    );
}

/// [`seed_flow`] in 2026-07-28: the same steps, each status change once (polls and the
/// listen stream agree).
fn seed_flow_2026(server: Rt, client: Rt) {
    seed_flow_in(
        server,
        client,
        ClientEra::Only(taskwire_engine::Era::V2026_07_28),
        V2026,
    );
}

fn seed_flow_in(server: Rt, client: Rt, era: ClientEra, version: &str) {
    let lines = client.block_on(LIMIT, async {
        let args = procs::server_args(server, STEP_MS);
        let (c, mut child) = client.spawn_in(era, &procs::task_server(), &args);
        let mut lines = Vec::new();
        let completed = flow::run(&c, |line| lines.push(line)).await;
        assert!(completed.expect("the flow runs"), "{lines:#?}");
        c.close().await;
        let status = child.wait(client, Duration::from_secs(10)).await;
        assert!(status.expect("the server exits").success(), "{status:?}");
        lines
    });
    let texts: Vec<String> = lines
        .iter()
        .map(|l| mask_task_id(procs::stamped(l).1))
        .collect();
    assert_eq!(texts, expected_lines(version));
}

/// The client API's view: the created task, each status change once and in order, the result
/// (tied to the task); then `tasks/get` and `tasks/result` agree.
fn task_updates(server: Rt, client: Rt) {
    client.block_on(LIMIT, async {
        let args = procs::server_args(server, STEP_MS);
        let (c, _child) = client.spawn(&procs::task_server(), &args);
        c.initialize().await.expect("initialize");
        let call = c
            .call_tool_as_task(TOOL, json!({}), Some(TTL_MS))
            .await
            .expect("the call is accepted");
        let task = call.task.clone().expect("the server created a task");
        assert_eq!(task.status, TaskStatus::Working);
        assert_eq!(task.status_message, None);
        assert_eq!(task.ttl_ms, Some(TTL_MS));
        assert_eq!(task.poll_interval_ms, Some(500));

        let mut expected: Vec<String> = STEPS.map(|s| format!("working: {s}")).into();
        expected.push(format!("working: {DONE_MESSAGE}"));
        expected.push(format!("completed: {DONE_MESSAGE}"));
        expected.push(format!("result: {RESULT_TEXT}"));
        assert_eq!(procs::updates(&call).await, expected);

        let got = c.get_task(&task.id).await.expect("tasks/get");
        assert_eq!(
            (got.status, got.status_message.as_deref()),
            (TaskStatus::Completed, Some(DONE_MESSAGE))
        );
        let result = c.task_result(&task.id).await.expect("tasks/result");
        // The related-task `_meta` the server sends is the call's own: not in the result.
        assert_eq!(result, CallToolResult::text(RESULT_TEXT));
        c.close().await;
    });
}

/// `task-client --runtime R [ERA...]` as the README runs it, real one-second steps: every
/// line in order, in the era `version`, timestamps non-decreasing, about three seconds in
/// all (loosely: 2.5 s to 10 s).
fn task_client_real_steps(runtime: Rt, era: &[&str], version: &str) {
    let start = Instant::now();
    let mut args = vec!["--runtime".to_owned(), runtime.name().to_owned()];
    args.extend(era.iter().map(|a| a.to_string()));
    let mut run = procs::Raw::spawn(&procs::task_client(), &args, None);
    run.close_stdin();
    let status = run.wait(Duration::from_secs(30));
    let elapsed = start.elapsed();
    let stdout: String = std::iter::from_fn(|| run.next_line(Duration::from_secs(5))).collect();
    let stderr = run.stderr();
    let status = status.expect("task-client finishes within 30 s");
    assert!(status.success(), "{status}\n{stdout}\n{stderr}");
    assert_eq!(stderr, "", "nothing on stderr");
    let stamped: Vec<(f64, &str)> = stdout.lines().map(procs::stamped).collect();
    let texts: Vec<String> = stamped.iter().map(|(_, t)| mask_task_id(t)).collect();
    assert_eq!(texts, expected_lines(version));
    let stamps: Vec<f64> = stamped.iter().map(|(s, _)| *s).collect();
    assert!(stamps.windows(2).all(|w| w[0] <= w[1]), "{stamps:?}");
    let last = stamps[stamps.len() - 1];
    assert!((2.5..10.0).contains(&last), "result after {last} s");
    assert!(
        (2.5..10.0).contains(&elapsed.as_secs_f64()),
        "ran {elapsed:?}"
    );
}

/// By default the client speaks what the server speaks best: 2026-07-28.
#[test]
fn task_client_smol_real_steps() {
    task_client_real_steps(Rt::Smol, &[], V2026);
}

#[test]
fn task_client_tokio_real_steps() {
    task_client_real_steps(Rt::Tokio, &[], V2026);
}

#[test]
fn task_client_real_steps_in_2025_11_25() {
    task_client_real_steps(Rt::Smol, &["--era", V2025], V2025);
}
