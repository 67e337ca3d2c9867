//! Transcript digests of many inputs, to show that a change to a body keeps every input
//! decoding the same way (the operations fed, and what the hosts answered).

use std::fmt::Write as _;
use std::path::PathBuf;

use taskwire_harness::fuzz::check::Schema;
use taskwire_harness::fuzz::{pair_faults, server_ops, v2026_client, v2026_ops, Record, Rng};

type Body = (&'static str, u64, usize, fn(&[u8], Schema) -> (u64, usize));

/// The bodies whose lean runs skip checks, with a salt for their seeded inputs and the
/// longest such input.
const BODIES: [Body; 4] = [
    ("server_ops", 2, 1500, |d, s| {
        server_ops::drive(d, s, Record::Digest).digest()
    }),
    ("pair_faults", 3, 1200, |d, s| {
        pair_faults::drive(d, s, Record::Digest).digest()
    }),
    ("v2026_ops", 4, 600, |d, s| {
        v2026_ops::drive(d, s, Record::Digest).digest()
    }),
    ("v2026_client", 5, 500, |d, s| {
        v2026_client::drive(d, s, Record::Digest).digest()
    }),
];

/// One line per input (`target index digest bytes`): every seed-corpus input of each body
/// and `seeded` pseudo-random ones, each run in depth and lean, which must agree (a lean run
/// that decoded an input differently would explore other states than the one checked).
fn digest_lines(seeded: usize) -> String {
    let mut out = String::new();
    for (target, salt, max_len, body) in BODIES {
        let corpus = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../fuzz/corpus")
            .join(target);
        let mut files: Vec<_> = std::fs::read_dir(&corpus)
            .map(|dir| dir.flatten().map(|e| e.path()).collect())
            .unwrap_or_default();
        files.sort();
        let mut inputs: Vec<Vec<u8>> = files
            .iter()
            .map(|f| std::fs::read(f).expect("a corpus file"))
            .collect();
        let mut rng = Rng::new(super::seed() ^ salt);
        for _ in 0..seeded {
            let len = rng.below(max_len as u64) as usize;
            inputs.push(rng.bytes(len));
        }
        for (i, data) in inputs.iter().enumerate() {
            let (hash, bytes) = body(data, Schema::Full);
            assert_eq!(
                body(data, Schema::Lean),
                (hash, bytes),
                "{target}: input {i} runs differently when lean"
            );
            let _ = writeln!(out, "{target} {i} {hash:016x} {bytes}");
        }
    }
    out
}

#[test]
fn lean_runs_decode_inputs_like_deep_runs() {
    let lines = digest_lines(40 * super::scale());
    assert!(lines.lines().count() >= 4 * 40, "every body ran");
}

/// The digest of every seed-corpus input and of `TASKWIRE_FUZZ_ITERS` × 500 seeded inputs
/// per body, run with every check on (each also run lean, which must give the same digest):
/// `TASKWIRE_FUZZ_DIGESTS=<file> cargo test --release -p taskwire-tests --test fuzz digests
/// -- --ignored --nocapture` writes them to `<file>` when it does not exist, and otherwise
/// compares them with it (run it before a change to a body, then after).
#[test]
#[ignore = "compares transcript digests with a file; run by hand with -- --ignored digests"]
fn digests() {
    let file = PathBuf::from(
        std::env::var_os("TASKWIRE_FUZZ_DIGESTS").expect("set TASKWIRE_FUZZ_DIGESTS=<file>"),
    );
    let out = digest_lines(500 * super::scale());
    match std::fs::read_to_string(&file) {
        Err(_) => {
            std::fs::write(&file, &out).expect("write the digests");
            eprintln!(
                "wrote {} digests to {}",
                out.lines().count(),
                file.display()
            );
        }
        Ok(before) => {
            let differ: Vec<(&str, &str)> = before
                .lines()
                .zip(out.lines())
                .filter(|(a, b)| a != b)
                .collect();
            assert_eq!(
                before.lines().count(),
                out.lines().count(),
                "input counts differ"
            );
            assert!(
                differ.is_empty(),
                "{} of {} digests differ; the first: {:?}",
                differ.len(),
                out.lines().count(),
                differ.first()
            );
            eprintln!("all {} digests agree", out.lines().count());
        }
    }
}
