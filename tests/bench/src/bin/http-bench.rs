//! `http-bench [--smoke] [--rounds N] [--seconds S] [--sessions N] [--task-server PATH]
//! [--null-server PATH]`: the Streamable HTTP benchmark. Each server runs as its own process
//! on a local port; the load comes from this process over HTTP/1.1 keep-alive (reqwest),
//! from one connection and from 64, in alternating rounds; every answer but the null
//! server's is checked.
//!
//! Servers, measured in the same run:
//! - our `task-server --http --bench-tools`;
//! - `null-http-server`, the floor (a do-nothing hyper server answering one fixed JSON body);
//! - rmcp 3.11's `StreamableHttpService` (`rmcp-echo-server --http ADDR --json-response`,
//!   `tests/peers/rmcp`): `echo` only;
//! - the TypeScript SDK 1.32.2's `StreamableHTTPServerTransport` in session mode with
//!   `enableJsonResponse` (`tests/peers/bench_http_server.mjs`): `echo` only, 2025-11-25 only;
//! - our `task-server` again with `--metrics` (recorded, nobody scraping): what metrics cost
//!   (issue 41's goal: at least 0.95× of ours without).
//!
//! The peers are installed by `tests/peers/setup.sh` under `<target>/peers/`; without them the
//! benchmark stops at once, saying so.
//!
//! Workloads: 2026-07-28 stateless `tools/call echo` (1 and 64 connections), a 2026-07-28 task
//! lifecycle (`instant_task` as a task, `tasks/get` until completed, the result inline),
//! 2025-11-25 session calls (1 session, and 64 sessions at once). A peer that cannot serve a
//! workload gets "n/a" and the reason under the table. Then the targets on the echo workloads
//! (ours at least 0.6× the null server, 3× rmcp, 10× TypeScript), and the memory of idle
//! 2025-11-25 sessions of ours: the server's RSS growth over `--sessions` sessions (default
//! 10,000), per session.
//!
//! JSON answers where the server offers the choice (rmcp's `json_response`, the TypeScript
//! SDK's `enableJsonResponse`; ours answers JSON unless a reply is slow). rmcp answers every
//! request of a 2025-11-25 session on an SSE stream, whatever its setting: the load reads
//! both.
//!
//! `--smoke` runs everything briefly (the tests run it so that it never rots). Use release
//! builds for figures: `cargo build --release -p taskwire-demo -p taskwire-bench --bins`, and
//! the rmcp peer at opt-level 3 (`setup.sh`'s default).

use std::path::PathBuf;
use std::process::{Child, ExitCode, Stdio};
use std::time::{Duration, Instant};

use clap::Parser;
use futures::future::join_all;
use serde_json::json;
use taskwire_bench::http_load::{self, meta, post};
use taskwire_tests::peers::{Argv, Peers};

/// Calls in flight for the "64" workloads.
const WIDE: usize = 64;

/// How to install the peers.
const SETUP: &str = "install the peers with `bash tests/peers/setup.sh` (into <target>/peers/)";

/// The Streamable HTTP benchmark: our task-server beside a do-nothing hyper server, rmcp and the
/// TypeScript SDK, each its own process, loaded from 1 connection and from 64 in alternating
/// rounds (needs the peers of `bash tests/peers/setup.sh`).
#[derive(Debug, Parser)]
#[command(name = "http-bench", version)]
struct Args {
    /// Runs everything briefly: 1 round of 0.2 s, 50 sessions (overrides --rounds, --seconds,
    /// --sessions).
    #[arg(long)]
    smoke: bool,
    /// Rounds, each on fresh servers.
    #[arg(long, value_name = "N", default_value_t = 3)]
    rounds: usize,
    /// How long each workload is measured on each server, in seconds (after a warm-up of a
    /// tenth of it).
    #[arg(long, value_name = "S", default_value_t = 5.0)]
    seconds: f64,
    /// The idle 2025-11-25 sessions over which our server's RSS growth per session is measured
    /// (2 if fewer).
    #[arg(long, value_name = "N", default_value_t = 10_000)]
    sessions: usize,
    /// Our task-server (default: the one beside this program).
    #[arg(long, value_name = "PATH")]
    task_server: Option<PathBuf>,
    /// The null-http-server (default: the one beside this program).
    #[arg(long, value_name = "PATH")]
    null_server: Option<PathBuf>,
}

/// The command line with `--smoke` and the defaults applied.
struct Options {
    rounds: usize,
    seconds: f64,
    sessions: usize,
    task_server: PathBuf,
    null_server: PathBuf,
}

