//! Commands to the driver task that owns the host: plain values, sent over one channel by
//! tool contexts, connection handles and the application's own handles (a client's calls,
//! [`App::Command`](super::App::Command)).

use std::sync::Arc;

use futures::channel::oneshot;
use serde_json::Value;
use taskwire_engine::{CallId, JournalEntry, LogLevel, Owner, SessionId, TaskId, TaskSnapshot};

use super::Outcome;
use crate::error::Error;
use crate::runtime::{Reader, Writer};
use crate::store::{Refused, StoreError};

/// Where an answer goes.
pub(crate) type Reply<T> = oneshot::Sender<Result<T, Error>>;

/// One thing for the driver to do; `X` is the application's own kind of command.
pub(crate) enum Command<X> {
    // ---- from running work (tool contexts, client handlers) --------------------------------
    /// The work of a call ended with this outcome (a `CallToolResult` object or an error).
    Finished { call: CallId, outcome: Outcome },
    /// Set (or with `None` clear) a task's status message.
    TaskMessage {
        call: CallId,
        message: Option<String>,
    },
    /// End a call's task as cancelled, with this status message (else the configured one).
    CancelTask {
        call: CallId,
        message: Option<String>,
        reply: Reply<()>,
    },
    /// Report progress for a call.
    Progress {
        call: CallId,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    },
    /// Send a log message about a call.
    Log {
        call: CallId,
        level: LogLevel,
        logger: Option<String>,
        data: Value,
        reply: Reply<()>,
    },
    /// Turn a call offered a task into it (a tool that asks first).
    StartTask { call: CallId, reply: Reply<TaskId> },
    /// Ask the requestor for input on behalf of a call.
    Input {
        call: CallId,
        method: &'static str,
        params: Value,
        reply: Reply<Value>,
    },

    // ---- connections and lifetime ------------------------------------------------------------
    /// Serve one more connection for `owner`; `done` fires when it ends.
    Attach {
        owner: Owner,
        reader: Reader,
        writer: Writer,
        done: oneshot::Sender<()>,
    },
    /// Stop: close every session and stop all work.
    Shutdown,

    // ---- operators ---------------------------------------------------------------------------
    /// Watch the tasks held (`None`: the server is not observed).
    Watch {
        reply: Reply<Option<crate::observe::TaskFeed>>,
    },
    /// A task as held, whoever owns it.
    Task {
        task: TaskId,
        reply: Reply<Option<TaskSnapshot>>,
    },
    /// Cancel a task on an operator's word (`by` names the operator).
    Cancel {
        task: TaskId,
        by: String,
        reply: Reply<()>,
    },

    // ---- the task store ------------------------------------------------------------------
    /// A write of `batch` to the store returned.
    Stored {
        batch: Arc<[JournalEntry]>,
        result: Result<Vec<Refused>, StoreError>,
    },
    /// The wait after a failed write is over: write again.
    StoreRetry,
    /// A shared store answered the fetch of the task (or the `tasks/list` page) a message
    /// of `session` names.
    Fetched {
        session: SessionId,
        found: Result<Vec<TaskSnapshot>, StoreError>,
    },
    /// A shared store answered a claim of up to `asked` tasks.
    Claimed {
        asked: usize,
        found: Result<Vec<TaskSnapshot>, StoreError>,
    },
    /// For the application ([`App::on_command`](super::App::on_command)).
    App(X),
}
