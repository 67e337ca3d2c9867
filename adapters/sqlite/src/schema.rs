//! The database file: opening it, its schema and its version.

use std::path::Path;
use std::time::Duration;

use rusqlite::{Connection, OpenFlags};

use crate::Synchronous;

/// The schema version this crate reads and writes (`PRAGMA user_version`).
pub(crate) const VERSION: i64 = 3;

/// The most the WAL file keeps once a checkpoint let it start over (it grows past this
/// between checkpoints, and is cut back to it).
const WAL_KEPT_BYTES: u64 = 4 << 20;

/// How long a write waits for another connection's lock before it fails.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// The table and its trigger. A rowid table (version 1 was `WITHOUT ROWID`): rows of about
/// 1 KB stay in insertion order, and only the small index on `id` takes the random ids (a
/// third as many pages written per task). The status message and update time are columns of
/// their own (version 3), so that a message is a small update rather than a rewrite of the
/// snapshot; they override the snapshot's when a task is read.
const CREATE: &str = "
CREATE TABLE tasks (
    id         TEXT PRIMARY KEY NOT NULL,
    owner      TEXT NOT NULL,
    status     TEXT NOT NULL,
    snapshot   TEXT NOT NULL,
    message    TEXT,
    updated_at INTEGER NOT NULL
);
-- A task in a terminal status keeps its status and outcome (a snapshot written again, as
-- after a restart or a retried write, changes neither).
CREATE TRIGGER terminal_is_final BEFORE UPDATE ON tasks
WHEN OLD.status IN ('completed', 'failed', 'cancelled')
    AND (NEW.status IS NOT OLD.status
         OR json_extract(NEW.snapshot, '$.outcome') IS NOT json_extract(OLD.snapshot, '$.outcome'))
BEGIN
    SELECT RAISE(ABORT, 'a task in a terminal status does not change');
END;
";

/// A version 2 table's message and update time, from its snapshots, into the columns of
/// version 3.
const MESSAGE_COLUMNS: &str = "
ALTER TABLE tasks ADD COLUMN message TEXT;
ALTER TABLE tasks ADD COLUMN updated_at INTEGER NOT NULL DEFAULT 0;
UPDATE tasks SET message = json_extract(snapshot, '$.info.status_message'),
                 updated_at = coalesce(json_extract(snapshot, '$.info.last_updated_at'), 0);
";

/// Opens the file at `path` (creating it with the schema when new), in WAL mode, checking
/// that it is a database of our schema version and that no other program holds it locked
/// (another taskwire store is kept out before, by `lock.rs`).
pub(crate) fn open(path: &Path, sync: Synchronous) -> Result<Connection, String> {
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
        | OpenFlags::SQLITE_OPEN_CREATE
        | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let connection =
        Connection::open_with_flags(path, flags).map_err(|e| format!("cannot open: {e}"))?;
    connection
        .busy_timeout(BUSY_TIMEOUT)
        .map_err(|e| e.to_string())?;
    let version: i64 = connection
        .query_row("PRAGMA user_version", [], |row| row.get(0))
        .map_err(|e| explain(e, "not a taskwire task store (is it a SQLite database?)"))?;
    let mode: String = connection
        .query_row("PRAGMA journal_mode=WAL", [], |row| row.get(0))
        .map_err(|e| explain(e, "cannot switch to WAL mode"))?;
    if !mode.eq_ignore_ascii_case("wal") {
        return Err(format!("cannot switch to WAL mode (it stays {mode})"));
    }
    connection
        .execute_batch(&format!(
            "PRAGMA synchronous={}; PRAGMA wal_autocheckpoint=0; \
             PRAGMA journal_size_limit={WAL_KEPT_BYTES};",
            synchronous(sync)
        ))
        .map_err(|e| e.to_string())?;
    match version {
        0 => {
            let tables: i64 = connection
                .query_row("SELECT count(*) FROM sqlite_schema", [], |row| row.get(0))
                .map_err(|e| e.to_string())?;
            if tables != 0 {
                return Err(
                    "a SQLite database, but not a taskwire task store (it has other tables)".into(),
                );
            }
            connection
                .execute_batch(&format!(
                    "BEGIN IMMEDIATE; {CREATE} PRAGMA user_version = {VERSION}; COMMIT;"
                ))
                .map_err(|e| explain(e, "cannot create the schema"))?;
        }
        VERSION => {}
        2 => connection
            .execute_batch(&format!(
                "BEGIN IMMEDIATE; {MESSAGE_COLUMNS} PRAGMA user_version = {VERSION}; COMMIT;"
            ))
            .map_err(|e| explain(e, "cannot upgrade the schema from version 2"))?,
        1 => connection
            .execute_batch(&format!(
                "BEGIN IMMEDIATE;
                 DROP TRIGGER terminal_is_final;
                 ALTER TABLE tasks RENAME TO tasks_v1;
                 {CREATE}
                 INSERT INTO tasks
                 SELECT id, owner, status, snapshot,
                        json_extract(snapshot, '$.info.status_message'),
                        coalesce(json_extract(snapshot, '$.info.last_updated_at'), 0)
                 FROM tasks_v1;
                 DROP TABLE tasks_v1;
                 PRAGMA user_version = {VERSION};
                 COMMIT;"
            ))
            .map_err(|e| explain(e, "cannot upgrade the schema from version 1"))?,
        other => {
            return Err(format!(
                "schema version {other}, but this taskwire-sqlite reads version {VERSION}; \
                 open it with the taskwire that wrote it"
            ))
        }
    }
    Ok(connection)
}

