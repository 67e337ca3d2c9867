//! Durable task stores: where a server's driver writes every change of a task, and what it
//! loads after a restart.
//!
//! With a store ([`Server::with_store`](crate::Server::with_store)), each turn's changes go
//! to [`TaskStore::write`] as one batch (one write in flight; what changes meanwhile goes in
//! the next one), and a message that reveals a change (a `CreateTaskResult`, a `tasks/cancel`
//! answer, a status notification) is sent only once the write holding it has returned.

use std::fmt;
use std::sync::Arc;

use taskwire_engine::{JournalEntry, TaskSnapshot};

use crate::runtime::BoxFuture;

/// A durable store of tasks. Implementations clone what they need into the returned futures
/// (`'static`), and should time out on their own: the driver waits for each write.
pub trait TaskStore: Send + Sync + 'static {
    /// Names the store in logs and errors (e.g. `sqlite:/var/lib/tasks.db`).
    fn name(&self) -> &str;

    /// Every task stored, loaded once before the server serves anything.
    fn load(&self) -> BoxFuture<Result<Vec<TaskSnapshot>, StoreError>>;

    /// Stores `entries` (in journal order, contiguous) as one write, completing once they
    /// are durable. Entries are idempotent (a `Put` replaces, a `Message` sets, a `Delete` of
    /// a missing task does nothing): a batch whose write failed is written again.
    fn write(&self, entries: Arc<[JournalEntry]>) -> BoxFuture<Result<(), StoreError>>;
}

/// Why a store could not load or write.
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
