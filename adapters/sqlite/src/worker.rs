//! The thread that owns the connection: it loads the tasks and writes each batch as one
//! transaction, in which a change SQLite refuses for what it is is refused alone.

use std::collections::HashMap;
use std::sync::mpsc;

use rusqlite::{params, Connection, ErrorCode, Transaction};
use taskwire_driver::engine::{Change, JournalEntry, TaskSnapshot};
use taskwire_driver::{Refused, StoreError, StoreJob};

/// Serves jobs until every handle of the store is dropped.
/// After each commit it pokes the checkpoint thread through `committed` (without waiting).
pub(crate) fn run(
    mut connection: Connection,
    jobs: mpsc::Receiver<StoreJob>,
    committed: &mpsc::SyncSender<()>,
    name: &str,
) {
    for job in jobs {
        match job {
            StoreJob::Load(reply) => {
                let loaded = load(&connection).map_err(|e| StoreError::new(format!("{name}: {e}")));
                let _ = reply.send(loaded);
            }
            StoreJob::Write(entries, reply) => {
                let written = write(&mut connection, &entries)
                    .map_err(|e| StoreError::new(format!("{name}: {e}")));
                let _ = reply.send(written);
                let _ = committed.try_send(());
            }
        }
    }
}

fn load(connection: &Connection) -> Result<Vec<TaskSnapshot>, String> {
    let mut select = connection
        .prepare("SELECT id, snapshot FROM tasks")
        .map_err(|e| e.to_string())?;
    let rows = select
        .query_map([], |row| {
            Ok((row.get::<_, String>(0)?, row.get::<_, String>(1)?))
        })
        .map_err(|e| e.to_string())?;
    let mut tasks = Vec::new();
    for row in rows {
        let (id, snapshot) = row.map_err(|e| e.to_string())?;
        let task: TaskSnapshot = serde_json::from_str(&snapshot)
            .map_err(|e| format!("task {id} is stored unreadably ({e}); nothing was loaded"))?;
        tasks.push(task);
    }
    Ok(tasks)
}

/// Why a change was not applied.
enum Failure {
    /// For what it is (a constraint, the trigger keeping a finished task, JSON SQLite cannot
    /// read): applying it again fails again.
    Refused(String),
    /// For the file or the machine (busy, locked, IO, a full disk, memory): it may pass.
    Passing(String),
}

/// The batch in one transaction. A change SQLite refuses for what it is is refused alone
/// (SQLite backs out just the statement that failed; the transaction goes on), together with
/// the changes of its task that it superseded; any other failure fails the whole write.
fn write(connection: &mut Connection, entries: &[JournalEntry]) -> Result<Vec<Refused>, String> {
    let transaction = connection.transaction().map_err(|e| e.to_string())?;
    let last = last_whole_change(entries);
    let mut refused = Vec::new();
    // Entries not written because a later one of their task supersedes them.
    let mut superseded: HashMap<&str, Vec<u64>> = HashMap::new();
    for (at, entry) in entries.iter().enumerate() {
        let task = task_of(&entry.change);
        if let Some(task) = task.filter(|task| last.get(task).is_some_and(|&whole| whole > at)) {
            superseded.entry(task).or_default().push(entry.seq);
            continue;
        }
        let skipped = task.and_then(|task| superseded.remove(task));
        match apply(&transaction, &entry.change) {
            Ok(()) => {}
            // Past a failure that ended the transaction, nothing of the batch is written.
            Err(Failure::Refused(reason)) if !transaction.is_autocommit() => {
                refused.extend(skipped.into_iter().flatten().map(|seq| Refused {
                    seq,
                    reason: reason.clone(),
                }));
                refused.push(Refused {
                    seq: entry.seq,
                    reason,
                });
            }
            Err(Failure::Refused(why) | Failure::Passing(why)) => return Err(why),
        }
    }
    transaction.commit().map_err(|e| e.to_string())?;
    Ok(refused)
}

/// Where each task's last `Put` or `Delete` of the batch is: an entry about the task before
/// it is superseded (a `Put` replaces everything, a `Delete` removes it), and not written.
fn last_whole_change(entries: &[JournalEntry]) -> HashMap<&str, usize> {
    let mut last = HashMap::new();
    for (at, entry) in entries.iter().enumerate() {
        match &entry.change {
            Change::Put(task) => last.insert(task.info.id.as_str(), at),
            Change::Delete { task, .. } => last.insert(task.as_str(), at),
            _ => None,
        };
    }
    last
}

/// The task a change is about.
fn task_of(change: &Change) -> Option<&str> {
    match change {
        Change::Put(task) => Some(task.info.id.as_str()),
        Change::Message { task, .. } | Change::Delete { task, .. } => Some(task.as_str()),
        _ => None,
    }
}

