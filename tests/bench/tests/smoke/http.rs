//! The HTTP benchmark (`http-bench`) in its `--smoke` mode, so that it never rots: every
//! workload runs briefly against our server, the null hyper server and the peers' servers
//! (rmcp 3.11, the TypeScript SDK 1.32.2), every answer but the null server's checked.

use std::time::Duration;

use taskwire_tests::peers::{self, Argv};

#[test]
fn the_http_benchmark_runs_every_workload() {
    // The peers' servers are measured beside ours.
    if peers::ready("http benchmark smoke").is_none() {
        return;
    }
    let run = peers::run(
        &Argv::new(env!("CARGO_BIN_EXE_http-bench"))
            .arg("--smoke")
            .arg("--task-server")
            .arg(peers::demo::binary("task-server"))
            .arg("--null-server")
            .arg(env!("CARGO_BIN_EXE_null-http-server")),
        Duration::from_secs(120),
    );
    assert_eq!(run.code, Some(0), "{run}");
    for workload in [
        "2026 stateless",
        "2026 task lifecycle",
        "2025-11-25 session",
    ] {
        assert!(run.stdout.contains(workload), "{workload}\n{run}");
    }
    assert!(
        run.stdout.contains("idle 2025-11-25 sessions held: 50"),
        "{run}"
    );
}
