//! # taskwire-sqlite
//!
//! A durable [`TaskStore`] in one SQLite file, for
//! [`Server::with_store`](taskwire_driver::Server::with_store): tasks and their outcomes
//! survive a restart of the process. SQLite is compiled in (rusqlite's `bundled`), so a fresh
//! machine needs nothing installed.
//!
//! - The file is in WAL mode. Each batch the driver writes is one transaction, committed with
//!   `synchronous=NORMAL` by default (durable across a crash of the process; the last
//!   commits may be lost if the machine loses power), or `FULL` ([`Synchronous::Full`]: durable
//!   across power loss too).
//! - One row per task: its id, owner, status and the snapshot as JSON. A task in a terminal
//!   status keeps its status and outcome, in the database too (a trigger refuses a change).
//! - The file carries its schema version (`PRAGMA user_version`, now 2; a file of version 1
//!   is upgraded in place, in one transaction); a file of another version, one that is not a
//!   database, or one another process holds locked, is refused when the store opens, with an
//!   error saying which; nothing is overwritten.
//! - Within a batch, a change that a later `Put` or `Delete` of the same task supersedes is
//!   not written (a task made and finished within one batch is one row write).
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
mod schema;
mod worker;

use std::path::Path;
use std::sync::mpsc;
use std::sync::Arc;

use taskwire_driver::engine::{JournalEntry, TaskSnapshot};
use taskwire_driver::{ask_store_thread, BoxFuture, StoreError, StoreJob, TaskStore};

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

/// Tasks kept in one SQLite file. Cheap to clone (the clones share the connection).
#[derive(Clone, Debug)]
pub struct SqliteStore {
    name: Arc<str>,
    jobs: mpsc::Sender<StoreJob>,
}

/// The path and `synchronous` mode a store specification names:
/// `sqlite:PATH[?synchronous=normal|full]` (normal by default), as command lines take it.
/// The error says what the form is.
pub fn parse_spec(spec: &str) -> Result<(&str, Synchronous), String> {
    let wrong = || format!("a SQLite store is sqlite:PATH[?synchronous=normal|full], not {spec:?}");
    let rest = spec.strip_prefix("sqlite:").ok_or_else(wrong)?;
    let (path, sync) = match rest.rsplit_once('?') {
        None => (rest, Synchronous::Normal),
        Some((path, "synchronous=normal")) => (path, Synchronous::Normal),
        Some((path, "synchronous=full")) => (path, Synchronous::Full),
        Some(_) => return Err(wrong()),
    };
    if path.is_empty() {
        return Err(wrong());
    }
    Ok((path, sync))
}

impl SqliteStore {
    /// Opens (or creates) the store at `path` with [`Synchronous::Normal`].
    pub fn open(path: impl AsRef<Path>) -> Result<Self, StoreError> {
        SqliteStore::open_with(path, Synchronous::Normal)
    }

    /// Opens (or creates) the store at `path`, making writes durable as `sync` says. Fails
    /// with a message naming the file when it is no database, holds another schema version,
    /// or is locked by another process.
    pub fn open_with(path: impl AsRef<Path>, sync: Synchronous) -> Result<Self, StoreError> {
        let path = path.as_ref();
        let name: Arc<str> = format!("sqlite:{}", path.display()).into();
        let failed = |e: String| StoreError::new(format!("{name}: {e}"));
        let connection = schema::open(path, sync).map_err(failed)?;
        let checkpointer = schema::open_checkpointer(path, sync).map_err(failed)?;
        let (committed, commits) = mpsc::sync_channel(1);
        let thread_name = name.clone();
        std::thread::Builder::new()
            .name("taskwire-sqlite-checkpoint".into())
            .spawn(move || checkpoint::run(&checkpointer, &commits, &thread_name))
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

    fn write(&self, entries: Arc<[JournalEntry]>) -> BoxFuture<Result<(), StoreError>> {
        let write = |reply| StoreJob::Write(entries, reply);
        ask_store_thread(&self.name, |job| self.jobs.send(job).is_ok(), write)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs() {
        assert_eq!(parse_spec("sqlite:a.db"), Ok(("a.db", Synchronous::Normal)));
        assert_eq!(
            parse_spec("sqlite:/t/a.db?synchronous=normal"),
            Ok(("/t/a.db", Synchronous::Normal))
        );
        assert_eq!(
            parse_spec("sqlite:a.db?synchronous=full"),
            Ok(("a.db", Synchronous::Full))
        );
        for wrong in [
            "a.db",
            "sqlite:",
            "sqlite:?synchronous=full",
            "sqlite:a.db?synchronous=off",
            "sqlite:a.db?sync=full",
        ] {
            assert!(
                parse_spec(wrong).unwrap_err().contains("sqlite:PATH"),
                "{wrong}"
            );
        }
    }
}
