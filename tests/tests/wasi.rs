//! The `wasm32-wasip1` task-server under real WASI runtimes: Node's `node:wasi` and wasmtime
//! (its PyPI package), each through a runner in `tests/wasi/`. Every flow runs under both; the
//! test names read `wasi_<runtime>_<flow>`.
//!
//! The module is built once per process (`cargo build --release --target wasm32-wasip1 -p
//! taskwire-demo --bin task-server`). A missing target fails with what to run;
//! `TASKWIRE_SKIP_WASI=1` opts out, and `TASKWIRE_SKIP_INTEROP=1` skips the flows that need the
//! SDK peers (which also provide wasmtime). The servers run with the demo's real one-second steps.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use taskwire_tests::peers::{self, run, Argv, Peers, Run};
use taskwire_tests::wasi::{self, Runtime};

/// Per process; a flow takes about 4 s.
const DEADLINE: Duration = Duration::from_secs(90);
const VERSION: &str = env!("CARGO_PKG_VERSION");
const TOOL: &str = "long_running_task";
const RESULT: &str = "任务完成！";
/// The demo's status message of a cancelled task.
const CANCELLED: &str = "已按请求取消";
/// The demo tool's closing status message (set as its work ends; the completed task keeps it).
const DONE: &str = "处理完成";

macro_rules! matrix {
    ($($flow:ident: $node:ident, $wasmtime:ident;)*) => {$(
        #[test]
        fn $node() {
            $flow(Runtime::Node, stringify!($node));
        }

        #[test]
        fn $wasmtime() {
            $flow(Runtime::Wasmtime, stringify!($wasmtime));
        }
    )*};
}

matrix! {
    seed_client_flow: wasi_node_seed_client_flow, wasi_wasmtime_seed_client_flow;
    task_client_flow: wasi_node_task_client_flow, wasi_wasmtime_task_client_flow;
    plain_call: wasi_node_plain_call, wasi_wasmtime_plain_call;
    tasks_list: wasi_node_tasks_list_shows_demo_task, wasi_wasmtime_tasks_list_shows_demo_task;
    cancel: wasi_node_cancel, wasi_wasmtime_cancel;
    eof_shutdown: wasi_node_eof_shutdown_exits_0_promptly, wasi_wasmtime_eof_shutdown_exits_0_promptly;
    devnull_stdin: wasi_node_devnull_stdin_exits_0, wasi_wasmtime_devnull_stdin_exits_0;
    idle_wait: wasi_node_idle_wait_uses_no_cpu, wasi_wasmtime_idle_wait_uses_no_cpu;
    stdin_left_blocking: wasi_node_exit_leaves_stdin_blocking, wasi_wasmtime_exit_leaves_stdin_blocking;
}

/// A test's prerequisites: the module is built and, when asked for (and always for wasmtime,
/// whose runner lives in the peers' venv), the peers are installed.
struct Cx {
    rt: Runtime,
    peers: Option<&'static Peers>,
}

impl Cx {
    /// `None` when the test is skipped (it said so on stderr).
    fn new(test: &str, rt: Runtime, needs_peers: bool) -> Option<Cx> {
        if wasi::skip(test) {
            return None;
        }
        wasi::module();
        let peers = match needs_peers || rt == Runtime::Wasmtime {
            true => Some(peers::ready(test)?),
            false => None,
        };
        Some(Cx { rt, peers })
    }

    fn peers(&self) -> &'static Peers {
        self.peers.expect("asked for the peers")
    }

    fn server(&self, args: &[&str]) -> Argv {
        self.rt.server(self.peers, args)
    }
}

/// Consecutive duplicates removed (clients print one status per poll).
fn dedup<T: PartialEq>(mut items: Vec<T>) -> Vec<T> {
    items.dedup();
    items
}

fn status_pairs(events: &[Value]) -> Vec<(String, String)> {
    let pairs = events
        .iter()
        .map(|e| {
            let s = |k: &str| e[k].as_str().unwrap_or_default().to_owned();
            (s("status"), s("message"))
        })
        .collect();
    dedup(pairs)
}

