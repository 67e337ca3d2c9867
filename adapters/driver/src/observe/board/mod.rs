//! The tasks this process holds, one row each, kept from the host's journal (its own
//! changes) and from the store's news (other processes' changes), or, on a host that does
//! not journal, from what the driver does and sees ([`driven`]); what changed goes to every
//! watcher, and this process's own changes are counted in the metrics.

mod driven;

use async_channel::Sender;
use taskwire_engine::{Change, StopReason, TaskId, TaskProgress, TaskSnapshot, TaskStatus};

use super::feed::{TaskChange, TaskFeed, TaskRow};
use super::metrics::{End, TaskMetrics};

/// Whether a tool name is one of the server's (only those become labels: a peer's names
/// never do).
pub(crate) type KnownTool<'a> = &'a dyn Fn(&str) -> bool;
/// Whether the task's work runs in this process (asked only when the row needs it).
pub(crate) type RunsHere<'a> = &'a dyn Fn() -> bool;

/// A row and what the metrics still wait for.
struct Row {
    row: TaskRow,
    /// Its tool's metrics ([`TaskMetrics::tool`]): the tool's, `other`'s for a name the
    /// server does not have; `None` until this process knows it (`unknown` when counted).
    tool: Option<usize>,
    /// Its work has not changed it yet since it was made here (time to first update).
    fresh: bool,
}

/// The rows, the watchers and the tasks-by-status gauge.
pub(crate) struct Board {
    rows: foldhash::HashMap<TaskId, Row>,
    watchers: Vec<Sender<TaskChange>>,
    /// Rows held after the last pruning; the next one comes at twice as many.
    pruned_at: usize,
    /// The host's journal reports the tasks it loaded or held before it was observed: rows,
    /// not news for the metrics.
    pub loading: bool,
    /// With [`Server::metrics`](crate::Server::metrics).
    metrics: Option<TaskMetrics>,
    /// Fed by the driver, not the journal (`None`: the journal).
    driven: Option<driven::Driven>,
}

impl Board {
    /// An empty board, still loading (from the host's journal), counting in `metrics` if
    /// given; `driven`: then fed by the driver ([`Board::call`] and the others of
    /// [`driven`]) rather than by the journal.
    pub fn new(metrics: Option<TaskMetrics>, driven: bool) -> Self {
        // A driver-fed board counts its own way.
        let (metrics, driven) = match driven {
            true => (None, Some(driven::Driven::new(metrics))),
            false => (metrics, None),
        };
        Board {
            rows: foldhash::HashMap::default(),
            watchers: Vec::new(),
            pruned_at: 0,
            loading: true,
            metrics,
            driven,
        }
    }

    /// A feed starting with the rows held now.
    pub fn watch(&mut self) -> TaskFeed {
        let (tx, changes) = async_channel::bounded(TaskFeed::CAPACITY);
        self.watchers.push(tx);
        let mut rows: Vec<TaskRow> = self.rows.values().map(|r| r.row.clone()).collect();
        rows.sort_by(|a, b| (a.created_at, &a.id).cmp(&(b.created_at, &b.id)));
        TaskFeed { rows, changes }
    }

    /// A change this process made (its journal): the row follows, the metrics count it.
    pub fn journaled(&mut self, change: &Change, runs_here: RunsHere<'_>, known: KnownTool<'_>) {
        if self.driven.is_some() {
            // The tasks held before (then the application may turn the journal on: the
            // driver feeds the board still).
            if let (Change::Put(snapshot), true) = (change, self.loading) {
                self.loaded(snapshot);
            }
            return;
        }
        let here = !self.loading;
        match change {
            Change::Put(snapshot) => {
                let tool = snapshot.request.as_ref().map(|r| r.tool.as_str());
                self.put(snapshot, tool, runs_here, here, known);
            }
            Change::Message { task, message, at } => {
                let Some(entry) = self.rows.get_mut(task) else {
                    return;
                };
                entry.row.message.clone_from(message);
                entry.row.updated_at = *at;
                if here {
                    first_update(entry, self.metrics.as_mut());
                }
                if !self.watchers.is_empty() {
                    let row = entry.row.clone();
                    self.tell(TaskChange::Row(row));
                }
            }
            Change::Delete { task, reason } => self.delete(task, *reason, here),
            _ => {}
        }
    }

