//! The benchmarks' binaries say what they take (`--help`, `-h`) and what they are
//! (`--version`), and refuse an unknown option as a usage error (exit 2).

use taskwire_tests::procs::check_usage;

#[test]
fn every_benchmark_binary_has_help_and_version() {
    let binaries = [
        ("bench", env!("CARGO_BIN_EXE_bench"), "--workloads"),
        ("http-bench", env!("CARGO_BIN_EXE_http-bench"), "--sessions"),
        ("fleet-bench", env!("CARGO_BIN_EXE_fleet-bench"), "--stored"),
        (
            "instructions",
            env!("CARGO_BIN_EXE_instructions"),
            "[TASK_SERVER]",
        ),
        (
            "null-server",
            env!("CARGO_BIN_EXE_null-server"),
            "--version",
        ),
        (
            "null-relay",
            env!("CARGO_BIN_EXE_null-relay"),
            "<SERVER>...",
        ),
        (
            "null-http-server",
            env!("CARGO_BIN_EXE_null-http-server"),
            "<ADDR>",
        ),
    ];
    for (name, path, option) in binaries {
        check_usage(name, path.as_ref(), option);
    }
}
