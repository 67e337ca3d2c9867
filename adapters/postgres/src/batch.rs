//! A batch of journal entries reduced to its net effect: one change per task, so that the
//! whole batch is three statements (upserts, message updates, deletes) whatever its size,
//! and their order no longer matters.

use std::collections::HashMap;

use taskwire_driver::engine::{Change, JournalEntry, Millis, TaskSnapshot};
use taskwire_driver::Refused;

/// What a batch leaves of one task.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Net<'a> {
    /// The whole task, with its latest status message and update time (a `Message` after the
    /// `Put` in the same batch overrides the snapshot's).
    Put {
        snapshot: &'a TaskSnapshot,
        message: Option<&'a str>,
        at: Millis,
    },
    /// Only its status message and update time changed.
    Message {
        message: Option<&'a str>,
        at: Millis,
    },
    /// It is gone.
    Delete,
}

/// The three kinds of change, each as the columns of one statement.
#[derive(Debug, Default)]
pub(crate) struct Statements<'a> {
    pub puts: Vec<(&'a str, Net<'a>)>,
    pub messages: Vec<(&'a str, Net<'a>)>,
    pub deletes: Vec<&'a str>,
}

impl<'a> Statements<'a> {
    /// Each task's change on its own.
    pub fn one_by_one(&self) -> impl Iterator<Item = (&'a str, Statements<'a>)> + '_ {
        let puts = self.puts.iter().map(|&(id, put)| {
            let puts = vec![(id, put)];
            (
                id,
                Statements {
                    puts,
                    ..Statements::default()
                },
            )
        });
        let messages = self.messages.iter().map(|&(id, message)| {
            let messages = vec![(id, message)];
            (
                id,
                Statements {
                    messages,
                    ..Statements::default()
                },
            )
        });
        let deletes = self.deletes.iter().map(|&id| {
            (
                id,
                Statements {
                    deletes: vec![id],
                    ..Statements::default()
                },
            )
        });
        puts.chain(messages).chain(deletes)
    }
}

/// The task a change is about.
pub(crate) fn task_of(change: &Change) -> Option<&str> {
    match change {
        Change::Put(snapshot) => Some(snapshot.info.id.as_str()),
        Change::Message { task, .. } | Change::Delete { task, .. } => Some(task.as_str()),
        _ => None,
    }
}

/// The net change of every task `entries` touch, and the entries refused for being changes
/// this store does not know (a newer engine's).
pub(crate) fn reduce(entries: &[JournalEntry]) -> (Statements<'_>, Vec<Refused>) {
    let mut unknown = Vec::new();
    let mut net: HashMap<&str, Net<'_>> = HashMap::new();
    let mut order: Vec<&str> = Vec::new();
    for entry in entries {
        let (task, change) = match &entry.change {
            Change::Put(snapshot) => (
                snapshot.info.id.as_str(),
                Net::Put {
                    snapshot,
                    message: snapshot.info.status_message.as_deref(),
                    at: snapshot.info.last_updated_at,
                },
            ),
            Change::Message { task, message, at } => {
                let change = match net.get(task.as_str()) {
                    Some(Net::Put { snapshot, .. }) => Net::Put {
                        snapshot,
                        message: message.as_deref(),
                        at: *at,
                    },
                    _ => Net::Message {
                        message: message.as_deref(),
                        at: *at,
                    },
                };
                (task.as_str(), change)
            }
            Change::Delete { task, .. } => (task.as_str(), Net::Delete),
            other => {
                unknown.push(Refused {
                    seq: entry.seq,
                    reason: format!("a journal entry this store does not know: {other:?}"),
                });
                continue;
            }
        };
        if net.insert(task, change).is_none() {
            order.push(task);
        }
    }
    let mut statements = Statements::default();
    for task in order {
        match net.remove(task) {
            Some(Net::Delete) => statements.deletes.push(task),
            Some(put @ Net::Put { .. }) => statements.puts.push((task, put)),
            Some(message @ Net::Message { .. }) => statements.messages.push((task, message)),
            None => {}
        }
    }
    (statements, unknown)
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
        let (s, unknown) = reduce(&batch);
        assert!(unknown.is_empty());
        assert_eq!(s.deletes, ["c"]);
        assert!(
            matches!(
                &s.messages[..],
                [(
                    "a",
                    Net::Message {
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
            Net::Put {
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
