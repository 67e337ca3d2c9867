//! `cargo run --release -p taskwire-bench --bin instructions [-- N [TASK_SERVER] [--before OLD]]`:
//! instructions per message of the whole `task-server` process (engine, driver, runtime,
//! both stdio pumps), counted by callgrind, which does not drift with the machine's load.
//! `TASK_SERVER` measures another build (e.g. an older commit's) instead of this tree's;
//! `--before OLD` measures `OLD` too, kind by kind beside it, and writes the table as
//! `before → after` cells (the form the benchmarks' README keeps); `--metrics` measures the
//! same build with `--metrics 127.0.0.1:0` beside it (`off → on`: what `Server::metrics`
//! costs, nobody scraping).
//!
//! For each message kind the server gets, on stdin from a file, the handshake and then N
//! (default 20,000) pipelined messages, and once 2N; it writes to a file. The figure is
//! (I(2N) - I(N)) / N: one more message, start-up and shutdown excluded. Every thread of
//! the process is counted. `tasks/get` asks for the server's finished `demo-task`; `echo` is
//! the benchmark fixture's tool (`--bench-tools`). The 2026-07-28 kinds are the same requests
//! with the `_meta` clients send in that era (version, identity, capabilities), after the same
//! 2025-11-25 handshake, which they ignore. `ping (spaced)` is written the way Python's
//! `json.dumps` writes it. `task lifecycle` is a `tools/call` of the fixture's `instant_task`
//! as a task: the task made, completed at once, its status told.
//! Needs valgrind (`apt-get install valgrind`).

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use clap::Parser;
use taskwire_tests::peers::{demo, target_dir};

/// Instructions per message of the whole `task-server` process, counted by callgrind (needs
/// valgrind): for each message kind, (I(2N) - I(N)) / N over N and 2N pipelined messages
/// after the handshake, on smol and on tokio.
#[derive(Debug, Parser)]
#[command(name = "instructions", version)]
struct Args {
    /// Pipelined messages per kind in the first run (the second sends 2N); at least 1.
    #[arg(default_value_t = 20_000, value_parser = clap::value_parser!(u64).range(1..))]
    n: u64,
    /// The task-server to measure, e.g. an older commit's build (default: this tree's, built
    /// with cargo build --release).
    task_server: Option<PathBuf>,
    /// Another task-server (e.g. the commit before a change) measured beside it: each cell
    /// reads `before → after`.
    #[arg(long, value_name = "OLD", conflicts_with = "metrics")]
    before: Option<PathBuf>,
    /// The same task-server with `--metrics 127.0.0.1:0` measured beside it: each cell reads
    /// `off → on`.
    #[arg(long)]
    metrics: bool,
}

/// The server's own options, for a run with metrics on.
const METRICS_ON: &[&str] = &["--metrics", "127.0.0.1:0"];

const KINDS: [(&str, &str); 7] = [
    ("ping", r#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#),
    // Python's `json.dumps` writes a space after every `:` and `,`.
    (
        "ping (spaced)",
        r#"{"jsonrpc": "2.0", "id": 7, "method": "ping"}"#,
    ),
    (
        "tasks/get",
        r#"{"jsonrpc":"2.0","id":7,"method":"tasks/get","params":{"taskId":"demo-task"}}"#,
    ),
    (
        "tools/call echo",
        r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"}}}"#,
    ),
    (
        "tasks/get (2026-07-28)",
        concat!(
            r#"{"jsonrpc":"2.0","id":7,"method":"tasks/get","params":{"taskId":"demo-task","_meta":{"#,
            r#""io.modelcontextprotocol/protocolVersion":"2026-07-28","#,
            r#""io.modelcontextprotocol/clientInfo":{"name":"bench-client","version":"1.0.0"},"#,
            r#""io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}}}"#
        ),
    ),
    (
        "tools/call echo (2026-07-28)",
        concat!(
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"},"_meta":{"#,
            r#""io.modelcontextprotocol/protocolVersion":"2026-07-28","#,
            r#""io.modelcontextprotocol/clientInfo":{"name":"bench-client","version":"1.0.0"},"#,
            r#""io.modelcontextprotocol/clientCapabilities":{}}}}"#
        ),
    ),
    (
        "task lifecycle",
        r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"instant_task","task":{"ttl":600000}}}"#,
    ),
];

const HANDSHAKE: &str = concat!(
    r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"instructions","version":"1"}}}"#,
    "\n",
    r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    "\n"
);

