//! Cost per message of the engine alone: no IO, the caller's clock, counter task ids.
//!
//! `cargo bench -p taskwire-engine --bench messages`. Each benchmark feeds complete JSON-RPC
//! messages to a server session and drains every output, as an adapter would; divan also
//! counts the allocations of each. The `serde_json_*` entries are the floor for reference:
//! parsing the same request into a `Value` and serializing the same answer, nothing else.

#[path = "common.rs"]
mod common;

use common::{Server, T0};
use divan::{black_box, AllocProfiler, Bencher};
use serde_json::{json, Value};

#[global_allocator]
static ALLOC: AllocProfiler = AllocProfiler::system();

fn main() {
    divan::main();
}

#[divan::bench]
fn ping(bencher: Bencher) {
    let mut s = Server::ready(16);
    let line = br#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#;
    bencher.bench_local(|| {
        s.feed(black_box(line));
        s.drain()
    });
}

#[divan::bench]
fn tasks_get(bencher: Bencher) {
    let mut s = Server::ready(16);
    let task = s.completed_task(1);
    let line = format!(
        r#"{{"jsonrpc":"2.0","id":7,"method":"tasks/get","params":{{"taskId":"{task}"}}}}"#
    );
    bencher.bench_local(|| {
        s.feed(black_box(line.as_bytes()));
        s.drain()
    });
}

#[divan::bench]
fn tools_call_plain(bencher: Bencher) {
    let mut s = Server::ready(16);
    bencher.bench_local(|| s.plain_call());
}

/// `tools/call` as a task, the app answers it, `tasks/get`, `tasks/result`.
#[divan::bench]
fn task_lifecycle(bencher: Bencher) {
    let mut s = Server::ready(usize::MAX);
    let mut n = 0u64;
    bencher.bench_local(|| {
        n += 1;
        s.lifecycle(n)
    });
}

/// One `tasks/list` page (50 tasks) at the start, and one in the middle, of `n` retained tasks.
#[divan::bench(args = [1_000, 100_000, 1_000_000], sample_count = 30)]
fn tasks_list_page(bencher: Bencher, n: usize) {
    let mut s = Server::ready(n);
    for i in 0..n {
        s.completed_task(i as u64 + 1);
    }
    let first = br#"{"jsonrpc":"2.0","id":7,"method":"tasks/list","params":{}}"#.to_vec();
    let mut cursor = String::new();
    for _ in 0..n / 100 {
        match next_page(&mut s, &cursor) {
            Some(next) => cursor = next,
            None => break,
        }
    }
    let middle = format!(
        r#"{{"jsonrpc":"2.0","id":7,"method":"tasks/list","params":{{"cursor":"{cursor}"}}}}"#
    );
    bencher.bench_local(|| {
        s.feed(black_box(&first));
        s.feed(black_box(middle.as_bytes()));
        s.drain()
    });
}

/// The `nextCursor` of the page after `cursor` ("" for the first page).
fn next_page(s: &mut Server, cursor: &str) -> Option<String> {
    s.drain();
    let params = if cursor.is_empty() {
        json!({})
    } else {
        json!({ "cursor": cursor })
    };
    let line =
        json!({ "jsonrpc": "2.0", "id": 8, "method": "tasks/list", "params": params }).to_string();
    s.feed(line.as_bytes());
    let mut next = None;
    while let Some(out) = s.host.poll_output() {
        if let taskwire_engine::Output::Send(t) = out {
            let v: Value = serde_json::from_str(&t.message).expect("JSON");
            next = v["result"]["nextCursor"].as_str().map(str::to_owned);
        }
    }
    next
}

/// Expiry of 100,000 completed tasks with one `handle_timeout`.
#[divan::bench(sample_count = 10)]
fn expire_100k(bencher: Bencher) {
    bencher
        .with_inputs(|| {
            let mut s = Server::ready(100_000);
            for i in 0..100_000 {
                s.completed_task(i + 1);
            }
            s
        })
        .bench_local_values(|mut s| {
            s.host
                .handle_timeout(T0.plus(86_400_000))
                .expect("the host takes input");
            s.drain();
            assert_eq!(s.host.task_count(), 0);
            s
        });
}

/// The floor: serde_json parses the `tasks/get` request to a `Value` and writes its answer.
#[divan::bench]
fn serde_json_tasks_get(bencher: Bencher) {
    let request = r#"{"jsonrpc":"2.0","id":7,"method":"tasks/get","params":{"taskId":"000000000000000000000000000000000001"}}"#;
    let answer = json!({"jsonrpc":"2.0","id":7,"result":{"taskId":"000000000000000000000000000000000001","status":"completed","createdAt":"2026-01-15T09:00:00.000Z","lastUpdatedAt":"2026-01-15T09:00:00.000Z","ttl":600000,"pollInterval":500}});
    bencher.bench_local(|| {
        let v: Value = serde_json::from_str(black_box(request)).expect("JSON");
        black_box(v);
        serde_json::to_string(black_box(&answer))
            .expect("serializes")
            .len()
    });
}

/// The floor for `ping`.
#[divan::bench]
fn serde_json_ping(bencher: Bencher) {
    let request = r#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#;
    let answer = json!({"jsonrpc":"2.0","id":7,"result":{}});
    bencher.bench_local(|| {
        let v: Value = serde_json::from_str(black_box(request)).expect("JSON");
        black_box(v);
        serde_json::to_string(black_box(&answer))
            .expect("serializes")
            .len()
    });
}
