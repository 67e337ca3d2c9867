//! What the page reads, as JSON: a task's row, the feed's events, a task's detail.

use serde::Serialize;
use taskwire_driver::{Era, Millis, TaskChange, TaskProgress, TaskRow, TaskSnapshot, TaskStatus};

use super::table::History;

/// A task's row: `{"id","tool","owner","era","status","message","progress","createdAt",
/// "updatedAt","runsHere"}` (times in milliseconds since the Unix epoch).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Row<'a> {
    id: &'a str,
    tool: Option<&'a str>,
    owner: &'a str,
    era: Era,
    status: TaskStatus,
    message: Option<&'a str>,
    progress: Option<&'a TaskProgress>,
    created_at: u64,
    updated_at: u64,
    runs_here: bool,
}

impl<'a> From<&'a TaskRow> for Row<'a> {
    fn from(row: &'a TaskRow) -> Self {
        Row {
            id: &row.id,
            tool: row.tool.as_deref(),
            owner: &row.owner,
            era: row.era,
            status: row.status,
            message: row.message.as_deref(),
            progress: row.progress.as_ref(),
            created_at: row.created_at.0,
            updated_at: row.updated_at.0,
            runs_here: row.runs_here,
        }
    }
}

/// One SSE event for the page: its name and its JSON data.
#[derive(Debug)]
pub(crate) struct Message {
    /// `snapshot`, `row`, `asked`, `answered` or `gone`.
    pub event: &'static str,
    /// The JSON.
    pub data: String,
}

impl Message {
    fn new(event: &'static str, data: &impl Serialize) -> Message {
        Message {
            event,
            data: serde_json::to_string(data).expect("the dashboard's JSON serializes"),
        }
    }
}

/// `snapshot`: `{"rows":[row…]}`, oldest first; the page starts over from it.
pub(crate) fn snapshot(rows: &[&TaskRow]) -> Message {
    #[derive(Serialize)]
    struct Snapshot<'a> {
        rows: Vec<Row<'a>>,
    }
    let rows = rows.iter().map(|row| Row::from(*row)).collect();
    Message::new("snapshot", &Snapshot { rows })
}

/// The event of one change of the feed, arrived at `now`: `row` (the row), `asked`
/// (`{"task","method","at"}`), `answered` (`{"task","accepted","at"}`) or `gone`
/// (`{"task","reason"}`).
pub(crate) fn change(change: &TaskChange, now: Millis) -> Option<Message> {
    #[derive(Serialize)]
    #[serde(untagged)]
    enum About<'a> {
        Asked {
            task: &'a str,
            method: &'a str,
            at: u64,
        },
        Answered {
            task: &'a str,
            accepted: bool,
            at: u64,
        },
        Gone {
            task: &'a str,
            reason: taskwire_driver::StopReason,
        },
    }
    let message = match change {
        TaskChange::Row(row) => Message::new("row", &Row::from(row)),
        TaskChange::Asked { task, method } => Message::new(
            "asked",
            &About::Asked {
                task,
                method,
                at: now.0,
            },
        ),
        TaskChange::Answered { task, accepted } => Message::new(
            "answered",
            &About::Answered {
                task,
                accepted: *accepted,
                at: now.0,
            },
        ),
        TaskChange::Gone { task, reason } => Message::new(
            "gone",
            &About::Gone {
                task,
                reason: *reason,
            },
        ),
        _ => return None,
    };
    Some(message)
}

/// A task's detail: `{"task": snapshot, "row": row or null, "history": {"steps":[…],
/// "dropped": n}}`; the snapshot is the driver's (`info`, `owner`, `era`, `outcome`,
/// `request`, `inputs`, `progress`).
pub(crate) fn detail(
    task: &TaskSnapshot,
    row: Option<&TaskRow>,
    history: Option<History>,
) -> String {
    #[derive(Serialize)]
    struct Detail<'a> {
        task: &'a TaskSnapshot,
        row: Option<Row<'a>>,
        history: History,
    }
    let history = history.unwrap_or(History {
        steps: Vec::new(),
        dropped: 0,
    });
    let detail = Detail {
        task,
        row: row.map(Row::from),
        history,
    };
    serde_json::to_string(&detail).expect("the dashboard's JSON serializes")
}