    /// A change another process made, or a task read from the store: the row follows; the
    /// metrics count it where it was made.
    pub fn synced(&mut self, snapshot: &TaskSnapshot, runs_here: bool, known: KnownTool<'_>) {
        let tool = snapshot.request.as_ref().map(|r| r.tool.as_str());
        self.put(snapshot, tool, &|| runs_here, false, known);
    }

    /// The task's work reported progress.
    pub fn progress(&mut self, task: &TaskId, progress: TaskProgress) {
        let Some(entry) = self.rows.get_mut(task) else {
            return;
        };
        entry.row.progress = Some(progress);
        first_update(entry, self.metrics.as_mut());
        if !self.watchers.is_empty() {
            let row = entry.row.clone();
            self.tell(TaskChange::Row(row));
        }
    }

    /// The task's work asked its requestor for input.
    pub fn asked(&mut self, task: &TaskId, method: &str) {
        if let Some(entry) = self.rows.get_mut(task) {
            first_update(entry, self.metrics.as_mut());
        }
        self.tell(TaskChange::Asked {
            task: task.clone(),
            method: method.to_owned(),
        });
    }

    /// The requestor answered the task's question.
    pub fn answered(&mut self, task: &TaskId, accepted: bool) {
        self.tell(TaskChange::Answered {
            task: task.clone(),
            accepted,
        });
    }

    /// Forgets the rows of tasks the host let go without a word (a shared store's host keeps
    /// only the newest finished ones), once the rows have doubled since the last time; the
    /// watchers hear them `Gone` (`Removed`).
    #[inline]
    pub fn prune(&mut self, held: impl Fn(&str) -> bool) {
        // Each turn asks: mostly the rows have not doubled.
        if self.rows.len() >= (2 * self.pruned_at).max(1024) {
            self.prune_rows(&held);
        }
    }

    fn prune_rows(&mut self, held: &dyn Fn(&str) -> bool) {
        let before = self.rows.len();
        let metrics = self.metrics.as_ref();
        let mut let_go = Vec::new();
        self.rows.retain(|id, entry| {
            let keep = held(id);
            if !keep {
                if let Some(metrics) = metrics {
                    metrics.status_moved(Some(entry.row.status), None);
                }
                let_go.push(id.clone());
            }
            keep
        });
        self.pruned_at = self.rows.len();
        tracing::trace!(before, after = self.rows.len(), "task rows pruned");
        // Watchers forget them too.
        for task in let_go {
            let reason = StopReason::Removed;
            self.tell(TaskChange::Gone { task, reason });
        }
    }

    /// `snapshot` as it stands now; `tool`: the tool it runs, if known.
    fn put(
        &mut self,
        snapshot: &TaskSnapshot,
        tool: Option<&str>,
        runs_here: RunsHere<'_>,
        here: bool,
        known: KnownTool<'_>,
    ) {
        let info = &snapshot.info;
        // A 2025-11-25 result saying `isError: true` is a failure: as the requestor sees it.
        let shown = snapshot.shown_status();
        let before = self.rows.get(&info.id).map(|e| e.row.status);
        let metrics = &mut self.metrics;
        let entry = self.rows.entry(info.id.clone()).or_insert_with(|| Row {
            row: TaskRow {
                id: info.id.clone(),
                tool: None,
                owner: snapshot.owner.clone(),
                era: snapshot.era,
                status: shown,
                message: None,
                progress: None,
                created_at: info.created_at,
                updated_at: info.last_updated_at,
                runs_here: runs_here(),
            },
            tool: None,
            // Made here: the metrics wait for its work's first change.
            fresh: here,
        });
        if let Some(tool) = tool {
            if entry.row.tool.as_deref() != Some(tool) {
                let label = if known(tool) { tool } else { "other" };
                entry.tool = metrics.as_mut().map(|m| m.tool(label));
                entry.row.tool = Some(tool.to_owned());
            }
        }
        if before.is_some() && !self.watchers.is_empty() {
            entry.row.runs_here = runs_here();
        }
        let row = &mut entry.row;
        let changed =
            before.is_some() && (row.status != shown || row.message != info.status_message);
        row.status = shown;
        if row.message != info.status_message {
            row.message.clone_from(&info.status_message);
        }
        row.updated_at = info.last_updated_at;
        if snapshot.progress.is_some() {
            row.progress.clone_from(&snapshot.progress);
        }
        let status = row.status;
        if here && changed {
            first_update(entry, self.metrics.as_mut());
        }
        if let Some(metrics) = self.metrics.as_mut() {
            metrics.status_moved(before, Some(status));
            if here && before.is_none() && !status.is_terminal() {
                let tool = metrics.label_of(&mut entry.tool);
                metrics.created(tool);
            }
            let ended = End::of(status).filter(|_| !before.is_some_and(TaskStatus::is_terminal));
            if let Some(how) = ended.filter(|_| here) {
                let tool = metrics.label_of(&mut entry.tool);
                metrics.ended(tool, how, seconds(&entry.row));
            }
        }
        if !self.watchers.is_empty() {
            let row = entry.row.clone();
            self.tell(TaskChange::Row(row));
        }
    }

