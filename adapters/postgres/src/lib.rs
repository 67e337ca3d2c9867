//! # taskwire-postgres
//!
//! A durable [`TaskStore`] on PostgreSQL, for
//! [`Server::with_store`](taskwire_driver::Server::with_store): tasks and their outcomes
//! survive a restart of the process, in a database the operator already runs and backs up.
//!
//! - The tables (`taskwire_tasks`, `taskwire_schema`) are made on first use in the
//!   connection's current schema, or their version is checked; a database whose
//!   `taskwire_*` tables are of another version, or not ours, is refused with an error
//!   saying which; nothing is changed.
//! - One row per task: its id, owner, status, status message and update time as columns, and
//!   the snapshot as JSON text (a result comes back byte for byte). A status message is an
//!   update of two columns. A task in a terminal status keeps its status and outcome in the
//!   database too (a trigger refuses a change).
//! - Each batch the driver writes is one transaction of at most three statements (upserts,
//!   message updates, deletes; the rows as array parameters): the batch is first reduced to
//!   one change per task.
//! - The connection lives on a thread of its own (a tokio runtime there), so the driver may
//!   run on any runtime. A connection that broke (the server restarted) is made again by the
//!   next write; the write that found it broken fails, and the driver retries it.
//!
//! One server process per database for now: replicas sharing one database need to hear each
//! other's changes (not built yet).
//!
//! ```no_run
//! # fn main() -> Result<(), taskwire_driver::StoreError> {
//! use taskwire_driver::{Config, Server};
//! let store = taskwire_postgres::PostgresStore::connect("postgres://app@localhost/app")?;
//! let server = Server::new(Config::new("my-server", "1.0")).with_store(store);
//! # Ok(()) }
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod batch;
mod schema;
mod worker;

use std::sync::Arc;

use taskwire_driver::engine::{JournalEntry, TaskSnapshot};
use taskwire_driver::{ask_store_thread, BoxFuture, StoreError, StoreJob, TaskStore};
use tokio::sync::mpsc;

use worker::Connection;

/// Tasks kept in a PostgreSQL database. Cheap to clone (the clones share the connection).
#[derive(Clone, Debug)]
pub struct PostgresStore {
    name: Arc<str>,
    jobs: mpsc::UnboundedSender<StoreJob>,
}

impl PostgresStore {
    /// Connects to the database at `url` (`postgres://user[:password]@host[:port]/database`,
    /// or key=value settings; see `tokio_postgres::Config`), making the tables on first use.
    /// Blocks until connected; fails with a message naming the database when it cannot
    /// connect, or when its tables are not of this version.
    pub fn connect(url: &str) -> Result<Self, StoreError> {
        let config: tokio_postgres::Config = url.parse().map_err(|e| {
            StoreError::new(format!("postgres: {url:?} is not a connection URL: {e}"))
        })?;
        let name: Arc<str> = display_name(&config).into();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| StoreError::new(format!("{name}: cannot start its runtime: {e}")))?;
        let (opened, open) = std::sync::mpsc::channel();
        let (jobs, queue) = mpsc::unbounded_channel();
        let thread_name = name.clone();
        std::thread::Builder::new()
            .name("taskwire-postgres".into())
            .spawn(move || {
                runtime.block_on(async move {
                    match Connection::open(config).await {
                        Ok(connection) => {
                            let _ = opened.send(Ok(()));
                            worker::run(connection, queue, thread_name).await;
                        }
                        Err(e) => {
                            let _ = opened.send(Err(e));
                        }
                    }
                });
            })
            .map_err(|e| StoreError::new(format!("{name}: cannot start its thread: {e}")))?;
        match open.recv() {
            Ok(Ok(())) => Ok(PostgresStore { name, jobs }),
            Ok(Err(e)) => Err(StoreError::new(format!("{name}: {e}"))),
            Err(_) => Err(StoreError::new(format!("{name}: its thread stopped"))),
        }
    }
}

impl TaskStore for PostgresStore {
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

/// `postgres://user@host:port/database`, without the password, for logs and errors.
fn display_name(config: &tokio_postgres::Config) -> String {
    use tokio_postgres::config::Host;
    let host = match config.get_hosts().first() {
        Some(Host::Tcp(host)) => host.clone(),
        #[cfg(unix)]
        Some(Host::Unix(path)) => path.display().to_string(),
        None => "localhost".into(),
    };
    let port = config
        .get_ports()
        .first()
        .map_or(String::new(), |p| format!(":{p}"));
    let user = config.get_user().map_or(String::new(), |u| format!("{u}@"));
    let database = config.get_dbname().unwrap_or("");
    format!("postgres://{user}{host}{port}/{database}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_name_leaves_the_password_out() {
        let config = "postgres://app:secret@db.example:5433/tasks"
            .parse()
            .unwrap();
        assert_eq!(
            display_name(&config),
            "postgres://app@db.example:5433/tasks"
        );
        let config = "host=/run/postgresql user=app dbname=tasks"
            .parse()
            .unwrap();
        assert_eq!(
            display_name(&config),
            "postgres://app@/run/postgresql/tasks"
        );
    }
}
