//! The fuzz bodies (`taskwire_harness::fuzz`) on stable: a seeded loop over pseudo-random
//! inputs plus the checked-in seed corpus (`fuzz/corpus/<target>/`), and one regression test
//! per fuzzer finding ([`regressions`]). [`corpus`] rewrites the seed corpus.
//!
//! `cargo test -p taskwire-tests --test fuzz`. The iteration counts keep the whole binary near
//! ten seconds in a debug build on two cores. `TASKWIRE_FUZZ_ITERS=<n>` multiplies them;
//! `TASKWIRE_FUZZ_SEED=<n>` picks another seed.

mod corpus;
mod digests;
mod regressions;

use std::path::PathBuf;

use taskwire_harness::fuzz::check::Schema;
use taskwire_harness::fuzz::{
    framing, pair_faults, replicas, server_ops, v2026_client, v2026_ops, Record, Rng,
};

/// The oracle of the seeded loop and of replays: every message validated, every input
/// run twice.
const FULL: Schema = Schema::Full;

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
        if let Err(panic) = std::panic::catch_unwind(|| body(&data)) {
            eprintln!(
                "{target}: corpus file {} fails (replay: TASKWIRE_FUZZ_REPLAY={target}:{0} \
                 cargo test -p taskwire-tests --test fuzz -- --ignored replay --nocapture)",
                file.display()
            );
            std::panic::resume_unwind(panic);
        }
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
                 cargo test -p taskwire-tests --test fuzz -- --ignored replay --nocapture)",
                path.display()
            );
            std::panic::resume_unwind(panic);
        }
    }
}

/// Replays one saved input: `TASKWIRE_FUZZ_REPLAY=<target>:<file> cargo test -p
/// taskwire-tests --test fuzz -- --ignored replay --nocapture` (add `TASKWIRE_FUZZ_TRACE=1` to
/// print the end of the transcript on failure). A relative `<file>` is taken from the
/// repository root (cargo runs the test in `tests/`).
#[test]
#[ignore = "replays the input TASKWIRE_FUZZ_REPLAY=<target>:<file> names; run with -- --ignored replay"]
fn replay() {
    let spec = std::env::var("TASKWIRE_FUZZ_REPLAY")
        .expect("set TASKWIRE_FUZZ_REPLAY=<target>:<file> to the input to replay");
    let (target, file) = spec.split_once(':').expect("<target>:<file>");
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(file);
    let data = std::fs::read(&path)
        .unwrap_or_else(|e| panic!("cannot read the input {}: {e}", path.display()));
    match target {
        "framing" => framing::run_with(&data, FULL),
        "server_ops" => server_ops::run_with(&data, FULL),
        "pair_faults" => pair_faults::run_with(&data, FULL),
        "v2026_ops" => v2026_ops::run_with(&data, FULL),
        "v2026_client" => v2026_client::run_with(&data, FULL),
        "replicas" => replicas::run_with(&data, FULL),
        other => panic!("no target {other}"),
    }
}

#[test]
fn framing_seeded() {
    seeded("framing", 1, 800, 600, |d| framing::run_with(d, FULL));
}

#[test]
fn server_ops_seeded() {
    seeded("server_ops", 2, 350, 1500, |d| {
        server_ops::run_with(d, FULL)
    });
    // The multi-session invariants were reached, not only defined.
    let s = server_ops::stats();
    eprintln!("server_ops: {s:?}");
    for (what, n) in [
        ("another owner's task asked for", s.foreign),
        (
            "exact per-owner tasks/list with another owner's tasks",
            s.lists,
        ),
        ("reconnects", s.reconnects),
        (
            "status changes heard by a non-creating session",
            s.notified_elsewhere,
        ),
        (
            "parked results answered on a non-creating session",
            s.parked_elsewhere,
        ),
        ("log messages sent", s.logged),
        ("tasks the application cancelled", s.app_cancelled),
    ] {
        assert!(n >= 5, "the seeded loop reached {what} only {n} times");
    }
}

#[test]
fn v2026_ops_seeded() {
    seeded("v2026_ops", 4, 200, 600, |d| v2026_ops::run_with(d, FULL));
    let s = v2026_ops::stats();
    eprintln!("v2026_ops: {s:?}");
    for (what, n) in [
        ("2026 tasks created", s.created),
        ("inputRequests shown", s.asked),
        ("outcomes inline", s.outcomes),
        ("2025-11-25 tasks read in 2026", s.v2025_read),
        ("task notifications on listen streams", s.streamed),
        ("tool list changes on listen streams", s.tools_streamed),
    ] {
        assert!(n >= 5, "the seeded loop reached {what} only {n} times");
    }
}

