//! Every binary users run says what it takes (`--help`, `-h`) and what it is (`--version`),
//! and refuses an unknown option as a usage error (exit 2).

use std::time::Duration;

use taskwire_tests::peers::demo::binary;
use taskwire_tests::peers::{run, Argv};
use taskwire_tests::test_server;

#[test]
fn every_binary_has_help_and_version() {
    let binaries = [
        ("taskwire", binary("taskwire"), "--json"),
        ("task-server", binary("task-server"), "--step-ms"),
        ("task-client", binary("task-client"), "--request-timeout-ms"),
        ("conformance-server", binary("conformance-server"), "--http"),
        ("conformance-client", binary("conformance-client"), "<URL>"),
        ("test-server", test_server!(), "--crash-on-task"),
        ("bench", env!("CARGO_BIN_EXE_bench").into(), "--workloads"),
        (
            "http-bench",
            env!("CARGO_BIN_EXE_http-bench").into(),
            "--sessions",
        ),
        (
            "instructions",
            env!("CARGO_BIN_EXE_instructions").into(),
            "[TASK_SERVER]",
        ),
        (
            "null-server",
            env!("CARGO_BIN_EXE_null-server").into(),
            "--version",
        ),
        (
            "null-relay",
            env!("CARGO_BIN_EXE_null-relay").into(),
            "<SERVER>...",
        ),
        (
            "null-http-server",
            env!("CARGO_BIN_EXE_null-http-server").into(),
            "<ADDR>",
        ),
        (
            "scripted-server",
            env!("CARGO_BIN_EXE_scripted-server").into(),
            "--log",
        ),
    ];
    let limit = Duration::from_secs(20);
    for (name, path, option) in binaries {
        for help in ["--help", "-h"] {
            let ran = run(&Argv::new(&path).arg(help), limit);
            assert_eq!(ran.code, Some(0), "{ran}");
            assert!(ran.stdout.contains(&format!("Usage: {name}")), "{ran}");
            assert!(
                ran.stdout.contains(option),
                "{name} {help} names {option}: {ran}"
            );
        }
        let ran = run(&Argv::new(&path).arg("--version"), limit);
        assert_eq!(
            ran.stdout.trim(),
            format!("{name} {}", env!("CARGO_PKG_VERSION")),
            "{ran}"
        );
        let ran = run(&Argv::new(&path).arg("--no-such-option"), limit);
        assert_eq!(ran.code, Some(2), "{ran}");
        assert!(ran.stderr.contains("unexpected argument"), "{ran}");
    }
}
