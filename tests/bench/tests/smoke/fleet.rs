//! The fleet benchmark (`fleet-bench`) in its `--smoke` mode, so that it never rots: one
//! process and a fleet (HAProxy, two fronts, two workers) on PostgreSQL run task lifecycles
//! briefly, with every answer checked, and each role starts on a thousand stored tasks.

use std::time::Duration;

use taskwire_tests::peers::{self, Argv};

#[test]
fn the_fleet_benchmark_runs_both_set_ups() {
    let Some(url) = taskwire_tests::postgres::url() else {
        return;
    };
    let run = peers::run(
        &Argv::new(env!("CARGO_BIN_EXE_fleet-bench"))
            .arg("--smoke")
            .arg("--task-server")
            .arg(peers::demo::binary("task-server"))
            .env(taskwire_tests::postgres::URL_ENV, url),
        Duration::from_secs(180),
    );
    assert_eq!(run.code, Some(0), "{run}");
    for line in [
        "| one process (both) |",
        "| fleet (HAProxy, 2 fronts, 2 workers) |",
        "statements per lifecycle (target ≤ 2×)",
        "| worker |",
    ] {
        assert!(run.stdout.contains(line), "{line}\n{run}");
    }
}
