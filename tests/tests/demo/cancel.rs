//! `tasks/cancel` over real processes, every (server, client) runtime pair: the demo task
//! ends `cancelled`, and the work behind a task really stops.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::json;
use taskwire_demo::tools::{CANCELLED_MESSAGE, STEPS, TOOL};
use taskwire_driver::engine::jsonrpc::code;
use taskwire_driver::engine::TaskStatus;
use taskwire_driver::RpcError;
use taskwire_tests::procs::{self, Rt};
use taskwire_tests::{matrix, test_server};

use crate::common::LIMIT;

matrix!(cancel_demo_task, cancel_stops_work);

/// Cancelled after its first status: the answer, the updates that follow (status, then the
/// "Task was cancelled" error), and what `tasks/get` and `tasks/result` say afterwards.
fn cancel_demo_task(server: Rt, client: Rt) {
    client.block_on(LIMIT, async {
        // A minute per step: only the cancel can end it within the test's limit.
        let args = procs::server_args(server, 60_000);
        let (c, _child) = client.spawn(&procs::task_server(), &args);
        c.initialize().await.expect("initialize");
        let call = c
            .call_tool_as_task(TOOL, json!({}), None)
            .await
            .expect("the call is accepted");
        let id = call.task.as_ref().expect("a task").id.to_string();
        let first = call.updates.recv().await.expect("a first update");
        assert_eq!(procs::describe(&first), format!("working: {}", STEPS[0]));

        let cancelled = c.cancel_task(&id).await.expect("tasks/cancel");
        assert_eq!(
            (cancelled.status, cancelled.status_message.as_deref()),
            (TaskStatus::Cancelled, Some(CANCELLED_MESSAGE))
        );
        assert_eq!(
            procs::updates(&call).await,
            [
                format!("cancelled: {CANCELLED_MESSAGE}").as_str(),
                "error -32602: Task was cancelled"
            ]
        );
        let got = c.get_task(&id).await.expect("tasks/get");
        assert_eq!(got.status, TaskStatus::Cancelled);
        let error = c
            .task_result(&id)
            .await
            .map_err(RpcError::from)
            .expect_err("no result");
        assert_eq!(
            (error.code, error.message.as_str()),
            (code::INVALID_PARAMS, "Task was cancelled")
        );
        let again = c
            .cancel_task(&id)
            .await
            .map_err(RpcError::from)
            .expect_err("already terminal");
        assert_eq!(again.code, code::INVALID_PARAMS);
        c.close().await;
    });
}

/// The `ticker` tool appends a line every 20 ms until its future is dropped: after the cancel
/// the file stops growing (one tick of slack for a write already under way).
fn cancel_stops_work(server: Rt, client: Rt) {
    let file = std::env::temp_dir().join(format!(
        "taskwire-ticker-{}-{}-{}",
        std::process::id(),
        server.name(),
        client.name()
    ));
    let _ = std::fs::remove_file(&file);
    client.block_on(LIMIT, async {
        let (c, _child) = client.spawn(&test_server!(), &procs::server_args(server, 20));
        c.initialize().await.expect("initialize");
        let args = json!({ "file": file, "step_ms": 20 });
        let call = c
            .call_tool_as_task("ticker", args, None)
            .await
            .expect("the call is accepted");
        let id = call.task.as_ref().expect("a task").id.to_string();
        let start = Instant::now();
        while ticks(&file) < 3 {
            assert!(start.elapsed() < Duration::from_secs(10), "the ticker runs");
            client.sleep(Duration::from_millis(10)).await;
        }
        let cancelled = c.cancel_task(&id).await.expect("tasks/cancel");
        assert_eq!(cancelled.status, TaskStatus::Cancelled);
        let at_cancel = ticks(&file);
        client.sleep(Duration::from_millis(300)).await;
        let after = ticks(&file);
        assert!(
            after <= at_cancel + 1,
            "{at_cancel} ticks at the cancel, {after} after 15 more steps"
        );
        c.close().await;
    });
    let _ = std::fs::remove_file(&file);
}

fn ticks(file: &Path) -> usize {
    std::fs::read_to_string(file).map_or(0, |text| text.lines().count())
}
