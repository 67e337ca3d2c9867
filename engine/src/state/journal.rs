//! The journal of task changes for a durable store, and the messages that wait for it.

use std::collections::{HashMap, HashSet};

use super::output::Refusals;
use super::tasks::{Record, StoredOutcome};
use super::{Kept, State};
use crate::config::Durability;
use crate::event::{Change, Event, JournalEntry, Output, StopReason};
use crate::ids::{CallId, TaskId};
use crate::jsonrpc::RpcError;
use crate::model::{Outcome, TaskRequest, TaskSnapshot};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// Journal positions and which tasks have changes the store has not confirmed.
#[derive(Debug)]
pub(super) struct Journal {
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
        if self.unconfirmed.is_empty() {
            return None;
        }
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

impl<K: Kept> State<K> {
    /// Whether changes are reported to a store.
    pub fn journal_enabled(&self) -> bool {
        self.journal.enabled()
    }

    /// The `tools/call` a new task runs, kept in its record when journaling (a restart
    /// hands it to [`Event::Restored`](crate::Event::Restored)); `None` otherwise.
    pub fn task_request(
        &self,
        tool: &str,
        arguments: Option<&RawValue>,
        meta: Option<&RawValue>,
    ) -> Option<Box<TaskRequest>> {
        self.journal.enabled().then(|| {
            Box::new(TaskRequest {
                tool: tool.to_owned(),
                arguments: arguments.map(ToOwned::to_owned),
                attempt: 1,
                meta: meta.map(ToOwned::to_owned),
            })
        })
    }

    /// The work of unfinished task `task` runs again under `call` (after a restart, or
    /// taken over from a host that stopped; `stored`: its request as stored now): one more
    /// attempt, journaled, and [`Event::Restored`](crate::Event::Restored), or
    /// [`Event::Claimed`](crate::Event::Claimed) for the first run of work handed off here.
    pub fn run_again(&mut self, task: TaskId, call: CallId, stored: Option<TaskRequest>) {
        let request = self.tasks.start_again(&task, stored);
        if request.is_some() {
            self.journal_put(&task);
        }
        let event = match request {
            Some(request) if request.attempt == 1 => Event::Claimed {
                call,
                task,
                request,
            },
            request => Event::Restored {
                call,
                task,
                request,
            },
        };
        self.event(event);
    }

    /// Reports changes as `mode` says from now on.
    pub fn set_journal_mode(&mut self, mode: Durability) {
        self.journal.mode = mode;
    }

    /// The newest entry about any of `tasks` that the store has not confirmed.
    pub fn newest_unstored<'a>(&self, tasks: impl IntoIterator<Item = &'a TaskId>) -> Option<u64> {
        tasks
            .into_iter()
            .filter_map(|t| self.journal.wait_for(Some(t)))
            .max()
    }

    /// Reports answers to input requests of a task whose work runs on another host, for the
    /// store to relay (when journaling).
    pub fn journal_answers(&mut self, task: &TaskId, responses: Map<String, Value>) {
        if !self.journal.enabled() {
            return;
        }
        let seq = self.journal.next(task);
        self.push_output(Output::Journal(JournalEntry {
            seq,
            change: Change::Answers {
                task: task.clone(),
                responses,
            },
        }));
    }

    /// Reports a task's current state to the store (when journaling).
    pub fn journal_put(&mut self, task: &TaskId) {
        if !self.journal.enabled() {
            return;
        }
        let Some(record) = self.tasks.get(task) else {
            return;
        };
        let snapshot = self.snapshot(record);
        let seq = self.journal.next(task);
        self.push_output(Output::Journal(JournalEntry {
            seq,
            change: Change::Put(snapshot),
        }));
    }

    /// Reports a running task's new status message to the store (when journaling), as a
    /// small change.
    pub fn journal_message(&mut self, task: &TaskId) {
        if !self.journal.enabled() {
            return;
        }
        let Some(record) = self.tasks.get(task) else {
            return;
        };
        let change = Change::Message {
            task: task.clone(),
            message: record.message().map(str::to_owned),
            at: record.last_updated_at,
        };
        let seq = self.journal.next(task);
        self.push_output(Output::Journal(JournalEntry { seq, change }));
    }

    /// Reports a task's deletion to the store (when journaling).
    pub fn journal_delete(&mut self, task: &TaskId, reason: StopReason) {
        if !self.journal.enabled() {
            return;
        }
        let seq = self.journal.next(task);
        self.push_output(Output::Journal(JournalEntry {
            seq,
            change: Change::Delete {
                task: task.clone(),
                reason,
            },
        }));
    }

    /// The store holds every journal entry up to `seq`: messages waiting for them go out.
    pub fn confirm(&mut self, seq: u64) {
        self.journal.confirm(seq);
        self.release_held(self.journal.confirmed());
    }

    /// The store could not write the entries up to `seq`: the messages waiting for them go
    /// out, each reply revealing one as `error` (see [`State::release_held_failing`]). The
    /// store may still write them later; nothing waits for that any more.
    pub fn fail_journal(&mut self, seq: u64, error: &RpcError) {
        self.journal.confirm(seq);
        let superseded = HashSet::new();
        self.release_held_failing(
            self.journal.confirmed(),
            Refusals {
                failed: |_| Some(error),
                superseded: &superseded,
            },
        );
    }

    /// The store wrote the entries up to `seq` except `refused` (in journal order, each with
    /// the error of the replies revealing it), which it will never hold: the messages waiting
    /// go out, each reply revealing a refused entry as its error. The tasks of `stored`, as
    /// the store keeps them (it refused their changes for holding another version), become
    /// that version first (see [`State::release`]), and the replies about them are given
    /// again from it.
    pub fn refuse_journal(
        &mut self,
        seq: u64,
        refused: &[(u64, RpcError)],
        stored: Vec<TaskSnapshot>,
    ) {
        self.journal.confirm(seq);
        let superseded: HashSet<TaskId> = stored.iter().map(|t| t.info.id.clone()).collect();
        for snapshot in stored {
            self.release(snapshot);
        }
        self.release_held_failing(
            self.journal.confirmed(),
            Refusals {
                failed: |entry| {
                    let at = refused.binary_search_by_key(&entry, |(seq, _)| *seq).ok()?;
                    Some(&refused[at].1)
                },
                superseded: &superseded,
            },
        );
    }

    /// Everything stored about a hosted task.
    pub fn snapshot(&self, record: &Record) -> TaskSnapshot {
        let outcome = record.outcome().map(|o| match o {
            StoredOutcome::Result { raw, is_error } => Outcome::Result {
                value: raw.to_owned(),
                is_error,
            },
            StoredOutcome::Error(raw) => {
                Outcome::Error(serde_json::from_str(raw.get()).unwrap_or_else(|e| {
                    RpcError::internal(format!("unreadable stored error: {e}"))
                }))
            }
        });
        let call = self.work.get(&record.id).copied();
        TaskSnapshot {
            info: record.info(),
            owner: self.tasks.owner_name(record.owner).clone(),
            era: record.era,
            input_kinds: record.input_kinds(),
            outcome,
            request: record.request.as_deref().cloned(),
            inputs: call
                .map(|call| self.protocol(record.era).stored_inputs(self, call))
                .unwrap_or_default(),
            progress: call.and_then(|call| self.protocol(record.era).stored_progress(self, call)),
        }
    }
}
