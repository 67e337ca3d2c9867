//! The journal of task changes for a durable store, and the messages that wait for it.

use std::collections::HashMap;

use crate::config::Durability;
use crate::ids::TaskId;

/// Journal positions and which tasks have changes the store has not confirmed.
#[derive(Debug)]
pub(crate) struct Journal {
    pub mode: Durability,
    next_seq: u64,
    confirmed: u64,
    /// The newest unconfirmed entry about each task (only with `Confirmed`).
    unconfirmed: HashMap<TaskId, u64>,
}

impl Journal {
    pub fn new(mode: Durability) -> Self {
        Journal {
            mode,
            next_seq: 1,
            confirmed: 0,
            unconfirmed: HashMap::new(),
        }
    }

    /// Whether changes are reported at all.
    pub fn enabled(&self) -> bool {
        self.mode != Durability::Volatile
    }

    /// The position for a new entry about `task`.
    pub fn next(&mut self, task: &TaskId) -> u64 {
        let seq = self.next_seq;
        self.next_seq += 1;
        if self.mode == Durability::Confirmed {
            self.unconfirmed.insert(task.clone(), seq);
        }
        seq
    }

    /// The entry a message about `task` must wait for, if any.
    pub fn wait_for(&self, task: Option<&TaskId>) -> Option<u64> {
        task.and_then(|t| self.unconfirmed.get(t).copied())
    }

    /// Everything up to `seq` is stored.
    pub fn confirm(&mut self, seq: u64) {
        self.confirmed = self.confirmed.max(seq.min(self.next_seq - 1));
        let confirmed = self.confirmed;
        self.unconfirmed.retain(|_, s| *s > confirmed);
    }

    pub fn confirmed(&self) -> u64 {
        self.confirmed
    }
}
