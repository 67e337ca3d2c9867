//! The `bench` binary in `--smoke` mode (a few hundred calls, one round), so that the load
//! driver's checks run in `cargo test`: against our fixture (smol, tokio, smol on a SQLite
//! store, the proxy in front of smol) and the do-nothing server every workload runs and
//! reports, the SQLite one with its size on disk and beside smol in a table of its own, the
//! proxy beside smol in another with its targets judged; the same on a PostgreSQL store, whose
//! databases are gone afterwards; a server with wrong replies stops the run with the reason; a
//! missing peer, or a missing `TASKWIRE_POSTGRES_URL`, fails with what to do.

use std::path::Path;
use std::process::{Command, Output, Stdio};

use taskwire_bench::postgres_db::PostgresServer;
use taskwire_tests::{postgres, procs};

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
            "smol,smol-sqlite,tokio,null,proxy,relay",
            "--task-server",
            task_server.to_str().expect("a UTF-8 path"),
            "--null-server",
            env!("CARGO_BIN_EXE_null-server"),
            "--taskwire",
            procs::taskwire().to_str().expect("a UTF-8 path"),
            "--null-relay",
            env!("CARGO_BIN_EXE_null-relay"),
        ],
        None,
    );
    let (report, log) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "bench failed:\n{log}\n{report}");
    let sqlite = "taskwire (smol, SQLite NORMAL)";
    let proxy = "taskwire proxy → taskwire (smol)";
    let relay = "null-relay → taskwire (smol)";
    for ours in ["taskwire (smol)", "taskwire (tokio)", sqlite, proxy, relay] {
        if ours == proxy {
            every_workload_but_retained_measured(&report, ours);
            assert!(row(&report, "retained tasks", ours)
                .iter()
                .all(|c| c == "n/a"));
            continue;
        }
        every_workload_measured(&report, ours);
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
            ![sqlite, proxy, relay].contains(&ours)
        );
    }
    // The proxy and the relay beside smol, with issue 23's targets judged; the proxy beside
    // the relay.
    let beside = row(&report, "Ratios: in front of smol", "echo: p50 µs");
    assert!(beside.iter().all(|c| positive(c)), "{beside:?}");
    let own = row(&report, "the proxy / the null relay", "echo-64: calls/s");
    assert!(positive(&own[0]), "{own:?}");
    for target in [
        "echo p50 µs",
        "echo-64 calls/s",
        "lifecycle-32 lifecycles/s",
    ] {
        assert!(
            report.contains(&format!("- {proxy}, {target}: ")),
            "{target}: {report}"
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

#[test]
fn smoke_run_measures_ours_on_postgres_and_drops_its_databases() {
    let Some(url) = postgres::url() else { return };
    let task_server = procs::task_server();
    let child = Command::new(env!("CARGO_BIN_EXE_bench"))
        .args([
            "--smoke",
            "--servers",
            "smol,smol-postgres",
            "--task-server",
            task_server.to_str().expect("a UTF-8 path"),
        ])
        .env(postgres::URL_ENV, &url)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("bench starts");
    let pid = child.id();
    let out = child.wait_with_output().expect("bench runs");
    let (report, log) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "bench failed:\n{log}\n{report}");
    let ours = "taskwire (smol, PostgreSQL)";
    every_workload_measured(&report, ours);
    // created/s, list ms and pages, then the task table's size per task.
    let retained = row(&report, "retained tasks", ours);
    assert!(retained[..3].iter().all(|c| positive(c)), "{retained:?}");
    assert!(positive(&retained[4]), "{retained:?}");
    assert!(!report.contains(&format!("### Ratios: {ours} / each server")));
    let durable = row(
        &report,
        "durable store vs in-memory (smol)",
        "lifecycle-32: lifecycles/s",
    );
    assert!(positive(&durable[0]), "{durable:?}");
    assert!(report.contains("| smol-postgres / smol |"), "{report}");
    assert!(
        report.contains(&format!("- {ours}, lifecycle-32 lifecycles/s: "))
            && report.contains("(target ≥ 0.2)"),
        "{report}"
    );
    let server = PostgresServer::new(url).expect("a PostgreSQL URL");
    let prefix = format!("taskwire_bench_{pid}_");
    let left: Vec<String> = server
        .bench_databases()
        .expect("the databases on the server")
        .into_iter()
        .filter(|name| name.starts_with(&prefix))
        .collect();
    assert!(left.is_empty(), "bench left {left:?}");
}

#[test]
fn postgres_without_its_url_fails_with_what_to_do() {
    let task_server = procs::task_server();
    let out = Command::new(env!("CARGO_BIN_EXE_bench"))
        .args([
            "--smoke",
            "--servers",
            "smol,smol-postgres",
            "--task-server",
            task_server.to_str().expect("a UTF-8 path"),
        ])
        .env_remove(postgres::URL_ENV)
        .output()
        .expect("bench runs");
    let log = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{log}");
    assert!(log.contains("taskwire (smol, PostgreSQL)"), "{log}");
    assert!(log.contains("TASKWIRE_POSTGRES_URL is not set"), "{log}");
    assert!(log.contains("bash tests/postgres.sh start"), "{log}");
    assert!(log.contains("--servers smol"), "{log}");
    assert!(out.stdout.is_empty(), "no report without a server");
}

/// Each workload's first column is a positive figure in `ours`'s row.
fn every_workload_measured(report: &str, ours: &str) {
    every_workload_but_retained_measured(report, ours);
    let cells = row(report, "retained tasks", ours);
    assert!(positive(&cells[0]), "{ours}, retained: {cells:?}");
}

fn every_workload_but_retained_measured(report: &str, ours: &str) {
    for heading in [
        "Sequential `tools/call echo`",
        "`tools/call echo`, 64 in flight",
        "Sequential task lifecycles",
        "Task lifecycles, 32 in flight",
        "Startup",
    ] {
        let cells = row(report, heading, ours);
        assert!(positive(&cells[0]), "{ours}, {heading}: {cells:?}");
    }
}
