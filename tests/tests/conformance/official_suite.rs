//! The official conformance suite itself (`@modelcontextprotocol/conformance`, pinned in
//! `tests/peers/conformance`, under Node 22) against `conformance-server --http`: 0.1.16's
//! active server scenarios, 0.2.0-alpha.12's scenarios required by 2025-11-25, and its ten
//! tasks scenarios (the 2026-07-28 extension). Each suite's tally goes to
//! `<target>/run-all/conformance.txt`, which `tests/run-all.sh` prints.

use std::time::Duration;

use taskwire_tests::peers::http::HttpServer;
use taskwire_tests::peers::{self, Argv, Run};

use crate::common::{counts, record, tally};

/// Runs one suite invocation against a fresh server.
fn suite(test: &str, release: &str, args: &[&str]) -> Option<(Run, String)> {
    let peers = peers::ready(test)?;
    // `conformance-server --http` on a free local port, killed when dropped.
    let program = peers::demo::binary("conformance-server");
    let server = HttpServer::start(
        |port| {
            Argv::new(program)
                .args(&["--http", &format!("127.0.0.1:{port}")])
                .env("RUST_LOG", "warn")
        },
        None,
    );
    let mut argv = vec!["server", "--url", &server.url];
    argv.extend_from_slice(args);
    let run = peers::run(&peers.conformance(release, &argv), Duration::from_secs(300));
    Some((run, server.url.clone()))
}

#[test]
fn suite_0_1_16_passes_every_active_server_scenario() {
    let Some((run, _)) = suite("conformance 0.1.16", "stable", &[]) else {
        return;
    };
    let total = tally(&run, "Total:");
    record(&format!(
        "conformance 0.1.16, active server scenarios: {total}"
    ));
    let (passed, failed) = counts(total);
    assert_eq!(failed, 0, "{run}");
    assert!(
        passed >= 39,
        "fewer checks than the 39 of 0.1.16: {total}\n{run}"
    );
    assert_eq!(run.code, Some(0), "{run}");
}

#[test]
fn suite_0_1_16_passes_its_pending_server_scenarios() {
    let Some((run, _)) = suite(
        "conformance 0.1.16 pending",
        "stable",
        &["--suite", "pending"],
    ) else {
        return;
    };
    let total = tally(&run, "Total:");
    record(&format!(
        "conformance 0.1.16, pending server scenarios (json-schema-2020-12, server-sse-polling): {total}"
    ));
    let (passed, failed) = counts(total);
    assert_eq!(failed, 0, "{run}");
    assert!(passed >= 7, "fewer checks than the 7 seen: {total}\n{run}");
    assert!(
        run.stdout.contains("server-sse-polling: 3 passed"),
        "the stream is primed, names its retry delay, and resumes\n{run}"
    );
    assert_eq!(run.code, Some(0), "{run}");
}

#[test]
fn suite_0_2_0_alpha_12_passes_every_check_2025_11_25_requires() {
    let Some((run, _)) = suite(
        "conformance 0.2.0-alpha.12",
        "next",
        &["--requirements", "2025-11-25"],
    ) else {
        return;
    };
    let total = tally(&run, "Total:");
    record(&format!(
        "conformance 0.2.0-alpha.12 --requirements 2025-11-25: {total}"
    ));
    let (passed, failed) = counts(total);
    assert_eq!(failed, 0, "{run}");
    assert!(
        passed >= 77,
        "fewer checks than the 77 seen: {total}\n{run}"
    );
    assert_eq!(run.code, Some(0), "{run}");
}

#[test]
fn suite_0_2_0_alpha_12_passes_every_tasks_scenario() {
    let scenarios = [
        "tasks-lifecycle",
        "tasks-capability-negotiation",
        "tasks-wire-fields",
        "tasks-request-state-removal",
        "tasks-mrtr-input",
        "tasks-request-headers",
        "tasks-dispatch-and-envelope",
        "tasks-status-notifications",
        "tasks-required-task-error",
        "tasks-mrtr-composition",
    ];
    let (mut passed, mut checks) = (0, 0);
    for scenario in scenarios {
        let Some((run, _)) = suite(
            "conformance 0.2.0-alpha.12 tasks",
            "next",
            &["--scenario", scenario],
        ) else {
            return;
        };
        let line = tally(&run, "Passed:");
        let (ok, of) = counts(line);
        assert_eq!(ok, of, "{scenario}: {line}\n{run}");
        assert_eq!(run.code, Some(0), "{scenario}\n{run}");
        passed += ok;
        checks += of;
    }
    record(&format!(
        "conformance 0.2.0-alpha.12, the ten tasks scenarios: {passed}/{checks} checks passed"
    ));
    assert!(
        checks >= 44,
        "fewer checks than the 44 seen: {passed}/{checks}"
    );
}
