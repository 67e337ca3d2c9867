//! Durable task stores: where a server's driver writes every change of a task, and what it
//! loads after a restart.
//!
//! With a store ([`Server::with_store`](crate::Server::with_store)), each turn's changes go
//! to [`TaskStore::write`] as one batch (one write in flight; what changes meanwhile goes in
//! the next one), and a message that reveals a change (a `CreateTaskResult`, a `tasks/cancel`
//! answer, a status notification) is sent only once the write holding it has returned.

mod net;

use std::fmt;
use std::sync::Arc;

use futures::channel::oneshot;

use taskwire_engine::{Era, JournalEntry, Millis, TaskSnapshot};

use crate::runtime::BoxFuture;
pub use net::{refused_entries, Answers, NetBatch, NetChange};

/// A durable store of tasks. Implementations clone what they need into the returned futures
/// (`'static`), and should time out on their own: the driver waits for each write.
pub trait TaskStore: Send + Sync + 'static {
    /// Names the store in logs and errors (e.g. `sqlite:/var/lib/tasks.db`).
    fn name(&self) -> &str;

    /// Every task stored, loaded once before the server serves anything.
    fn load(&self) -> BoxFuture<Result<Vec<TaskSnapshot>, StoreError>>;

    /// What a process sharing the store loads at start when it reads the other tasks back
    /// as requests name them ([`TaskStore::fetch`], [`TaskStore::page`]): the unfinished
    /// tasks whose work it ran before it stopped. The default loads every task.
    fn load_running(&self) -> BoxFuture<Result<Vec<TaskSnapshot>, StoreError>> {
        self.load()
    }

    /// Stores `entries` (in journal order, contiguous) as one write, completing once they
    /// are durable.
    ///
    /// An `Err` is a failure that may pass (the disk, a lock, a lost connection): nothing of
    /// the batch counts as stored, and the driver writes it again (entries are idempotent: a
    /// `Put` replaces, a `Message` sets, a `Delete` of a missing task does nothing). An entry
    /// refused for a reason that writing it again cannot change (a constraint; a finished
    /// task, which never changes, changed behind this process's back) is returned in the `Ok`
    /// list instead, and every other entry is stored: the driver fails only the replies that
    /// wait for a refused entry, and never writes it again.
    fn write(&self, entries: Arc<[JournalEntry]>) -> BoxFuture<Result<Vec<Refused>, StoreError>>;

    /// Task `id` as stored now, or `None`. A store shared by several processes (see
    /// [`TaskStore::watch`]) is asked this when a request names a task this process does not
    /// hold (another replica made it a moment ago), before the request is answered. Only
    /// shared stores are asked; the default finds nothing.
    fn fetch(&self, id: &str) -> BoxFuture<Result<Option<TaskSnapshot>, StoreError>> {
        let _ = id;
        Box::pin(async { Ok(None) })
    }

    /// Up to `limit` of `owner`'s tasks of era `era` as stored now, in listing order (creation
    /// time, then id), after `after`: a shared store is asked for the page a `tasks/list`
    /// reads before it is answered, since this process holds only the live tasks and the
    /// newest finished ones (see [`Host::set_keep_finished`](taskwire_engine::Host::set_keep_finished)).
    /// Only shared stores are asked; the default finds nothing.
    fn page(
        &self,
        owner: &str,
        era: Era,
        after: Option<(Millis, String)>,
        limit: usize,
    ) -> BoxFuture<Result<Vec<TaskSnapshot>, StoreError>> {
        let _ = (owner, era, after, limit);
        Box::pin(async { Ok(Vec::new()) })
    }

    /// Takes up to `max` tasks whose work runs nowhere, for this process to run: work a
    /// front handed off ([`ServerRole::Front`]), and work whose process stopped renewing its
    /// lease (it died, or lost the store). Each task is taken by one process; its work runs
    /// here from then on, under a claim the store keeps (a claim that ran out is reported as
    /// [`StoreNews::Lost`]). Asked by processes that run work, when
    /// [`StoreNews::Queued`] says some may wait and they have room. Only shared stores are
    /// asked; the default takes nothing.
    fn claim(&self, max: usize) -> BoxFuture<Result<Vec<TaskSnapshot>, StoreError>> {
        let _ = max;
        Box::pin(async { Ok(Vec::new()) })
    }

    /// This process stops (gracefully) and runs no more work: the unfinished work it ran is
    /// given back for other processes to take at once (with their tools' resume hooks), not
    /// once its claims run out. Asked by the driver of a process that runs work on a shared
    /// store, after its last write, before it returns; the default does nothing.
    fn hand_back(&self) -> BoxFuture<Result<(), StoreError>> {
        Box::pin(async { Ok(()) })
    }

    /// For a store shared by several server processes (replicas on one database): what the
    /// others change, as they change it. The driver applies each [`StoreNews`] to its host
    /// (followers told, parked results answered, work stopped when cancelled elsewhere).
    /// `None` (the default): this process is the store's only writer.
    fn watch(&self) -> Option<async_channel::Receiver<StoreNews>> {
        None
    }
}

