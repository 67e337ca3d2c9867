//! Body 2: one server host with several sessions of several owners, driven by an
//! operation sequence decoded from the input.
//!
//! The host has three or four server sessions ("slots") for two or three owners (layouts
//! `[a, a, b]`, `[a, b, b]`, `[a, a, b, b]`, `[a, b, c]`); each operation picks a slot. A
//! slot can close (or see EOF) and a new session of the same owner open in its place, as
//! a client reconnecting. Operations: inbound messages on a slot (a grammar of MCP
//! 2025-11-25 client messages, with parameter and envelope mutations, plus raw garbage;
//! task ids are picked among every owner's tasks, so many requests are about another
//! owner's task), application commands through call handles (respond, fail, set the
//! message, cancel the task, request input, report progress, start an offered task, create
//! and remove tasks), time moving forward, to the next deadline and backward, closing and
//! reconnecting, walking `tasks/list`, and (rarely) shutting the host down. The host's
//! `max_tasks` and `max_tasks_per_owner` are both fuzzed small (1–6 and 1–4).
//!
//! Invariants checked after every operation:
//! - no panic, a bounded number of outputs; every message is valid JSON-RPC 2.0, labelled
//!   as what it is, addressed to an open session, and valid against the 2025-11-25 schema
//!   (as the [oracle](super::check::Oracle) samples it);
//! - every trusted inbound request gets exactly one response on its session (parked
//!   `tasks/result` at terminal or expiry), notifications none, and nothing answers an id
//!   nobody on that session is owed;
//! - isolation: no message to a session names a task of another owner (task views,
//!   created and listed tasks, related-task `_meta`, error data); `tasks/get|result|cancel`
//!   of another owner's task get `-32602` with exactly the error an unknown id gets, park
//!   nothing and change nothing; `tasks/list` lists exactly the caller owner's tasks;
//! - a session of the same owner sees them all: `tasks/get|result|cancel|list` answer as
//!   the spec says for live, terminal, expired and unknown tasks; parked `tasks/result`
//!   calls are answered wherever they were parked; every session following a task (it
//!   created it, asked about it or waits for its result) gets a status notification with
//!   the new view at each change, and sessions not following it get none;
//! - every view of a task follows the transition table; terminal views never change;
//!   `createdAt ≤ lastUpdatedAt`, both never decrease, and a task is born `working` now;
//! - a task is held exactly until `createdAt + ttl` (closing its session does not end it),
//!   never more than `max_tasks` at once nor `max_tasks_per_owner` of one owner; a
//!   "Task limit reached" error names the limit that was really reached;
//! - commands through a call handle answer with the one rule for each case: a gone call
//!   is `UnknownCall`, a finished task `TaskFinished`, a call with no task `UnknownCall`
//!   for task-only commands, an unoffered call `NotATaskOffer`; a refused command changes
//!   nothing and says nothing; every call gets at most one `Stop`;
//! - closing a session stops exactly its plain calls and fails exactly its input
//!   requests, sends nothing, and keeps its tasks; `shutdown` stops every running task
//!   and plain call, closes every session, and leaves nothing scheduled; a closed session
//!   stays silent, and a shut-down host refuses input (`UsageError::ShutDown`) and stays
//!   silent; `handle_timeout` leaves no deadline due;
//! - the same input gives an identical transcript (the body runs twice).
//!
//! The body's parts: `grammar` decodes the input (the configuration, then one operation per
//! step), `ops` applies each operation to the host, `model` is what the harness knows of
//! the host and how each output updates it, and `invariants` holds the checks.

mod grammar;
mod invariants;
mod model;
mod ops;

use std::sync::atomic::{AtomicUsize, Ordering};

use super::check::{Oracle, Schema};
use super::reader::Reader;
use super::{Record, Transcript};
use model::Harness;

/// Runs the body on one input, sampling the schema oracle (the libFuzzer target).
pub fn run(data: &[u8]) {
    run_with(data, Schema::Sampled);
}

/// Runs the body on one input with the given oracle (twice when it asks for that).
pub fn run_with(data: &[u8], schema: Schema) {
    super::twice(data, schema, |d, record| drive(d, schema, record));
}

/// Runs the body once and returns its transcript, recorded as `record` says.
pub fn drive(data: &[u8], schema: Schema, record: Record) -> Transcript {
    let mut r = Reader::new(data);
    let deep = super::deep(schema, data);
    let Some(mut h) = Harness::new(&mut r, Oracle::new(schema, data), deep, record) else {
        return Transcript::new(record);
    };
    let mut steps = 0;
    while !r.is_empty() && steps < MAX_STEPS && !h.shut {
        if h.step(&mut r).is_none() {
            break;
        }
        steps += 1;
    }
    h.finish();
    std::mem::replace(&mut h.transcript, Transcript::new(Record::Off))
}

/// How often the multi-session invariants were exercised (since the process started):
/// the seeded loop asserts each is reached.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// `tasks/get|result|cancel` of another owner's live task, answered like an unknown id.
    pub foreign: usize,
    /// `tasks/list` walks that listed exactly the caller owner's tasks, with another
    /// owner holding tasks.
    pub lists: usize,
    /// Sessions closed and reopened for the same owner.
    pub reconnects: usize,
    /// Status changes heard by a following session other than the task's creator.
    pub notified_elsewhere: usize,
    /// Parked `tasks/result` calls answered on a session other than the task's creator.
    pub parked_elsewhere: usize,
    /// Log messages the application's calls sent.
    pub logged: usize,
    /// Tasks the application cancelled itself.
    pub app_cancelled: usize,
}

static STATS: [AtomicUsize; 7] = [const { AtomicUsize::new(0) }; 7];

fn count(i: usize) {
    STATS[i].fetch_add(1, Ordering::Relaxed);
}

/// How often the multi-session invariants were exercised so far in this process.
pub fn stats() -> Stats {
    let n = |i: usize| STATS[i].load(Ordering::Relaxed);
    Stats {
        foreign: n(0),
        lists: n(1),
        reconnects: n(2),
        notified_elsewhere: n(3),
        parked_elsewhere: n(4),
        logged: n(5),
        app_cancelled: n(6),
    }
}

/// Operations per run: keeps one input's cost bounded.
const MAX_STEPS: usize = 128;