fn pairs(expected: &[(&str, &str)]) -> Vec<(String, String)> {
    expected
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

fn assert_initialized(r: &Run) {
    let init = r.event("initialized");
    assert_eq!(init["protocolVersion"], "2025-11-25", "{r}");
    assert_eq!(
        init["serverInfo"],
        json!({ "name": "task-server", "version": VERSION }),
        "{r}"
    );
    assert_eq!(
        init["capabilities"]["tasks"],
        json!({ "list": {}, "cancel": {}, "requests": { "tools": { "call": {} } } }),
        "{r}"
    );
}

/// The seed client's calls through the Python SDK (`py_client.py`): initialize, tools/list,
/// a task call, tasks/get until terminal, tasks/result.
fn seed_client_flow(rt: Runtime, test: &str) {
    let Some(cx) = Cx::new(test, rt, true) else {
        return;
    };
    let r = run(&cx.peers().py_client(&[], &cx.server(&[])), DEADLINE);
    r.assert_exit(0);
    assert_initialized(&r);
    assert_eq!(r.event("tools")["names"], json!([TOOL]), "{r}");
    let created = r.event("task_created");
    assert_eq!(created["status"], "working", "{r}");
    assert_eq!(created["ttl"], 60_000, "{r}");
    assert_eq!(created["pollInterval"], 500, "{r}");
    let id = created["taskId"].as_str().expect("taskId");
    assert_eq!(id.len(), 36, "a UUID: {id}");
    let statuses = r.events("status");
    assert!(statuses.iter().all(|s| s["taskId"] == id), "{r}");
    // Polled every 500 ms, each one-second step is seen at least once; the closing message
    // is set an instant before the task completes, so a poll may or may not see it working.
    let mut seen = status_pairs(&statuses);
    seen.retain(|pair| *pair != ("working".to_owned(), DONE.to_owned()));
    assert_eq!(
        seen,
        pairs(&[
            ("working", "开始执行..."),
            ("working", "处理步骤 1..."),
            ("working", "处理步骤 2..."),
            ("completed", DONE),
        ]),
        "{r}"
    );
    assert_eq!(
        r.event("result"),
        json!({ "event": "result", "text": RESULT, "isError": false }),
        "{r}"
    );
    assert_eq!(r.kinds().last().map(String::as_str), Some("result"), "{r}");
    assert!(r.elapsed >= Duration::from_secs(3), "three 1 s steps\n{r}");
}

/// Our native `task-client` (smol) drives the module: the README's demo, timestamps included.
fn task_client_flow(rt: Runtime, test: &str) {
    let Some(cx) = Cx::new(test, rt, false) else {
        return;
    };
    let client = Argv::new(wasi::task_client())
        .arg("--")
        .extend(&cx.server(&[]));
    let r = run(&client, DEADLINE);
    r.assert_exit(0);
    // "[ 1.003s] status: working - 处理步骤 1..."
    let lines: Vec<(f64, String)> = r
        .stdout
        .lines()
        .map(|l| {
            let (time, text) = l
                .strip_prefix('[')
                .and_then(|l| l.split_once("s] "))
                .unwrap_or_else(|| panic!("unexpected line {l:?}\n{r}"));
            (time.trim().parse().expect("seconds"), text.to_owned())
        })
        .collect();
    let texts = dedup(lines.iter().map(|(_, t)| t.clone()).collect::<Vec<_>>());
    let id = texts
        .get(3)
        .and_then(|t| t.strip_prefix("task created: "))
        .unwrap_or_else(|| panic!("no task created line\n{r}"));
    assert_eq!(id.len(), 36, "a UUID: {id}");
    let expected = [
        format!("connected to task-server {VERSION} (protocol 2026-07-28)"),
        format!("tools: [\"{TOOL}\"]"),
        format!("calling {TOOL} as a task (ttl 60000 ms)"),
        format!("task created: {id}"),
        "status: working - ".into(),
        "status: working - 开始执行...".into(),
        "status: working - 处理步骤 1...".into(),
        "status: working - 处理步骤 2...".into(),
        format!("status: working - {DONE}"),
        format!("status: completed - {DONE}"),
        format!("result: {RESULT}"),
    ];
    assert_eq!(texts, expected, "{r}");
    // The status changes come one second apart (pushed on the listen stream, not polled).
    let at = |text: &str| {
        lines
            .iter()
            .find(|(_, t)| t == text)
            .map(|(s, _)| *s)
            .expect("line present")
    };
    let steps = [
        at("status: working - 开始执行..."),
        at("status: working - 处理步骤 1..."),
        at("status: working - 处理步骤 2..."),
        at(&format!("status: working - {DONE}")),
    ];
    for pair in steps.windows(2) {
        let gap = pair[1] - pair[0];
        assert!((0.95..1.6).contains(&gap), "a step took {gap:.3} s\n{r}");
    }
}

/// A plain tools/call (no task) from the TypeScript SDK: the answer comes after the three steps.
fn plain_call(rt: Runtime, test: &str) {
    let Some(cx) = Cx::new(test, rt, true) else {
        return;
    };
    let r = run(
        &cx.peers().ts_client("plain", &[], &cx.server(&[])),
        DEADLINE,
    );
    r.assert_exit(0);
    assert_eq!(r.kinds(), ["initialized", "tools", "result"], "{r}");
    assert_initialized(&r);
    assert_eq!(
        r.event("tools")["taskSupport"],
        json!({ TOOL: "optional" }),
        "{r}"
    );
    assert_eq!(
        r.event("result"),
        json!({ "event": "result", "text": RESULT, "isError": false }),
        "{r}"
    );
    assert!(r.elapsed >= Duration::from_secs(3), "three 1 s steps\n{r}");
}

/// tasks/list after starting one task: the pre-created `demo-task` and the new one.
fn tasks_list(rt: Runtime, test: &str) {
    let Some(cx) = Cx::new(test, rt, true) else {
        return;
    };
    let r = run(
        &cx.peers()
            .ts_client("list", &["--ttl", "60000"], &cx.server(&[])),
        DEADLINE,
    );
    r.assert_exit(0);
    assert_initialized(&r);
    let created = r.event("task_created");
    assert_eq!(created["ttl"], 60_000, "{r}");
    let id = created["taskId"].as_str().expect("taskId");
    let listed: Vec<Value> = r
        .events("task")
        .into_iter()
        .map(|t| json!([t["taskId"], t["status"], t["message"]]))
        .collect();
    assert_eq!(
        listed,
        [
            json!(["demo-task", "completed", "已完成"]),
            json!([id, "working", "开始执行..."]),
        ],
        "{r}"
    );
    assert_eq!(
        r.event("page"),
        json!({ "event": "page", "count": 2, "nextCursor": null }),
        "{r}"
    );
}

/// tasks/cancel of a running task: cancelled at once, the tool stops, a second cancel is -32602.
fn cancel(rt: Runtime, test: &str) {
    let Some(cx) = Cx::new(test, rt, true) else {
        return;
    };
    let r = run(
        &cx.peers()
            .ts_client("cancel", &["--ttl", "60000"], &cx.server(&[])),
        DEADLINE,
    );
    r.assert_exit(0);
    assert_initialized(&r);
    let id = r.event("task_created")["taskId"].clone();
    let statuses = status_pairs(&r.events("status"));
    assert_eq!(statuses[0], ("working".into(), "开始执行...".into()), "{r}");
    assert!(
        statuses[1..]
            .iter()
            .all(|s| *s == ("cancelled".into(), CANCELLED.into())),
        "{r}"
    );
    let cancelled = json!({ "taskId": id, "status": "cancelled", "message": CANCELLED });
    let mut first = r.events("cancel_result").remove(0);
    first.as_object_mut().expect("object").remove("event");
    assert_eq!(first, cancelled, "{r}");
    let mut last = r.event("final_status");
    last.as_object_mut().expect("object").remove("event");
    assert_eq!(last, cancelled, "{r}");
    let errors: Vec<Value> = r
        .events("error")
        .into_iter()
        .map(|e| json!([e["method"], e["code"], e["message"]]))
        .collect();
    assert_eq!(
        errors,
        [
            json!([
                "callToolStream",
                -32603,
                format!("Task {} was cancelled", id.as_str().unwrap_or_default())
            ]),
            json!([
                "tasks/cancel",
                -32602,
                "Cannot cancel task: already in terminal status 'cancelled'"
            ]),
        ],
        "{r}"
    );
    assert!(r.events("result").is_empty(), "{r}");
    assert!(!r.stdout.contains("completed"), "the tool was stopped\n{r}");
}

/// The module started by hand on pipes, for the EOF and idle tests.
struct Server {
    child: Child,
    stdin: Option<Box<dyn Write + Send>>,
    lines: mpsc::Receiver<String>,
    seen: Vec<String>,
    errors: mpsc::Receiver<String>,
}

/// Sends `pipe`'s lines down a channel, from a thread.
fn lines_of(pipe: impl Read + Send + 'static) -> mpsc::Receiver<String> {
    let (tx, lines) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(pipe).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    lines
}

impl Server {
    /// Starts `argv` with its stdin on a pipe, or on `stdin` when given.
    fn start(argv: &Argv, stdin: Option<std::fs::File>) -> Server {
        let mut child = argv
            .command()
            .stdin(stdin.map_or_else(Stdio::piped, Stdio::from))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", argv.display()));
        let lines = lines_of(child.stdout.take().expect("piped"));
        let errors = lines_of(child.stderr.take().expect("piped"));
        let stdin = child.stdin.take();
        Server {
            stdin: stdin.map(|s| Box::new(s) as Box<dyn Write + Send>),
            child,
            lines,
            seen: Vec::new(),
            errors,
        }
    }

    fn send(&mut self, message: Value) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{message}").expect("write to the module");
        stdin.flush().expect("flush");
    }

    /// Reads lines until the response to request `id`.
    fn response(&mut self, id: u64) -> Value {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = self
                .lines
                .recv_timeout(left)
                .unwrap_or_else(|e| panic!("no response {id} ({e}); saw {:#?}", self.seen));
            self.seen.push(line.clone());
            let message: Value = serde_json::from_str(&line).expect("a JSON line");
            if message["id"] == id {
                return message;
            }
        }
    }

    fn initialize(&mut self) {
        let params = json!({
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": { "name": "wasi-test", "version": "1" },
        });
        self.send(json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params }));
        assert_eq!(self.response(1)["result"]["protocolVersion"], "2025-11-25");
        self.send(json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }));
    }

    /// Initializes and starts a task; returns its id.
    fn start_task(&mut self) -> String {
        self.initialize();
        let params = json!({ "name": TOOL, "arguments": {}, "task": { "ttl": 60000 } });
        self.send(json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": params }));
        let task = self.response(2)["result"]["task"].clone();
        assert_eq!(task["status"], "working", "{task}");
        task["taskId"].as_str().expect("taskId").to_owned()
    }

    /// Closes stdin and waits for the exit; returns the code and how long it took.
    fn close(mut self, limit: Duration) -> (Option<i32>, Duration, Vec<String>, String) {
        let start = Instant::now();
        drop(self.stdin.take());
        let code = loop {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                break status.code();
            }
            if start.elapsed() > limit {
                let _ = self.child.kill();
                let _ = self.child.wait();
                panic!(
                    "still running {limit:?} after stdin EOF; saw {:#?}",
                    self.seen
                );
            }
            std::thread::sleep(Duration::from_millis(5));
        };
        let took = start.elapsed();
        self.seen.extend(self.lines.iter());
        let stderr: Vec<String> = self.errors.iter().collect();
        (code, took, self.seen, stderr.join("\n"))
    }
}

