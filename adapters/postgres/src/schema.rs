//! The tables, made on first use and checked (or upgraded) on every connection: one row
//! per task, the replicas' leases, the schema version, and the trigger that keeps a terminal
//! task's status and outcome.

use taskwire_driver::engine::{Millis, TaskSnapshot};
use tokio_postgres::{Client, Row};

/// The schema version this crate reads and writes (`taskwire_schema.version`).
pub(crate) const VERSION: i32 = 3;

/// Serializes schema checks of replicas starting together (`pg_advisory_xact_lock`).
const LOCK: i64 = 0x7461_736b_7769_7265; // "taskwire"

/// The statuses a task never leaves, as SQL.
pub(crate) const TERMINAL: &str = "('completed', 'failed', 'cancelled')";

/// One row per task: the snapshot as JSON text (kept byte for byte: results are returned
/// exactly as stored), with the columns a status message changes on their own, so that a
/// message is a small update rather than a rewrite of the snapshot; `runner` is the replica
/// whose process runs the work of a task not finished yet. Version 1 had no `runner` and
/// no leases.
const CREATE_V1: &str = "
CREATE TABLE taskwire_schema (version integer NOT NULL);
CREATE TABLE taskwire_tasks (
    id         text PRIMARY KEY,
    owner      text NOT NULL,
    status     text NOT NULL,
    message    text,
    updated_at bigint NOT NULL,
    snapshot   text NOT NULL
);
CREATE FUNCTION taskwire_terminal_is_final() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF OLD.status IN ('completed', 'failed', 'cancelled')
       AND (NEW.status IS DISTINCT FROM OLD.status
            OR (NEW.snapshot::jsonb -> 'outcome') IS DISTINCT FROM (OLD.snapshot::jsonb -> 'outcome'))
    THEN
        RAISE EXCEPTION 'a task in a terminal status does not change (task %)', OLD.id;
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER terminal_is_final BEFORE UPDATE ON taskwire_tasks
    FOR EACH ROW EXECUTE FUNCTION taskwire_terminal_is_final();
";

/// From version 1 to 2: each unfinished task's runner (the replica whose lease keeps it),
/// the leases, and the database's clock in milliseconds (leases are timed by it alone, so
/// the replicas' clocks need not agree).
const UPGRADE_V2: &str = "
ALTER TABLE taskwire_tasks ADD COLUMN runner text;
CREATE INDEX taskwire_tasks_runner ON taskwire_tasks (runner)
    WHERE status NOT IN ('completed', 'failed', 'cancelled');
CREATE TABLE taskwire_replicas (
    id         text PRIMARY KEY,
    expires_at bigint NOT NULL
);
CREATE FUNCTION taskwire_now_ms() RETURNS bigint LANGUAGE sql VOLATILE AS
    'SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint';
UPDATE taskwire_schema SET version = 2;
";

/// From version 2 to 3: work queued by fronts (an unfinished task without a runner; the
/// unfinished tasks of version 1, which had no runner, are given one that never renews, so
/// that they are taken over as before rather than run as new work), each claim's fencing
/// token (`fence`, counted up by each claim), answers to input requests taken by one
/// process for the task another runs (`taskwire_answers`, until the runner takes them), and
/// each task's creation time and era as columns, so that a `tasks/list` page is read by
/// keyset (`taskwire_tasks_list`).
const UPGRADE_V3: &str = "
ALTER TABLE taskwire_tasks ADD COLUMN fence bigint NOT NULL DEFAULT 0,
    ADD COLUMN created_at bigint NOT NULL DEFAULT 0,
    ADD COLUMN era text NOT NULL DEFAULT '';
UPDATE taskwire_tasks SET created_at = (snapshot::jsonb #>> '{info,created_at}')::bigint,
    era = snapshot::jsonb ->> 'era';
CREATE INDEX taskwire_tasks_list ON taskwire_tasks (owner, era, created_at, id);
UPDATE taskwire_tasks SET runner = '' WHERE runner IS NULL
    AND status NOT IN ('completed', 'failed', 'cancelled');
CREATE INDEX taskwire_tasks_queue ON taskwire_tasks (updated_at)
    WHERE runner IS NULL AND status NOT IN ('completed', 'failed', 'cancelled');
CREATE TABLE taskwire_answers (
    task      text NOT NULL REFERENCES taskwire_tasks (id) ON DELETE CASCADE,
    responses text NOT NULL
);
CREATE INDEX taskwire_answers_task ON taskwire_answers (task);
UPDATE taskwire_schema SET version = 3;
";

/// Makes the tables when the database has none, or checks their version. Fails, changing
/// nothing, on another version or on a `taskwire_tasks` table without its version.
pub(crate) async fn prepare(client: &mut Client) -> Result<(), String> {
    let transaction = client.transaction().await.map_err(|e| e.to_string())?;
    transaction
        .execute("SELECT pg_advisory_xact_lock($1)", &[&LOCK])
        .await
        .map_err(|e| e.to_string())?;
    let tables: Vec<String> = transaction
        .query(
            "SELECT tablename::text FROM pg_tables
             WHERE schemaname = current_schema() AND tablename LIKE 'taskwire\\_%'",
            &[],
        )
        .await
        .map_err(|e| e.to_string())?
        .iter()
        .map(|row| row.get(0))
        .collect();
    if tables.is_empty() {
        let first = "INSERT INTO taskwire_schema (version) VALUES (1)";
        for sql in [CREATE_V1, first, UPGRADE_V2, UPGRADE_V3] {
            transaction
                .batch_execute(sql)
                .await
                .map_err(|e| format!("cannot create the tables: {e}"))?;
        }
        tracing::info!(version = VERSION, "created the task tables");
    } else if !tables.iter().any(|t| t == "taskwire_schema") {
        return Err(format!(
            "tables {tables:?} but no taskwire_schema: not a taskwire task store; nothing was changed"
        ));
    } else {
        let version: i32 = transaction
            .query_one("SELECT version FROM taskwire_schema", &[])
            .await
            .map_err(|e| format!("cannot read the schema version: {e}"))?
            .get(0);
        if version == 1 || version == 2 {
            let steps = [(2, UPGRADE_V2), (3, UPGRADE_V3)];
            for (_, sql) in steps.iter().filter(|(to, _)| *to > version) {
                transaction.batch_execute(sql).await.map_err(|e| {
                    format!("cannot upgrade the tables from version {version}: {e}")
                })?;
            }
            tracing::info!(from = version, to = VERSION, "upgraded the task tables");
        } else if version != VERSION {
            return Err(format!(
                "schema version {version}, but this taskwire-postgres reads version {VERSION}; \
                 use the taskwire that wrote it"
            ));
        }
    }
    transaction.commit().await.map_err(|e| e.to_string())
}

/// The columns [`snapshot_of`] reads, in its order.
pub(crate) const COLUMNS: &str = "id, message, updated_at, snapshot";
/// [`COLUMNS`] of the table named `t`.
pub(crate) const COLUMNS_T: &str = "t.id, t.message, t.updated_at, t.snapshot";

/// A task read from its row ([`COLUMNS`]).
pub(crate) fn snapshot_of(row: &Row) -> Result<TaskSnapshot, String> {
    let id: &str = row.get(0);
    let mut task: TaskSnapshot = serde_json::from_str(row.get(3))
        .map_err(|e| format!("task {id} is stored unreadably ({e}); nothing was loaded"))?;
    task.info.status_message = row.get(1);
    task.info.last_updated_at = Millis(u64::try_from(row.get::<_, i64>(2)).unwrap_or(0));
    Ok(task)
}
