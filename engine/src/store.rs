//! The task store: hosted tasks, their status, outcome and retention, with no protocol state.
//!
//! Kept apart from the per-connection session so that one store can later serve several
//! connections, or sit in front of a durable backend. Lookups are O(1), listing and expiry
//! O(log n) per step.

use std::collections::{BTreeSet, HashMap};

use serde_json::value::RawValue;

use crate::jsonrpc::RpcError;
use crate::status::TaskStatus;
use crate::time::Millis;
use crate::wire::v2025_11_25::Task;

/// How a finished task answers `tasks/result`.
#[derive(Clone, Debug)]
pub enum Outcome {
    /// A success result, already carrying the related-task `_meta`.
    Result(Box<RawValue>),
    /// The JSON-RPC error the underlying request ended with.
    Error(RpcError),
}

/// One stored task.
#[derive(Clone, Debug)]
pub struct TaskRecord {
    /// Current status.
    pub status: TaskStatus,
    /// Optional human-readable status.
    pub status_message: Option<String>,
    /// Creation time.
    pub created_at: Millis,
    /// Time of the last change.
    pub last_updated_at: Millis,
    /// Retention from creation; `None` is unlimited.
    pub ttl_ms: Option<u64>,
    /// Suggested polling interval.
    pub poll_interval_ms: Option<u64>,
    /// Set exactly when the status is terminal.
    pub outcome: Option<Outcome>,
}

impl TaskRecord {
    /// The wire form of this task.
    pub fn to_wire(&self, task_id: &str) -> Task {
        Task {
            task_id: task_id.to_owned(),
            status: self.status,
            status_message: self.status_message.clone(),
            created_at: self.created_at.to_rfc3339(),
            last_updated_at: self.last_updated_at.to_rfc3339(),
            ttl: self.ttl_ms,
            poll_interval: self.poll_interval_ms,
        }
    }

    fn expires_at(&self) -> Option<Millis> {
        self.ttl_ms.map(|ttl| self.created_at.plus(ttl))
    }
}

/// Why the store refused to create a task.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CreateError {
    /// The store holds its maximum number of tasks.
    Full,
    /// A task with that id exists.
    DuplicateId,
}

/// A position in the listing order (creation time, then id).
pub type ListKey = (Millis, String);

/// All tasks one receiver hosts.
#[derive(Debug)]
pub struct TaskStore {
    tasks: HashMap<String, TaskRecord>,
    by_created: BTreeSet<ListKey>,
    by_expiry: BTreeSet<ListKey>,
    max_tasks: usize,
}

impl TaskStore {
    /// An empty store that holds at most `max_tasks` tasks.
    pub fn new(max_tasks: usize) -> Self {
        TaskStore {
            tasks: HashMap::new(),
            by_created: BTreeSet::new(),
            by_expiry: BTreeSet::new(),
            max_tasks,
        }
    }

    /// Number of tasks held.
    pub fn len(&self) -> usize {
        self.tasks.len()
    }

    /// Whether the store is empty.
    pub fn is_empty(&self) -> bool {
        self.tasks.is_empty()
    }

    /// Creates a `working` task.
    pub fn create(
        &mut self,
        id: &str,
        now: Millis,
        ttl_ms: Option<u64>,
        poll_interval_ms: Option<u64>,
    ) -> Result<&TaskRecord, CreateError> {
        if self.tasks.contains_key(id) {
            return Err(CreateError::DuplicateId);
        }
        if self.tasks.len() >= self.max_tasks {
            return Err(CreateError::Full);
        }
        let record = TaskRecord {
            status: TaskStatus::Working,
            status_message: None,
            created_at: now,
            last_updated_at: now,
            ttl_ms,
            poll_interval_ms,
            outcome: None,
        };
        self.by_created.insert((now, id.to_owned()));
        if let Some(at) = record.expires_at() {
            self.by_expiry.insert((at, id.to_owned()));
        }
        Ok(self.tasks.entry(id.to_owned()).or_insert(record))
    }

    /// The task with this id.
    pub fn get(&self, id: &str) -> Option<&TaskRecord> {
        self.tasks.get(id)
    }

    /// Moves a task along the transition table, optionally replacing its message.
    /// Returns `false` (and changes nothing) when the table forbids the move.
    pub fn transition(
        &mut self,
        id: &str,
        now: Millis,
        to: TaskStatus,
        message: Option<String>,
        outcome: Option<Outcome>,
    ) -> bool {
        let Some(task) = self.tasks.get_mut(id) else {
            return false;
        };
        if !task.status.can_become(to) || to.is_terminal() != outcome.is_some() {
            return false;
        }
        task.status = to;
        task.outcome = outcome;
        if message.is_some() {
            task.status_message = message;
        }
        task.last_updated_at = task.last_updated_at.max(now);
        true
    }

