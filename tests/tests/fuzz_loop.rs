//! The fuzz bodies on stable: a seeded loop over pseudo-random inputs plus the checked-in
//! seed corpus (`fuzz/corpus/<target>/`), and one regression test per fuzzer finding.
//!
//! The iteration counts keep the whole file near ten seconds in a debug build on two cores.
//! `TASKWIRE_FUZZ_ITERS=<n>` multiplies them; `TASKWIRE_FUZZ_SEED=<n>` picks another seed.

use std::path::PathBuf;

use taskwire_tests::fuzz::check::Schema;
use taskwire_tests::fuzz::{framing, pair_faults, server_ops, Rng};

fn scale() -> usize {
    std::env::var("TASKWIRE_FUZZ_ITERS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1)
}

fn seed() -> u64 {
    std::env::var("TASKWIRE_FUZZ_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0x7a57_c0de)
}

/// Runs `body` on every corpus file of `target`, then on `iters` random inputs.
fn seeded(target: &str, salt: u64, iters: usize, max_len: usize, body: fn(&[u8])) {
    let corpus = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../fuzz/corpus")
        .join(target);
    let mut files: Vec<_> = std::fs::read_dir(&corpus)
        .map(|dir| dir.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    files.sort();
    for file in files {
        let data = std::fs::read(&file).expect("corpus file");
        body(&data);
    }
    let mut rng = Rng::new(seed() ^ salt);
    for _ in 0..iters * scale() {
        let len = rng.below(max_len as u64) as usize;
        let data = rng.bytes(len);
        if let Err(panic) = std::panic::catch_unwind(|| body(&data)) {
            let path = std::env::temp_dir().join(format!("taskwire-fuzz-{target}.bin"));
            std::fs::write(&path, &data).expect("write the failing input");
            eprintln!(
                "{target}: failing input saved to {} (replay: TASKWIRE_FUZZ_REPLAY={target}:{0} \
                 cargo test --test fuzz_loop replay -- --nocapture)",
                path.display()
            );
            std::panic::resume_unwind(panic);
        }
    }
}

/// Replays one saved input: `TASKWIRE_FUZZ_REPLAY=<target>:<file>` (add
/// `TASKWIRE_FUZZ_TRACE=1` to print the end of the transcript on failure).
#[test]
fn replay() {
    let Some(spec) = std::env::var("TASKWIRE_FUZZ_REPLAY").ok() else {
        return;
    };
    let (target, file) = spec.split_once(':').expect("<target>:<file>");
    let data = std::fs::read(file).expect("replay input");
    match target {
        "framing" => framing::run(&data),
        "server_ops" => server_ops::run(&data),
        "pair_faults" => pair_faults::run(&data),
        other => panic!("no target {other}"),
    }
}

#[test]
fn framing_seeded() {
    seeded("framing", 1, 300, 600, framing::run);
}

#[test]
fn server_ops_seeded() {
    seeded("server_ops", 2, 300, 1500, server_ops::run);
}

#[test]
fn pair_faults_seeded() {
    seeded("pair_faults", 3, 200, 1200, pair_faults::run);
}

/// Rewrites the checked-in seed corpus (`fuzz/corpus/<target>/`):
/// `cargo test --test fuzz_loop write_seed_corpus -- --ignored`.
///
/// - framing: the client side of each recorded interop transcript
///   (`tests/fixtures/recorded/*.jsonl`) behind a header byte, plus a few hand-made streams;
/// - server_ops and pair_faults: from 20 000 seeded inputs, the few that together reach the
///   most protocol features (task created, input_required, completed, failed, cancelled,
///   parked result, expiry, restart, …), chosen greedily.
#[test]
#[ignore]
fn write_seed_corpus() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let dir = |target: &str| {
        let d = root.join("fuzz/corpus").join(target);
        std::fs::create_dir_all(&d).unwrap();
        for old in std::fs::read_dir(&d).unwrap().flatten() {
            std::fs::remove_file(old.path()).unwrap();
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
        "OutcomeDropped",
        "InputResponse",
        "already used",
        "close\n",
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
    ];
    let pick = |salt: u64, max_len: usize, drive: fn(&[u8]) -> String, features: &[&str]| {
        let mut rng = Rng::new(salt);
        let mut candidates = Vec::new();
        for _ in 0..20_000 {
            let len = 64 + rng.below(max_len as u64) as usize;
            let data = rng.bytes(len);
            let t = drive(&data);
            let hits: Vec<bool> = features.iter().map(|f| t.contains(f)).collect();
            candidates.push((data, hits));
        }
        let mut covered = vec![false; features.len()];
        let mut chosen = Vec::new();
        for _ in 0..6 {
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
        |d| server_ops::drive(d, Schema::Structural),
        features_server,
    )
    .iter()
    .enumerate()
    {
        std::fs::write(so_dir.join(format!("seed-{i}")), d).unwrap();
    }
    let pf_dir = dir("pair_faults");
    for (i, d) in pick(
        22,
        1200,
        |d| pair_faults::drive(d, Schema::Structural),
        features_pair,
    )
    .iter()
    .enumerate()
    {
        std::fs::write(pf_dir.join(format!("seed-{i}")), d).unwrap();
    }
}
