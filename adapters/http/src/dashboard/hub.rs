//! One subscription to the server's task feed ([`ServerHandle::watch`]) for every browser:
//! the changes update the dashboard's table and go out to each open stream. A feed that
//! closes (its reader fell behind) is watched again, and every stream starts over from a
//! fresh snapshot.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};

use async_channel::Receiver;
use taskwire_driver::{ServerHandle, TaskChange, TaskFeed, TaskRow};
use tokio::sync::broadcast;

use super::json::{self, Message};
use super::table::{History, Table};

/// Changes waiting for the slowest browser stream; one further behind starts over from a
/// fresh snapshot.
pub(crate) const BACKLOG: usize = 1024;

/// Browser streams open at once; one more is refused (`429`).
pub(crate) const MAX_STREAMS: usize = 64;

/// What the streams hear.
#[derive(Clone, Debug)]
pub(crate) enum News {
    /// One change, as its event.
    Change(Arc<Message>),
    /// The feed started over (or ended): take a fresh snapshot.
    Resync,
}

/// The server has no operator's view ([`Server::observe`](taskwire_driver::Server::observe)
/// was not called), or it has stopped.
#[derive(Debug)]
pub(crate) struct NotObserved;

/// The feed's subscriber, its table, and the streams it feeds.
pub(crate) struct Hub {
    handle: ServerHandle,
    state: Mutex<State>,
    /// One first `watch` at a time.
    starting: tokio::sync::Mutex<()>,
    /// Browser streams open.
    streams: AtomicUsize,
}

struct State {
    /// A feed is being read (or watched again after it closed).
    watching: bool,
    table: Table,
    news: broadcast::Sender<News>,
}

impl Hub {
    /// A hub for `handle`'s feed; it subscribes on first use ([`Hub::ensure`]).
    pub fn new(handle: ServerHandle) -> Arc<Hub> {
        Arc::new(Hub {
            handle,
            state: Mutex::new(State {
                watching: false,
                table: Table::default(),
                news: broadcast::channel(BACKLOG).0,
            }),
            starting: tokio::sync::Mutex::new(()),
            streams: AtomicUsize::new(0),
        })
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().expect("not poisoned")
    }

    /// Reads the server's feed unless it does already.
    pub async fn ensure(self: &Arc<Self>) -> Result<(), NotObserved> {
        if self.state().watching {
            return Ok(());
        }
        let _one = self.starting.lock().await;
        if self.state().watching {
            return Ok(());
        }
        let feed = self.handle.watch().await.ok_or(NotObserved)?;
        tracing::info!(
            tasks = feed.rows.len(),
            "dashboard: watching the server's tasks"
        );
        let changes = self.take(feed);
        tokio::spawn(pump(Arc::downgrade(self), changes));
        Ok(())
    }

    /// A fresh feed's rows become the table; the streams start over.
    fn take(&self, feed: TaskFeed) -> Receiver<TaskChange> {
        let mut state = self.state();
        state.table.reset(feed.rows);
        state.watching = true;
        let _ = state.news.send(News::Resync);
        feed.changes
    }

    fn apply(&self, change: &TaskChange) {
        let now = taskwire_driver::now();
        let mut state = self.state();
        state.table.apply(change, now);
        if let Some(message) = json::change(change, now) {
            let _ = state.news.send(News::Change(Arc::new(message)));
        }
    }

    /// The rows now, as a `snapshot` event, and the news from then on; `None` when no feed
    /// is read (the server stopped).
    pub fn subscribe(&self) -> Option<(Message, broadcast::Receiver<News>)> {
        let state = self.state();
        if !state.watching {
            return None;
        }
        let snapshot = json::snapshot(&state.table.rows());
        Some((snapshot, state.news.subscribe()))
    }

    /// Task `id`'s row and history, when the feed shows it.
    pub fn task(&self, id: &str) -> Option<(TaskRow, History)> {
        let state = self.state();
        state
            .table
            .get(id)
            .map(|(row, history)| (row.clone(), history))
    }

    /// One more open browser stream; `None` at [`MAX_STREAMS`].
    pub fn hold_stream(self: &Arc<Self>) -> Option<StreamSlot> {
        let held = self
            .streams
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |open| {
                (open < MAX_STREAMS).then_some(open + 1)
            });
        held.is_ok().then(|| StreamSlot(self.clone()))
    }
}

/// An open browser stream, counted until dropped.
pub(crate) struct StreamSlot(Arc<Hub>);

impl StreamSlot {
    /// Its hub.
    pub fn hub(&self) -> &Arc<Hub> {
        &self.0
    }
}

impl Drop for StreamSlot {
    fn drop(&mut self) {
        self.0.streams.fetch_sub(1, Ordering::AcqRel);
        tracing::debug!("dashboard: a browser stream closed");
    }
}

/// Reads the feed into the hub while the hub is used; a feed that closes is watched again,
/// until the server has stopped.
async fn pump(hub: Weak<Hub>, mut changes: Receiver<TaskChange>) {
    loop {
        while let Ok(change) = changes.recv().await {
            let Some(hub) = hub.upgrade() else {
                return;
            };
            hub.apply(&change);
        }
        let Some(hub) = hub.upgrade() else {
            return;
        };
        // Meanwhile the streams are served from the table as it stands.
        match hub.handle.watch().await {
            Some(feed) => {
                tracing::warn!(
                    tasks = feed.rows.len(),
                    "dashboard: the task feed fell behind and closed; watching it again"
                );
                changes = hub.take(feed);
            }
            None => {
                tracing::info!("dashboard: the server stopped; its task feed ended");
                let mut state = hub.state();
                state.watching = false;
                let _ = state.news.send(News::Resync);
                return;
            }
        }
    }
}