#[test]
fn v2026_client_seeded() {
    seeded("v2026_client", 5, 300, 500, |d| {
        v2026_client::run_with(d, FULL)
    });
    let s = v2026_client::stats();
    eprintln!("v2026_client: {s:?}");
    for (what, n) in [
        ("sessions opened in 2026-07-28", s.opened),
        ("tasks followed", s.created),
        ("task outcomes", s.outcomes),
        ("input requests handed to the application", s.asked),
        ("tasks/update sent", s.updates),
    ] {
        assert!(n >= 5, "the seeded loop reached {what} only {n} times");
    }
}

#[test]
fn replicas_seeded() {
    seeded("replicas", 6, 300, 500, |d| replicas::run_with(d, FULL));
    let s = replicas::stats();
    eprintln!("replicas: {s:?}");
    for (what, n) in [
        ("stored changes that moved a replica's view", s.moved),
        ("changes refused for a task finished elsewhere", s.refused),
        (
            "tasks both replicas hold compared with the store",
            s.compared,
        ),
        ("tasks taken over whose work started again", s.adopted),
        ("tasks whose work was handed off", s.handed_off),
        ("claims let go", s.released),
    ] {
        assert!(n >= 5, "the seeded loop reached {what} only {n} times");
    }
}

#[test]
fn pair_faults_seeded() {
    seeded("pair_faults", 3, 150, 1200, |d| {
        pair_faults::run_with(d, FULL)
    });
}

/// How deep the seeded pair runs go:
/// `cargo test --release -p taskwire-tests --test fuzz depth -- --ignored --nocapture`.
#[test]
#[ignore = "prints statistics; run by hand with -- --ignored depth --nocapture"]
fn depth() {
    let mut rng = Rng::new(seed() ^ 3);
    let (mut converge, mut outcomes, mut runs) = (0, 0, 0);
    for _ in 0..2000 {
        let n = rng.below(1200) as usize;
        let t = pair_faults::drive(&rng.bytes(n), Schema::Structural, Record::Text).into_text();
        runs += 1;
        let count = |key: &str| {
            t.lines()
                .filter_map(|l| l.strip_prefix(key))
                .filter_map(|r| r.split(' ').next()?.parse::<usize>().ok())
                .sum::<usize>()
        };
        converge += usize::from(count("converge ") > 0);
        outcomes += usize::from(count("outcomes checked ") > 0);
    }
    eprintln!("{runs} runs: {converge} compared views once quiet, {outcomes} checked outcomes");
}

/// Executions per second of each body as the libFuzzer targets run them (sampled oracle),
/// over the seed corpus and seeded inputs:
/// `cargo test --release -p taskwire-tests --test fuzz throughput -- --ignored --nocapture`
/// (`TASKWIRE_FUZZ_TARGET=<target>` runs one, `TASKWIRE_FUZZ_FILES=<dir>` runs the
/// inputs in a directory, e.g. a libFuzzer corpus, instead of seeded ones).
#[test]
#[ignore = "a measurement; run by hand in --release with -- --ignored throughput --nocapture"]
fn throughput() {
    type Target = (&'static str, u64, usize, fn(&[u8]));
    let targets: [Target; 4] = [
        ("framing", 1, 600, framing::run),
        ("server_ops", 2, 1500, server_ops::run),
        ("pair_faults", 3, 1200, pair_faults::run),
        ("v2026_ops", 4, 600, v2026_ops::run),
    ];
    let only = std::env::var("TASKWIRE_FUZZ_TARGET").ok();
    for (target, salt, max_len, body) in targets {
        if only.as_deref().is_some_and(|o| o != target) {
            continue;
        }
        let mut rng = Rng::new(seed() ^ salt);
        let inputs: Vec<Vec<u8>> = match std::env::var_os("TASKWIRE_FUZZ_FILES") {
            // A directory of inputs, e.g. a libFuzzer corpus.
            Some(dir) => {
                let mut files: Vec<_> = std::fs::read_dir(dir)
                    .expect("a directory")
                    .flatten()
                    .map(|e| e.path())
                    .collect();
                files.sort();
                files
                    .iter()
                    .map(|f| std::fs::read(f).expect("an input"))
                    .collect()
            }
            None => (0..300 * scale())
                .map(|_| {
                    let len = rng.below(max_len as u64) as usize;
                    rng.bytes(len)
                })
                .collect(),
        };
        let start = std::time::Instant::now();
        for data in &inputs {
            body(data);
        }
        let secs = start.elapsed().as_secs_f64();
        eprintln!("{target}: {:.0} execs/s", inputs.len() as f64 / secs);
    }
}
