//! `http-bench [--smoke] [--rounds N] [--seconds S] [--sessions N] [--task-server PATH]
//! [--null-server PATH]`: the Streamable HTTP benchmark. Each server runs as its own process
//! on a local port; the load comes from this process over HTTP/1.1 keep-alive (reqwest),
//! from one connection and from 64, in alternating rounds; every answer of ours is checked.
//!
//! Servers: our `task-server --http --bench-tools` and `null-http-server`, the floor (a
//! do-nothing hyper server answering one fixed JSON body). Workloads: 2026-07-28 stateless
//! `tools/call echo` (1 and 64 connections), a 2026-07-28 task lifecycle (`instant_task` as a
//! task, `tasks/get` until completed, the result inline), 2025-11-25 session calls (1 session,
//! and 64 sessions at once). Then the memory of idle 2025-11-25 sessions: the server's RSS
//! growth over `--sessions` sessions (default 10,000), per session.
//!
//! `--smoke` runs everything briefly (the tests run it so that it never rots). Use release
//! builds for figures: `cargo build --release -p taskwire-demo -p taskwire-tests --bins`.

use std::path::PathBuf;
use std::process::{Child, Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use futures::future::join_all;
use serde_json::{json, Value};

/// Calls in flight for the "64" workloads.
const WIDE: usize = 64;

struct Options {
    smoke: bool,
    rounds: usize,
    seconds: f64,
    sessions: usize,
    task_server: PathBuf,
    null_server: PathBuf,
}

fn options() -> Result<Options, String> {
    let mut args = std::env::args().skip(1);
    let beside = |name: &str| {
        std::env::current_exe()
            .map(|me| me.with_file_name(name))
            .unwrap_or_else(|_| PathBuf::from(name))
    };
    let mut o = Options {
        smoke: false,
        rounds: 3,
        seconds: 5.0,
        sessions: 10_000,
        task_server: beside("task-server"),
        null_server: beside("null-http-server"),
    };
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or(format!("{arg} takes a value"));
        match arg.as_str() {
            "--smoke" => o.smoke = true,
            "--rounds" => o.rounds = value()?.parse().map_err(|_| "--rounds takes a number")?,
            "--seconds" => o.seconds = value()?.parse().map_err(|_| "--seconds takes a number")?,
            "--sessions" => {
                o.sessions = value()?.parse().map_err(|_| "--sessions takes a number")?
            }
            "--task-server" => o.task_server = value()?.into(),
            "--null-server" => o.null_server = value()?.into(),
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    if o.smoke {
        (o.rounds, o.seconds, o.sessions) = (1, 0.2, 50);
    }
    Ok(o)
}

/// A server process on a local port, killed when dropped.
struct Server {
    name: &'static str,
    child: Child,
    url: String,
    ours: bool,
}

impl Server {
    fn start(name: &'static str, program: &PathBuf, args: &[&str], ours: bool) -> Server {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let address = format!("127.0.0.1:{port}");
        let mut command = Command::new(program);
        if ours {
            command.args(["--http", &address]).args(args);
        } else {
            command.arg(&address).args(args);
        }
        let child = command
            .env("RUST_LOG", "error")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", program.display()));
        let deadline = Instant::now() + Duration::from_secs(20);
        while std::net::TcpStream::connect(&address).is_err() {
            assert!(Instant::now() < deadline, "{name} did not listen");
            std::thread::sleep(Duration::from_millis(20));
        }
        Server {
            name,
            child,
            url: format!("http://{address}/mcp"),
            ours,
        }
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One HTTP request of a workload, and the check of its answer.
async fn post(
    http: &reqwest::Client,
    server: &Server,
    headers: &[(&str, &str)],
    body: &Value,
) -> Result<Value, String> {
    let mut request = http
        .post(&server.url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream");
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = request
        .body(body.to_string())
        .send()
        .await
        .map_err(|e| e.to_string())?;
    let session = response
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let status = response.status();
    let text = response.text().await.map_err(|e| e.to_string())?;
    if !status.is_success() {
        return Err(format!("HTTP {status}: {text}"));
    }
    if text.is_empty() {
        return Ok(Value::Null);
    }
    let mut value: Value = serde_json::from_str(&text).map_err(|e| format!("{e}: {text}"))?;
    if let Some(session) = session {
        value["session"] = json!(session);
    }
    Ok(value)
}

fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "http-bench", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}},
    })
}

