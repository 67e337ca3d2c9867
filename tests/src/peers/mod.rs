//! The official MCP peers for the interop suites (`tests/tests/interop/`).
//!
//! - [`ready`]: installs the pinned peers once per test process (`tests/peers/setup.sh` into
//!   `<target>/peers/`), or reports that the test is skipped because `TASKWIRE_SKIP_INTEROP=1`.
//!   An install that fails makes the test fail, with the installer's output.
//! - [`Peers`]: command lines for each peer (Python seed server and SDK client, the TypeScript
//!   client and server scripts, each also over Streamable HTTP, the seed server over HTTP
//!   (`py_http_server.py`), server-everything, the Inspector CLI, the `tap.py` recorder, and
//!   the benchmark's servers: `bench_server.{mjs,py}` and the rmcp echo server); the FastMCP 3
//!   and 4 task server and client ([`fastmcp`]) and the ext-tasks requester ([`ext_tasks`]).
//! - [`run()`]: runs a peer process with a deadline (the whole process group is killed when it
//!   passes) and parses the JSON lines it prints.
//! - [`wire`]: reads recorded traffic (`tap.py` logs and `tests/fixtures/recorded/*.jsonl`) and
//!   checks every message our side sent against the MCP 2025-11-25 schema.
//! - [`replay`] and [`fed`]: a recorded official server played back to our client engine, and
//!   helpers for feeding recorded peer traffic to a [`Probe`](taskwire_harness::Probe) (the quirk suites).
//! - [`demo`]: the release demo binaries (built once per process) and `task-client` output.
//! - [`http`]: a Streamable HTTP server (ours or a peer's) as a child process on a free port,
//!   ready once it accepts a TCP connection, killed when dropped.
//!
//! The suites: `interop_{python,typescript,everything,inspector}.rs` (live processes, named
//! `<client>_to_<server>_<case>`) and `interop_quirks_{python,typescript,inspector}.rs`
//! (recorded traffic, one test per tolerated quirk).

pub mod demo;
pub mod ext_tasks;
pub mod fastmcp;
pub mod fed;
pub mod http;
pub mod http_tap;
mod install;
pub mod replay;
pub mod rmcp_http;
pub mod run;
pub mod task_peers;
pub mod wire;

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

use crate::skip;

pub use install::target_dir;
pub use run::{run, Run};

/// Set to `1` to skip the interop tests (offline use). CI never sets it.
pub const SKIP_ENV: &str = "TASKWIRE_SKIP_INTEROP";

/// The installed peers, or `None` when the interop tests are switched off; then the test has
/// reported that it is skipped and why ([`crate::skip::record`]: on stderr, and counted by
/// `tests/run-all.sh`), and should return at once. Panics with the installer's output when
/// the peers cannot be installed.
pub fn ready(test: &str) -> Option<&'static Peers> {
    if skip::opted_out(SKIP_ENV) {
        skip::record(test, SKIP_ENV, "the official SDK peers are not run");
        return None;
    }
    Some(install::peers())
}

/// Where everything lives once `setup.sh` has run.
#[derive(Clone, Debug)]
pub struct Peers {
    /// The venv's Python (mcp 1.30.0).
    pub python: PathBuf,
    /// The npm folder (`node_modules` with the SDK, server-everything and the Inspector).
    pub node_dir: PathBuf,
    /// The conformance suite's npm folder (0.1.16 as `conformance-stable`, 0.2.0-alpha.12 as
    /// `conformance-next`, and Node 22).
    pub conformance_dir: PathBuf,
    /// `tests/peers`: the peer scripts.
    pub kit: PathBuf,
    /// `../shared/seed`: the seed's Python server and client.
    pub seed: PathBuf,
    /// The cargo target directory (scratch files go under `<target>/tmp/interop`).
    pub target: PathBuf,
}

