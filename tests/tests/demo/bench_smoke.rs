//! The `bench` binary in `--smoke` mode (a few hundred calls, one round), so that the load
//! driver's checks run in `cargo test`: against our fixture (smol, tokio, smol on a SQLite
//! store) and the do-nothing server every workload runs and reports, the SQLite one with its
//! size on disk and beside smol in a table of its own; a server with wrong replies stops the
//! run with the reason; a missing peer fails with how to install it.

use std::path::Path;
use std::process::{Command, Output};

use taskwire_tests::procs;

fn bench(args: &[&str], target_dir: Option<&Path>) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_bench"));
    command.args(args);
    if let Some(dir) = target_dir {
        command.env("CARGO_TARGET_DIR", dir);
    }
    command.output().expect("bench runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The cells of the table row of `server` under the heading that contains `heading`.
fn row(report: &str, heading: &str, server: &str) -> Vec<String> {
    let section = report
        .split("\n### ")
        .find(|s| s.lines().next().is_some_and(|h| h.contains(heading)))
        .unwrap_or_else(|| panic!("no table {heading:?} in\n{report}"));
    let line = section
        .lines()
        .find(|l| l.starts_with(&format!("| {server} |")))
        .unwrap_or_else(|| panic!("no row {server:?} under {heading:?} in\n{report}"));
    line.trim_matches('|')
        .split('|')
        .skip(1)
        .map(|c| c.trim().to_owned())
        .collect()
}

/// A positive number in a cell such as `12,345`.
fn positive(cell: &str) -> bool {
    cell.replace(',', "").parse::<f64>().is_ok_and(|v| v > 0.0)
}

#[test]
fn smoke_run_measures_every_workload_on_ours_and_the_limit() {
    let task_server = procs::task_server();
    let out = bench(
        &[
            "--smoke",
            "--servers",
            "smol,smol-sqlite,tokio,null",
            "--task-server",
            task_server.to_str().expect("a UTF-8 path"),
            "--null-server",
            env!("CARGO_BIN_EXE_null-server"),
        ],
        None,
    );
    let (report, log) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "bench failed:\n{log}\n{report}");
    let sqlite = "taskwire (smol, SQLite NORMAL)";
    for ours in ["taskwire (smol)", "taskwire (tokio)", sqlite] {
        for heading in [
            "Sequential `tools/call echo`",
            "`tools/call echo`, 64 in flight",
            "Sequential task lifecycles",
            "Task lifecycles, 32 in flight",
            "retained tasks",
            "Startup",
        ] {
            let cells = row(&report, heading, ours);
            assert!(positive(&cells[0]), "{ours}, {heading}: {cells:?}");
        }
        // created/s, list ms and pages; RSS per task may round to 0 for so few tasks.
        let retained = row(&report, "retained tasks", ours);
        assert!(
            retained[..3].iter().all(|c| positive(c)),
            "{ours}: {retained:?}"
        );
        // The database's files per task only for the SQLite server.
        assert_eq!(
            positive(&retained[4]),
            ours == sqlite,
            "{ours}: {retained:?}"
        );
        assert_eq!(
            report.contains(&format!("### Ratios: {ours} / each server")),
            ours != sqlite
        );
    }
    assert_eq!(row(&report, "retained tasks", "taskwire (smol)")[4], "–");
    let durable = row(
        &report,
        "durable store vs in-memory (smol)",
        "lifecycle-32: lifecycles/s",
    );
    assert!(positive(&durable[0]), "{durable:?}");
    assert!(!report.contains("| smol-sqlite / smol | smol-sqlite-full"));
    let limit = "limit (null-server)";
    assert!(positive(
        &row(&report, "Sequential `tools/call echo`", limit)[0]
    ));
    assert_eq!(
        row(&report, "Sequential task lifecycles", limit),
        ["n/a", "n/a"]
    );
}

#[test]
fn a_wrong_echo_reply_stops_the_run_with_the_reason() {
    // The seed's server (no --bench-tools) has no echo: its fallback answers "未知工具: echo".
    let task_server = procs::task_server();
    let out = bench(
        &[
            "--smoke",
            "--servers",
            "null",
            "--workloads",
            "echo",
            "--null-server",
            task_server.to_str().expect("a UTF-8 path"),
        ],
        None,
    );
    let log = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{log}");
    assert!(log.contains("limit (null-server), echo"), "{log}");
    assert!(log.contains("one text block \"bench-"), "{log}");
    assert!(log.contains("未知工具: echo"), "{log}");
    assert!(out.stdout.is_empty(), "no report after a failure");
}

#[test]
fn a_missing_peer_fails_with_how_to_install_it() {
    let empty = std::env::temp_dir().join(format!("taskwire-bench-smoke-{}", std::process::id()));
    std::fs::create_dir_all(&empty).expect("a scratch directory");
    let out = bench(&["--smoke", "--servers", "rmcp"], Some(&empty));
    let _ = std::fs::remove_dir_all(&empty);
    let log = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{log}");
    assert!(log.contains("rmcp 3.11.0"), "{log}");
    assert!(log.contains("bash tests/peers/setup.sh"), "{log}");
}
