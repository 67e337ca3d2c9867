//! The thread that owns the connection: it loads the tasks and writes each batch as one
//! transaction.

use std::collections::HashMap;
use std::sync::mpsc;

use rusqlite::{params, Connection, Transaction};
use taskwire_driver::engine::{Change, JournalEntry, TaskSnapshot};
use taskwire_driver::{StoreError, StoreJob};

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

fn write(connection: &mut Connection, entries: &[JournalEntry]) -> Result<(), String> {
    let transaction = connection.transaction().map_err(|e| e.to_string())?;
    let last = last_whole_change(entries);
    for (at, entry) in entries.iter().enumerate() {
        let superseded = task_of(&entry.change)
            .and_then(|task| last.get(task))
            .is_some_and(|&whole| whole > at);
        if !superseded {
            apply(&transaction, &entry.change)?;
        }
    }
    transaction.commit().map_err(|e| e.to_string())
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
fn apply(transaction: &Transaction<'_>, change: &Change) -> Result<(), String> {
    let (task, done) = match change {
        Change::Put(task) => {
            let snapshot = serde_json::to_string(task).map_err(|e| e.to_string())?;
            let mut put = transaction
                .prepare_cached(
                    "INSERT INTO tasks (id, owner, status, snapshot) VALUES (?1, ?2, ?3, ?4)
                     ON CONFLICT (id) DO UPDATE
                     SET owner = excluded.owner, status = excluded.status,
                         snapshot = excluded.snapshot",
                )
                .map_err(|e| e.to_string())?;
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
                .map_err(|e| e.to_string())?;
            (task, set.execute(params![task.as_str(), message, at.0]))
        }
        Change::Delete { task, .. } => {
            let mut delete = transaction
                .prepare_cached("DELETE FROM tasks WHERE id = ?1")
                .map_err(|e| e.to_string())?;
            (task, delete.execute(params![task.as_str()]))
        }
        other => {
            return Err(format!(
                "a journal entry this store does not know: {other:?}"
            ))
        }
    };
    done.map(drop)
        .map_err(|e| format!("task {}: {e}", task.as_str()))
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