impl Peers {
    /// The official conformance suite, `release` `"stable"` (0.1.16) or `"next"`
    /// (0.2.0-alpha.12), under Node 22: `conformance ARGS…`.
    pub fn conformance(&self, release: &str, args: &[&str]) -> Argv {
        let modules = self.conformance_dir.join("node_modules");
        Argv::new(modules.join(".bin/node"))
            .arg(modules.join(format!("conformance-{release}/dist/index.js")))
            .args(args)
    }

    /// `auth_server.mjs --port PORT --keys KEYS --access-ttl SECONDS` under Node 22: a real
    /// OAuth authorization server (oidc-provider 9.13.3) whose issuer is
    /// `http://127.0.0.1:PORT`.
    pub fn auth_server(&self, port: u16, keys: &str, access_ttl_secs: u64) -> Argv {
        let node = self.conformance_dir.join("node_modules/.bin/node");
        Argv::new(node)
            .env("TASKWIRE_PEERS_NODE", &self.node_dir)
            .arg(self.kit.join("auth_server.mjs"))
            .args(&["--port", &port.to_string(), "--keys", keys])
            .args(&["--access-ttl", &access_ttl_secs.to_string()])
    }

    /// A `$BROWSER` value that signs in as `login` on `auth_server.mjs`'s pages, in headless
    /// Chromium (`browser_login.mjs`; the URL comes last). Its process needs
    /// `TASKWIRE_PEERS_NODE` ([`Peers::node_dir`]) in its environment.
    pub fn browser_signing_in_as(&self, login: &str) -> String {
        let node = self.conformance_dir.join("node_modules/.bin/node");
        let script = self.kit.join("browser_login.mjs");
        format!("{} {} --login {login}", node.display(), script.display())
    }

    /// The seed's Python server, unchanged.
    pub fn seed_server(&self) -> Argv {
        Argv::new(&self.python).arg(self.seed.join("task_server.py"))
    }

    /// `py_client.py [ARGS] -- SERVER...`: the seed client's calls through the Python SDK.
    pub fn py_client(&self, args: &[&str], server: &Argv) -> Argv {
        Argv::new(&self.python)
            .arg(self.kit.join("py_client.py"))
            .args(args)
            .arg("--")
            .extend(server)
    }

    /// `py_client.py [ARGS] --url URL`: the same calls over Streamable HTTP
    /// (`streamable_http_client`).
    pub fn py_client_url(&self, args: &[&str], url: &str) -> Argv {
        Argv::new(&self.python)
            .arg(self.kit.join("py_client.py"))
            .args(args)
            .args(&["--url", url])
    }

    /// `py_http_server.py --port PORT --seed SEED/task_server.py [ARGS]`: the seed's server,
    /// imported unchanged, over Streamable HTTP (the SDK's `StreamableHTTPSessionManager`
    /// under uvicorn).
    pub fn py_http_server(&self, port: u16, args: &[&str]) -> Argv {
        Argv::new(&self.python)
            .arg(self.kit.join("py_http_server.py"))
            .args(&["--port", &port.to_string(), "--seed"])
            .arg(self.seed.join("task_server.py"))
            .args(args)
    }

    /// `ts_client.mjs MODE [ARGS] -- SERVER...`: the TypeScript SDK client.
    pub fn ts_client(&self, mode: &str, args: &[&str], server: &Argv) -> Argv {
        self.node_script("ts_client.mjs")
            .arg(mode)
            .args(args)
            .arg("--")
            .extend(server)
    }

    /// `ts_client.mjs MODE [ARGS] --url URL`: the TypeScript SDK client over Streamable HTTP
    /// (`StreamableHTTPClientTransport`).
    pub fn ts_client_url(&self, mode: &str, args: &[&str], url: &str) -> Argv {
        self.node_script("ts_client.mjs")
            .arg(mode)
            .args(args)
            .args(&["--url", url])
    }

