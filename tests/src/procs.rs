//! Real processes for the process suites (`tests/tests/{demo,driver,conformance}/`): the
//! `task-server` and `task-client` (dev profile), and the `test-server` bin of this crate (the demo
//! server plus test-only tools), driven through our client API under smol or tokio, or byte by
//! byte over raw pipes.
//!
//! - [`Rt`]: a runtime to run a test body on, start a server under, and time things out with.
//! - [`Proc`]: a server started by [`Rt::spawn`], beside the [`Client`] connected to it.
//! - [`Raw`]: a server on plain pipes, for what the client API hides (stderr, half-written
//!   lines, a reader that goes away, SIGTERM).
//! - [`matrix!`](crate::matrix): one test per (server runtime, client runtime) pair.
//!
//! The demo binaries are built once per test process by [`crate::peers::demo::binary`]
//! (`cargo build -p taskwire-demo`, honouring `CARGO_TARGET_DIR`).

use std::future::Future;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{ChildStdin, ExitStatus, Stdio};
use std::sync::mpsc;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use futures::future::{select, Either};
use serde_json::{json, Value};
use taskwire_driver::engine::{ClientEra, Config};
use taskwire_driver::{ChildProcess, Client, ClientBuilder, Runtime};

/// The demo `task-server`.
pub fn task_server() -> PathBuf {
    crate::peers::demo::binary("task-server")
}

/// The `taskwire` command line.
pub fn taskwire() -> PathBuf {
    crate::peers::demo::binary("taskwire")
}

/// The demo `task-client`.
pub fn task_client() -> PathBuf {
    crate::peers::demo::binary("task-client")
}

/// The `test-server` bin of this crate; only integration tests know its path.
#[macro_export]
macro_rules! test_server {
    () => {
        ::std::path::PathBuf::from(env!("CARGO_BIN_EXE_test-server"))
    };
}

/// Server arguments: `--runtime NAME --step-ms STEP`.
pub fn server_args(runtime: Rt, step_ms: u64) -> Vec<String> {
    vec![
        "--runtime".into(),
        runtime.name().into(),
        "--step-ms".into(),
        step_ms.to_string(),
    ]
}

/// One test per (server runtime, client runtime) pair, named `SCENARIO::X_server_Y_client`,
/// each calling `SCENARIO(server: Rt, client: Rt)` from the enclosing module.
#[macro_export]
macro_rules! matrix {
    ($($scenario:ident),+ $(,)?) => {$(
        mod $scenario {
            use $crate::procs::Rt;
            #[test]
            fn smol_server_smol_client() {
                super::$scenario(Rt::Smol, Rt::Smol)
            }
            #[test]
            fn smol_server_tokio_client() {
                super::$scenario(Rt::Smol, Rt::Tokio)
            }
            #[test]
            fn tokio_server_smol_client() {
                super::$scenario(Rt::Tokio, Rt::Smol)
            }
            #[test]
            fn tokio_server_tokio_client() {
                super::$scenario(Rt::Tokio, Rt::Tokio)
            }
        }
    )+};
}

/// A runtime: smol or tokio.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rt {
    /// smol.
    Smol,
    /// tokio (multi-threaded).
    Tokio,
}

