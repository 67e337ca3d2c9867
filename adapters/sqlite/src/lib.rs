//! # taskwire-sqlite
//!
//! A durable [`TaskStore`] in one SQLite file, for
//! [`Server::with_store`](taskwire_driver::Server::with_store): tasks and their outcomes
//! survive a restart of the process. SQLite is compiled in (rusqlite's `bundled`), so a fresh
//! machine needs nothing installed.
//!
//! - One process keeps a file at a time: the store holds an exclusive lock on `PATH-lock`
//!   (beside the database; SQLite's own locks let any number of processes share a file in
//!   WAL mode) for its whole life: until its last handle is dropped and its last write and
//!   checkpoint are done, or the process ends, however it ends. A store opening a file
//!   another process holds waits for it ([`SqliteOptions::lock_wait`], 5 s by default: time
//!   for a previous run to shut down), then fails, saying so.
//! - The file is in WAL mode. Each batch the driver writes is one transaction, committed with
//!   `synchronous=NORMAL` by default (durable across a crash of the process; the last
//!   commits may be lost if the machine loses power), or `FULL` ([`Synchronous::Full`]: durable
//!   across power loss too).
//! - One row per task: its id, owner, status, the snapshot as JSON, and its status message
//!   and update time as columns of their own (a message is a small update, not a rewrite of
//!   the snapshot). A task in a terminal status keeps its status and outcome, in the
//!   database too (a trigger refuses a change).
//! - A task's change SQLite refuses because of what it is (a constraint, that trigger) is
//!   refused alone, with every entry of the batch behind it ([`Refused`]): SQLite backs out
//!   just its statement, and the rest of the batch commits. A failure of the file or the machine (busy, IO, a full
//!   disk) fails the whole write, which the driver retries.
//! - The file carries its schema version (`PRAGMA user_version`, now 3; a file of version 1
//!   or 2 is upgraded in place, in one transaction); a file of another version, one that is not a
//!   database, or one another program holds locked, is refused when the store opens, with an
//!   error saying which; nothing is overwritten.
//! - A batch is written as its net effect ([`NetBatch`](taskwire_driver::NetBatch), the
//!   reduction every store shares): one change per task (a task made and finished within one
//!   batch is one row write).
//! - The connection lives on a thread of its own, so the driver's runtime never blocks on the
//!   disk; a second one, on another thread, checkpoints the WAL into the database file after
//!   commits (at most every 500 ms), so that no commit waits for a checkpoint.
//!
//! ```no_run
//! # fn main() -> Result<(), taskwire_driver::StoreError> {
//! use taskwire_driver::{Config, Server};
//! let store = taskwire_sqlite::SqliteStore::open("tasks.db")?;
//! let server = Server::new(Config::new("my-server", "1.0")).with_store(store);
//! # Ok(()) }
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod checkpoint;
mod lock;
mod schema;
mod worker;

use std::path::Path;
use std::sync::mpsc;
use std::sync::Arc;
use std::time::Duration;

use taskwire_driver::engine::{JournalEntry, TaskSnapshot};
use taskwire_driver::{ask_store_thread, BoxFuture, Refused, StoreError, StoreJob, TaskStore};

/// How each write is made durable (SQLite's `synchronous` in WAL mode).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Synchronous {
    /// Durable when the process crashes; the last commits may be lost on power loss. The
    /// default.
    #[default]
    Normal,
    /// Durable on power loss too: every commit waits for the disk.
    Full,
}

/// How a store opens its file and makes its writes durable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SqliteOptions {
    /// How each write is made durable. Default: [`Synchronous::Normal`].
    pub synchronous: Synchronous,
    /// How long opening waits while another process holds the file (a previous run of the
    /// server still shutting down) before it fails. Default: 5 s.
    pub lock_wait: Duration,
}

impl Default for SqliteOptions {
    fn default() -> Self {
        SqliteOptions {
            synchronous: Synchronous::Normal,
            lock_wait: Duration::from_secs(5),
        }
    }
}

/// The default options with this `synchronous` mode.
impl From<Synchronous> for SqliteOptions {
    fn from(synchronous: Synchronous) -> Self {
        SqliteOptions {
            synchronous,
            ..SqliteOptions::default()
        }
    }
}

/// Tasks kept in one SQLite file. Cheap to clone (the clones share the connection).
#[derive(Clone, Debug)]
pub struct SqliteStore {
    name: Arc<str>,
    jobs: mpsc::Sender<StoreJob>,
}

