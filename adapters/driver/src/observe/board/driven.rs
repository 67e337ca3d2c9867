//! The board of a host that does not journal (a server without a store). The driver tells
//! it what it does and sees: a call that runs as a task, its work's changes, the call's
//! end or stop, the timer. The board reads the task's status back from the host and counts
//! the metrics from it. It keeps little per task: a running task's call, and each finished
//! task by when its retention runs out (so that the tasks-by-status gauge lets it go). Rows
//! are made only while someone watches, from the host's snapshots.
//!
//! The tasks the host held when the board started come from the journal, which is then
//! turned off. From then on it follows the tasks of the server's tools: a task the
//! application makes or removes with the host's own calls is not on it.

use std::cmp::Reverse;
use std::collections::binary_heap::PeekMut;
use std::collections::BinaryHeap;
use std::sync::Arc;

use taskwire_engine::{CallId, Host, Millis, StopReason, TaskId, TaskSnapshot, TaskStatus};

use super::{Board, KnownTool};
use crate::observe::metrics::{End, TaskMetrics};
use crate::observe::recent::Recent;

/// Distinct tool names kept for the rows; past them, a task's row names no tool.
const MAX_NAMES: usize = 1024;

/// The retention end of a task kept until removed.
const NEVER: Millis = Millis(u64::MAX);

/// What a driver-fed board keeps.
pub(crate) struct Driven {
    metrics: Option<TaskMetrics>,
    /// The calls that run as tasks, or were offered one, until they end.
    calls: Recent<CallId, Live>,
    /// Every other task held, soonest retention end first.
    held: BinaryHeap<Reverse<Held>>,
    /// Each tool name seen, shared by the rows, with its metrics' index.
    names: foldhash::HashMap<Arc<str>, Option<usize>>,
    /// The last tool looked up (calls mostly repeat it).
    last: Option<Tool>,
}

/// A call that runs as a task, or was offered one.
struct Live {
    tool: Tool,
    /// `None` until the host made the task.
    task: Option<TaskId>,
    status: TaskStatus,
    created_at: Millis,
    /// Its work has not changed it yet (time to first update).
    fresh: bool,
}

impl Live {
    /// Its task `task` was made at `now`: `metrics` count it.
    fn made(&mut self, task: &TaskId, now: Millis, metrics: Option<&TaskMetrics>) {
        self.task = Some(task.clone());
        self.created_at = now;
        if let Some(metrics) = metrics {
            metrics.status_moved(None, Some(TaskStatus::Working));
            if let Some(tool) = self.tool.metrics {
                metrics.created(tool);
            }
        }
    }
}

/// A task held with no call of its own here (finished, or loaded), until its retention
/// ends; ordered by that end.
struct Held {
    expires_at: Millis,
    task: TaskId,
    /// What the gauge counts it as.
    status: TaskStatus,
    tool: Option<Arc<str>>,
}

impl PartialEq for Held {
    fn eq(&self, other: &Self) -> bool {
        self.expires_at == other.expires_at
    }
}

impl Eq for Held {}

impl PartialOrd for Held {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Held {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.expires_at.cmp(&other.expires_at)
    }
}

/// What a task's row must do after a change.
enum Synced {
    /// Follow the task (with its tool's name).
    Shown(TaskId, Option<Arc<str>>),
    /// Go: the task left the host, for this reason.
    Gone(TaskId, StopReason),
}

/// A task's tool: its name, if kept, and its metrics' index.
#[derive(Clone)]
struct Tool {
    name: Option<Arc<str>>,
    metrics: Option<usize>,
}

impl Driven {
    /// Counting in `metrics` if given.
    pub fn new(metrics: Option<TaskMetrics>) -> Self {
        Driven {
            metrics,
            calls: Recent::default(),
            held: BinaryHeap::new(),
            names: foldhash::HashMap::default(),
            last: None,
        }
    }