/// What a shared store reports of the tasks other processes run (see [`TaskStore::watch`]).
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum StoreNews {
    /// Another process stored this change of a task (or, at start, runs this task).
    Changed(TaskSnapshot),
    /// Work may wait for a process to run it ([`TaskStore::claim`]): a front handed a task
    /// off, or a process running tasks stopped renewing its lease.
    Queued,
    /// This many tasks wait for a process to run their work, as the store read it now
    /// (shown by [`Server::metrics`](crate::Server::metrics)); more than none is also
    /// [`StoreNews::Queued`].
    Unclaimed(usize),
    /// A requestor answered input requests of a task whose work runs here, on another
    /// process (a front): the driver hands them to the host
    /// ([`Host::answer_inputs`](taskwire_engine::Host::answer_inputs)).
    Answered {
        /// The task.
        task: String,
        /// The answers, by `inputRequests` key.
        responses: serde_json::Map<String, serde_json::Value>,
    },
    /// This process's claim on a task's work ran out (it was paused or cut off past its
    /// lease) and another process runs it now, as stored here: the work here stops, and
    /// what this process changed since is forgotten.
    Lost(TaskSnapshot),
}

/// What a server process does among processes sharing one store (see
/// [`Server::role`](crate::Server::role)).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ServerRole {
    /// Takes requests and runs work: the work of the tasks it makes, and work waiting in
    /// the store (handed off by fronts, or left by a process that stopped). The default; a
    /// server alone on its store is one.
    #[default]
    Both,
    /// Takes requests and runs no task's work: each task it makes is stored as queued work
    /// (`working`, its status message saying it waits for a worker) for a worker to run.
    /// Calls that are not tasks run here, and so do tools that decide for themselves
    /// whether to become a task ([`Server::tool_asking_first`](crate::Server::tool_asking_first)).
    Front,
    /// Runs work waiting in the store, and takes no requests: start it with
    /// [`Server::start`](crate::Server::start) and give it no connections (a process that is
    /// only a worker: `taskwire_tokio::serve_worker`, which runs it until Ctrl-C or SIGTERM).
    Worker,
}

impl ServerRole {
    /// `both`, `front` or `worker`.
    pub const fn as_str(self) -> &'static str {
        match self {
            ServerRole::Both => "both",
            ServerRole::Front => "front",
            ServerRole::Worker => "worker",
        }
    }
}

/// A [`ServerRole::Front`] or [`ServerRole::Worker`] was asked of a server without a store
/// shared by several processes ([`TaskStore::watch`]), through which fronts and workers
/// hand work to each other.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RoleError {
    /// The role asked for.
    pub role: ServerRole,
}

impl fmt::Display for RoleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "a {:?} server hands work to other processes through a store they share: give it \
             one (Server::with_store with e.g. taskwire_postgres::PostgresStore) before its role",
            self.role
        )
    }
}

