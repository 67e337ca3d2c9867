//! Fairness of the server driver, over a real `test-server` process on each runtime: a tool
//! that floods status and progress updates cannot starve `tasks/cancel`, peer input or the
//! engine's timers.

use std::time::{Duration, Instant, SystemTime};

use serde_json::json;
use taskwire_driver::engine::TaskStatus;
use taskwire_driver::RpcError;
use taskwire_tests::procs::{self, Rt};
use taskwire_tests::test_server;

const LIMIT: Duration = Duration::from_secs(60);

/// `tasks/cancel` for a flooding task is answered within 100 ms, and the flood stops.
fn cancel_beats_a_flood(server: Rt) {
    let client = Rt::Smol;
    client.block_on(LIMIT, async {
        let (c, _child) = client.spawn(&test_server!(), &procs::server_args(server, 1_000));
        c.initialize().await.expect("initialize");
        let call = c
            .call_tool_as_task("flood", json!({}), None)
            .await
            .expect("the flood starts");
        let id = call.task.as_ref().expect("a task").id.to_string();
        // Flooding for real: a few thousand updates have gone by.
        for _ in 0..3 {
            call.updates.recv().await.expect("a status update");
        }
        let asked = Instant::now();
        let cancelled = c.cancel_task(&id).await.expect("tasks/cancel");
        let took = asked.elapsed();
        assert_eq!(cancelled.status, TaskStatus::Cancelled);
        assert!(
            took <= Duration::from_millis(100),
            "tasks/cancel took {took:?} against a flooding tool"
        );
        let got = c.get_task(&id).await.expect("tasks/get");
        assert_eq!(got.status, TaskStatus::Cancelled);
        c.close().await;
    });
}

/// A task's retention runs out on time while another tool floods and the peer keeps
/// sending: the expired task's work (a `ticker` appending to a file every 20 ms) stops
/// within 150 ms of its deadline.
fn expiry_fires_during_a_flood(server: Rt) {
    let client = Rt::Smol;
    let dir = std::env::temp_dir().join(format!(
        "taskwire-fairness-{}-{server:?}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).expect("a temp dir");
    let ticks = dir.join("ticks");
    let _ = std::fs::remove_file(&ticks);
    client.block_on(LIMIT, async {
        let (c, _child) = client.spawn(&test_server!(), &procs::server_args(server, 1_000));
        c.initialize().await.expect("initialize");
        let _flood = c
            .call_tool_as_task("flood", json!({}), None)
            .await
            .expect("the flood starts");
        let started = SystemTime::now();
        let ticker = c
            .call_tool_as_task("ticker", json!({ "file": ticks }), Some(1_000))
            .await
            .expect("the ticker starts");
        let id = ticker.task.as_ref().expect("a task").id.to_string();
        // Peer input keeps arriving for the whole second and a half.
        let until = Instant::now() + Duration::from_millis(1_500);
        while Instant::now() < until {
            c.request("ping", None).await.expect("ping");
        }
        let stopped = std::fs::metadata(&ticks)
            .and_then(|m| m.modified())
            .expect("the ticker wrote");
        let ran = stopped.duration_since(started).expect("after the start");
        assert!(
            ran >= Duration::from_millis(900) && ran <= Duration::from_millis(1_150),
            "the 1 s task's work last wrote {ran:?} after it started"
        );
        let gone = c
            .get_task(&id)
            .await
            .map_err(RpcError::from)
            .expect_err("expired");
        assert!(gone.message.contains("Task has expired"), "{gone:?}");
        c.close().await;
    });
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn cancel_beats_a_flood_smol_server() {
    cancel_beats_a_flood(Rt::Smol);
}

#[test]
fn cancel_beats_a_flood_tokio_server() {
    cancel_beats_a_flood(Rt::Tokio);
}

#[test]
fn expiry_fires_during_a_flood_smol_server() {
    expiry_fires_during_a_flood(Rt::Smol);
}

#[test]
fn expiry_fires_during_a_flood_tokio_server() {
    expiry_fires_during_a_flood(Rt::Tokio);
}