/// stdin EOF while a tool sleeps through a 10 s step: exit 0 at once, the task never completes.
fn eof_shutdown(rt: Runtime, test: &str) {
    let Some(cx) = Cx::new(test, rt, false) else {
        return;
    };
    let mut server = Server::start(&cx.server(&["--step-ms", "10000"]), None);
    server.start_task();
    std::thread::sleep(Duration::from_millis(200));
    let (code, took, seen, stderr) = server.close(Duration::from_secs(10));
    assert_eq!(code, Some(0), "stderr: {stderr}");
    assert!(took < Duration::from_millis(1500), "took {took:?} to exit");
    assert!(
        !seen
            .iter()
            .any(|l| l.contains("completed") || l.contains(RESULT)),
        "{seen:#?}"
    );
    assert!(stderr.is_empty(), "stderr: {stderr}");
}

/// stdin is /dev/null (Node cannot poll it and fails poll_oneoff with EPERM): EOF, exit 0.
fn devnull_stdin(rt: Runtime, test: &str) {
    let Some(cx) = Cx::new(test, rt, false) else {
        return;
    };
    let r = run(&cx.server(&[]), Duration::from_secs(30));
    r.assert_exit(0);
    assert_eq!(r.stdout, "", "{r}");
    assert_eq!(r.stderr, "", "{r}");
}

