//! `cargo run --release -p taskwire-tests --bin bench [-- ROUNDS TASKS]`: our `task-server`
//! (smol and tokio) against the seed's Python server (mcp 1.30.0), measured in the same run
//! by the same client, and reported as ratios (machines here are noisy: absolute numbers mean
//! little, ratios between neighbours more).
//!
//! Per server: the mean round trip of `ROUNDS` sequential pings; the mean time to create a task
//! (`tools/call` as a task until its `CreateTaskResult`) over `TASKS` sequential creations; the
//! wall time until all those tasks (three one-second steps each) delivered their results; the
//! server's resident memory while they ran.

use std::time::{Duration, Instant};

use serde_json::json;
use taskwire_driver::engine::Config;
use taskwire_driver::{ClientBuilder, TaskCall};
use taskwire_tests::peers::{self, Argv};

struct Figures {
    ping_us: f64,
    create_us: f64,
    all_done_ms: f64,
    rss_kib: u64,
}

fn main() {
    let mut args = std::env::args()
        .skip(1)
        .map(|a| a.parse::<usize>().expect("numbers"));
    let rounds = args.next().unwrap_or(2_000);
    let tasks = args.next().unwrap_or(100);
    let peers = peers::ready("bench").expect("the bench needs the Python peer");
    let server = peers::demo::binary("task-server");
    let servers = [
        (
            "taskwire (smol)",
            Argv::new(&server).args(&["--runtime", "smol"]),
        ),
        (
            "taskwire (tokio)",
            Argv::new(&server).args(&["--runtime", "tokio"]),
        ),
        ("python mcp 1.30.0", peers.seed_server()),
    ];
    println!("{rounds} pings, {tasks} tasks per server\n");
    println!("| server | ping round trip | task creation | all {tasks} results | RSS with {tasks} live tasks |");
    println!("| --- | --- | --- | --- | --- |");
    let results: Vec<(&str, Figures)> = servers
        .iter()
        .map(|(name, argv)| (*name, smol::block_on(measure(argv, rounds, tasks))))
        .collect();
    for (name, f) in &results {
        println!(
            "| {name} | {:.0} µs | {:.0} µs | {:.0} ms | {} KiB |",
            f.ping_us, f.create_us, f.all_done_ms, f.rss_kib
        );
    }
    let (_, peer) = results.last().expect("the peer ran");
    println!("\nRatios against the Python server (below 1 is better):\n");
    println!("| server | ping | task creation | all results | memory |");
    println!("| --- | --- | --- | --- | --- |");
    for (name, f) in &results[..results.len() - 1] {
        println!(
            "| {name} | {:.3} | {:.3} | {:.3} | {:.3} |",
            f.ping_us / peer.ping_us,
            f.create_us / peer.create_us,
            f.all_done_ms / peer.all_done_ms,
            f.rss_kib as f64 / peer.rss_kib as f64
        );
    }
}

async fn measure(argv: &Argv, rounds: usize, tasks: usize) -> Figures {
    let mut command = smol::process::Command::from(argv.command());
    let builder = ClientBuilder::new(Config::new("bench", "1"));
    let (client, mut child) = taskwire_smol::spawn_server(&mut command, builder).expect("spawn");
    client.initialize().await.expect("initialize");

    let start = Instant::now();
    for _ in 0..rounds {
        client.request("ping", None).await.expect("ping");
    }
    let ping_us = start.elapsed().as_secs_f64() * 1e6 / rounds as f64;

    let start = Instant::now();
    let mut calls: Vec<TaskCall> = Vec::with_capacity(tasks);
    for _ in 0..tasks {
        let call = client.call_tool_as_task("long_running_task", json!({}), Some(60_000));
        calls.push(call.await.expect("task created"));
    }
    let create_us = start.elapsed().as_secs_f64() * 1e6 / tasks as f64;
    let rss_kib = rss_kib(child.id());
    let outcomes = futures::future::join_all(calls.into_iter().map(TaskCall::result)).await;
    let all_done_ms = start.elapsed().as_secs_f64() * 1e3;
    assert!(outcomes.iter().all(Result::is_ok), "every task completes");

    client.close().await;
    let _ = futures::future::select(
        Box::pin(child.status()),
        Box::pin(smol::Timer::after(Duration::from_secs(2))),
    )
    .await;
    let _ = child.kill();
    Figures {
        ping_us,
        create_us,
        all_done_ms,
        rss_kib,
    }
}

/// Resident memory of a process, from `/proc/<pid>/status` (0 where there is no /proc).
fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let line = status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .unwrap_or("");
    line.split_whitespace()
        .nth(1)
        .and_then(|kb| kb.parse().ok())
        .unwrap_or(0)
}