    /// `name`, kept once (up to [`MAX_NAMES`]), and its metrics (`other` for a tool the
    /// server does not have).
    fn tool(&mut self, name: &str, known: KnownTool<'_>) -> Tool {
        if let Some(last) = self
            .last
            .as_ref()
            .filter(|last| last.name.as_deref() == Some(name))
        {
            return last.clone();
        }
        if let Some((name, &metrics)) = self.names.get_key_value(name) {
            let tool = Tool {
                name: Some(name.clone()),
                metrics,
            };
            self.last = Some(tool.clone());
            return tool;
        }
        let label = if known(name) { name } else { "other" };
        let metrics = self.metrics.as_mut().map(|m| m.tool(label));
        if self.names.len() >= MAX_NAMES {
            return Tool {
                name: None,
                metrics,
            };
        }
        let name: Arc<str> = Arc::from(name);
        self.names.insert(name.clone(), metrics);
        Tool {
            name: Some(name),
            metrics,
        }
    }

    /// Call `call`'s task may have changed (see [`Board::call_changed`]): the metrics count
    /// it. Returns what its row must do: follow (only when `watched`), or go.
    fn sync(
        &mut self,
        call: CallId,
        host: &Host,
        now: Millis,
        work: bool,
        stopped: Option<StopReason>,
        watched: bool,
    ) -> Option<Synced> {
        let live = self.calls.get_mut(call)?;
        if live.task.is_none() {
            let Some(task) = host.call_task(call) else {
                // Offered a task, and (so far) answered without one.
                if stopped.is_some() {
                    self.calls.remove(call);
                }
                return None;
            };
            live.made(task, now, self.metrics.as_ref());
        }
        let brief = host.task_brief(live.task.as_ref()?);
        let status = brief.map(|b| b.status);
        let before = live.status;
        // Gone is no change its work made.
        let moved = status.is_some_and(|s| s != before);
        if let Some(metrics) = &self.metrics {
            let seconds = now.0.saturating_sub(live.created_at.0) as f64 / 1000.0;
            let tool = live.tool.metrics;
            if let Some(tool) = tool.filter(|_| (work || moved) && live.fresh) {
                metrics.first_update(tool, seconds);
            }
            metrics.status_moved(Some(before), status);
            let ended = match status {
                _ if before.is_terminal() => None,
                Some(status) => End::of(status),
                None if stopped == Some(StopReason::Expired) => Some(End::Expired),
                None => None,
            };
            if let (Some(how), Some(tool)) = (ended, tool) {
                metrics.ended(tool, how, seconds);
            }
        }
        live.fresh &= !(work || moved);
        let shown = |live: &Live| {
            let task = live.task.clone().filter(|_| watched)?;
            Some(Synced::Shown(task, live.tool.name.clone()))
        };
        match brief {
            Some(brief) if !brief.status.is_terminal() && stopped.is_none() => {
                live.status = brief.status;
                shown(live)
            }
            Some(brief) => {
                // Finished: held until its retention ends.
                let live = self.calls.remove(call)?;
                let synced = shown(&live);
                self.held.push(Reverse(Held {
                    expires_at: brief.expires_at.unwrap_or(NEVER),
                    task: live.task?,
                    status: brief.status,
                    tool: live.tool.name,
                }));
                synced
            }
            None => {
                let task = self.calls.remove(call)?.task?;
                Some(Synced::Gone(task, stopped.unwrap_or(StopReason::Removed)))
            }
        }
    }

    /// A task held before the board started (`status` as its requestor sees it).
    fn loaded(&mut self, snapshot: &TaskSnapshot) {
        let status = snapshot.shown_status();
        if let Some(metrics) = &self.metrics {
            metrics.status_moved(None, Some(status));
        }
        let info = &snapshot.info;
        self.held.push(Reverse(Held {
            expires_at: expiry(info.created_at, info.ttl_ms),
            task: info.id.clone(),
            status,
            tool: snapshot
                .request
                .as_ref()
                .map(|r| Arc::from(r.tool.as_str())),
        }));
    }
}

impl Board {
    /// Whether the driver feeds the board (its host does not journal).
    pub fn driven(&self) -> bool {
        self.driven.is_some()
    }

    /// A task the host held before the board started (its journal, while loading).
    pub(super) fn loaded(&mut self, snapshot: &TaskSnapshot) {
        if let Some(driven) = self.driven.as_mut() {
            driven.loaded(snapshot);
        }
    }

