//! A batch of journal entries reduced to its net effect, the same for every store: one
//! change per task, so that a store writes the whole batch at once (PostgreSQL: one
//! statement; SQLite: one transaction) whatever its size, in any order.

use std::collections::HashMap;

use taskwire_engine::{Change, JournalEntry, Millis, TaskSnapshot};

use super::Refused;

/// What a batch leaves of one task.
#[derive(Clone, Copy, Debug)]
pub enum NetChange<'a> {
    /// The whole task, with its latest status message and update time (a `Message` after
    /// the `Put` in the same batch overrides the snapshot's).
    Put {
        /// The task.
        snapshot: &'a TaskSnapshot,
        /// Its status message: store this, not the snapshot's.
        message: Option<&'a str>,
        /// Its `last_updated_at`: store this, not the snapshot's.
        at: Millis,
    },
    /// Only its status message and update time changed.
    Message {
        /// The new message; `None` clears it.
        message: Option<&'a str>,
        /// The task's `last_updated_at`.
        at: Millis,
    },
    /// It is gone.
    Delete,
}

/// A batch's net changes by kind, each task in one of them once, in the order the batch
/// first named it: a store applies them and answers [`TaskStore::write`](super::TaskStore)
/// for the entries behind each.
#[derive(Debug, Default)]
pub struct NetBatch<'a> {
    /// Tasks to insert or replace.
    pub puts: Vec<(&'a str, NetChange<'a>)>,
    /// Tasks whose status message alone changed.
    pub messages: Vec<(&'a str, NetChange<'a>)>,
    /// Tasks to delete.
    pub deletes: Vec<&'a str>,
    /// Answers to input requests to relay to the process running each task
    /// ([`Change::Answers`]), in journal order with their entry's `seq`: a shared store
    /// keeps them until that process takes them.
    pub answers: Vec<Answers<'a>>,
}

/// Answers to relay ([`NetBatch::answers`]).
#[derive(Clone, Copy, Debug)]
pub struct Answers<'a> {
    /// The journal entry.
    pub seq: u64,
    /// The task.
    pub task: &'a str,
    /// The answers, by `inputRequests` key.
    pub responses: &'a serde_json::Map<String, serde_json::Value>,
}

impl<'a> NetBatch<'a> {
    /// Whether the batch changes nothing (its entries were all refused, or none came).
    pub fn is_empty(&self) -> bool {
        self.puts.is_empty()
            && self.messages.is_empty()
            && self.deletes.is_empty()
            && self.answers.is_empty()
    }

    /// The net change of every task `entries` touch, and the entries refused for being
    /// changes this driver does not know (a newer engine's).
    pub fn of(entries: &'a [JournalEntry]) -> (Self, Vec<Refused>) {
        let mut unknown = Vec::new();
        let mut answers = Vec::new();
        let mut net: HashMap<&str, NetChange<'_>> = HashMap::new();
        let mut order: Vec<&str> = Vec::new();
        for entry in entries {
            let change = match &entry.change {
                Change::Put(snapshot) => NetChange::Put {
                    snapshot,
                    message: snapshot.info.status_message.as_deref(),
                    at: snapshot.info.last_updated_at,
                },
                Change::Message { task, message, at } => match net.get(task.as_str()) {
                    Some(NetChange::Put { snapshot, .. }) => NetChange::Put {
                        snapshot,
                        message: message.as_deref(),
                        at: *at,
                    },
                    _ => NetChange::Message {
                        message: message.as_deref(),
                        at: *at,
                    },
                },
                Change::Delete { .. } => NetChange::Delete,
                Change::Answers { task, responses } => {
                    answers.push(Answers {
                        seq: entry.seq,
                        task: task.as_str(),
                        responses,
                    });
                    continue;
                }
                other => {
                    unknown.push(Refused {
                        seq: entry.seq,
                        reason: format!("a journal entry this store does not know: {other:?}"),
                        stored: None,
                    });
                    continue;
                }
            };
            let task = entry.change.task().as_str();
            if net.insert(task, change).is_none() {
                order.push(task);
            }
        }
        let mut batch = NetBatch {
            answers,
            ..NetBatch::default()
        };
        for task in order {
            match net.remove(task) {
                Some(NetChange::Delete) => batch.deletes.push(task),
                Some(put @ NetChange::Put { .. }) => batch.puts.push((task, put)),
                Some(message @ NetChange::Message { .. }) => batch.messages.push((task, message)),
                None => {}
            }
        }
        (batch, unknown)
    }