fn main() {
    let Args {
        n,
        task_server,
        before,
        metrics,
    } = Args::parse();
    let server = task_server.unwrap_or_else(|| {
        demo::release_binary("taskwire-demo", "task-server").unwrap_or_else(|e| panic!("{e}"))
    });
    let scratch = target_dir().join("tmp").join("instructions");
    std::fs::create_dir_all(&scratch).expect("scratch dir");
    // One more message: (I(2N) - I(N)) / N.
    let per_message = |server: &Path, options: &[&str], runtime: &str, line: &str| {
        let one = count(server, options, runtime, &scratch, line, n);
        let two = count(server, options, runtime, &scratch, line, 2 * n);
        two.saturating_sub(one) / n
    };
    // Each cell `was → is`: another build's figure, or this build's with metrics off.
    let beside = match (&before, metrics) {
        (Some(old), _) => Some((old.as_path(), &[][..], &[][..])),
        (None, true) => Some((server.as_path(), &[][..], METRICS_ON)),
        (None, false) => None,
    };
    println!(
        "task-server, {n} and {} pipelined messages per kind\n",
        2 * n
    );
    match beside {
        None => {
            println!("| runtime | message | instructions per message (whole process) |");
            println!("| --- | --- | --- |");
            for runtime in ["smol", "tokio"] {
                for (kind, line) in KINDS {
                    let after = per_message(&server, &[], runtime, line);
                    println!("| {runtime} | `{kind}` | {after} |");
                }
            }
        }
        Some((old, old_options, options)) => {
            println!("| message | whole process, smol | whole process, tokio |");
            println!("| --- | ---: | ---: |");
            for (kind, line) in KINDS {
                let cells: Vec<String> = ["smol", "tokio"]
                    .into_iter()
                    .map(|runtime| {
                        let was = per_message(old, old_options, runtime, line);
                        let is = per_message(&server, options, runtime, line);
                        format!("{} → {}", thousands(was), thousands(is))
                    })
                    .collect();
                println!("| `{kind}` | {} |", cells.join(" | "));
            }
        }
    }
}

/// `n` with a comma between thousands, as the README writes figures.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

/// Total instructions of one server run fed `n` copies of `line`.
fn count(
    server: &Path,
    options: &[&str],
    runtime: &str,
    scratch: &Path,
    line: &str,
    n: u64,
) -> u64 {
    let input = scratch.join("input.jsonl");
    let mut file = File::create(&input).expect("input file");
    file.write_all(HANDSHAKE.as_bytes()).expect("write");
    // Each message its own id (a tool call is still in flight when the next arrives).
    for i in 0..n {
        let numbered = line
            .replacen(r#""id":7"#, &format!(r#""id":{}"#, i + 1), 1)
            .replacen(r#""id": 7"#, &format!(r#""id": {}"#, i + 1), 1);
        file.write_all(numbered.as_bytes()).expect("write");
        file.write_all(b"\n").expect("write");
    }
    drop(file);
    let output = scratch.join("output.jsonl");
    let run = Command::new("valgrind")
        .args(["--tool=callgrind", "--callgrind-out-file=/dev/null"])
        .arg(server)
        .args(["--runtime", runtime, "--bench-tools"])
        .args(options)
        .stdin(File::open(&input).expect("input"))
        .stdout(File::create(&output).expect("output"))
        .stderr(Stdio::piped())
        .output()
        .unwrap_or_else(|e| {
            panic!("cannot run valgrind ({e}); install it: apt-get install valgrind")
        });
    let answered = std::fs::read_to_string(&output)
        .expect("output")
        .lines()
        .filter(|l| l.contains(r#","result":"#) && !l.starts_with(r#"{"jsonrpc":"2.0","id":0,"#))
        .count() as u64;
    assert_eq!(answered, n, "every message is answered");
    let log = String::from_utf8_lossy(&run.stderr);
    log.lines()
        .find_map(|l| l.split("Collected : ").nth(1))
        .unwrap_or_else(|| panic!("no instruction count from callgrind:\n{log}"))
        .trim()
        .parse()
        .expect("a count")
}

#[cfg(test)]
mod tests {
    use super::thousands;

    #[test]
    fn figures_are_written_as_the_readme_writes_them() {
        for (n, text) in [
            (0, "0"),
            (999, "999"),
            (1_000, "1,000"),
            (16_176, "16,176"),
            (1_234_567, "1,234,567"),
        ] {
            assert_eq!(thousands(n), text);
        }
    }
}
