//! The driver's side of a durable store: the journal entries waiting for a write, the one
//! write in flight, retries after a failure, entries refused for good, and the load before
//! the first turn.

use std::collections::{HashMap, VecDeque};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use async_channel::Receiver;
use taskwire_engine::{Change, JournalEntry, RpcError, SessionId, TaskSnapshot};

use super::Inbound;
use crate::runtime::BoxFuture;
use crate::store::{Refused, StoreError, StoreNews, TaskStore};

/// The first wait before writing again after a failed write; it doubles up to
/// [`RETRY_MAX`].
const RETRY_FIRST: Duration = Duration::from_millis(100);
/// The longest wait between attempts.
const RETRY_MAX: Duration = Duration::from_secs(5);

/// A store and what the driver owes it.
pub(crate) struct StoreLink {
    pub store: Arc<dyn TaskStore>,
    /// Entries not written yet, in journal order.
    pub pending: Vec<JournalEntry>,
    /// A write is in flight.
    pub writing: bool,
    /// Failed writes in a row (a retry is scheduled while this is above zero).
    pub failures: u32,
    /// A retry is scheduled.
    pub waiting: bool,
    /// The load before the first turn, until it completes.
    pub loading: Option<BoxFuture<Result<Vec<TaskSnapshot>, StoreError>>>,
    /// What other processes sharing the store change (a shared store only).
    pub news: Option<Pin<Box<Receiver<StoreNews>>>>,
    /// Messages of a session waiting, in order, while the task the first one names is
    /// fetched from a shared store.
    pub parked: HashMap<SessionId, VecDeque<Inbound>>,
    /// Work this process takes from a shared store, when it runs work.
    pub claims: Option<Claims>,
    /// Giving the work it ran back to the store as it stops ([`TaskStore::hand_back`]):
    /// `None` until then; `Some(None)` once done.
    pub handing_back: Option<Option<BoxFuture<Result<(), StoreError>>>>,
}

/// How this process takes work waiting in a shared store ([`TaskStore::claim`]).
pub(crate) struct Claims {
    /// How many tools may run here at once.
    pub slots: usize,
    /// A claim is in flight.
    pub asking: bool,
    /// Work may be waiting: the store said so, or the last claim took all it asked for.
    pub more: bool,
}

impl StoreLink {
    /// `reads_back`: the process holds the live tasks and reads the others back as
    /// requests name them ([`TaskStore::load_running`]).
    pub fn new(store: Arc<dyn TaskStore>, reads_back: bool) -> Self {
        let loading = Some(if reads_back {
            store.load_running()
        } else {
            store.load()
        });
        let news = store.watch().map(Box::pin);
        StoreLink {
            store,
            pending: Vec::new(),
            writing: false,
            failures: 0,
            waiting: false,
            loading,
            news,
            parked: HashMap::new(),
            claims: None,
            handing_back: None,
        }
    }

    /// The next batch to write, when one may go now.
    pub fn next_batch(&mut self) -> Option<Arc<[JournalEntry]>> {
        if self.writing || self.waiting || self.pending.is_empty() {
            return None;
        }
        self.writing = true;
        Some(std::mem::take(&mut self.pending).into())
    }

    /// `batch` failed: it goes first in the next write, after the returned wait.
    pub fn failed(&mut self, batch: &[JournalEntry]) -> Duration {
        self.writing = false;
        self.waiting = true;
        self.failures += 1;
        let mut again = batch.to_vec();
        again.append(&mut self.pending);
        self.pending = again;
        let doublings = self.failures.saturating_sub(1).min(16);
        (RETRY_FIRST * 2u32.saturating_pow(doublings)).min(RETRY_MAX)
    }

    /// A stopping process that ran work gives it back to the store ([`TaskStore::hand_back`]),
    /// once; `Ready` when that is done (or there is nothing to give back).
    pub fn poll_hand_back(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        if self.claims.is_none() {
            return Poll::Ready(());
        }
        let store = &self.store;
        let going = self
            .handing_back
            .get_or_insert_with(|| Some(store.hand_back()));
        let Some(back) = going.as_mut() else {
            return Poll::Ready(());
        };
        let Poll::Ready(result) = back.as_mut().poll(cx) else {
            return Poll::Pending;
        };
        *going = None;
        match result {
            Ok(()) => tracing::info!(
                store = self.store.name(),
                "stopping: the work this process ran is given back for others to take"
            ),
            Err(error) => tracing::warn!(
                store = self.store.name(),
                %error,
                "stopping: cannot give the work back; others take it once this process's lease runs out"
            ),
        }
        Poll::Ready(())
    }

    /// Nothing is waiting to be written (or the store keeps failing: shutdown does not wait
    /// for it).
    pub fn idle(&self) -> bool {
        (self.pending.is_empty() && !self.writing) || self.failures > 0
    }
}

/// The error of the replies waiting for each entry of `batch` that the store `name` refused
/// for good, in journal order; each refusal is logged, naming its task.
pub(crate) fn refusals(
    name: &str,
    batch: &[JournalEntry],
    refused: &[Refused],
) -> Vec<(u64, RpcError)> {
    let mut errors: Vec<(u64, RpcError)> = refused
        .iter()
        .map(|r| {
            let task = batch
                .binary_search_by_key(&r.seq, |e| e.seq)
                .ok()
                .and_then(|at| task_of(&batch[at].change));
            if r.stored.is_some() {
                tracing::warn!(
                    store = name,
                    task,
                    seq = r.seq,
                    reason = %r.reason,
                    "the task store keeps another version of a task than this process's change; \
                     the task becomes that version, and the replies about it are answered from it"
                );
            } else {
                tracing::error!(
                    store = name,
                    task,
                    seq = r.seq,
                    reason = %r.reason,
                    "the task store refused a change for good; the replies that depend on it \
                     fail, and it is not written again"
                );
            }
            let error = RpcError::internal(format!(
                "The task store {name} refused the change this answer depends on ({}); it is \
                 not stored, and will not be.",
                r.reason
            ));
            (r.seq, error)
        })
        .collect();
    errors.sort_by_key(|(seq, _)| *seq);
    errors
}

/// The tasks the store keeps another version of than the refused entries, once each.
pub(crate) fn superseded(refused: Vec<Refused>) -> Vec<TaskSnapshot> {
    let mut stored: Vec<TaskSnapshot> = Vec::new();
    for task in refused.into_iter().filter_map(|r| r.stored) {
        if !stored.iter().any(|t| t.info.id == task.info.id) {
            stored.push(task);
        }
    }
    stored
}

/// The task a change is about.
fn task_of(change: &Change) -> Option<&str> {
    match change {
        Change::Put(task) => Some(task.info.id.as_str()),
        Change::Message { task, .. } | Change::Delete { task, .. } => Some(task.as_str()),
        _ => None,
    }
}
