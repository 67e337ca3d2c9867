//! Instructions per message of the engine alone, counted by callgrind (repeatable whatever
//! else the machine is doing, unlike time).
//!
//! `cargo bench -p taskwire-engine --bench instructions` runs itself under
//! `valgrind --tool=callgrind` twice per message kind, with N and 2N messages, and prints
//! (I(2N) - I(N)) / N: the cost of one more message, setup excluded. It needs valgrind on
//! PATH (Debian: `apt-get install valgrind`) and says so when it is missing.

use std::process::Command;

#[path = "common.rs"]
mod common;

use common::Server;

const KINDS: [&str; 4] = ["ping", "tasks_get", "tools_call_plain", "task_lifecycle"];
const N: u64 = 5_000;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let [kind, count] = args.as_slice() {
        return run(kind, count.parse().expect("a count"));
    }
    let me = std::env::current_exe().expect("own path");
    println!("| message | instructions (engine alone) |");
    println!("| --- | --- |");
    for kind in KINDS {
        let one = callgrind(&me, kind, N);
        let two = callgrind(&me, kind, 2 * N);
        println!("| {kind} | {} |", two.saturating_sub(one) / N);
    }
}

/// Total instructions of `me KIND N` under callgrind.
fn callgrind(me: &std::path::Path, kind: &str, n: u64) -> u64 {
    let out = Command::new("valgrind")
        .args(["--tool=callgrind", "--callgrind-out-file=/dev/null"])
        .arg(me)
        .args([kind, &n.to_string()])
        .output()
        .unwrap_or_else(|e| {
            panic!("cannot run valgrind ({e}); install it: apt-get install valgrind")
        });
    let log = String::from_utf8_lossy(&out.stderr);
    let collected = log
        .lines()
        .find_map(|l| l.split("Collected : ").nth(1))
        .unwrap_or_else(|| panic!("no instruction count from callgrind:\n{log}"));
    collected.trim().parse().expect("a count")
}

/// Feeds `n` messages of one kind to a ready server session, draining every output.
fn run(kind: &str, n: u64) {
    let mut s = Server::ready(usize::MAX);
    let task = s.completed_task(1_000_000_000);
    let get = format!(
        r#"{{"jsonrpc":"2.0","id":7,"method":"tasks/get","params":{{"taskId":"{task}"}}}}"#
    );
    let ping = br#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#;
    for i in 0..n {
        match kind {
            "ping" => s.feed(ping),
            "tasks_get" => s.feed(get.as_bytes()),
            "tools_call_plain" => {
                s.plain_call();
            }
            "task_lifecycle" => {
                s.lifecycle(i + 1);
            }
            other => panic!("unknown message kind {other}"),
        }
        s.drain();
    }
}