    /// Call `call` of `tool` runs as `task`, made now, or was offered one (`None`: then
    /// [`Board::offer_taken`] or [`Board::call_changed`] once the application may have made
    /// it).
    pub fn call(
        &mut self,
        call: CallId,
        tool: &str,
        task: Option<&TaskId>,
        host: &Host,
        now: Millis,
        known: KnownTool<'_>,
    ) {
        let Some(driven) = self.driven.as_mut() else {
            return;
        };
        let live = Live {
            tool: driven.tool(tool, known),
            task: None,
            status: TaskStatus::Working,
            created_at: now,
            fresh: true,
        };
        driven.calls.insert(call, live);
        if let Some(task) = task {
            self.made(call, task, host, now);
        }
    }

    /// The application may have made the task call `call` was offered (then just made,
    /// with its work yet to run).
    pub fn offer_taken(&mut self, call: CallId, host: &Host, now: Millis) {
        if let Some(task) = host.call_task(call) {
            self.made(call, task, host, now);
        }
    }

    /// Call `call`'s task `task` was made now: counted, and shown if watched.
    fn made(&mut self, call: CallId, task: &TaskId, host: &Host, now: Millis) {
        let Some(driven) = self.driven.as_mut() else {
            return;
        };
        let Some(live) = driven.calls.get_mut(call).filter(|l| l.task.is_none()) else {
            return;
        };
        live.made(task, now, driven.metrics.as_ref());
        if !self.watchers.is_empty() {
            let name = live.tool.name.clone();
            self.show(task, host, name.as_deref());
        }
    }

    /// Call `call`'s task may have changed (`work`: its work changed it); `stopped`: the
    /// call stopped for that reason. A task gone from the host leaves for that reason
    /// (else as removed); a finished one stays until its retention ends.
    pub fn call_changed(
        &mut self,
        call: CallId,
        host: &Host,
        now: Millis,
        work: bool,
        stopped: Option<StopReason>,
    ) {
        let Some(driven) = self.driven.as_mut() else {
            return;
        };
        let watched = !self.watchers.is_empty();
        match driven.sync(call, host, now, work, stopped, watched) {
            Some(Synced::Shown(task, tool)) => self.show(&task, host, tool.as_deref()),
            Some(Synced::Gone(task, reason)) => self.delete(&task, reason, false),
            None => {}
        }
    }

    /// The host's timer fired at `now`: the tasks whose retention ran out are gone.
    pub fn expire(&mut self, now: Millis, host: &Host) {
        let Some(driven) = self.driven.as_mut() else {
            return;
        };
        // Each turn asks: mostly nothing is due.
        if driven.held.peek().is_none_or(|top| top.0.expires_at > now) {
            return;
        }
        let mut gone = Vec::new();
        while let Some(due) = driven.held.peek_mut().filter(|top| top.0.expires_at <= now) {
            let Reverse(held) = PeekMut::pop(due);
            if !host.has_task(&held.task) {
                if let Some(metrics) = &driven.metrics {
                    metrics.status_moved(Some(held.status), None);
                }
                gone.push(held.task);
            }
        }
        for task in gone {
            self.delete(&task, StopReason::Expired, false);
        }
    }

    /// A watcher is about to read the rows: if none watched until now, a driver-fed board
    /// makes them from the host's snapshots.
    pub fn refresh(&mut self, host: &Host) {
        let Some(driven) = self.driven.as_ref().filter(|_| self.watchers.is_empty()) else {
            return;
        };
        let live =
            (driven.calls.values()).filter_map(|l| Some((l.task.clone()?, l.tool.name.clone())));
        let held = (driven.held.iter()).map(|Reverse(h)| (h.task.clone(), h.tool.clone()));
        let tasks: Vec<(TaskId, Option<Arc<str>>)> = live.chain(held).collect();
        self.rows.clear();
        for (task, tool) in tasks {
            self.show(&task, host, tool.as_deref());
        }
    }

    /// Task `task`'s row, from the host's snapshot (`tool`: the tool it runs).
    fn show(&mut self, task: &TaskId, host: &Host, tool: Option<&str>) {
        if let Some(snapshot) = host.task(task) {
            self.put(&snapshot, tool, &|| true, false, &|_| true);
        }
    }
}

/// When a task made at `created_at` and kept `ttl_ms` runs out (never: the end of time).
fn expiry(created_at: Millis, ttl_ms: Option<u64>) -> Millis {
    ttl_ms.map_or(NEVER, |ttl| created_at.plus(ttl))
}
