//! Tests switched off by an opt-out variable (`TASKWIRE_SKIP_INTEROP=1`,
//! `TASKWIRE_SKIP_WASI=1`, `TASKWIRE_SKIP_POSTGRES=1`) pass without running their body, so each
//! one is recorded where `tests/run-all.sh` counts it: a line on stderr for the reader, and a file
//! `<target>/skipped/<binary>--<test>` for the count (cargo keeps a passing test's captured
//! output to itself; the file is there whatever the harness prints). `run-all.sh` empties
//! the directory before the tests run.

use std::io::Write;
use std::path::PathBuf;

use crate::peers::target_dir;

/// The directory under the target directory that holds one file per skipped test.
pub const DIR: &str = "skipped";

/// Whether the opt-out `variable` is set to `1`.
pub fn opted_out(variable: &str) -> bool {
    std::env::var_os(variable).is_some_and(|v| v == "1")
}

/// Records that the running test skips its body because `variable=1`: says so on stderr
/// (naming it `label`, with `what` does not run) and writes its file under
/// `<target>/skipped/`. The file is named after the running test as the harness named its
/// thread (`module::test`), else after `label`. Panics if the file cannot be written: a skip
/// must not go uncounted.
pub fn record(label: &str, variable: &str, what: &str) {
    let line = format!(
        "SKIPPED {label}: {variable}=1 is set, so {what} (unset it to run them; CI never sets it)\n"
    );
    // Straight to the stderr handle, in one write: the test harness captures `eprintln!`.
    let _ = std::io::stderr().write_all(line.as_bytes());
    let path = marker(label);
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)
            .unwrap_or_else(|e| panic!("cannot create {}: {e}", dir.display()));
    }
    std::fs::write(&path, &line)
        .unwrap_or_else(|e| panic!("cannot record the skip in {}: {e}", path.display()));
}

/// `<target>/skipped/<binary>--<test>` for the running test.
fn marker(label: &str) -> PathBuf {
    let binary = std::env::current_exe()
        .ok()
        .and_then(|exe| Some(exe.file_stem()?.to_string_lossy().into_owned()))
        .map(|stem| match stem.rsplit_once('-') {
            // Cargo names test binaries `<name>-<16 hex digits>`.
            Some((name, hash))
                if hash.len() == 16 && hash.bytes().all(|b| b.is_ascii_hexdigit()) =>
            {
                name.to_owned()
            }
            _ => stem,
        })
        .unwrap_or_else(|| "tests".into());
    let thread = std::thread::current();
    let test = match thread.name() {
        Some(name) if name != "main" => name,
        _ => label,
    };
    let name: String = format!("{binary}--{test}")
        .chars()
        .map(|c| match c {
            'a'..='z' | 'A'..='Z' | '0'..='9' | '_' | '-' | '.' => c,
            ':' => '.',
            _ => '_',
        })
        .collect();
    target_dir().join(DIR).join(name)
}
