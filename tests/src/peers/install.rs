//! Runs `tests/peers/setup.sh` once per test process, under a lock shared by processes.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, Instant, SystemTime};

use super::fastmcp::FastMcp;
use super::run::run;
use super::{Argv, Peers, SKIP_ENV};

/// A cold install takes about 25 s; this leaves room for a slow network.
const SETUP_DEADLINE: Duration = Duration::from_secs(600);

/// The repository root (this crate is `<repo>/tests`).
pub(super) fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ has a parent")
        .to_path_buf()
}

/// The cargo target directory: `$CARGO_TARGET_DIR`, else the one holding this test binary
/// (`<target>/<profile>/deps/<test>`), else `<repo>/target`.
pub fn target_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("CARGO_TARGET_DIR") {
        let dir = PathBuf::from(dir);
        return if dir.is_absolute() {
            dir
        } else {
            repo_root().join(dir)
        };
    }
    std::env::current_exe()
        .ok()
        .and_then(|exe| {
            let deps = exe.parent()?;
            (deps.file_name()? == "deps").then(|| deps.parent()?.parent().map(Path::to_path_buf))?
        })
        .unwrap_or_else(|| repo_root().join("target"))
}

impl Peers {
    /// Where `setup.sh` installs the peers (under [`target_dir`]), whether or not it has run.
    pub fn locate() -> Peers {
        let repo = repo_root();
        let target = target_dir();
        Peers {
            python: target.join("peers/venv/bin/python"),
            node_dir: target.join("peers/node"),
            conformance_dir: target.join("peers/conformance"),
            kit: repo.join("tests/peers"),
            seed: repo.join("../shared/seed"),
            target,
        }
    }
}

/// The peers, installed on first use; panics (failing the test) when they cannot be.
pub(super) fn peers() -> &'static Peers {
    static PEERS: OnceLock<Result<Peers, String>> = OnceLock::new();
    match PEERS.get_or_init(install) {
        Ok(peers) => peers,
        Err(why) => panic!("{why}"),
    }
}

fn install() -> Result<Peers, String> {
    let repo = repo_root();
    let target = target_dir();
    let script = repo.join("tests/peers/setup.sh");
    let _lock = Lock::take(&target.join("peers.setup-lock"))?;
    let setup = run(
        &Argv::new("bash").arg(&script).env("TARGET", &target),
        SETUP_DEADLINE,
    );
    if setup.code != Some(0) {
        return Err(format!(
            "the interop peers could not be installed, so the interop tests fail \
             (set {SKIP_ENV}=1 to skip them offline; CI must not).\n{setup}"
        ));
    }
    let peers = Peers::locate();
    let needed = [
        peers.python.clone(),
        peers.seed.join("task_server.py"),
        peers.fastmcp_python(FastMcp::V3),
        peers.fastmcp_python(FastMcp::V4),
    ];
    for path in &needed {
        if !path.exists() {
            return Err(format!(
                "setup.sh succeeded but {} is missing\n{setup}",
                path.display()
            ));
        }
    }
    Ok(peers)
}

/// A directory made with `create_dir` (atomic): one `setup.sh` at a time across test
/// processes (e.g. under cargo-nextest). A lock older than the setup deadline is stale.
struct Lock(PathBuf);

impl Lock {
    fn take(path: &Path) -> Result<Lock, String> {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
        }
        let start = Instant::now();
        loop {
            match std::fs::create_dir(path) {
                Ok(()) => return Ok(Lock(path.to_path_buf())),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    let age = std::fs::metadata(path)
                        .and_then(|m| m.modified())
                        .ok()
                        .and_then(|t| SystemTime::now().duration_since(t).ok());
                    if age.is_some_and(|a| a > SETUP_DEADLINE) {
                        let _ = std::fs::remove_dir(path);
                    } else if start.elapsed() > SETUP_DEADLINE {
                        return Err(format!(
                            "{} is held by another test process",
                            path.display()
                        ));
                    } else {
                        std::thread::sleep(Duration::from_millis(200));
                    }
                }
                Err(e) => return Err(format!("cannot create {}: {e}", path.display())),
            }
        }
    }
}

impl Drop for Lock {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir(&self.0);
    }
}