/// A 2026-07-28 `tools/call echo`; checks the text came back.
async fn echo_2026(http: &reqwest::Client, server: &Server, n: u64) -> Result<(), String> {
    let text = format!("m{n}");
    let body = json!({"jsonrpc": "2.0", "id": n, "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": text}, "_meta": meta()}});
    let headers = [
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "tools/call"),
        ("mcp-name", "echo"),
    ];
    let reply = post(http, server, &headers, &body).await?;
    if server.ours && reply["result"]["content"][0]["text"] != text.as_str() {
        return Err(format!("wrong echo: {reply}"));
    }
    Ok(())
}

/// A 2026-07-28 task lifecycle: `instant_task` as a task, `tasks/get` until completed.
async fn lifecycle_2026(http: &reqwest::Client, server: &Server, n: u64) -> Result<(), String> {
    let body = json!({"jsonrpc": "2.0", "id": n, "method": "tools/call",
        "params": {"name": "instant_task", "arguments": {}, "_meta": meta()}});
    let headers = [
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "tools/call"),
        ("mcp-name", "instant_task"),
    ];
    let created = post(http, server, &headers, &body).await?;
    let task = created["result"]["taskId"]
        .as_str()
        .unwrap_or("x")
        .to_owned();
    loop {
        let body = json!({"jsonrpc": "2.0", "id": n, "method": "tasks/get",
            "params": {"taskId": task, "_meta": meta()}});
        let headers = [
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tasks/get"),
            ("mcp-name", task.as_str()),
        ];
        let got = post(http, server, &headers, &body).await?;
        if !server.ours {
            return Ok(());
        }
        match got["result"]["status"].as_str() {
            Some("completed") if got["result"]["result"]["content"][0]["text"] == "done" => {
                return Ok(())
            }
            Some("working") => continue,
            _ => return Err(format!("unexpected: {got}")),
        }
    }
}

/// Opens a 2025-11-25 session; its id.
async fn open_session(http: &reqwest::Client, server: &Server) -> Result<String, String> {
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "http-bench", "version": "1"}}});
    let reply = post(http, server, &[], &init).await?;
    let session = reply["session"].as_str().unwrap_or("none").to_owned();
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    post(http, server, &[("mcp-session-id", session.as_str())], &note).await?;
    Ok(session)
}

/// A `tools/call echo` in a 2025-11-25 session.
async fn echo_2025(
    http: &reqwest::Client,
    server: &Server,
    session: &str,
    n: u64,
) -> Result<(), String> {
    let text = format!("m{n}");
    let body = json!({"jsonrpc": "2.0", "id": n, "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": text}}});
    let headers = [
        ("mcp-session-id", session),
        ("mcp-protocol-version", "2025-11-25"),
    ];
    let reply = post(http, server, &headers, &body).await?;
    if server.ours && reply["result"]["content"][0]["text"] != text.as_str() {
        return Err(format!("wrong echo: {reply}"));
    }
    Ok(())
}

#[derive(Clone, Copy, PartialEq)]
enum Workload {
    Echo,
    Echo64,
    Lifecycle,
    Session,
    Session64,
}

impl Workload {
    const ALL: [Workload; 5] = [
        Workload::Echo,
        Workload::Echo64,
        Workload::Lifecycle,
        Workload::Session,
        Workload::Session64,
    ];

