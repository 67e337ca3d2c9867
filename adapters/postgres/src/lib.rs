//! # taskwire-postgres
//!
//! A durable [`TaskStore`] on PostgreSQL, for
//! [`Server::with_store`](taskwire_driver::Server::with_store): tasks and their outcomes
//! survive a restart of the process, in a database the operator already runs and backs up.
//!
//! - The tables (`taskwire_tasks`, `taskwire_schema`, `taskwire_replicas`,
//!   `taskwire_answers`) are made on first use in the
//!   connection's current schema, or their version is checked; a database whose
//!   `taskwire_*` tables are of another version, or not ours, is refused with an error
//!   saying which; nothing is changed.
//! - One row per task: its id, owner, status, status message and update time as columns, and
//!   the snapshot as JSON text (a result comes back byte for byte). A status message is an
//!   update of two columns. A task in a terminal status keeps its status and outcome in the
//!   database too (a trigger refuses a change).
//! - Each batch the driver writes is one statement, its own transaction (one round trip a
//!   batch): the batch is first reduced to one change per task
//!   ([`NetBatch`](taskwire_driver::NetBatch)), and a statement prepared once per connection
//!   takes its rows as array parameters, upserts, updates status messages, deletes, and
//!   notifies the other replicas of the tasks it stored.
//! - The connection lives on a thread of its own (a tokio runtime there), so the driver may
//!   run on any runtime. A connection that broke (the server restarted) is made again by the
//!   next write; the write that found it broken fails, and the driver retries it.
//! - A change to a task that is finished in the database (another replica finished it
//!   first), or one PostgreSQL refuses for what it holds (a constraint, a value it cannot
//!   store such as a NUL character, the trigger), is refused alone
//!   ([`Refused`]): a batch holding one is written again task by
//!   task, each under a savepoint, and the rest is stored. Only failures that may pass (the
//!   connection, the server) fail the whole write, which the driver retries.
//!
//! - Several server processes (replicas) may share one database, each under a name of its
//!   own ([`PostgresOptions::replica`]): any replica answers for any task (a task another
//!   one made a moment ago is read from the database first); each hears the others' changes
//!   (`LISTEN`/`NOTIFY`), so a parked `tasks/result` and status notifications fire wherever
//!   the work finished, and a cancel taken by one replica stops the work on the one running
//!   it. A task's work runs on the replica that made it, or, when a front made it
//!   ([`ServerRole::Front`](taskwire_driver::ServerRole)), on the worker that claimed it
//!   from the queue (`FOR UPDATE SKIP LOCKED`, woken by `NOTIFY`), under that replica's
//!   lease ([`PostgresOptions::lease`], renewed every third of it by the database's clock).
//!   When a lease runs out (the process died, or lost the database), surviving replicas
//!   that run work claim its unfinished tasks, one each, and run their work again with the
//!   tool's resume hook, or fail them. Each claim counts the task's fencing token up, and
//!   every change the runner writes carries its token: a replica paused past its lease
//!   cannot change a task another one claimed since (the change is refused, and its work
//!   there stops).
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

mod claims;
mod news;
mod schema;
mod worker;
mod write;

use std::sync::Arc;
use std::time::Duration;

use taskwire_driver::engine::{Era, JournalEntry, Millis, TaskSnapshot};
use taskwire_driver::{
    ask_store_thread, BoxFuture, Refused, StoreError, StoreJob, StoreNews, TaskStore,
};
use tokio::sync::mpsc;

use claims::Fences;
use news::{Claim, Fetch, Watch};
use worker::Connection;

/// How a store takes part among replicas sharing its database.
#[derive(Clone, Debug)]
pub struct PostgresOptions {
    /// This process's name among the replicas sharing the database: the runner of the tasks
    /// it makes. Two live processes may not share a name (the second is refused at start);
    /// a process started again under the name of one that died takes its unfinished tasks
    /// back at once (they fail, or go to their resume hooks), without waiting for its lease.
    /// Default: the machine's host name (so one server per machine needs no setting).
    pub replica: String,
    /// How long a replica's tasks stay its own after it last renewed its lease (it renews
    /// every third of this). After that, another process that runs work claims them and runs
    /// them again with their tool's resume hook, or fails them (no hook, or past the
    /// server's `max_attempts`). Default: 15 s; at least 300 ms.
    pub lease: Duration,
}

impl Default for PostgresOptions {
    fn default() -> Self {
        let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
            .ok()
            .or_else(|| std::env::var("HOSTNAME").ok())
            .map(|name| name.trim().to_owned())
            .filter(|name| !name.is_empty());
        PostgresOptions {
            replica: host.unwrap_or_else(|| "taskwire".to_owned()),
            lease: Duration::from_secs(15),
        }
    }
}

