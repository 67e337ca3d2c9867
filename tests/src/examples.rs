//! The adapters' runnable examples (`adapters/*/examples/`), built once per test process with
//! `cargo build -p taskwire-smol -p taskwire-tokio -p taskwire-http -p taskwire-proxy
//! -p taskwire-sqlite --examples` for `tests/tests/demo/examples.rs` and
//! `tests/tests/http/example.rs`.

use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::Duration;

use crate::peers::{run, target_dir, Argv};

/// The path of the built example `name`; panics with cargo's output if the build fails.
pub fn binary(name: &str) -> PathBuf {
    static BUILT: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    let dir = BUILT.get_or_init(|| {
        let target = target_dir();
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let args = [
            "build",
            "-p",
            "taskwire-smol",
            "-p",
            "taskwire-tokio",
            "-p",
            "taskwire-http",
            "-p",
            "taskwire-proxy",
            "-p",
            "taskwire-sqlite",
        ];
        let build = run(
            &Argv::new(cargo)
                .args(&args)
                .args(&["--examples", "--target-dir"])
                .arg(&target),
            Duration::from_secs(900),
        );
        match build.code {
            Some(0) => Ok(target.join("debug/examples")),
            _ => Err(format!("cannot build the adapters' examples\n{build}")),
        }
    });
    match dir {
        Ok(dir) => dir.join(format!("{name}{}", std::env::consts::EXE_SUFFIX)),
        Err(why) => panic!("{why}"),
    }
}

/// A fresh path for an example's database file, named after the test (`target/tmp/examples/`).
pub fn database(test: &str) -> PathBuf {
    let dir = target_dir().join("tmp/examples");
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    let path = dir.join(format!("{test}.db"));
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
    }
    path
}