impl std::error::Error for RoleError {}

/// A store chosen at run time (e.g. by a command-line option).
impl TaskStore for Arc<dyn TaskStore> {
    fn name(&self) -> &str {
        (**self).name()
    }

    fn load(&self) -> BoxFuture<Result<Vec<TaskSnapshot>, StoreError>> {
        (**self).load()
    }

    fn load_running(&self) -> BoxFuture<Result<Vec<TaskSnapshot>, StoreError>> {
        (**self).load_running()
    }

    fn write(&self, entries: Arc<[JournalEntry]>) -> BoxFuture<Result<Vec<Refused>, StoreError>> {
        (**self).write(entries)
    }

    fn fetch(&self, id: &str) -> BoxFuture<Result<Option<TaskSnapshot>, StoreError>> {
        (**self).fetch(id)
    }

    fn claim(&self, max: usize) -> BoxFuture<Result<Vec<TaskSnapshot>, StoreError>> {
        (**self).claim(max)
    }

    fn page(
        &self,
        owner: &str,
        era: Era,
        after: Option<(Millis, String)>,
        limit: usize,
    ) -> BoxFuture<Result<Vec<TaskSnapshot>, StoreError>> {
        (**self).page(owner, era, after, limit)
    }

    fn hand_back(&self) -> BoxFuture<Result<(), StoreError>> {
        (**self).hand_back()
    }

    fn watch(&self) -> Option<async_channel::Receiver<StoreNews>> {
        (**self).watch()
    }
}

/// A request to a store whose connection lives on a thread of its own (SQLite, PostgreSQL):
/// the store's [`TaskStore`] methods send one with [`ask`], the thread answers on its reply.
pub enum StoreJob {
    /// Every stored task.
    Load(Reply<Vec<TaskSnapshot>>),
    /// The unfinished tasks whose work this process ran ([`TaskStore::load_running`]).
    LoadRunning(Reply<Vec<TaskSnapshot>>),
    /// Apply these entries in one transaction (see [`TaskStore::write`]).
    Write(Arc<[JournalEntry]>, Reply<Vec<Refused>>),
}

/// Where a store's thread answers a [`StoreJob`].
pub type Reply<T> = oneshot::Sender<Result<T, StoreError>>;

/// Sends the job `job` makes (a [`StoreJob`], or a store's own kind) through `send`
/// (`false`: the thread is gone) and waits for the thread's answer; errors name the store
/// (`name`).
pub fn ask<T: Send + 'static, J>(
    name: &Arc<str>,
    send: impl FnOnce(J) -> bool,
    job: impl FnOnce(Reply<T>) -> J,
) -> BoxFuture<Result<T, StoreError>> {
    let (reply, answer) = oneshot::channel();
    let sent = send(job(reply));
    let name = name.clone();
    Box::pin(async move {
        let stopped = || StoreError::new(format!("{name}: its thread has stopped"));
        if !sent {
            return Err(stopped());
        }
        answer.await.map_err(|_| stopped())?
    })
}

/// A journal entry a store refused for good (see [`TaskStore::write`]).
#[derive(Clone, Debug)]
pub struct Refused {
    /// The entry ([`JournalEntry::seq`]).
    pub seq: u64,
    /// Why, as the store says it (e.g. `a task in a terminal status does not change`).
    pub reason: String,
    /// The entry's task as the store keeps it, when the store refused the change for
    /// holding another version of the task (a shared store: another process finished it
    /// first, or claimed its work): the driver makes the task that version, and answers
    /// the requests about it from it (see `Host::refuse_journal`). `None` for a refusal of
    /// the change itself (a constraint).
    pub stored: Option<TaskSnapshot>,
}

/// Why a store could not load or write: a failure that may pass (see [`TaskStore::write`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoreError {
    message: String,
}

impl StoreError {
    /// An error saying `message` (what failed, and what to do about it).
    pub fn new(message: impl fmt::Display) -> Self {
        StoreError {
            message: message.to_string(),
        }
    }
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for StoreError {}