/// Tasks kept in a PostgreSQL database. Cheap to clone (the clones share the connections).
#[derive(Clone, Debug)]
pub struct PostgresStore {
    name: Arc<str>,
    jobs: mpsc::UnboundedSender<StoreJob>,
    fetches: mpsc::UnboundedSender<Fetch>,
    claims: mpsc::UnboundedSender<Claim>,
    news: async_channel::Receiver<StoreNews>,
}

impl PostgresStore {
    /// Connects to the database at `url` (`postgres://user[:password]@host[:port]/database`,
    /// or key=value settings; see `tokio_postgres::Config`) with the default
    /// [`PostgresOptions`], making the tables on first use. Blocks until connected; fails
    /// with a message naming the database when it cannot connect, when its tables are not of
    /// this version, or when another live process is this replica.
    pub fn connect(url: &str) -> Result<Self, StoreError> {
        PostgresStore::connect_with(url, PostgresOptions::default())
    }

    /// [`PostgresStore::connect`] with `options`.
    pub fn connect_with(url: &str, options: PostgresOptions) -> Result<Self, StoreError> {
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
        let (fetches, fetch_queue) = mpsc::unbounded_channel();
        let (claims, claim_queue) = mpsc::unbounded_channel();
        let (tell, news) = async_channel::unbounded();
        let replica: Arc<str> = options.replica.into();
        let fences = Fences::default();
        let watch = Watch {
            config: config.clone(),
            replica: replica.clone(),
            lease: options.lease.max(Duration::from_millis(300)),
            news: tell,
            fetches: fetch_queue,
            claims: claim_queue,
            fences: fences.clone(),
            name: name.clone(),
            handed_back: false,
        };
        let thread_name = name.clone();
        std::thread::Builder::new()
            .name("taskwire-postgres".into())
            .spawn(move || {
                runtime.block_on(async move {
                    // The tables first (the watch renews a lease in them), then the watch.
                    let connected = match Connection::open(config, replica, fences).await {
                        Ok(connection) => match watch.connect().await {
                            Ok(live) => Ok((connection, live)),
                            Err(e) => Err(e),
                        },
                        Err(e) => Err(e),
                    };
                    match connected {
                        Ok((connection, live)) => {
                            let _ = opened.send(Ok(()));
                            tokio::spawn(watch.run(live));
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
            Ok(Ok(())) => Ok(PostgresStore {
                name,
                jobs,
                fetches,
                claims,
                news,
            }),
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

    fn load_running(&self) -> BoxFuture<Result<Vec<TaskSnapshot>, StoreError>> {
        ask_store_thread(
            &self.name,
            |job| self.jobs.send(job).is_ok(),
            StoreJob::LoadRunning,
        )
    }

    fn write(&self, entries: Arc<[JournalEntry]>) -> BoxFuture<Result<Vec<Refused>, StoreError>> {
        let write = |reply| StoreJob::Write(entries, reply);
        ask_store_thread(&self.name, |job| self.jobs.send(job).is_ok(), write)
    }

    fn fetch(&self, id: &str) -> BoxFuture<Result<Option<TaskSnapshot>, StoreError>> {
        let fetch = |reply| Fetch::One(id.to_owned(), reply);
        ask_store_thread(&self.name, |job| self.fetches.send(job).is_ok(), fetch)
    }

    fn page(
        &self,
        owner: &str,
        era: Era,
        after: Option<(Millis, String)>,
        limit: usize,
    ) -> BoxFuture<Result<Vec<TaskSnapshot>, StoreError>> {
        let page = |reply| Fetch::Page {
            owner: owner.to_owned(),
            era: era.as_str().to_owned(),
            after: after.map(|(at, id)| (i64::try_from(at.0).unwrap_or(i64::MAX), id)),
            limit: i64::try_from(limit).unwrap_or(i64::MAX),
            reply,
        };
        ask_store_thread(&self.name, |job| self.fetches.send(job).is_ok(), page)
    }

    fn claim(&self, max: usize) -> BoxFuture<Result<Vec<TaskSnapshot>, StoreError>> {
        let claim = |reply| Claim::Take(max, reply);
        ask_store_thread(&self.name, |job| self.claims.send(job).is_ok(), claim)
    }

    /// Ends this replica's lease at once and tells the others that work waits, so that they
    /// claim its unfinished tasks now instead of once the lease would have run out.
    fn hand_back(&self) -> BoxFuture<Result<(), StoreError>> {
        ask_store_thread(
            &self.name,
            |job| self.claims.send(job).is_ok(),
            Claim::HandBack,
        )
    }

    fn watch(&self) -> Option<async_channel::Receiver<StoreNews>> {
        Some(self.news.clone())
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