impl Rt {
    /// The name `--runtime` takes.
    pub fn name(self) -> &'static str {
        match self {
            Rt::Smol => "smol",
            Rt::Tokio => "tokio",
        }
    }

    /// The driver's runtime for this one.
    pub fn runtime(self) -> Arc<dyn Runtime> {
        match self {
            Rt::Smol => Arc::new(taskwire_smol::Smol::default()),
            Rt::Tokio => Arc::new(taskwire_tokio::Tokio),
        }
    }

    /// Runs `body` on a fresh runtime; panics (failing the test) if it takes longer than
    /// `limit`, so a hang fails instead of blocking the suite.
    pub fn block_on<T>(self, limit: Duration, body: impl Future<Output = T>) -> T {
        // The build of the demo (once per process) happens before the clock starts: `limit`
        // is for the body alone.
        task_server();
        let guarded = async move {
            match self.timeout(limit, body).await {
                Some(out) => out,
                None => panic!("the test body did not finish within {limit:?} ({self:?})"),
            }
        };
        match self {
            Rt::Smol => smol::block_on(guarded),
            Rt::Tokio => {
                let rt = tokio::runtime::Builder::new_multi_thread()
                    .enable_all()
                    .build()
                    .expect("a tokio runtime");
                let out = rt.block_on(guarded);
                rt.shutdown_timeout(Duration::from_secs(1));
                out
            }
        }
    }

    /// Sleeps on this runtime's timer.
    pub async fn sleep(self, duration: Duration) {
        self.runtime().sleep(duration).await;
    }

    /// `Some(output)`, or `None` if `future` takes longer than `limit`.
    pub async fn timeout<T>(self, limit: Duration, future: impl Future<Output = T>) -> Option<T> {
        let timer = self.runtime().sleep(limit);
        match select(Box::pin(future), timer).await {
            Either::Left((out, _)) => Some(out),
            Either::Right(_) => None,
        }
    }

    /// Starts `program args` as a stdio server and connects a client driven by this runtime.
    /// Call from inside [`Rt::block_on`] of the same runtime.
    pub fn spawn(self, program: &Path, args: &[String]) -> (Client, Proc) {
        self.spawn_in(
            ClientEra::Only(taskwire_engine::Era::V2025_11_25),
            program,
            args,
        )
    }

    /// [`Rt::spawn`] with a client that opens in `era`.
    pub fn spawn_in(self, era: ClientEra, program: &Path, args: &[String]) -> (Client, Proc) {
        let config = Config {
            client_era: era,
            ..Config::new("demo-tests", "0")
        };
        self.spawn_with(ClientBuilder::new(config), program, args)
    }

    /// [`Rt::spawn`] with the client `builder` makes (its configuration and handlers).
    pub fn spawn_with(
        self,
        builder: ClientBuilder,
        program: &Path,
        args: &[String],
    ) -> (Client, Proc) {
        let mut command = std::process::Command::new(program);
        command.args(args);
        let spawned = match self {
            Rt::Smol => taskwire_smol::spawn_server(command, builder),
            Rt::Tokio => taskwire_tokio::spawn_server(command, builder),
        };
        let (client, child) =
            spawned.unwrap_or_else(|e| panic!("cannot start {}: {e}", program.display()));
        (client, Proc(child))
    }
}

/// A server process started by [`Rt::spawn`] (killed if dropped while running).
pub struct Proc(Box<dyn ChildProcess>);

impl std::fmt::Debug for Proc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Proc({:?})", self.0.id())
    }
}

impl Proc {
    /// The process id.
    pub fn id(&self) -> u32 {
        self.0.id().expect("the child has not been reaped")
    }

    /// Kills it (SIGKILL on Unix): a crash, as its client sees it.
    pub fn kill(&mut self) {
        self.0.kill().expect("the child can be killed");
    }

    /// Its exit status, or `None` if it is still running after `limit`.
    pub async fn wait(&mut self, rt: Rt, limit: Duration) -> Option<ExitStatus> {
        let status = rt.timeout(limit, self.0.wait()).await;
        status.map(|s| s.expect("the child's status can be read"))
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        // A test that failed half way leaves no server behind (an exited one ignores this).
        let _ = self.0.kill();
    }
}

/// Sends SIGTERM to `pid` (with `kill(1)`, to keep `unsafe` out of the tests).
#[cfg(unix)]
pub fn sigterm(pid: u32) {
    let status = std::process::Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .expect("kill(1) runs");
    assert!(status.success(), "kill -TERM {pid} failed: {status}");
}

/// A server on plain pipes: requests written by hand, each stdout line read whole (with its
/// newline, so a half-written line shows), stderr collected for the end.
pub struct Raw {
    child: std::process::Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
    stderr: Option<JoinHandle<String>>,
}