/// CPU time (user + system, all threads) of a process, from /proc.
#[cfg(target_os = "linux")]
fn cpu_time(pid: u32) -> Duration {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("/proc/PID/stat");
    // Fields after the parenthesised command name: state is field 3, utime 14, stime 15.
    let after = &stat[stat.rfind(')').expect("comm") + 2..];
    let fields: Vec<u64> = after
        .split_whitespace()
        .skip(11)
        .take(2)
        .map(|f| f.parse().expect("ticks"))
        .collect();
    let hz: u64 = std::process::Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok()?.trim().parse().ok())
        .unwrap_or(100);
    Duration::from_millis((fields[0] + fields[1]) * 1000 / hz)
}

/// Waiting on stdin with a far timer pending (a 10 s step) blocks in poll_oneoff: no busy loop.
fn idle_wait(rt: Runtime, test: &str) {
    if !cfg!(target_os = "linux") {
        eprintln!("{test}: measures CPU time through /proc; Linux only");
        return;
    }
    let Some(cx) = Cx::new(test, rt, false) else {
        return;
    };
    let mut server = Server::start(&cx.server(&["--step-ms", "10000"]), None);
    server.start_task();
    std::thread::sleep(Duration::from_millis(300));
    #[cfg(target_os = "linux")]
    {
        let pid = server.child.id();
        let before = cpu_time(pid);
        std::thread::sleep(Duration::from_secs(2));
        let used = cpu_time(pid) - before;
        assert!(
            used < Duration::from_millis(300),
            "used {used:?} of CPU in 2 s idle"
        );
    }
    let (code, _, _, stderr) = server.close(Duration::from_secs(10));
    assert_eq!(code, Some(0), "stderr: {stderr}");
}