fn options() -> Options {
    let args = Args::parse();
    let beside = |name: &str| {
        std::env::current_exe()
            .map(|me| me.with_file_name(name))
            .unwrap_or_else(|_| PathBuf::from(name))
    };
    let (rounds, seconds, sessions) = if args.smoke {
        (1, 0.2, 50)
    } else {
        (args.rounds, args.seconds, args.sessions)
    };
    Options {
        rounds,
        seconds,
        sessions,
        task_server: args.task_server.unwrap_or_else(|| beside("task-server")),
        null_server: args
            .null_server
            .unwrap_or_else(|| beside("null-http-server")),
    }
}

/// The servers measured, in the table's order.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    Taskwire,
    Null,
    Rmcp,
    TypeScript,
    /// Ours with `--metrics` (recorded, nobody scraping): what the metrics cost.
    Observed,
}

impl Kind {
    const ALL: [Kind; 5] = [
        Kind::Taskwire,
        Kind::Null,
        Kind::Rmcp,
        Kind::TypeScript,
        Kind::Observed,
    ];

    fn label(self) -> &'static str {
        match self {
            Kind::Taskwire => "taskwire",
            Kind::Null => "null hyper server",
            Kind::Rmcp => "rmcp 3.11",
            Kind::TypeScript => "TypeScript SDK 1.32.2",
            Kind::Observed => "taskwire, metrics on",
        }
    }

    /// The short name in ratio columns.
    fn short(self) -> &'static str {
        match self {
            Kind::Taskwire => "taskwire",
            Kind::Null => "null",
            Kind::Rmcp => "rmcp",
            Kind::TypeScript => "TypeScript",
            Kind::Observed => "metrics on",
        }
    }

    /// Whether its answers are checked (the null server's fixed body is not an answer).
    fn checked(self) -> bool {
        self != Kind::Null
    }

    /// Why it cannot serve `workload`, if it cannot.
    fn cannot(self, workload: Workload) -> Option<&'static str> {
        match (self, workload) {
            (Kind::Rmcp, Workload::Lifecycle) => Some(
                "rmcp-echo-server, the benchmark's rmcp peer, serves `echo` only \
                 (rmcp's 2026 tasks are exercised by the interop suite, not timed)",
            ),
            (Kind::TypeScript, Workload::Echo | Workload::Echo64 | Workload::Lifecycle) => Some(
                "the TypeScript SDK speaks 2025-11-25 at the newest: even in its stateless mode \
                 it answers a POST with `MCP-Protocol-Version: 2026-07-28` with 400 \
                 \"Unsupported protocol version\"",
            ),
            _ => None,
        }
    }

    /// The target ratio of ours over it on the echo workloads (issue 20).
    fn target(self) -> Option<f64> {
        match self {
            Kind::Taskwire | Kind::Observed => None,
            Kind::Null => Some(0.6),
            Kind::Rmcp => Some(3.0),
            Kind::TypeScript => Some(10.0),
        }
    }
}

/// Where each server's program is; checked before anything starts.
struct Programs {
    task_server: PathBuf,
    null_server: PathBuf,
    peers: Peers,
}

impl Programs {
    fn find(o: &Options) -> Result<Programs, String> {
        let programs = Programs {
            task_server: o.task_server.clone(),
            null_server: o.null_server.clone(),
            peers: Peers::locate(),
        };
        let p = &programs.peers;
        let needed = [
            (programs.task_server.clone(), "our task-server"),
            (programs.null_server.clone(), "null-http-server"),
            (p.rmcp_echo_server(), "the rmcp 3.11 peer"),
            (
                p.node_dir
                    .join("node_modules/@modelcontextprotocol/sdk/package.json"),
                "the TypeScript SDK 1.32.2 peer",
            ),
            (
                p.kit.join("bench_http_server.mjs"),
                "the TypeScript SDK peer's script",
            ),
        ];
        for (path, what) in needed {
            if !path.is_file() {
                let how = if what.starts_with("the ") {
                    SETUP
                } else {
                    "build it: cargo build -p taskwire-demo -p taskwire-bench --bins"
                };
                return Err(format!("{what}: {} not found; {how}", path.display()));
            }
        }
        Ok(programs)
    }

    /// The command line of `kind` listening on `127.0.0.1:PORT`.
    fn argv(&self, kind: Kind, port: u16) -> Argv {
        let address = format!("127.0.0.1:{port}");
        match kind {
            Kind::Taskwire => Argv::new(&self.task_server)
                .args(&["--http", &address, "--bench-tools"])
                .env("RUST_LOG", "error"),
            Kind::Observed => self
                .argv(Kind::Taskwire, port)
                .args(&["--metrics", "127.0.0.1:0"]),
            Kind::Null => Argv::new(&self.null_server).arg(&address),
            Kind::Rmcp => self.peers.rmcp_http_echo_server(port, &["--json-response"]),
            Kind::TypeScript => Argv::new("node")
                .env("TASKWIRE_PEERS_NODE", &self.peers.node_dir)
                .arg(self.peers.kit.join("bench_http_server.mjs"))
                .args(&["--http", &port.to_string(), "--json-response"]),
        }
    }
}

