//! The driver's metrics, recorded through the `metrics` facade (nothing happens until the
//! binary installs a recorder). Names follow Prometheus conventions: units in the name,
//! labels of few values (a tool, a status, a method, an era, an error code; never a task id
//! or an owner). What each one means is in taskwire-http's README.

use metrics::{counter, describe_counter, describe_gauge, describe_histogram, gauge, histogram};
use taskwire_engine::TaskStatus;

/// Tasks this process made, by tool.
pub const TASKS_CREATED: &str = "taskwire_tasks_created_total";
/// Tasks that ended in this process, by tool and how.
pub const TASKS_ENDED: &str = "taskwire_tasks_ended_total";
/// Tasks this process holds now, by status.
pub const TASKS: &str = "taskwire_tasks";
/// Creation to end, by tool and how it ended.
pub const TASK_DURATION: &str = "taskwire_task_duration_seconds";
/// Creation to the first change its work made, by tool.
pub const TASK_FIRST_UPDATE: &str = "taskwire_task_first_update_seconds";
/// Requests answered, by method and era: receipt to answer.
pub const REQUEST_DURATION: &str = "taskwire_request_duration_seconds";
/// Requests answered with an error, by method, era and JSON-RPC code.
pub const REQUEST_ERRORS: &str = "taskwire_request_errors_total";
/// One write to the task store: start to its answer.
pub const STORE_COMMIT: &str = "taskwire_store_commit_duration_seconds";
/// Journal entries per write.
pub const STORE_BATCH: &str = "taskwire_store_batch_entries";
/// Failed writes, each retried.
pub const STORE_FAILURES: &str = "taskwire_store_write_failures_total";
/// Entries the store refused for good.
pub const STORE_REFUSED: &str = "taskwire_store_refused_entries_total";
/// This process's part in a fleet sharing its store.
pub const ROLE: &str = "taskwire_process_role";

/// Every status, for the gauge's labels.
const STATUSES: [TaskStatus; 5] = [
    TaskStatus::Working,
    TaskStatus::InputRequired,
    TaskStatus::Completed,
    TaskStatus::Failed,
    TaskStatus::Cancelled,
];

/// Says what each metric means (the `# HELP` lines) and shows every status at zero; call
/// once the recorder is installed.
pub fn describe(role: &'static str) {
    describe_counter!(TASKS_CREATED, "Tasks this process made, by tool.");
    describe_counter!(
        TASKS_ENDED,
        "Tasks that ended in this process, by tool and status (completed, failed, cancelled, or expired: its retention ran out before it finished)."
    );
    describe_gauge!(TASKS, "Tasks this process holds now, by status.");
    describe_histogram!(
        TASK_DURATION,
        metrics::Unit::Seconds,
        "Seconds from a task's creation to its end, by tool and status."
    );
    describe_histogram!(
        TASK_FIRST_UPDATE,
        metrics::Unit::Seconds,
        "Seconds from a task's creation to the first change its work made (a status message, progress, a question, its end), by tool."
    );
    describe_histogram!(
        REQUEST_DURATION,
        metrics::Unit::Seconds,
        "Seconds from a request's receipt to its answer, by method and era."
    );
    describe_counter!(
        REQUEST_ERRORS,
        "Requests answered with a JSON-RPC error, by method, era and code."
    );
    describe_histogram!(
        STORE_COMMIT,
        metrics::Unit::Seconds,
        "Seconds one write to the task store took, by store."
    );
    describe_histogram!(
        STORE_BATCH,
        "Journal entries in one write to the task store."
    );
    describe_counter!(
        STORE_FAILURES,
        "Writes to the task store that failed (each is retried), by store."
    );
    describe_counter!(
        STORE_REFUSED,
        "Task changes the store refused for good (another process's version stands), by store."
    );
    describe_gauge!(
        ROLE,
        "1 for this process's part among processes sharing its store (front, worker, both)."
    );
    gauge!(ROLE, "role" => role).set(1.0);
    for status in STATUSES {
        gauge!(TASKS, "status" => status.as_str()).increment(0.0);
    }
}

/// A task moved from one status to another (`None`: it appeared, or left).
pub fn status_moved(before: Option<TaskStatus>, after: Option<TaskStatus>) {
    if before == after {
        return;
    }
    if let Some(status) = before {
        gauge!(TASKS, "status" => status.as_str()).decrement(1.0);
    }
    if let Some(status) = after {
        gauge!(TASKS, "status" => status.as_str()).increment(1.0);
    }
}

/// This process made a task of `tool`.
pub fn task_created(tool: &str) {
    counter!(TASKS_CREATED, "tool" => tool.to_owned()).increment(1);
}

/// A task of `tool` ended here as `how` after `seconds`.
pub fn task_ended(tool: &str, how: &'static str, seconds: f64) {
    counter!(TASKS_ENDED, "tool" => tool.to_owned(), "status" => how).increment(1);
    histogram!(TASK_DURATION, "tool" => tool.to_owned(), "status" => how).record(seconds);
}

/// A task of `tool` first changed `seconds` after its creation.
pub fn task_first_update(tool: &str, seconds: f64) {
    histogram!(TASK_FIRST_UPDATE, "tool" => tool.to_owned()).record(seconds);
}

/// A request was answered after `seconds`; `error`: its error code.
pub fn request_answered(method: &'static str, era: &'static str, seconds: f64, error: Option<i64>) {
    histogram!(REQUEST_DURATION, "method" => method, "era" => era).record(seconds);
    if let Some(code) = error {
        counter!(REQUEST_ERRORS, "method" => method, "era" => era, "code" => code.to_string())
            .increment(1);
    }
}

/// A write of `entries` to store `store` returned after `seconds`: `refused` entries refused
/// for good, or failed.
pub fn store_wrote(store: &str, entries: usize, seconds: f64, outcome: Result<usize, ()>) {
    let store = store.to_owned();
    histogram!(STORE_COMMIT, "store" => store.clone()).record(seconds);
    histogram!(STORE_BATCH, "store" => store.clone()).record(entries as f64);
    match outcome {
        Ok(0) => {}
        Ok(refused) => counter!(STORE_REFUSED, "store" => store).increment(refused as u64),
        Err(()) => counter!(STORE_FAILURES, "store" => store).increment(1),
    }
}
