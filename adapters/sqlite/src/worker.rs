//! The thread that owns the connection: it loads the tasks and writes each batch as one
//! transaction.

use std::sync::mpsc;
use std::sync::Arc;

use futures::channel::oneshot;
use rusqlite::{params, Connection};
use taskwire_driver::engine::{Change, JournalEntry, TaskSnapshot};
use taskwire_driver::StoreError;

/// One request to the connection's thread.
pub(crate) enum Job {
    /// Every stored task.
    Load(oneshot::Sender<Result<Vec<TaskSnapshot>, StoreError>>),
    /// Apply these entries in one transaction.
    Write(Arc<[JournalEntry]>, oneshot::Sender<Result<(), StoreError>>),
}

/// Serves jobs until every handle of the store is dropped.
pub(crate) fn run(mut connection: Connection, jobs: mpsc::Receiver<Job>, name: &str) {
    for job in jobs {
        match job {
            Job::Load(reply) => {
                let loaded = load(&connection).map_err(|e| StoreError::new(format!("{name}: {e}")));
                let _ = reply.send(loaded);
            }
            Job::Write(entries, reply) => {
                let written = write(&mut connection, &entries)
                    .map_err(|e| StoreError::new(format!("{name}: {e}")));
                let _ = reply.send(written);
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
    for entry in entries {
        match &entry.change {
            Change::Put(task) => {
                let snapshot = serde_json::to_string(task).map_err(|e| e.to_string())?;
                transaction
                    .execute(
                        "INSERT INTO tasks (id, owner, status, snapshot) VALUES (?1, ?2, ?3, ?4)
                         ON CONFLICT (id) DO UPDATE
                         SET owner = excluded.owner, status = excluded.status,
                             snapshot = excluded.snapshot",
                        params![
                            task.info.id.as_str(),
                            task.owner.as_str(),
                            task.info.status.to_string(),
                            snapshot
                        ],
                    )
                    .map_err(|e| format!("task {}: {e}", task.info.id.as_str()))?;
            }
            Change::Message { task, message, at } => {
                transaction
                    .execute(
                        "UPDATE tasks SET snapshot = json_set(snapshot,
                             '$.info.status_message', ?2, '$.info.last_updated_at', ?3)
                         WHERE id = ?1",
                        params![task.as_str(), message, at.0],
                    )
                    .map_err(|e| format!("task {}: {e}", task.as_str()))?;
            }
            Change::Delete { task, .. } => {
                transaction
                    .execute("DELETE FROM tasks WHERE id = ?1", params![task.as_str()])
                    .map_err(|e| format!("task {}: {e}", task.as_str()))?;
            }
            other => {
                return Err(format!(
                    "a journal entry this store does not know: {other:?}"
                ))
            }
        }
    }
    transaction.commit().map_err(|e| e.to_string())
}