    fn name(self) -> &'static str {
        match self {
            Workload::Echo => "2026 stateless tools/call echo, 1 connection",
            Workload::Echo64 => "2026 stateless tools/call echo, 64 connections",
            Workload::Lifecycle => {
                "2026 task lifecycle (call, tasks/get to completed), 1 connection"
            }
            Workload::Session => "2025-11-25 session tools/call echo, 1 session",
            Workload::Session64 => "2025-11-25 session tools/call echo, 64 sessions",
        }
    }

    fn wide(self) -> bool {
        matches!(self, Workload::Echo64 | Workload::Session64)
    }

    /// Operations per second over `seconds` (after a short warm-up).
    async fn rate(self, server: &Server, seconds: f64) -> Result<f64, String> {
        let lanes = if self.wide() { WIDE } else { 1 };
        let http = reqwest::Client::builder()
            .pool_max_idle_per_host(lanes)
            .build()
            .map_err(|e| e.to_string())?;
        let mut sessions = Vec::new();
        if matches!(self, Workload::Session | Workload::Session64) {
            for _ in 0..lanes {
                sessions.push(open_session(&http, server).await?);
            }
        }
        let run_for = |limit: Duration, lane: usize| {
            let http = &http;
            let session = sessions.get(lane).cloned().unwrap_or_default();
            async move {
                let start = Instant::now();
                let mut done = 0u64;
                while start.elapsed() < limit {
                    let n = (lane as u64) << 32 | done;
                    match self {
                        Workload::Echo | Workload::Echo64 => echo_2026(http, server, n).await?,
                        Workload::Lifecycle => lifecycle_2026(http, server, n).await?,
                        Workload::Session | Workload::Session64 => {
                            echo_2025(http, server, &session, n).await?
                        }
                    }
                    done += 1;
                }
                Ok::<u64, String>(done)
            }
        };
        // Warm-up: a tenth of the time.
        for result in
            join_all((0..lanes).map(|l| run_for(Duration::from_secs_f64(seconds / 10.0), l))).await
        {
            result?;
        }
        let start = Instant::now();
        let counts =
            join_all((0..lanes).map(|l| run_for(Duration::from_secs_f64(seconds), l))).await;
        let elapsed = start.elapsed().as_secs_f64();
        let mut total = 0;
        for count in counts {
            total += count?;
        }
        Ok(total as f64 / elapsed)
    }
}

fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn main() -> ExitCode {
    let o = match options() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("http-bench: {e}");
            return ExitCode::from(2);
        }
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    let servers = || {
        [
            Server::start("taskwire", &o.task_server, &["--bench-tools"], true),
            Server::start("null (hyper)", &o.null_server, &[], false),
        ]
    };
    let mut rates: Vec<[Vec<f64>; 2]> = Workload::ALL.iter().map(|_| [vec![], vec![]]).collect();
    for round in 0..o.rounds {
        let started = servers();
        for (w, workload) in Workload::ALL.iter().enumerate() {
            // Alternate which server goes first in each round.
            let order: [usize; 2] = if round % 2 == 0 { [0, 1] } else { [1, 0] };
            for i in order {
                let rate = runtime.block_on(workload.rate(&started[i], o.seconds));
                match rate {
                    Ok(rate) => rates[w][i].push(rate),
                    Err(e) => {
                        eprintln!(
                            "http-bench: {} on {}: {e}",
                            workload.name(),
                            started[i].name
                        );
                        return ExitCode::FAILURE;
                    }
                }
            }
        }
    }
    println!("| workload | taskwire (ops/s) | null hyper server (ops/s) | taskwire / null |");
    println!("| --- | ---: | ---: | ---: |");
    for (w, workload) in Workload::ALL.iter().enumerate() {
        let ours = median(rates[w][0].clone());
        let null = median(rates[w][1].clone());
        println!(
            "| {} | {ours:.0} | {null:.0} | {:.2}× |",
            workload.name(),
            ours / null
        );
    }
    // Idle sessions: the RSS growth of our server over `sessions` 2025-11-25 sessions.
    let server = Server::start("taskwire", &o.task_server, &["--bench-tools"], true);
    let held = runtime.block_on(async {
        let http = reqwest::Client::new();
        open_session(&http, &server).await?;
        let before = rss_kib(server.pid());
        let mut opened = 0;
        for chunk in (0..o.sessions).collect::<Vec<_>>().chunks(WIDE) {
            for result in join_all(chunk.iter().map(|_| open_session(&http, &server))).await {
                result?;
                opened += 1;
            }
        }
        let after = rss_kib(server.pid());
        Ok::<_, String>((opened, before, after))
    });
    match held {
        Ok((opened, before, after)) => {
            let per = (after.saturating_sub(before) as f64) * 1024.0 / opened as f64;
            println!(
                "\nidle 2025-11-25 sessions held: {opened}; server RSS {before} KiB → {after} KiB: {per:.0} bytes per session"
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("http-bench: idle sessions: {e}");
            ExitCode::FAILURE
        }
    }
}
