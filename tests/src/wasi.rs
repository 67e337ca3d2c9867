//! The WASI build under real WASI runtimes (`tests/tests/wasi.rs`, `--test wasi`): build the `wasm32-wasip1`
//! `task-server` once per test process, and run it under Node's `node:wasi` or wasmtime's
//! Python package through the runner scripts in `tests/wasi/`.
//!
//! Nothing here skips silently: a missing target or runtime fails the test with what to run.
//! `TASKWIRE_SKIP_WASI=1` is the explicit opt-out, reported by [`skip()`]. The peers (wasmtime's
//! venv, the SDK clients) come from [`crate::peers::ready`], which installs them if needed.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use crate::peers::{self, Argv, Peers};
use crate::skip;

/// Set to `1` to skip the WASI tests. CI never sets it.
pub const SKIP_ENV: &str = "TASKWIRE_SKIP_WASI";

/// The WASI runtimes the module runs under.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Runtime {
    /// Node's built-in `node:wasi`, through `tests/wasi/run-node.mjs`.
    Node,
    /// The PyPI package `wasmtime` (in the peers' venv), through `tests/wasi/run_wasmtime.py`.
    Wasmtime,
}

/// `true`, after reporting the skip ([`crate::skip::record`]: on stderr, and counted by
/// `tests/run-all.sh`), when `TASKWIRE_SKIP_WASI=1`.
pub fn skip(test: &str) -> bool {
    let skip = skip::opted_out(SKIP_ENV);
    if skip {
        skip::record(test, SKIP_ENV, "the WASI build is not run");
    }
    skip
}

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ has a parent")
        .to_path_buf()
}

/// Runs a cargo build in the repository; `Err` carries the end of its output.
fn cargo_build(args: &[&str], what: &str, host_flags: bool) -> Result<(), String> {
    let mut command = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    command
        .arg("build")
        .args(args)
        .arg("--target-dir")
        .arg(peers::target_dir())
        .current_dir(repo())
        .stdin(Stdio::null());
    if !host_flags {
        // Flags meant for the host build (e.g. coverage instrumentation) break a wasm build.
        for var in [
            "RUSTFLAGS",
            "CARGO_ENCODED_RUSTFLAGS",
            "CARGO_BUILD_RUSTFLAGS",
        ] {
            command.env_remove(var);
        }
    }
    let out = command
        .output()
        .map_err(|e| format!("cannot run cargo to build {what}: {e}"))?;
    if out.status.success() {
        return Ok(());
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = stderr.lines().collect();
    let tail = lines[lines.len().saturating_sub(30)..].join("\n");
    let mut why = format!(
        "`cargo build {}` ({what}) failed: {}",
        args.join(" "),
        out.status
    );
    if stderr.contains("target may not be installed") || stderr.contains("rustup target add") {
        why.push_str(
            "\nthe wasm32-wasip1 target is missing: run `rustup target add wasm32-wasip1` \
             (or set TASKWIRE_SKIP_WASI=1 to opt out of the WASI tests; CI must not)",
        );
    }
    Err(format!("{why}\n{tail}"))
}

/// The release `task-server.wasm`, built once per test process with
/// `cargo build --release --target wasm32-wasip1 -p taskwire-demo --bin task-server` (the
/// dev-profile module is too slow under wasmtime for the timing of the status lines).
/// Panics (failing the test) when it cannot be built, e.g. without the target.
pub fn module() -> PathBuf {
    static MODULE: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    let built = MODULE.get_or_init(|| {
        let args = [
            "--release",
            "--target",
            "wasm32-wasip1",
            "-p",
            "taskwire-demo",
            "--bin",
            "task-server",
        ];
        cargo_build(&args, "the WASI task-server", false)?;
        let path = peers::target_dir().join("wasm32-wasip1/release/task-server.wasm");
        match path.exists() {
            true => Ok(path),
            false => Err(format!(
                "the build succeeded but {} is missing",
                path.display()
            )),
        }
    });
    built.clone().unwrap_or_else(|e| panic!("{e}"))
}

/// The native `task-client` (dev profile), built once per test process (a no-op when fresh).
pub fn task_client() -> PathBuf {
    static CLIENT: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    let built = CLIENT.get_or_init(|| {
        let args = ["-p", "taskwire-demo", "--bin", "task-client"];
        cargo_build(&args, "the native task-client", true)?;
        let name = format!("task-client{}", std::env::consts::EXE_SUFFIX);
        Ok(peers::target_dir().join("debug").join(name))
    });
    built.clone().unwrap_or_else(|e| panic!("{e}"))
}

/// Node's version, checked once; panics with what to install when `node` is missing.
pub fn node() {
    static NODE: OnceLock<Result<(), String>> = OnceLock::new();
    let found = NODE.get_or_init(|| {
        let out = Command::new("node")
            .arg("--version")
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("`node` is needed to run the WASI module (Node >= 20): {e}"))?;
        match out.status.success() {
            true => Ok(()),
            false => Err(format!("`node --version` failed: {}", out.status)),
        }
    });
    if let Err(e) = found {
        panic!("{e}");
    }
}

impl Runtime {
    /// Its name in test output.
    pub fn name(self) -> &'static str {
        match self {
            Runtime::Node => "node",
            Runtime::Wasmtime => "wasmtime",
        }
    }

    /// The command that runs `task-server.wasm ARGS` under this runtime on its own stdio.
    /// wasmtime needs the peers' venv (`peers`); Node needs only `node`.
    pub fn server(self, peers: Option<&Peers>, args: &[&str]) -> Argv {
        let module = module();
        let runner = match self {
            Runtime::Node => {
                node();
                Argv::new("node").arg(repo().join("tests/wasi/run-node.mjs"))
            }
            Runtime::Wasmtime => {
                let peers = peers.expect("the wasmtime runner needs the peers' venv");
                Argv::new(&peers.python).arg(repo().join("tests/wasi/run_wasmtime.py"))
            }
        };
        runner.arg(module).args(args)
    }
}