    /// Replaces the status message of a non-terminal task. Returns whether it changed.
    pub fn set_message(&mut self, id: &str, now: Millis, message: Option<String>) -> bool {
        match self.tasks.get_mut(id) {
            Some(task) if !task.status.is_terminal() && task.status_message != message => {
                task.status_message = message;
                task.last_updated_at = task.last_updated_at.max(now);
                true
            }
            _ => false,
        }
    }

    /// Up to `limit` tasks after `after` in listing order, and the key to continue from.
    pub fn page(&self, after: Option<&ListKey>, limit: usize) -> (Vec<Task>, Option<ListKey>) {
        use std::ops::Bound::{Excluded, Unbounded};
        let start = after.map_or(Unbounded, Excluded);
        let mut keys = self.by_created.range((start, Unbounded));
        let mut last = None;
        let tasks: Vec<Task> = keys
            .by_ref()
            .take(limit)
            .map(|key| {
                last = Some(key);
                self.tasks[&key.1].to_wire(&key.1)
            })
            .collect();
        let next = keys.next().and(last.cloned());
        (tasks, next)
    }

    /// When the next task expires.
    pub fn next_expiry(&self) -> Option<Millis> {
        self.by_expiry.first().map(|(at, _)| *at)
    }

    /// Removes and returns one task whose retention has run out at `now`.
    pub fn pop_expired(&mut self, now: Millis) -> Option<(String, TaskRecord)> {
        let (at, _) = self.by_expiry.first()?;
        if *at > now {
            return None;
        }
        let (_, id) = self.by_expiry.pop_first()?;
        let record = self.tasks.remove(&id)?;
        self.by_created.remove(&(record.created_at, id.clone()));
        Some((id, record))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok() -> Option<Outcome> {
        Some(Outcome::Error(RpcError::new(-1, "x")))
    }

    #[test]
    fn create_respects_cap_and_unique_ids() {
        let mut s = TaskStore::new(2);
        s.create("a", Millis(1), None, None).unwrap();
        assert_eq!(
            s.create("a", Millis(1), None, None).unwrap_err(),
            CreateError::DuplicateId
        );
        s.create("b", Millis(1), None, None).unwrap();
        assert_eq!(
            s.create("c", Millis(1), None, None).unwrap_err(),
            CreateError::Full
        );
    }

    #[test]
    fn transitions_follow_the_table_and_terminal_needs_an_outcome() {
        let mut s = TaskStore::new(10);
        s.create("a", Millis(10), None, None).unwrap();
        assert!(!s.transition("a", Millis(11), TaskStatus::Completed, None, None));
        assert!(s.transition("a", Millis(12), TaskStatus::InputRequired, None, None));
        assert!(s.transition(
            "a",
            Millis(13),
            TaskStatus::Cancelled,
            Some("bye".into()),
            ok()
        ));
        assert!(!s.transition("a", Millis(14), TaskStatus::Completed, None, ok()));
        assert!(!s.set_message("a", Millis(15), Some("late".into())));
        let t = s.get("a").unwrap();
        assert_eq!(
            (t.status, t.last_updated_at),
            (TaskStatus::Cancelled, Millis(13))
        );
        assert_eq!(t.status_message.as_deref(), Some("bye"));
    }

    #[test]
    fn pages_in_creation_order_and_expires_in_deadline_order() {
        let mut s = TaskStore::new(10);
        s.create("b", Millis(5), Some(100), None).unwrap();
        s.create("a", Millis(5), Some(50), None).unwrap();
        s.create("c", Millis(1), None, None).unwrap();
        let (page, next) = s.page(None, 2);
        assert_eq!(
            page.iter().map(|t| t.task_id.as_str()).collect::<Vec<_>>(),
            ["c", "a"]
        );
        let (page, next) = s.page(next.as_ref(), 2);
        assert_eq!((page.len(), page[0].task_id.as_str(), next), (1, "b", None));
        assert_eq!(s.next_expiry(), Some(Millis(55)));
        assert!(s.pop_expired(Millis(54)).is_none());
        assert_eq!(s.pop_expired(Millis(200)).unwrap().0, "a");
        assert_eq!(s.pop_expired(Millis(200)).unwrap().0, "b");
        assert!(s.pop_expired(Millis(u64::MAX)).is_none());
        assert_eq!(s.len(), 1);
    }
}