    /// `core_client.mjs -- SERVER...`: the conformance suite's core server scenarios, run by
    /// the TypeScript SDK client the suite uses (a fresh server per scenario).
    pub fn ts_core_client(&self, server: &Argv) -> Argv {
        self.node_script("core_client.mjs").arg("--").extend(server)
    }

    /// `ts_server.mjs [ARGS]`: the TypeScript SDK server (`registerToolTask` + `InMemoryTaskStore`).
    pub fn ts_server(&self, args: &[&str]) -> Argv {
        self.node_script("ts_server.mjs").args(args)
    }

    /// `ts_server.mjs --http PORT [ARGS]`: the same server over Streamable HTTP
    /// (`StreamableHTTPServerTransport` on node's `http`, one transport and server per session).
    pub fn ts_http_server(&self, port: u16, args: &[&str]) -> Argv {
        self.node_script("ts_server.mjs")
            .args(&["--http", &port.to_string()])
            .args(args)
    }

    /// `bench_server.mjs`: the benchmark's `echo` and `instant_task` on the TypeScript SDK.
    pub fn bench_ts_server(&self) -> Argv {
        self.node_script("bench_server.mjs")
    }

    /// `bench_server.py`: the benchmark's `echo` and `instant_task` on the Python SDK.
    pub fn bench_py_server(&self) -> Argv {
        Argv::new(&self.python).arg(self.kit.join("bench_server.py"))
    }

    /// The rmcp 3.11 echo server that `setup.sh` builds from `tests/peers/rmcp`.
    pub fn rmcp_echo_server(&self) -> PathBuf {
        self.rmcp_bin("rmcp-echo-server")
    }

    /// `rmcp-task-server --step-ms MS`: `long_running_task` as a 2026-07-28 task on rmcp
    /// 3.11's `TaskManager`, and a plain `echo`.
    pub fn rmcp_task_server(&self, step_ms: &str) -> Argv {
        Argv::new(self.rmcp_bin("rmcp-task-server")).args(&["--step-ms", step_ms])
    }

    /// `rmcp-task-client [ARGS] -- SERVER...`: rmcp 3.11's client through one task, printing
    /// JSON event lines.
    pub fn rmcp_task_client(&self, args: &[&str], server: &Argv) -> Argv {
        Argv::new(self.rmcp_bin("rmcp-task-client"))
            .args(args)
            .arg("--")
            .extend(server)
    }

    fn rmcp_bin(&self, name: &str) -> PathBuf {
        self.cargo_peer("rmcp", name)
    }

    /// `turbomcp-task-server --step-ms MS`: `long_running_task` as a 2026-07-28 task on
    /// turbomcp 4.0.0-alpha.5's `turbomcp-ext-tasks` (no status messages), and `echo`.
    pub fn turbomcp_task_server(&self, step_ms: &str) -> Argv {
        Argv::new(self.cargo_peer("turbomcp", "turbomcp-task-server")).args(&["--step-ms", step_ms])
    }

    /// `turbomcp-task-client [--cancel] -- SERVER...`: turbomcp's v2026 client through one
    /// task, printing the same JSON event lines as `rmcp-task-client`.
    pub fn turbomcp_task_client(&self, args: &[&str], server: &Argv) -> Argv {
        Argv::new(self.cargo_peer("turbomcp", "turbomcp-task-client"))
            .args(args)
            .arg("--")
            .extend(server)
    }

    /// A binary of the Cargo peer project `tests/peers/<project>`, as `setup.sh` builds it.
    fn cargo_peer(&self, project: &str, name: &str) -> PathBuf {
        let name = format!("{name}{}", std::env::consts::EXE_SUFFIX);
        self.target
            .join("peers")
            .join(project)
            .join("release")
            .join(name)
    }

    /// `mcp-server-everything stdio`.
    pub fn everything(&self) -> Argv {
        Argv::new(self.bin("mcp-server-everything")).arg("stdio")
    }

