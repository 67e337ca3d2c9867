//! The dashboard's own copy of the tasks: each row as the feed last showed it, and a short
//! history per task (its status changes with their times, the questions it asked and their
//! answers) for the detail view.

use std::collections::{HashMap, VecDeque};

use serde::Serialize;
use taskwire_driver::{Millis, TaskChange, TaskId, TaskRow, TaskStatus};

/// The newest history entries kept per task; older ones are counted, not kept.
pub(crate) const HISTORY: usize = 32;

/// One moment of a task's life.
#[derive(Clone, Debug, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub(crate) enum Step {
    /// Its status or status message changed (or the dashboard first saw it).
    Status {
        /// When (milliseconds since the Unix epoch).
        at: u64,
        /// The status then.
        status: TaskStatus,
        /// The status message then.
        message: Option<String>,
    },
    /// Its work asked its requestor something (`elicitation/create`, …).
    Asked {
        /// When.
        at: u64,
        /// What it asked.
        method: String,
    },
    /// The requestor answered (`accepted`: with a result rather than an error).
    Answered {
        /// When.
        at: u64,
        /// Whether the answer was a result.
        accepted: bool,
    },
}

impl Step {
    /// When it happened.
    fn at(&self) -> u64 {
        match self {
            Step::Status { at, .. } | Step::Asked { at, .. } | Step::Answered { at, .. } => *at,
        }
    }
}

/// A row and its history.
struct Entry {
    row: TaskRow,
    history: VecDeque<Step>,
    /// Entries dropped from the front of `history`.
    dropped: usize,
}

impl Entry {
    fn new(row: TaskRow) -> Entry {
        let mut entry = Entry {
            history: VecDeque::new(),
            dropped: 0,
            row,
        };
        entry.record_status();
        entry
    }

    fn push(&mut self, step: Step) {
        if self.history.len() == HISTORY {
            self.history.pop_front();
            self.dropped += 1;
        }
        self.history.push_back(step);
    }

    fn record_status(&mut self) {
        self.push(Step::Status {
            at: self.row.updated_at.0,
            status: self.row.status,
            message: self.row.message.clone(),
        });
    }

    /// Takes `row`, recording a status step when its status or message changed.
    fn update(&mut self, row: TaskRow) {
        let changed = row.status != self.row.status || row.message != self.row.message;
        self.row = row;
        if changed {
            self.record_status();
        }
    }
}

/// A task's history as the detail view shows it.
#[derive(Debug, Serialize)]
pub(crate) struct History {
    /// The newest steps, oldest first.
    pub steps: Vec<Step>,
    /// How many older steps were dropped.
    pub dropped: usize,
}

/// Every task the feed shows, by id.
#[derive(Default)]
pub(crate) struct Table {
    entries: HashMap<TaskId, Entry>,
}

impl Table {
    /// The rows of a fresh feed: those gone from it are dropped, the others updated (their
    /// history kept).
    pub fn reset(&mut self, rows: Vec<TaskRow>) {
        let mut entries = HashMap::with_capacity(rows.len());
        for row in rows {
            let entry = match self.entries.remove(&row.id) {
                Some(mut entry) => {
                    entry.update(row);
                    entry
                }
                None => Entry::new(row),
            };
            entries.insert(entry.row.id.clone(), entry);
        }
        self.entries = entries;
    }

    /// Applies one change of the feed; `now` is when it arrived.
    pub fn apply(&mut self, change: &TaskChange, now: Millis) {
        match change {
            TaskChange::Row(row) => match self.entries.get_mut(&row.id) {
                Some(entry) => entry.update(row.clone()),
                None => {
                    self.entries.insert(row.id.clone(), Entry::new(row.clone()));
                }
            },
            TaskChange::Asked { task, method } => {
                if let Some(entry) = self.entries.get_mut(task) {
                    entry.push(Step::Asked {
                        at: now.0,
                        method: method.clone(),
                    });
                }
            }
            TaskChange::Answered { task, accepted } => {
                if let Some(entry) = self.entries.get_mut(task) {
                    entry.push(Step::Answered {
                        at: now.0,
                        accepted: *accepted,
                    });
                }
            }
            TaskChange::Gone { task, .. } => {
                self.entries.remove(task);
            }
            _ => {}
        }
    }