/// A server process on a local port, killed when dropped.
struct Server {
    kind: Kind,
    child: Child,
    url: String,
}

impl Server {
    /// Starts `kind` on a free port; returns once it accepts a connection.
    fn start(kind: Kind, programs: &Programs) -> Result<Server, String> {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_err(|e| format!("no free port: {e}"))?
            .port();
        let address = format!("127.0.0.1:{port}");
        let argv = programs.argv(kind, port);
        let child = argv
            .command()
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", argv.display()))?;
        let mut server = Server {
            kind,
            child,
            url: format!("http://{address}/mcp"),
        };
        let deadline = Instant::now() + Duration::from_secs(20);
        while std::net::TcpStream::connect(&address).is_err() {
            if let Ok(Some(status)) = server.child.try_wait() {
                return Err(format!(
                    "{} exited ({status}) before it listened: {} (an out-of-date peer? {SETUP})",
                    kind.label(),
                    argv.display()
                ));
            }
            if Instant::now() > deadline {
                return Err(format!("{} did not listen within 20 s", kind.label()));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(server)
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
    let reply = post(http, &server.url, &headers, &body).await?;
    if server.kind.checked() && reply["result"]["content"][0]["text"] != text.as_str() {
        return Err(format!("wrong echo: {reply}"));
    }
    Ok(())
}

/// A 2026-07-28 task lifecycle ([`http_load::lifecycle_2026`]).
async fn lifecycle_2026(http: &reqwest::Client, server: &Server, n: u64) -> Result<(), String> {
    http_load::lifecycle_2026(http, &server.url, n, server.kind.checked(), None).await
}

/// Opens a 2025-11-25 session; its id.
async fn open_session(http: &reqwest::Client, server: &Server) -> Result<String, String> {
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "http-bench", "version": "1"}}});
    let reply = post(http, &server.url, &[], &init).await?;
    if server.kind.checked() && reply["result"]["protocolVersion"] != "2025-11-25" {
        return Err(format!("not a 2025-11-25 session: {reply}"));
    }
    let session = reply["session"].as_str().unwrap_or("none").to_owned();
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let headers = [
        ("mcp-session-id", session.as_str()),
        ("mcp-protocol-version", "2025-11-25"),
    ];
    post(http, &server.url, &headers, &note).await?;
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
    let reply = post(http, &server.url, &headers, &body).await?;
    if server.kind.checked() && reply["result"]["content"][0]["text"] != text.as_str() {
        return Err(format!("wrong echo: {reply}"));
    }
    Ok(())
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
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

    /// Whether the targets apply (the echo workloads).
    fn echo(self) -> bool {
        self != Workload::Lifecycle
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

/// The median of a workload's rates on one server; `None` when it did not run there.
fn median(mut values: Vec<f64>) -> Option<f64> {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied()
}

/// `rates[workload][server]`: each round's ops/s.
type Rates = Vec<[Vec<f64>; 5]>;

/// Runs every workload on every server that can serve it, `rounds` times (fresh servers each
/// round, the servers' order rotating).
fn measure(
    o: &Options,
    programs: &Programs,
    runtime: &tokio::runtime::Runtime,
) -> Result<Rates, String> {
    let mut rates: Rates = Workload::ALL.iter().map(|_| Default::default()).collect();
    for round in 0..o.rounds {
        let mut started = Vec::new();
        for kind in Kind::ALL {
            started.push(Server::start(kind, programs)?);
        }
        for (w, &workload) in Workload::ALL.iter().enumerate() {
            for i in 0..started.len() {
                let server = &started[(i + round) % started.len()];
                if server.kind.cannot(workload).is_some() {
                    continue;
                }
                let rate = runtime
                    .block_on(workload.rate(server, o.seconds))
                    .map_err(|e| format!("{} on {}: {e}", workload.name(), server.kind.label()))?;
                let at = Kind::ALL
                    .iter()
                    .position(|&k| k == server.kind)
                    .unwrap_or(0);
                rates[w][at].push(rate);
            }
        }
    }
    Ok(rates)
}

/// Prints the table: each server's ops/s, then ours over each other server's.
fn report(rates: &Rates) {
    let others = &Kind::ALL[1..];
    let mut head = String::from("| workload |");
    let mut rule = String::from("| --- |");
    for kind in Kind::ALL {
        head += &format!(" {} (ops/s) |", kind.label());
        rule += " ---: |";
    }
    for kind in others {
        head += &format!(" taskwire / {} |", kind.short());
        rule += " ---: |";
    }
    println!("{head}\n{rule}");
    let medians: Vec<Vec<Option<f64>>> = rates
        .iter()
        .map(|per| per.iter().map(|r| median(r.clone())).collect())
        .collect();
    for (w, workload) in Workload::ALL.iter().enumerate() {
        let mut line = format!("| {} |", workload.name());
        for rate in &medians[w] {
            match rate {
                Some(rate) => line += &format!(" {rate:.0} |"),
                None => line += " n/a |",
            }
        }
        let ours = medians[w][0];
        for theirs in &medians[w][1..] {
            match (ours, *theirs) {
                (Some(ours), Some(theirs)) => line += &format!(" {:.2}× |", ours / theirs),
                _ => line += " n/a |",
            }
        }
        println!("{line}");
    }
    // Why each n/a is one.
    println!();
    for kind in others {
        let mut reasons: Vec<(&str, Vec<&str>)> = Vec::new();
        for workload in Workload::ALL {
            if let Some(reason) = kind.cannot(workload) {
                match reasons.iter_mut().find(|(r, _)| *r == reason) {
                    Some((_, names)) => names.push(workload.name()),
                    None => reasons.push((reason, vec![workload.name()])),
                }
            }
        }
        for (reason, names) in reasons {
            println!("n/a, {} ({}): {reason}.", kind.label(), names.join("; "));
        }
    }
    // The targets on the echo workloads.
    println!();
    let targets: Vec<String> = others
        .iter()
        .filter_map(|k| Some(format!("≥ {}× {}", k.target()?, k.short())))
        .collect();
    println!(
        "targets on the echo workloads: taskwire {}",
        targets.join(", ")
    );
    for (w, workload) in Workload::ALL.iter().enumerate() {
        if !workload.echo() {
            continue;
        }
        let Some(ours) = medians[w][0] else { continue };
        let verdicts: Vec<String> = others
            .iter()
            .enumerate()
            .filter_map(|(i, kind)| {
                let theirs = medians[w][i + 1]?;
                let target = kind.target()?;
                let ratio = ours / theirs;
                let verdict = if ratio >= target { "met" } else { "MISSED" };
                Some(format!("{} {ratio:.2}× ({verdict})", kind.short()))
            })
            .collect();
        println!("- {}: {}", workload.name(), verdicts.join(", "));
    }
    // Issue 41's goal: metrics on costs at most 5% (on / off ≥ 0.95).
    println!();
    println!("metrics on / off (goal ≥ 0.95×):");
    let on = Kind::ALL.iter().position(|&k| k == Kind::Observed);
    for (w, workload) in Workload::ALL.iter().enumerate() {
        let (Some(off), Some(on)) = (medians[w][0], on.and_then(|i| medians[w][i])) else {
            continue;
        };
        let ratio = on / off;
        let verdict = if ratio >= 0.95 { "met" } else { "MISSED" };
        println!("- {}: {ratio:.3}× ({verdict})", workload.name());
    }
}

fn main() -> ExitCode {
    let o = options();
    let programs = match Programs::find(&o) {
        Ok(programs) => programs,
        Err(e) => {
            eprintln!("http-bench: {e}");
            return ExitCode::FAILURE;
        }
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    match measure(&o, &programs, &runtime) {
        Ok(rates) => report(&rates),
        Err(e) => {
            eprintln!("http-bench: {e}");
            return ExitCode::FAILURE;
        }
    }
    // Idle sessions: the RSS growth of our server over `sessions` 2025-11-25 sessions (the
    // first one opened before the baseline, so that `sessions` stay within the server's
    // default `HttpConfig::max_sessions`, 10,000).
    let held = Server::start(Kind::Taskwire, &programs).and_then(|server| {
        runtime.block_on(async {
            let http = reqwest::Client::new();
            open_session(&http, &server).await?;
            let before = rss_kib(server.pid());
            let mut opened = 0;
            for chunk in (1..o.sessions.max(2)).collect::<Vec<_>>().chunks(WIDE) {
                for result in join_all(chunk.iter().map(|_| open_session(&http, &server))).await {
                    result?;
                    opened += 1;
                }
            }
            let after = rss_kib(server.pid());
            Ok::<_, String>((opened, before, after))
        })
    });
    match held {
        Ok((opened, before, after)) => {
            let per = (after.saturating_sub(before) as f64) * 1024.0 / opened as f64;
            let held = opened + 1;
            println!(
                "\nidle 2025-11-25 sessions held: {held}; server RSS {before} KiB → {after} KiB: {per:.0} bytes per session"
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("http-bench: idle sessions: {e}");
            ExitCode::FAILURE
        }
    }
}