/// Whether an fd of this process has O_NONBLOCK, from /proc/self/fdinfo.
#[cfg(target_os = "linux")]
fn nonblocking(fd: &impl std::os::fd::AsRawFd) -> bool {
    const O_NONBLOCK: u32 = 0o4000;
    let info = std::fs::read_to_string(format!("/proc/self/fdinfo/{}", fd.as_raw_fd()))
        .expect("/proc/self/fdinfo");
    let flags = info
        .lines()
        .find_map(|l| l.strip_prefix("flags:"))
        .expect("a flags line");
    u32::from_str_radix(flags.trim(), 8).expect("octal flags") & O_NONBLOCK != 0
}

/// stdin's open file description is shared with whoever started the module (a shell's
/// terminal, say). Node's poll_oneoff makes it O_NONBLOCK on the host; the module must clear
/// that when it returns, since the host may live on (Node itself resets stdio only when its
/// process exits, so the runner lingers). Checked on a FIFO whose read end this test shares.
fn stdin_left_blocking(rt: Runtime, test: &str) {
    if !cfg!(target_os = "linux") {
        eprintln!("{test}: reads fd flags through /proc; Linux only");
        return;
    }
    let Some(cx) = Cx::new(test, rt, false) else {
        return;
    };
    #[cfg(target_os = "linux")]
    {
        let dir = peers::target_dir().join("tmp").join("wasi");
        std::fs::create_dir_all(&dir).expect("scratch directory");
        let fifo = dir.join(format!("{test}-{}.fifo", std::process::id()));
        let _ = std::fs::remove_file(&fifo);
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        assert!(made.is_ok_and(|s| s.success()), "mkfifo {}", fifo.display());
        // Opening one end of a FIFO blocks until the other end is opened.
        let path = fifo.clone();
        let writer =
            std::thread::spawn(move || std::fs::File::create(path).expect("open to write"));
        let reader = std::fs::File::open(&fifo).expect("open to read");
        let writer = writer.join().expect("writer");
        let _ = std::fs::remove_file(&fifo);

        let module_stdin = reader.try_clone().expect("dup");
        let runner = cx.server(&[]).env("TASKWIRE_WASI_LINGER_MS", "1000");
        let mut server = Server::start(&runner, Some(module_stdin));
        server.stdin = Some(Box::new(writer));
        server.initialize();
        let during = nonblocking(&reader);
        drop(server.stdin.take()); // EOF: the module returns, its host lingers
        let exited = server
            .errors
            .recv_timeout(Duration::from_secs(10))
            .expect("the runner's line after the module returned");
        assert!(exited.ends_with("module exited with 0"), "{exited}");
        assert!(
            !nonblocking(&reader),
            "the module returned and left stdin O_NONBLOCK (while it ran: {during})"
        );
        let (code, _, _, stderr) = server.close(Duration::from_secs(10));
        assert_eq!(code, Some(0), "stderr: {stderr}");
    }
}

/// Node only. stdout is a non-blocking pipe nobody reads for a second: the module's writes hit
/// EAGAIN, and it waits for fd 1 to drain (an fd_write subscription) instead of failing; every
/// reply arrives, in order. (wasmtime 50 turns the host's EAGAIN into EIO, so a module cannot
/// recover there; the native smol server fails too, with EAGAIN.)
#[test]
fn wasi_node_nonblocking_stdout_waits_for_the_reader() {
    let test = "wasi_node_nonblocking_stdout_waits_for_the_reader";
    let Some(cx) = Cx::new(test, Runtime::Node, false) else {
        return;
    };
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("wasi/slow_reader.py");
    let argv = Argv::new("python3")
        .arg(script)
        .args(&["3000", "1000", "--"])
        .extend(&cx.server(&[]));
    let r = run(&argv, DEADLINE);
    r.assert_exit(0);
    assert_eq!(
        r.json_lines(),
        [json!({ "exit": 0, "ids": 3001, "in_order": true, "stderr": "" })],
        "{r}"
    );
}