/// One change, through statements prepared once per connection (parsing the SQL again for
/// every entry would cost more than running it).
fn apply(transaction: &Transaction<'_>, change: &Change) -> Result<(), Failure> {
    let passing = |e: rusqlite::Error| Failure::Passing(e.to_string());
    let (task, done) = match change {
        Change::Put(task) => {
            let snapshot = serde_json::to_string(task).map_err(|e| {
                Failure::Refused(format!(
                    "task {}: cannot serialize: {e}",
                    task.info.id.as_str()
                ))
            })?;
            let mut put = transaction
                .prepare_cached(
                    "INSERT INTO tasks (id, owner, status, snapshot) VALUES (?1, ?2, ?3, ?4)
                     ON CONFLICT (id) DO UPDATE
                     SET owner = excluded.owner, status = excluded.status,
                         snapshot = excluded.snapshot",
                )
                .map_err(passing)?;
            let done = put.execute(params![
                task.info.id.as_str(),
                task.owner.as_str(),
                task.info.status.to_string(),
                snapshot
            ]);
            (&task.info.id, done)
        }
        Change::Message { task, message, at } => {
            let mut set = transaction
                .prepare_cached(
                    "UPDATE tasks SET snapshot = json_set(snapshot,
                         '$.info.status_message', ?2, '$.info.last_updated_at', ?3)
                     WHERE id = ?1",
                )
                .map_err(passing)?;
            (task, set.execute(params![task.as_str(), message, at.0]))
        }
        Change::Delete { task, .. } => {
            let mut delete = transaction
                .prepare_cached("DELETE FROM tasks WHERE id = ?1")
                .map_err(passing)?;
            (task, delete.execute(params![task.as_str()]))
        }
        other => {
            return Err(Failure::Refused(format!(
                "a journal entry this store does not know: {other:?}"
            )))
        }
    };
    done.map(drop).map_err(|e| {
        let why = format!("task {}: {e}", task.as_str());
        if for_what_it_is(&e) {
            Failure::Refused(why)
        } else {
            Failure::Passing(why)
        }
    })
}

/// Whether SQLite refused a statement for what it holds rather than for the state of the
/// file or the machine.
fn for_what_it_is(error: &rusqlite::Error) -> bool {
    match error.sqlite_error_code() {
        // A constraint or a trigger's RAISE; a value of the wrong type or too big; a plain
        // SQL error (JSON that `json_set` cannot read).
        Some(code) => matches!(
            code,
            ErrorCode::ConstraintViolation
                | ErrorCode::TypeMismatch
                | ErrorCode::TooBig
                | ErrorCode::Unknown
        ),
        // Not SQLite's: a value rusqlite cannot bind.
        None => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema;
    use crate::Synchronous;

    fn entry(seq: u64, change: serde_json::Value) -> JournalEntry {
        serde_json::from_value(serde_json::json!({ "seq": seq, "change": change })).unwrap()
    }

    fn put(seq: u64, id: &str, status: &str) -> JournalEntry {
        let outcome = (status == "completed")
            .then(|| serde_json::json!({"result": {"value": {"content": []}, "is_error": false}}));
        entry(
            seq,
            serde_json::json!({"put": {
                "info": {"id": id, "status": status, "status_message": null, "created_at": 1,
                         "last_updated_at": seq, "ttl_ms": null, "poll_interval_ms": null},
                "owner": "o", "era": "2025-11-25",
                "input_kinds": {"elicitation": false, "sampling": false, "roots": false},
                "outcome": outcome}}),
        )
    }

    #[test]
    fn a_change_refused_in_the_middle_of_a_batch_is_refused_alone() {
        let path =
            std::env::temp_dir().join(format!("taskwire-sqlite-{}-refused.db", std::process::id()));
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
        }
        let mut db = schema::open(&path, Synchronous::Normal).unwrap();
        write(&mut db, &[put(1, "done", "completed")]).unwrap();
        // `done` goes back to working (the trigger refuses it), once alone and once
        // superseded within the batch, among 1,000 new tasks.
        let mut batch = vec![put(2, "first", "working"), put(3, "done", "working")];
        batch.extend((4..504).map(|seq| put(seq, &format!("t{seq}"), "working")));
        batch.push(put(504, "done", "working"));
        batch.push(put(505, "done", "working"));
        batch.extend((506..1006).map(|seq| put(seq, &format!("t{seq}"), "working")));
        let refused = write(&mut db, &batch).expect("the batch is written");
        let seqs: Vec<u64> = refused.iter().map(|r| r.seq).collect();
        assert_eq!(seqs, [3, 504, 505]);
        assert!(
            refused[0].reason.contains("task done")
                && refused[0]
                    .reason
                    .contains("terminal status does not change"),
            "{refused:?}"
        );
        let loaded = load(&db).unwrap();
        assert_eq!(loaded.len(), 1 + 1 + 1000, "every other change is stored");
        let done = loaded
            .iter()
            .find(|t| t.info.id.as_str() == "done")
            .unwrap();
        assert_eq!(done.info.status.to_string(), "completed");
        // A failure of the file fails the whole write: nothing of it is stored.
        db.execute_batch("PRAGMA query_only = 1").unwrap();
        assert!(write(&mut db, &[put(1006, "late", "working")]).is_err());
    }

    #[test]
    fn superseded_changes_of_a_batch_are_skipped_and_the_last_one_stands() {
        let path = std::env::temp_dir().join(format!(
            "taskwire-sqlite-{}-superseded.db",
            std::process::id()
        ));
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
        }
        let mut db = schema::open(&path, Synchronous::Normal).unwrap();
        let batch = [
            put(1, "kept", "working"),
            entry(
                2,
                serde_json::json!({"message": {"task": "kept", "message": "half", "at": 2}}),
            ),
            put(3, "gone", "working"),
            put(4, "kept", "completed"),
            entry(
                5,
                serde_json::json!({"delete": {"task": "gone", "reason": "removed"}}),
            ),
        ];
        let last = last_whole_change(&batch);
        assert_eq!((last["kept"], last["gone"]), (3, 4));
        write(&mut db, &batch).unwrap();
        let loaded = load(&db).unwrap();
        assert_eq!(loaded.len(), 1, "the deleted task is not there");
        assert_eq!(loaded[0].info.id.as_str(), "kept");
        assert_eq!(loaded[0].info.status.to_string(), "completed");
    }
}