    /// Every row, oldest first.
    pub fn rows(&self) -> Vec<&TaskRow> {
        let mut rows: Vec<&TaskRow> = self.entries.values().map(|e| &e.row).collect();
        rows.sort_by(|a, b| (a.created_at, &a.id).cmp(&(b.created_at, &b.id)));
        rows
    }

    /// Task `id`'s row and history, when the feed shows it.
    pub fn get(&self, id: &str) -> Option<(&TaskRow, History)> {
        self.entries.get(id).map(|entry| {
            let mut steps: Vec<Step> = entry.history.iter().cloned().collect();
            // In time order: a question's time is when the feed told it, a status change's
            // is the task's own, which may come a moment later.
            steps.sort_by_key(Step::at);
            let history = History {
                steps,
                dropped: entry.dropped,
            };
            (&entry.row, history)
        })
    }
}

#[cfg(test)]
mod tests {
    use taskwire_driver::{Era, Owner, StopReason};

    use super::*;

    fn row(id: &str, status: TaskStatus, message: &str, at: u64) -> TaskRow {
        TaskRow {
            id: id.into(),
            tool: Some("tool".into()),
            owner: Owner::from("alice"),
            era: Era::V2025_11_25,
            status,
            message: Some(message.into()),
            progress: None,
            created_at: Millis(1),
            updated_at: Millis(at),
            runs_here: true,
        }
    }

    fn statuses(table: &Table, id: &str) -> Vec<(u64, TaskStatus)> {
        let (_, history) = table.get(id).expect("held");
        history
            .steps
            .iter()
            .filter_map(|s| match s {
                Step::Status { at, status, .. } => Some((*at, *status)),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn history_records_status_and_message_changes_not_progress_in_time_order() {
        let mut table = Table::default();
        let working = TaskStatus::Working;
        table.apply(&TaskChange::Row(row("a", working, "one", 1)), Millis(1));
        let mut progressed = row("a", working, "one", 2);
        progressed.progress = Some(taskwire_driver::TaskProgress {
            progress: 1.0,
            total: None,
            message: None,
        });
        table.apply(&TaskChange::Row(progressed), Millis(2));
        let asked = TaskChange::Asked {
            task: "a".into(),
            method: "elicitation/create".into(),
        };
        table.apply(&asked, Millis(4));
        // A status change told after the question, from a moment before it: shown before.
        table.apply(&TaskChange::Row(row("a", working, "two", 3)), Millis(5));
        let answered = TaskChange::Answered {
            task: "a".into(),
            accepted: true,
        };
        table.apply(&answered, Millis(5));
        let done = TaskStatus::Completed;
        table.apply(&TaskChange::Row(row("a", done, "two", 6)), Millis(6));
        assert_eq!(
            statuses(&table, "a"),
            [(1, working), (3, working), (6, done)]
        );
        let (_, history) = table.get("a").expect("held");
        assert_eq!(history.steps.len(), 5);
        assert!(
            matches!(&history.steps[2], Step::Asked { at: 4, method } if method == "elicitation/create")
        );
        assert!(matches!(
            history.steps[3],
            Step::Answered {
                at: 5,
                accepted: true
            }
        ));
    }

    #[test]
    fn history_keeps_the_newest_steps_and_counts_the_rest() {
        let mut table = Table::default();
        for at in 0..(HISTORY as u64 + 5) {
            let change = TaskChange::Row(row("a", TaskStatus::Working, &at.to_string(), at));
            table.apply(&change, Millis(at));
        }
        let (_, history) = table.get("a").expect("held");
        assert_eq!(history.steps.len(), HISTORY);
        assert_eq!(history.dropped, 5);
        assert!(matches!(history.steps[0], Step::Status { at: 5, .. }));
    }

    #[test]
    fn a_fresh_feed_keeps_history_and_drops_what_is_gone() {
        let mut table = Table::default();
        table.reset(vec![
            row("a", TaskStatus::Working, "one", 1),
            row("b", TaskStatus::Working, "one", 1),
        ]);
        table.reset(vec![row("a", TaskStatus::Completed, "done", 9)]);
        assert!(table.get("b").is_none());
        assert_eq!(
            statuses(&table, "a"),
            [(1, TaskStatus::Working), (9, TaskStatus::Completed)]
        );
        let gone = TaskChange::Gone {
            task: "a".into(),
            reason: StopReason::Expired,
        };
        table.apply(&gone, Millis(10));
        assert!(table.rows().is_empty());
    }
}