    /// Each task's change as a batch of its own (to write them one by one after a change was
    /// refused, and learn which).
    pub fn one_by_one(&self) -> impl Iterator<Item = (&'a str, NetBatch<'a>)> + '_ {
        let puts = self.puts.iter().map(|&(id, put)| {
            let puts = vec![(id, put)];
            (
                id,
                NetBatch {
                    puts,
                    ..NetBatch::default()
                },
            )
        });
        let messages = self.messages.iter().map(|&(id, message)| {
            let messages = vec![(id, message)];
            (
                id,
                NetBatch {
                    messages,
                    ..NetBatch::default()
                },
            )
        });
        let deletes = self.deletes.iter().map(|&id| {
            let deletes = vec![id];
            (
                id,
                NetBatch {
                    deletes,
                    ..NetBatch::default()
                },
            )
        });
        let answers = self.answers.iter().map(|&answers| {
            (
                answers.task,
                NetBatch {
                    answers: vec![answers],
                    ..NetBatch::default()
                },
            )
        });
        puts.chain(messages).chain(deletes).chain(answers)
    }
}

/// Every entry of a task the store refused, with its task's reason (`refused`: task → why).
pub fn refused_entries(entries: &[JournalEntry], refused: &HashMap<&str, String>) -> Vec<Refused> {
    entries
        .iter()
        .filter_map(|entry| {
            let reason = refused.get(entry.change.task().as_str())?;
            Some(Refused {
                seq: entry.seq,
                reason: reason.clone(),
                stored: None,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn entry(seq: u64, change: serde_json::Value) -> JournalEntry {
        serde_json::from_value(json!({ "seq": seq, "change": change })).unwrap()
    }

    fn put(seq: u64, id: &str, message: Option<&str>) -> JournalEntry {
        entry(
            seq,
            json!({"put": {
                "info": {"id": id, "status": "working", "status_message": message,
                         "created_at": 1, "last_updated_at": seq, "ttl_ms": null,
                         "poll_interval_ms": null},
                "owner": "o", "era": "2025-11-25",
                "input_kinds": {"elicitation": false, "sampling": false, "roots": false},
                "outcome": null}}),
        )
    }

    fn message(seq: u64, id: &str, text: &str) -> JournalEntry {
        entry(
            seq,
            json!({"message": {"task": id, "message": text, "at": seq}}),
        )
    }

    #[test]
    fn one_change_per_task_and_a_later_message_rides_on_the_put() {
        let batch = [
            message(1, "a", "only a message"),
            put(2, "b", Some("start")),
            message(3, "b", "half"),
            put(4, "c", None),
            entry(5, json!({"delete": {"task": "c", "reason": "removed"}})),
            message(6, "a", "newer"),
        ];
        let (s, unknown) = NetBatch::of(&batch);
        assert!(unknown.is_empty());
        assert_eq!(s.deletes, ["c"]);
        assert!(
            matches!(
                &s.messages[..],
                [(
                    "a",
                    NetChange::Message {
                        message: Some("newer"),
                        at: Millis(6)
                    }
                )]
            ),
            "{:?}",
            s.messages
        );
        let [(
            task,
            NetChange::Put {
                snapshot,
                message,
                at,
            },
        )] = &s.puts[..]
        else {
            panic!("one put: {:?}", s.puts);
        };
        assert_eq!(
            (*task, snapshot.info.id.as_str(), *message, *at),
            ("b", "b", Some("half"), Millis(3))
        );
    }
}
