//! The seed corpus writer (`fuzz/corpus/<target>/`), run by hand.

use std::path::PathBuf;

use taskwire_harness::fuzz::check::Schema;
use taskwire_harness::fuzz::{pair_faults, server_ops, v2026_client, v2026_ops, Record, Rng};

/// Rewrites the checked-in seed corpus (`fuzz/corpus/<target>/`):
/// `cargo test --release -p taskwire-tests --test fuzz write_seed_corpus -- --ignored`.
///
/// - framing: the client side of each recorded interop transcript
///   (`tests/fixtures/recorded/*.jsonl`) behind a header byte, plus a few hand-made streams;
/// - server_ops, v2026_ops, v2026_client and pair_faults: from 20 000 seeded inputs, the
///   few that together reach the most protocol features (task created, input_required,
///   completed, failed, cancelled, parked result, expiry, restart, inputRequests, MRTR,
///   listen streams, tasks/update, fallback, …), chosen greedily.
#[test]
#[ignore = "rewrites fuzz/corpus; run by hand in --release with -- --ignored write_seed_corpus"]
fn write_seed_corpus() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let dir = |target: &str| {
        let d = root.join("fuzz/corpus").join(target);
        std::fs::create_dir_all(&d).unwrap();
        // The inputs a fuzzer found (`regress-*`) stay: they are regression cases.
        for old in std::fs::read_dir(&d).unwrap().flatten() {
            if !old.file_name().to_string_lossy().starts_with("regress-") {
                std::fs::remove_file(old.path()).unwrap();
            }
        }
        d
    };

    let framing_dir = dir("framing");
    let mut recorded: Vec<_> = std::fs::read_dir(root.join("tests/fixtures/recorded"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    recorded.sort();
    for (i, path) in recorded.iter().take(6).enumerate() {
        let text = std::fs::read_to_string(path).unwrap();
        // Header: large lines, EOF at the end; then 4 bytes of split seed.
        let mut seed = vec![0b0000_1011, i as u8, 0, 0, 0];
        for l in text.lines() {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            if v["dir"] == "c2s" {
                seed.extend_from_slice(serde_json::to_string(&v["msg"]).unwrap().as_bytes());
                seed.push(b'\n');
            }
        }
        std::fs::write(framing_dir.join(format!("recorded-{i}")), seed).unwrap();
    }
    let hand: [&[u8]; 4] = [
        b"\x04\x01\x00\x00\x00{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"opt\",\"task\":{\"ttl\":1000}}}\n{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tasks/result\",\"params\":{\"taskId\":\"task-1\"}}\n{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tasks/cancel\",\"params\":{\"taskId\":\"task-1\"}}\n{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tasks/list\"}\n",
        b"\x00\x02\x00\x00\x00{\"jsonrpc\":\"2.0\",\"id\":1,\r\n\"method\":\"ping\"}\n\n   \n[1,2]\n{\"a\":\n\xff\xfe\n{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"x\"}\n",
        b"\x0c\x03\x00\x00\x00{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tasks/get\",\"params\":{\"taskId\":\"task-1\"}}",
        b"\x05\x04\x00\x00\x00{\"jsonrpc\":\"2.0\",\"method\":\"notifications/tasks/status\",\"params\":{\"taskId\":\"x\",\"status\":\"working\",\"createdAt\":\"2026-01-15T09:00:00Z\",\"lastUpdatedAt\":\"2026-01-15T09:00:00Z\",\"ttl\":null}}\n{\"jsonrpc\":\"2.0\",\"id\":\"s\",\"result\":{}}\n",
    ];
    for (i, seed) in hand.iter().enumerate() {
        std::fs::write(framing_dir.join(format!("hand-{i}")), seed).unwrap();
    }

    let features_server: &[&str] = &[
        "\"task\":{\"taskId\"",
        "\"status\":\"input_required\"",
        "\"status\":\"completed\"",
        "\"status\":\"failed\"",
        "\"status\":\"cancelled\"",
        "related-task\":{\"taskId\"",
        "reason: Expired",
        "\"nextCursor\"",
        "TaskFinished",
        "InputResponse",
        "already used",
        "close ",
        "open ",
        "Task not found",
        "Task limit reached",
        "start_task -> Ok",
        "remove_task -> Ok",
        "shutdown",
    ];
    let features_pair: &[&str] = &[
        "TaskCreated",
        "TaskStatus",
        "TaskResult",
        "input_required",
        "\"status\":\"cancelled\"",
        "\"status\":\"failed\"",
        "restart client=true",
        "restart client=false",
        "drop ",
        "TimedOut",
        "InputResponse",
        "Task not found",
        "ctask",
        "finish (client hosts=true) -> Ok",
        "converge 1",
        "outcomes checked 1",
        "(foreign=true) -> Ok",
        "bob call_tool_as_task -> Ok",
        "outcomes checked 1 (dir 2)",
    ];
    let pick = |salt: u64, max_len: usize, drive: fn(&[u8]) -> String, features: &[&str]| {
        let mut rng = Rng::new(salt);
        let mut candidates = Vec::new();
        for _ in 0..20_000 {
            let len = 64 + rng.below(max_len as u64) as usize;
            let data = rng.bytes(len);
            let t = match std::panic::catch_unwind(|| drive(&data)) {
                Ok(t) => t,
                Err(panic) => {
                    let path = std::env::temp_dir().join("taskwire-fuzz-corpus-writer.bin");
                    std::fs::write(&path, &data).unwrap();
                    eprintln!("failing input saved to {}", path.display());
                    std::panic::resume_unwind(panic);
                }
            };
            let hits: Vec<bool> = features.iter().map(|f| t.contains(f)).collect();
            candidates.push((data, hits));
        }
        let mut covered = vec![false; features.len()];
        let mut chosen = Vec::new();
        for _ in 0..8 {
            let best = candidates
                .iter()
                .enumerate()
                .max_by_key(|(_, (d, h))| {
                    let new = h.iter().zip(&covered).filter(|(h, c)| **h && !**c).count();
                    (new, h.iter().filter(|h| **h).count(), usize::MAX - d.len())
                })
                .map(|(i, _)| i)
                .unwrap();
            let (data, hits) = candidates.swap_remove(best);
            for (c, h) in covered.iter_mut().zip(&hits) {
                *c |= *h;
            }
            chosen.push(data);
        }
        chosen
    };
    let so_dir = dir("server_ops");
    for (i, d) in pick(
        21,
        1500,
        |d| server_ops::drive(d, Schema::Structural, Record::Text).into_text(),
        features_server,
    )
    .iter()
    .enumerate()
    {
        std::fs::write(so_dir.join(format!("seed-{i}")), d).unwrap();
    }
    let features_v2026: &[&str] = &[
        "\"resultType\":\"task\"",
        "\"inputRequests\":{\"",
        "\"resultType\":\"input_required\"",
        "\"status\":\"completed\"",
        "\"status\":\"failed\"",
        "\"status\":\"cancelled\"",
        "notifications/subscriptions/acknowledged",
        "\"method\":\"notifications/tasks\"",
        "-32021",
        "-32022",
        "\"taskIds\":[\"",
    ];
    let mo_dir = dir("v2026_ops");
    for (i, d) in pick(
        23,
        600,
        |d| v2026_ops::drive(d, Schema::Structural, Record::Text).into_text(),
        features_v2026,
    )
    .iter()
    .enumerate()
    {
        std::fs::write(mo_dir.join(format!("seed-{i}")), d).unwrap();
    }
    let features_client: &[&str] = &[
        "TaskCreated",
        "TaskResult",
        "Request(AppRequest",
        "\"method\":\"tasks/update\"",
        "\"method\":\"tasks/cancel\"",
        "\"resultType\":\"input_required\"",
        "\"method\":\"notifications/tasks\"",
        "\"method\":\"initialize\"",
        "InitializeFailed",
        "TimedOut",
    ];
    let mc_dir = dir("v2026_client");
    for (i, d) in pick(
        24,
        500,
        |d| v2026_client::drive(d, Schema::Structural, Record::Text).into_text(),
        features_client,
    )
    .iter()
    .enumerate()
    {
        std::fs::write(mc_dir.join(format!("seed-{i}")), d).unwrap();
    }
    let pf_dir = dir("pair_faults");
    for (i, d) in pick(
        22,
        1200,
        |d| pair_faults::drive(d, Schema::Structural, Record::Text).into_text(),
        features_pair,
    )
    .iter()
    .enumerate()
    {
        std::fs::write(pf_dir.join(format!("seed-{i}")), d).unwrap();
    }
}
