//! One process per file: an exclusive lock on `PATH-lock` beside the database, taken before
//! the database is opened and held for the store's whole life. SQLite's own locks do not
//! serve: in WAL mode any number of processes read and write one file together. The lock is
//! the operating system's (`flock` on Unix, `LockFileEx` on Windows): it goes with the
//! process, however that ends, so it never outlives its holder.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How often a store waiting for the lock tries again.
const STEP: Duration = Duration::from_millis(50);

/// The lock file of the database at `path`.
pub(crate) fn path_of(database: &Path) -> PathBuf {
    let mut path = database.as_os_str().to_owned();
    path.push("-lock");
    PathBuf::from(path)
}

/// Takes the lock of the database at `path`, waiting up to `wait` while another process
/// holds it (it may be shutting down). The lock is held until the returned file is closed.
/// The error says who holds it, when the holder wrote its process id.
pub(crate) fn take(database: &Path, wait: Duration) -> Result<File, String> {
    let path = path_of(database);
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .map_err(|e| format!("cannot open its lock file {}: {e}", path.display()))?;
    let deadline = Instant::now() + wait;
    loop {
        match file.try_lock() {
            Ok(()) => break,
            Err(TryLockError::WouldBlock) if Instant::now() < deadline => {
                std::thread::sleep(STEP);
            }
            Err(TryLockError::WouldBlock) => {
                let holder = std::fs::read_to_string(&path)
                    .ok()
                    .and_then(|text| text.trim().parse::<u32>().ok())
                    .map_or(String::new(), |pid| format!(" (pid {pid})"));
                return Err(format!(
                    "another process{holder} holds this file (its lock {} stayed taken for \
                     {wait:?}); one process keeps a SQLite task store at a time: stop that \
                     one first, or give this one a file of its own",
                    path.display()
                ));
            }
            Err(TryLockError::Error(e)) => {
                return Err(format!("cannot lock {}: {e}", path.display()))
            }
        }
    }
    // For the message of a process refused. The lock is taken whether or not this is
    // written.
    let _ = file
        .set_len(0)
        .and_then(|()| (&file).write_all(format!("{}\n", std::process::id()).as_bytes()));
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_holder_is_refused_after_the_wait_and_takes_it_once_free() {
        let database =
            std::env::temp_dir().join(format!("taskwire-sqlite-{}-lock.db", std::process::id()));
        let held = take(&database, Duration::ZERO).expect("free");
        let started = Instant::now();
        let refused = take(&database, Duration::from_millis(200)).unwrap_err();
        assert!(started.elapsed() >= Duration::from_millis(200), "it waited");
        assert!(
            refused.contains(&format!("another process (pid {})", std::process::id()))
                && refused.contains("-lock"),
            "{refused}"
        );
        let release = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(200));
            drop(held);
        });
        take(&database, Duration::from_secs(10)).expect("taken once the holder let go");
        release.join().unwrap();
    }
}
