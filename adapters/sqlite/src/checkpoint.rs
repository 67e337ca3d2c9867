//! The checkpoint thread: copies the WAL's committed pages into the database file on a
//! connection of its own, so that commits never wait for it (the writer's connection has
//! `wal_autocheckpoint=0`). A passive checkpoint never blocks the writer; once one has copied
//! everything, the writer starts the WAL over. Past 16 MiB of WAL a restarting checkpoint
//! waits for a pause between commits, so that the WAL stays bounded under any load.

use std::sync::mpsc;
use std::time::Duration;

use rusqlite::Connection;

/// WAL pages (4 KiB each) past which a checkpoint makes the WAL start over.
const RESTART_PAGES: i64 = 4096;

/// The least time between two checkpoints: commits meanwhile share the next one.
const PAUSE: Duration = Duration::from_millis(500);

/// Checkpoints after commits (each poke on `commits` is one or more of them) until the writer
/// is gone, then once more.
pub(crate) fn run(connection: &Connection, commits: &mpsc::Receiver<()>, name: &str) {
    while commits.recv().is_ok() {
        checkpoint(connection, name);
        std::thread::sleep(PAUSE);
    }
    checkpoint(connection, name);
}

fn checkpoint(connection: &Connection, name: &str) {
    let passive = run_checkpoint(connection, "PASSIVE");
    // Under a steady stream of commits a passive checkpoint never catches up with the end of
    // the WAL, which then never starts over: past the limit, one waits for a pause between
    // commits (and holds the next one) until it has copied everything.
    let done = match passive {
        Ok((wal, _)) if wal > RESTART_PAGES => run_checkpoint(connection, "RESTART"),
        other => other,
    };
    match done {
        Ok((wal, copied)) => tracing::trace!(store = name, wal, copied, "checkpoint"),
        Err(error) => {
            tracing::warn!(store = name, %error, "a WAL checkpoint failed; the next commit tries again")
        }
    }
}

/// Pages in the WAL and pages copied by a checkpoint of `mode`.
fn run_checkpoint(connection: &Connection, mode: &str) -> rusqlite::Result<(i64, i64)> {
    connection.query_row(&format!("PRAGMA wal_checkpoint({mode})"), [], |row| {
        Ok((row.get::<_, i64>(1)?, row.get::<_, i64>(2)?))
    })
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use taskwire_driver::engine::JournalEntry;
    use taskwire_driver::TaskStore;

    use crate::SqliteStore;

    #[test]
    fn commits_are_checkpointed_in_the_background() {
        let path = std::env::temp_dir().join(format!(
            "taskwire-sqlite-{}-checkpoint.db",
            std::process::id()
        ));
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
        }
        let store = SqliteStore::open(&path).unwrap();
        for seq in 1..=50u64 {
            let entry: JournalEntry = serde_json::from_value(serde_json::json!({"seq": seq, "change": {"put": {
                "info": {"id": format!("t{seq}"), "status": "working", "status_message": "x".repeat(1000),
                         "created_at": 1, "last_updated_at": 1, "ttl_ms": null, "poll_interval_ms": null},
                "owner": "o", "era": "2025-11-25",
                "input_kinds": {"elicitation": false, "sampling": false, "roots": false},
                "outcome": null}}}))
            .unwrap();
            futures::executor::block_on(store.write(Arc::from(vec![entry]))).unwrap();
        }
        std::thread::sleep(super::PAUSE * 3);
        // Without a checkpoint the rows would all be in the WAL, the file as first made.
        let file = std::fs::metadata(&path).unwrap().len();
        assert!(
            file > 50 * 1000,
            "the rows were copied into the file: {file} bytes"
        );
    }
}
