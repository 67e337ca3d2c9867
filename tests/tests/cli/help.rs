//! Every binary users run says what it takes (`--help`, `-h`) and what it is (`--version`),
//! and refuses an unknown option as a usage error (exit 2); the benchmarks' binaries are
//! checked the same way in `tests/bench/tests/smoke/usage.rs`.

use taskwire_tests::peers::demo::binary;
use taskwire_tests::procs::check_usage;
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
        (
            "scripted-server",
            env!("CARGO_BIN_EXE_scripted-server").into(),
            "--log",
        ),
    ];
    for (name, path, option) in binaries {
        check_usage(name, &path, option);
    }
}