/// The path and options a store specification names, as command lines take it:
/// `sqlite:PATH[?synchronous=normal|full][&lock_wait=MS]` (by default `normal`, and 5000 ms;
/// the parameters in any order). The error says what the form is.
pub fn parse_spec(spec: &str) -> Result<(&str, SqliteOptions), String> {
    let wrong = || {
        format!(
            "a SQLite store is sqlite:PATH[?synchronous=normal|full][&lock_wait=MS], not {spec:?}"
        )
    };
    let rest = spec.strip_prefix("sqlite:").ok_or_else(wrong)?;
    let (path, query) = match rest.rsplit_once('?') {
        Some((path, query)) => (path, Some(query)),
        None => (rest, None),
    };
    let mut options = SqliteOptions::default();
    for pair in query.into_iter().flat_map(|query| query.split('&')) {
        match pair.split_once('=') {
            Some(("synchronous", "normal")) => options.synchronous = Synchronous::Normal,
            Some(("synchronous", "full")) => options.synchronous = Synchronous::Full,
            Some(("lock_wait", ms)) => {
                let ms = ms.parse().map_err(|_| wrong())?;
                options.lock_wait = Duration::from_millis(ms);
            }
            _ => return Err(wrong()),
        }
    }
    if path.is_empty() {
        return Err(wrong());
    }
    Ok((path, options))
}

impl SqliteStore {
    /// Opens (or creates) the store at `path` with the default [`SqliteOptions`].
    pub fn open(path: impl AsRef<Path>) -> Result<Self, StoreError> {
        SqliteStore::open_with(path, SqliteOptions::default())
    }

    /// Opens (or creates) the store at `path` with `options` (or just a [`Synchronous`]
    /// mode). Fails with a message naming the file when another process still holds it
    /// after [`SqliteOptions::lock_wait`], or when it is no database, holds another schema
    /// version, or is locked by another program.
    pub fn open_with(
        path: impl AsRef<Path>,
        options: impl Into<SqliteOptions>,
    ) -> Result<Self, StoreError> {
        let (path, options) = (path.as_ref(), options.into());
        let sync = options.synchronous;
        let name: Arc<str> = format!("sqlite:{}", path.display()).into();
        let failed = |e: String| StoreError::new(format!("{name}: {e}"));
        let lock = lock::take(path, options.lock_wait).map_err(failed)?;
        let connection = schema::open(path, sync).map_err(failed)?;
        let checkpointer = schema::open_checkpointer(path, sync).map_err(failed)?;
        let (committed, commits) = mpsc::sync_channel(1);
        let thread_name = name.clone();
        // The checkpoint thread ends last (after the writer, with a last checkpoint): it
        // holds the lock until then.
        std::thread::Builder::new()
            .name("taskwire-sqlite-checkpoint".into())
            .spawn(move || {
                checkpoint::run(&checkpointer, &commits, &thread_name);
                drop(checkpointer);
                drop(lock);
            })
            .map_err(|e| failed(format!("cannot start its checkpoint thread: {e}")))?;
        let (jobs, queue) = mpsc::channel();
        let thread_name = name.clone();
        std::thread::Builder::new()
            .name("taskwire-sqlite".into())
            .spawn(move || worker::run(connection, queue, &committed, &thread_name))
            .map_err(|e| failed(format!("cannot start its thread: {e}")))?;
        Ok(SqliteStore { name, jobs })
    }
}

impl TaskStore for SqliteStore {
    fn name(&self) -> &str {
        &self.name
    }

    fn load(&self) -> BoxFuture<Result<Vec<TaskSnapshot>, StoreError>> {
        ask_store_thread(
            &self.name,
            |job| self.jobs.send(job).is_ok(),
            StoreJob::Load,
        )
    }

    fn write(&self, entries: Arc<[JournalEntry]>) -> BoxFuture<Result<Vec<Refused>, StoreError>> {
        let write = |reply| StoreJob::Write(entries, reply);
        ask_store_thread(&self.name, |job| self.jobs.send(job).is_ok(), write)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs() {
        let full = SqliteOptions::from(Synchronous::Full);
        assert_eq!(
            parse_spec("sqlite:a.db"),
            Ok(("a.db", SqliteOptions::default()))
        );
        assert_eq!(
            parse_spec("sqlite:/t/a.db?synchronous=normal"),
            Ok(("/t/a.db", SqliteOptions::default()))
        );
        assert_eq!(
            parse_spec("sqlite:a.db?synchronous=full"),
            Ok(("a.db", full))
        );
        let waiting = SqliteOptions {
            lock_wait: Duration::from_millis(250),
            ..full
        };
        assert_eq!(
            parse_spec("sqlite:a.db?lock_wait=250&synchronous=full"),
            Ok(("a.db", waiting))
        );
        for wrong in [
            "a.db",
            "sqlite:",
            "sqlite:?synchronous=full",
            "sqlite:a.db?synchronous=off",
            "sqlite:a.db?sync=full",
            "sqlite:a.db?lock_wait=soon",
            "sqlite:a.db?synchronous=full&",
        ] {
            assert!(
                parse_spec(wrong).unwrap_err().contains("sqlite:PATH"),
                "{wrong}"
            );
        }
    }
}
