//! The thread that owns the connection: it loads the tasks and writes each batch as one
//! transaction, in which a change SQLite refuses for what it is is refused alone.

use std::collections::HashMap;
use std::sync::mpsc;

use rusqlite::{params, Connection, ErrorCode, Transaction};
use taskwire_driver::engine::{JournalEntry, Millis, TaskSnapshot};
use taskwire_driver::{refused_entries, NetBatch, NetChange, Refused, StoreError, StoreJob};

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
            // Not shared: every task is loaded.
            StoreJob::Load(reply) | StoreJob::LoadRunning(reply) => {
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
        .prepare("SELECT id, message, updated_at, snapshot FROM tasks")
        .map_err(|e| e.to_string())?;
    let rows = select
        .query_map([], |row| {
            Ok((
                row.get::<_, String>(0)?,
                row.get::<_, Option<String>>(1)?,
                row.get::<_, i64>(2)?,
                row.get::<_, String>(3)?,
            ))
        })
        .map_err(|e| e.to_string())?;
    let mut tasks = Vec::new();
    for row in rows {
        let (id, message, updated_at, snapshot) = row.map_err(|e| e.to_string())?;
        let mut task: TaskSnapshot = serde_json::from_str(&snapshot)
            .map_err(|e| format!("task {id} is stored unreadably ({e}); nothing was loaded"))?;
        task.info.status_message = message;
        task.info.last_updated_at = Millis(u64::try_from(updated_at).unwrap_or(0));
        tasks.push(task);
    }
    Ok(tasks)
}

/// Why a change was not applied.
enum Failure {
    /// For what it is (a constraint, the trigger keeping a finished task): applying it again
    /// fails again.
    Refused(String),
    /// For the file or the machine (busy, locked, IO, a full disk, memory): it may pass.
    Passing(String),
}

/// The batch's net changes ([`NetBatch`]) in one transaction. A task's change SQLite refuses
/// for what it is is refused alone, with every entry of the batch behind it (SQLite backs out
/// just the statement that failed; the transaction goes on); any other failure fails the
/// whole write.
fn write(connection: &mut Connection, entries: &[JournalEntry]) -> Result<Vec<Refused>, String> {
    let (net, mut refused) = NetBatch::of(entries);
    // Only a store processes share relays answers between them (a task's work never runs
    // on another process of this file's).
    refused.extend(net.answers.iter().map(|a| Refused {
        seq: a.seq,
        reason: "this store is not shared: it has no other process to relay answers to".into(),
        stored: None,
    }));
    let transaction = connection.transaction().map_err(|e| e.to_string())?;
    let mut refused_tasks = HashMap::new();
    let changes = net.puts.iter().chain(&net.messages).copied();
    let deletes = net.deletes.iter().map(|&task| (task, NetChange::Delete));
    for (task, change) in changes.chain(deletes) {
        match apply(&transaction, task, change) {
            Ok(()) => {}
            // Past a failure that ended the transaction, nothing of the batch is written.
            Err(Failure::Refused(reason)) if !transaction.is_autocommit() => {
                refused_tasks.insert(task, reason);
            }
            Err(Failure::Refused(why) | Failure::Passing(why)) => return Err(why),
        }
    }
    transaction.commit().map_err(|e| e.to_string())?;
    refused.extend(refused_entries(entries, &refused_tasks));
    Ok(refused)
}

/// One task's change, through statements prepared once per connection (parsing the SQL
/// again for every task would cost more than running it).
fn apply(transaction: &Transaction<'_>, task: &str, change: NetChange<'_>) -> Result<(), Failure> {
    let passing = |e: rusqlite::Error| Failure::Passing(e.to_string());
    let done = match change {
        NetChange::Put {
            snapshot,
            message,
            at,
        } => {
            let json = serde_json::to_string(snapshot)
                .map_err(|e| Failure::Refused(format!("task {task}: cannot serialize: {e}")))?;
            let mut put = transaction
                .prepare_cached(
                    "INSERT INTO tasks (id, owner, status, snapshot, message, updated_at)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                     ON CONFLICT (id) DO UPDATE
                     SET owner = excluded.owner, status = excluded.status,
                         snapshot = excluded.snapshot, message = excluded.message,
                         updated_at = excluded.updated_at",
                )
                .map_err(passing)?;
            put.execute(params![
                task,
                snapshot.owner.as_str(),
                snapshot.info.status.to_string(),
                json,
                message,
                millis(at)
            ])
        }
        NetChange::Message { message, at } => {
            let mut set = transaction
                .prepare_cached("UPDATE tasks SET message = ?2, updated_at = ?3 WHERE id = ?1")
                .map_err(passing)?;
            set.execute(params![task, message, millis(at)])
        }
        NetChange::Delete => {
            let mut delete = transaction
                .prepare_cached("DELETE FROM tasks WHERE id = ?1")
                .map_err(passing)?;
            delete.execute(params![task])
        }
    };
    done.map(drop).map_err(|e| {
        let why = format!("task {task}: {e}");
        if for_what_it_is(&e) {
            Failure::Refused(why)
        } else {
            Failure::Passing(why)
        }
    })
}

fn millis(at: Millis) -> i64 {
    i64::try_from(at.0).unwrap_or(i64::MAX)
}

/// Whether SQLite refused a statement for what it holds rather than for the state of the
/// file or the machine.
fn for_what_it_is(error: &rusqlite::Error) -> bool {
    match error.sqlite_error_code() {
        // A constraint or a trigger's RAISE; a value of the wrong type or too big; a plain
        // SQL error (a snapshot the trigger's `json_extract` cannot read).
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
    fn each_task_is_stored_as_the_batch_leaves_it_with_its_message_in_columns() {
        let path =
            std::env::temp_dir().join(format!("taskwire-sqlite-{}-net.db", std::process::id()));
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
        }
        let mut db = schema::open(&path, Synchronous::Normal).unwrap();
        let message = |seq: u64, task: &str, text: &str| {
            entry(
                seq,
                serde_json::json!({"message": {"task": task, "message": text, "at": seq}}),
            )
        };
        let batch = [
            put(1, "kept", "working"),
            message(2, "kept", "half"),
            put(3, "gone", "working"),
            put(4, "kept", "completed"),
            entry(
                5,
                serde_json::json!({"delete": {"task": "gone", "reason": "removed"}}),
            ),
            put(6, "told", "working"),
            message(7, "told", "riding on its put"),
        ];
        write(&mut db, &batch).unwrap();
        write(&mut db, &[message(8, "kept", "after the end")]).unwrap();
        let mut loaded = load(&db).unwrap();
        loaded.sort_by(|a, b| a.info.id.as_str().cmp(b.info.id.as_str()));
        let shown: Vec<_> = loaded
            .iter()
            .map(|t| {
                let message = t.info.status_message.as_deref();
                (
                    t.info.id.as_str(),
                    t.info.status.to_string(),
                    message,
                    t.info.last_updated_at.0,
                )
            })
            .collect();
        assert_eq!(
            shown,
            [
                ("kept", "completed".to_owned(), Some("after the end"), 8),
                ("told", "working".to_owned(), Some("riding on its put"), 7),
            ],
            "the deleted task is not there"
        );
        // The snapshot itself was written once, as its put left it.
        let snapshot: String = db
            .query_row("SELECT snapshot FROM tasks WHERE id = 'told'", [], |r| {
                r.get(0)
            })
            .unwrap();
        assert!(snapshot.contains("\"status_message\":null"), "{snapshot}");
    }
}
