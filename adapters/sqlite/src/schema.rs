//! The database file: opening it, its schema and its version.

use std::path::Path;
use std::time::Duration;

use rusqlite::{Connection, OpenFlags};

use crate::Synchronous;

/// The schema version this crate reads and writes (`PRAGMA user_version`).
pub(crate) const VERSION: i64 = 1;

/// How long a write waits for another connection's lock before it fails.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

const CREATE: &str = "
CREATE TABLE tasks (
    id       TEXT PRIMARY KEY NOT NULL,
    owner    TEXT NOT NULL,
    status   TEXT NOT NULL,
    snapshot TEXT NOT NULL
) WITHOUT ROWID;
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

/// Opens the file at `path` (creating it with the schema when new), in WAL mode, checking
/// that it is a database of our schema version and that no other process holds it.
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
        .map_err(|e| format!("not a taskwire task store (is it a SQLite database?): {e}"))?;
    let mode: String = connection
        .query_row("PRAGMA journal_mode=WAL", [], |row| row.get(0))
        .map_err(|e| format!("cannot switch to WAL mode (locked by another process?): {e}"))?;
    if !mode.eq_ignore_ascii_case("wal") {
        return Err(format!("cannot switch to WAL mode (it stays {mode})"));
    }
    let synchronous = match sync {
        Synchronous::Normal => "NORMAL",
        Synchronous::Full => "FULL",
    };
    connection
        .execute_batch(&format!("PRAGMA synchronous={synchronous};"))
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
                .map_err(|e| format!("cannot create the schema (locked?): {e}"))?;
        }
        VERSION => {}
        other => {
            return Err(format!(
                "schema version {other}, but this taskwire-sqlite reads version {VERSION}; \
                 open it with the taskwire that wrote it"
            ))
        }
    }
    Ok(connection)
}