    fn delete(&mut self, task: &TaskId, reason: StopReason, here: bool) {
        let Some(entry) = self.rows.remove(task) else {
            return;
        };
        if let Some(metrics) = self.metrics.as_mut() {
            metrics.status_moved(Some(entry.row.status), None);
            if here && reason == StopReason::Expired && !entry.row.status.is_terminal() {
                let mut tool = entry.tool;
                let tool = metrics.label_of(&mut tool);
                metrics.ended(tool, End::Expired, seconds(&entry.row));
            }
        }
        self.tell(TaskChange::Gone {
            task: task.clone(),
            reason,
        });
    }

    /// Tells every watcher; one that fell behind (or left) is dropped.
    fn tell(&mut self, change: TaskChange) {
        if self.watchers.is_empty() {
            return;
        }
        self.watchers.retain(|w| match w.try_send(change.clone()) {
            Ok(()) => true,
            Err(_) => {
                tracing::debug!("a task watcher fell behind or left; its feed closes");
                false
            }
        });
        if self.watchers.is_empty() && self.driven.is_some() {
            // A driver-fed board keeps rows only while someone watches.
            self.rows.clear();
        }
    }
}

/// The first change of a task's work since it was made here: time to first update.
fn first_update(entry: &mut Row, metrics: Option<&mut TaskMetrics>) {
    if let Some(metrics) = metrics.filter(|_| std::mem::take(&mut entry.fresh)) {
        let tool = metrics.label_of(&mut entry.tool);
        metrics.first_update(tool, seconds(&entry.row));
    }
}

/// How long the task has lived, by its own clock (creation to last change).
fn seconds(row: &TaskRow) -> f64 {
    row.updated_at.0.saturating_sub(row.created_at.0) as f64 / 1000.0
}

#[cfg(test)]
mod tests {
    use taskwire_engine::{Era, InputKinds, Millis, Owner, TaskInfo};

    use super::*;

    fn finished(id: &str) -> TaskSnapshot {
        TaskSnapshot {
            info: TaskInfo {
                id: id.into(),
                status: TaskStatus::Completed,
                status_message: None,
                created_at: Millis(1),
                last_updated_at: Millis(2),
                ttl_ms: None,
                poll_interval_ms: None,
            },
            owner: Owner::from("alice"),
            era: Era::V2025_11_25,
            input_kinds: InputKinds::default(),
            outcome: None,
            request: None,
            inputs: Vec::new(),
            progress: None,
        }
    }

    #[test]
    fn watchers_hear_the_rows_pruned_as_gone() {
        let mut board = Board::new(None, false);
        for i in 0..1024 {
            board.synced(&finished(&i.to_string()), false, &|_| true);
        }
        let feed = board.watch();
        assert_eq!(feed.rows.len(), 1024);
        board.prune(|id| id != "7");
        assert_eq!(
            feed.changes.try_recv(),
            Ok(TaskChange::Gone {
                task: "7".into(),
                reason: StopReason::Removed
            })
        );
        assert!(feed.changes.try_recv().is_err());
    }

    #[test]
    fn a_watcher_that_falls_a_feed_behind_is_dropped() {
        let mut board = Board::new(None, false);
        let feed = board.watch();
        for i in 0..=TaskFeed::CAPACITY {
            board.synced(&finished(&i.to_string()), false, &|_| true);
        }
        // Every change it could hold is there, then the feed ends: watch again.
        for _ in 0..TaskFeed::CAPACITY {
            assert!(matches!(feed.changes.try_recv(), Ok(TaskChange::Row(_))));
        }
        assert_eq!(
            feed.changes.try_recv(),
            Err(async_channel::TryRecvError::Closed)
        );
        // A new watcher starts from every row.
        assert_eq!(board.watch().rows.len(), TaskFeed::CAPACITY + 1);
    }
}
