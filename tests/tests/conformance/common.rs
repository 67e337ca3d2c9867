//! What the conformance modules share: a bound on waiting, and reading and recording the
//! official suite's tallies.

use std::io::Write;
use std::time::Duration;

use taskwire_tests::peers::{self, Run};

/// Outer bound on waiting for one of `conformance-server`'s answers: a hang fails the test
/// instead of blocking.
pub const HANG: Duration = Duration::from_secs(15);

/// The last line of `run` starting with `prefix` (on stdout, or on stderr where the client
/// scenarios print their results), or a failure showing the whole run.
pub fn tally<'a>(run: &'a Run, prefix: &str) -> &'a str {
    run.stdout
        .lines()
        .chain(run.stderr.lines())
        .rev()
        .find(|l| l.trim_start().starts_with(prefix))
        .map(str::trim)
        .unwrap_or_else(|| panic!("no {prefix:?} line\n{run}"))
}

/// `Total: N passed, M failed` → (N, M).
pub fn counts(line: &str) -> (u32, u32) {
    let numbers: Vec<u32> = line
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|n| n.parse().ok())
        .collect();
    match numbers[..] {
        [passed, failed, ..] => (passed, failed),
        _ => panic!("cannot read {line:?}"),
    }
}

/// Appends `line` to the tallies `tests/run-all.sh` prints.
pub fn record(line: &str) {
    let path = peers::target_dir().join("run-all/conformance.txt");
    if let Some(dir) = path.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
    let _ = writeln!(file, "{line}");
}