    /// `inspector --cli ARGS -- SERVER...` (after `--`, the server's own `--` reaches it);
    /// its catalog file goes to a scratch path, never `~`.
    pub fn inspector(&self, server: &Argv, args: &[&str]) -> Argv {
        let catalog = self.scratch(&format!("inspector-catalog-{}.json", std::process::id()));
        Argv::new(self.bin("inspector"))
            .env("MCP_CATALOG_PATH", catalog)
            .arg("--cli")
            .args(args)
            .arg("--")
            .extend(server)
    }

    /// `tap.py LOG SERVER...`: `server`, with every line it exchanges logged to `log`.
    pub fn tap(&self, log: &Path, server: &Argv) -> Argv {
        let _ = std::fs::remove_file(log);
        Argv::new(&self.python)
            .arg(self.kit.join("tap.py"))
            .arg(log)
            .extend(server)
    }

    /// A fresh path under `<target>/tmp/interop/` (the directory is created).
    pub fn scratch(&self, name: &str) -> PathBuf {
        let dir = self.target.join("tmp").join("interop");
        std::fs::create_dir_all(&dir).expect("create the interop scratch directory");
        dir.join(name)
    }

    fn bin(&self, name: &str) -> PathBuf {
        self.node_dir.join("node_modules").join(".bin").join(name)
    }

    fn node_script(&self, script: &str) -> Argv {
        Argv::new("node")
            .env("TASKWIRE_PEERS_NODE", &self.node_dir)
            .arg(self.kit.join(script))
    }
}

/// A command line (program, arguments, extra environment) that can be nested inside another
/// peer's command line (`-- SERVER...`) or started as a process.
#[derive(Clone, Debug, Default)]
pub struct Argv {
    /// Program, then arguments.
    pub argv: Vec<OsString>,
    /// Extra environment for this process (inherited by what it starts).
    pub env: Vec<(OsString, OsString)>,
}

impl Argv {
    /// Just the program.
    pub fn new(program: impl AsRef<OsStr>) -> Argv {
        Argv {
            argv: vec![program.as_ref().to_owned()],
            env: Vec::new(),
        }
    }

    /// One more argument.
    pub fn arg(mut self, arg: impl AsRef<OsStr>) -> Argv {
        self.argv.push(arg.as_ref().to_owned());
        self
    }

    /// More arguments.
    pub fn args(mut self, args: &[&str]) -> Argv {
        self.argv.extend(args.iter().map(OsString::from));
        self
    }

    /// Appends another command line (a server for a client); its environment is kept too.
    pub fn extend(mut self, inner: &Argv) -> Argv {
        self.argv.extend(inner.argv.iter().cloned());
        self.env.extend(inner.env.iter().cloned());
        self
    }

    /// An environment variable for the process.
    pub fn env(mut self, key: &str, value: impl AsRef<OsStr>) -> Argv {
        self.env.push((key.into(), value.as_ref().to_owned()));
        self
    }

    /// The same command with its stderr appended to `log` (through `sh`), for processes whose
    /// stderr would otherwise be inherited by the test (e.g. a server under our client API).
    pub fn stderr_to(&self, log: &Path) -> Argv {
        let _ = std::fs::remove_file(log);
        let mut wrapped = Argv::new("sh")
            .arg("-c")
            .arg(r#"log=$1; shift; exec "$@" 2>>"$log""#)
            .arg("sh")
            .arg(log);
        wrapped.argv.extend(self.argv.iter().cloned());
        wrapped.env = self.env.clone();
        wrapped
    }

    /// A `std::process::Command` for it.
    pub fn command(&self) -> std::process::Command {
        let mut command = std::process::Command::new(&self.argv[0]);
        command.args(&self.argv[1..]).envs(self.env.iter().cloned());
        command
    }

    /// The command line for messages.
    pub fn display(&self) -> String {
        let words: Vec<_> = self.argv.iter().map(|a| a.to_string_lossy()).collect();
        words.join(" ")
    }
}