impl Raw {
    /// Starts `program args`. The stdout reader stops (closing its end of the pipe) after the
    /// first line for which `last` is true; `None` reads to the end.
    pub fn spawn(program: &Path, args: &[String], last: Option<fn(&Value) -> bool>) -> Raw {
        let mut child = std::process::Command::new(program)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", program.display()));
        let stdout = child.stdout.take().expect("piped stdout");
        let mut stderr = child.stderr.take().expect("piped stderr");
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            let mut stdout = BufReader::new(stdout);
            read_lines(&mut stdout, &tx, last);
            // Our end of the pipe closes before the channel does: `None` from `next_line`
            // means the server's next write breaks the pipe.
            drop(stdout);
            drop(tx);
        });
        let stderr = std::thread::spawn(move || {
            let mut text = String::new();
            let _ = stderr.read_to_string(&mut text);
            text
        });
        Raw {
            stdin: child.stdin.take(),
            child,
            lines,
            stderr: Some(stderr),
        }
    }

    /// The process id.
    pub fn id(&self) -> u32 {
        self.child.id()
    }

    /// Writes `bytes` as they are (part of a message, or several).
    pub fn write_raw(&mut self, bytes: &[u8]) -> io::Result<()> {
        let stdin = self.stdin.as_mut().expect("stdin is still open");
        stdin.write_all(bytes)?;
        stdin.flush()
    }

    /// Writes one message and a newline.
    pub fn send(&mut self, message: &Value) -> io::Result<()> {
        let stdin = self.stdin.as_mut().expect("stdin is still open");
        stdin.write_all(format!("{message}\n").as_bytes())?;
        stdin.flush()
    }

    /// The next stdout line as written (with its newline, if it had one), or `None` at the
    /// end of stdout (or once the reader stopped after its `last` line) or after `limit`.
    pub fn next_line(&self, limit: Duration) -> Option<String> {
        self.lines.recv_timeout(limit).ok()
    }

    /// Reads lines until a message matches `wanted`; panics after `limit`.
    pub fn expect(&self, limit: Duration, what: &str, wanted: impl Fn(&Value) -> bool) -> Value {
        let end = Instant::now() + limit;
        loop {
            let left = end.saturating_duration_since(Instant::now());
            let line = self
                .next_line(left)
                .unwrap_or_else(|| panic!("no {what} within {limit:?}"));
            let message: Value = serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {line:?}"));
            if wanted(&message) {
                return message;
            }
        }
    }

    /// Initializes the session (request, answer, `notifications/initialized`).
    pub fn handshake(&mut self) {
        self.send(&request(0, "initialize", initialize_params()))
            .expect("initialize is written");
        let answer = self.expect(Duration::from_secs(10), "initialize answer", |m| {
            m["id"] == 0
        });
        assert_eq!(
            answer["result"]["protocolVersion"], "2025-11-25",
            "{answer}"
        );
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .expect("notifications/initialized is written");
    }

    /// Closes stdin: EOF for the server.
    pub fn close_stdin(&mut self) {
        self.stdin = None;
    }

    /// The exit status, or `None` if it is still running after `limit`.
    pub fn wait(&mut self, limit: Duration) -> Option<ExitStatus> {
        let end = Instant::now() + limit;
        loop {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                return Some(status);
            }
            if Instant::now() >= end {
                return None;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Everything it wrote to stderr; kills it first if it still runs.
    pub fn stderr(&mut self) -> String {
        self.kill();
        let reader = self.stderr.take().expect("stderr is read once");
        reader.join().expect("the stderr reader does not panic")
    }
}

impl Raw {
    fn kill(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

impl Drop for Raw {
    fn drop(&mut self) {
        self.kill();
    }
}

fn read_lines(
    stdout: &mut impl BufRead,
    tx: &mpsc::Sender<String>,
    last: Option<fn(&Value) -> bool>,
) {
    loop {
        let mut line = String::new();
        match stdout.read_line(&mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        let stop = last.is_some_and(|last| {
            serde_json::from_str(&line).is_ok_and(|message: Value| last(&message))
        });
        if tx.send(line).is_err() || stop {
            return;
        }
    }
}

/// A JSON-RPC request.
pub fn request(id: u64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// `initialize` params for protocol 2025-11-25.
pub fn initialize_params() -> Value {
    json!({
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "demo-tests-raw", "version": "0"}
    })
}

/// A task-augmented `tools/call` of `tool`.
pub fn call_as_task(id: u64, tool: &str) -> Value {
    request(
        id,
        "tools/call",
        json!({"name": tool, "arguments": {}, "task": {"ttl": 60_000}}),
    )
}

/// Every update of a task-augmented call until its channel closes, each as [`describe`] puts it.
pub async fn updates(call: &taskwire_driver::TaskCall) -> Vec<String> {
    let mut seen = Vec::new();
    while let Ok(update) = call.updates.recv().await {
        seen.push(describe(&update));
    }
    seen
}

/// An update as a line: `working: MESSAGE`, `progress 1/4: MESSAGE`, `log info: DATA`,
/// `result: TEXT` (`result (isError): TEXT`), or `error CODE: MESSAGE` (the error as
/// JSON-RPC puts it).
pub fn describe(update: &taskwire_driver::TaskUpdate) -> String {
    use taskwire_driver::TaskUpdate;
    match update {
        TaskUpdate::Status(task) | TaskUpdate::Message(task) => format!(
            "{}: {}",
            task.status,
            task.status_message.as_deref().unwrap_or("")
        ),
        TaskUpdate::Progress(p) => format!(
            "progress {}/{}: {}",
            p.progress,
            p.total.map_or("?".into(), |t| t.to_string()),
            p.message.as_deref().unwrap_or("")
        ),
        TaskUpdate::Log(m) => format!("log {}: {}", m.level.as_str(), m.data),
        TaskUpdate::Result(Ok(result)) => {
            let error = if result.is_error { " (isError)" } else { "" };
            format!("result{error}: {}", result.all_text())
        }
        TaskUpdate::Result(Err(e)) => {
            let e = taskwire_driver::RpcError::from(e.clone());
            format!("error {}: {}", e.code, e.message)
        }
        other => format!("{other:?}"),
    }
}

/// Splits a `task-client` line, `[ 1.003s] TEXT`, into seconds and text.
pub fn stamped(line: &str) -> (f64, &str) {
    let parsed = line.strip_prefix('[').and_then(|rest| {
        let (stamp, text) = rest.split_once("s] ")?;
        Some((stamp.trim().parse().ok()?, text))
    });
    parsed.unwrap_or_else(|| panic!("not a stamped line: {line:?}"))
}

/// Checks that the binary `name` at `path` says what it takes (`--help` and `-h` print a
/// usage naming `option`), what it is (`--version`: `NAME VERSION`), and refuses an
/// unknown option as a usage error (exit 2).
pub fn check_usage(name: &str, path: &Path, option: &str) {
    use crate::peers::{run, Argv};
    let limit = Duration::from_secs(20);
    for help in ["--help", "-h"] {
        let ran = run(&Argv::new(path).arg(help), limit);
        assert_eq!(ran.code, Some(0), "{ran}");
        assert!(ran.stdout.contains(&format!("Usage: {name}")), "{ran}");
        assert!(
            ran.stdout.contains(option),
            "{name} {help} names {option}: {ran}"
        );
    }
    let ran = run(&Argv::new(path).arg("--version"), limit);
    assert_eq!(
        ran.stdout.trim(),
        format!("{name} {}", env!("CARGO_PKG_VERSION")),
        "{ran}"
    );
    let ran = run(&Argv::new(path).arg("--no-such-option"), limit);
    assert_eq!(ran.code, Some(2), "{ran}");
    assert!(ran.stderr.contains("unexpected argument"), "{ran}");
}