/// A second connection to the store at `path`, for the checkpoints (see `checkpoint.rs`):
/// the writer's own turn them off (`wal_autocheckpoint=0`), so that a commit never waits for
/// one.
pub(crate) fn open_checkpointer(path: &Path, sync: Synchronous) -> Result<Connection, String> {
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let connection =
        Connection::open_with_flags(path, flags).map_err(|e| format!("cannot open: {e}"))?;
    connection
        .busy_timeout(BUSY_TIMEOUT)
        .map_err(|e| e.to_string())?;
    connection
        .execute_batch(&format!("PRAGMA synchronous={};", synchronous(sync)))
        .map_err(|e| e.to_string())?;
    Ok(connection)
}

fn synchronous(sync: Synchronous) -> &'static str {
    match sync {
        Synchronous::Normal => "NORMAL",
        Synchronous::Full => "FULL",
    }
}

/// What went wrong opening the file: another program holds SQLite's lock on it, or
/// `otherwise`.
fn explain(error: rusqlite::Error, otherwise: &str) -> String {
    use rusqlite::ErrorCode::{DatabaseBusy, DatabaseLocked};
    match error.sqlite_error_code() {
        Some(DatabaseBusy | DatabaseLocked) => {
            format!("locked by another program (waited {BUSY_TIMEOUT:?}): {error}")
        }
        _ => format!("{otherwise}: {error}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh path in the system's temporary directory.
    fn fresh(name: &str) -> std::path::PathBuf {
        let path =
            std::env::temp_dir().join(format!("taskwire-sqlite-{}-{name}.db", std::process::id()));
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
        }
        path
    }

    #[test]
    fn a_new_file_gets_the_schema_and_opens_again() {
        let path = fresh("new");
        drop(open(&path, Synchronous::Full).expect("created"));
        let again = open(&path, Synchronous::Normal).expect("opened again");
        let version: i64 = again
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .unwrap();
        assert_eq!(version, VERSION);
    }

    #[test]
    fn a_version_1_file_is_upgraded_keeping_its_tasks() {
        let path = fresh("v1");
        let old = Connection::open(&path).unwrap();
        old.execute_batch(
            "CREATE TABLE tasks (id TEXT PRIMARY KEY NOT NULL, owner TEXT NOT NULL,
                 status TEXT NOT NULL, snapshot TEXT NOT NULL) WITHOUT ROWID;
             CREATE TRIGGER terminal_is_final BEFORE UPDATE ON tasks BEGIN SELECT 1; END;
             INSERT INTO tasks VALUES ('t', 'o', 'completed', '{\"outcome\":{\"result\":1}}');
             PRAGMA user_version = 1;",
        )
        .unwrap();
        drop(old);
        let db = open(&path, Synchronous::Normal).expect("upgraded");
        let version: i64 = db
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .unwrap();
        assert_eq!(version, VERSION);
        let kept: String = db
            .query_row("SELECT snapshot FROM tasks WHERE id = 't'", [], |r| {
                r.get(0)
            })
            .unwrap();
        assert_eq!(kept, "{\"outcome\":{\"result\":1}}");
        let refused = db
            .execute("UPDATE tasks SET status = 'working' WHERE id = 't'", [])
            .unwrap_err()
            .to_string();
        assert!(
            refused.contains("terminal status"),
            "the new trigger: {refused}"
        );
    }

    #[test]
    fn a_version_2_file_gets_its_messages_as_columns() {
        let path = fresh("v2");
        let old = Connection::open(&path).unwrap();
        old.execute_batch(
            "CREATE TABLE tasks (id TEXT PRIMARY KEY NOT NULL, owner TEXT NOT NULL,
                 status TEXT NOT NULL, snapshot TEXT NOT NULL);
             INSERT INTO tasks VALUES ('t', 'o', 'working',
                 '{\"info\":{\"status_message\":\"half\",\"last_updated_at\":7}}');
             PRAGMA user_version = 2;",
        )
        .unwrap();
        drop(old);
        let db = open(&path, Synchronous::Normal).expect("upgraded");
        let version: i64 = db
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .unwrap();
        assert_eq!(version, VERSION);
        let columns: (Option<String>, i64) = db
            .query_row(
                "SELECT message, updated_at FROM tasks WHERE id = 't'",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .unwrap();
        assert_eq!(columns, (Some("half".to_owned()), 7));
    }

    #[test]
    fn another_schema_version_is_refused_and_left_alone() {
        let path = fresh("version");
        let other = Connection::open(&path).unwrap();
        other
            .execute_batch("CREATE TABLE tasks (x); PRAGMA user_version = 7;")
            .unwrap();
        drop(other);
        let refused = open(&path, Synchronous::Normal).unwrap_err();
        assert!(refused.contains("schema version 7"), "{refused}");
        let other = Connection::open(&path).unwrap();
        let version: i64 = other
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .unwrap();
        assert_eq!(version, 7, "left alone");
    }

    #[test]
    fn a_database_of_something_else_is_refused() {
        let path = fresh("other");
        Connection::open(&path)
            .unwrap()
            .execute_batch("CREATE TABLE invoices (n INTEGER);")
            .unwrap();
        let refused = open(&path, Synchronous::Normal).unwrap_err();
        assert!(refused.contains("not a taskwire task store"), "{refused}");
    }

    #[test]
    fn a_database_another_program_holds_locked_is_refused() {
        let path = fresh("locked");
        drop(open(&path, Synchronous::Normal).unwrap());
        // Another program's connection holds the database exclusively (outside WAL: no
        // reader may enter either). A second taskwire store never gets this far: see
        // `lock.rs`.
        let holder = Connection::open(&path).unwrap();
        holder
            .execute_batch(
                "PRAGMA journal_mode=DELETE; PRAGMA locking_mode=EXCLUSIVE; BEGIN EXCLUSIVE;",
            )
            .unwrap();
        let refused = open(&path, Synchronous::Normal).unwrap_err();
        assert!(refused.contains("locked"), "{refused}");
    }

    #[test]
    fn a_terminal_task_keeps_its_status_and_outcome() {
        let path = fresh("terminal");
        let db = open(&path, Synchronous::Normal).unwrap();
        db.execute(
            "INSERT INTO tasks VALUES ('t', 'o', 'completed', '{\"outcome\":{\"result\":1}}', NULL, 1)",
            [],
        )
        .unwrap();
        // The same outcome written again (a retried write) is no change.
        db.execute(
            "UPDATE tasks SET snapshot = '{\"outcome\":{\"result\":1},\"x\":2}' WHERE id = 't'",
            [],
        )
        .expect("allowed");
        for change in [
            "UPDATE tasks SET status = 'working' WHERE id = 't'",
            "UPDATE tasks SET snapshot = '{\"outcome\":{\"result\":2}}' WHERE id = 't'",
        ] {
            let refused = db.execute(change, []).unwrap_err().to_string();
            assert!(refused.contains("terminal status"), "{change}: {refused}");
        }
    }
}
