//! Body 3: a client host and a server host over an in-memory wire with faults, and a
//! second client of another owner on the same server.
//!
//! Three hosts: alice's client, the server (one session for alice, one for bob), and
//! bob's client. Alice's wire may drop, duplicate and reorder messages (the input picks
//! which faults the run may use); bob's wire is reliable. Operations: deliveries (in
//! order, out of order, duplicated), drops, time advances, restarts (alice's client
//! restarts: the server sees EOF on alice's session, keeps her tasks, and a new session
//! of hers connects; or the server restarts: both clients see EOF and reconnect to a new
//! server), and the applications' commands in both directions of task hosting:
//! - the clients call tools as tasks (the server hosts them): `tasks/get`,
//!   `tasks/cancel`, `tasks/result`, `tasks/list`, auto-poll on/off, answering the
//!   server's input requests; the server application answers, fails, updates, asks for
//!   input and answers plain calls through call handles;
//! - the server sends task-augmented `sampling/createMessage` to alice's client (the
//!   client hosts the task), and the client application answers it;
//! - bob probes alice's tasks by id (`tasks/get|result|cancel`, `tasks/list`).
//!
//! Invariants, besides everything the single-host checks cover (validity, labels, schema
//! as the [oracle](super::check::Oracle) samples it, exactly-one answers on every session,
//! transition table on the hosts' and the requestors' views, bounded outputs, no busy
//! loop, determinism):
//! - isolation: nothing the server sends on one owner's session names a task of the
//!   other; bob's probes of alice's tasks get `-32602`, reach nothing of alice's (no
//!   message on her session, no change to her tasks), and his `tasks/list` shows only his
//!   own; bob's client never follows a task of alice's;
//! - a requestor never polls a task sooner than its minimum interval;
//! - a requestor reports at most one `TaskResult` per task, and only for tasks it created;
//!   on close, every task still open gets exactly one;
//! - the server's tasks outlive alice's connection (her client restarting) until their
//!   ttl, and a restarted client can read them by id;
//! - once the wires are quiet, each requestor's view of each task it follows equals the
//!   host's (or the task has expired and the requestor's view says so by its ttl);
//! - without drops and duplicates, every task a requestor created ends with exactly one
//!   `TaskResult`, equal to what the host application supplied (or `-32602` once purged);
//!   bob's (reliable) tasks always.
//!
//! The body's parts: `grammar` decodes the input (the configuration and the faults the
//! run may use, then one operation per step), `ops` moves messages over the wires and time
//! forward and restarts hosts, `model` is what the harness knows of the three hosts and how
//! each output updates it, and `invariants` holds the checks, during the run and at its end.

mod grammar;
mod invariants;
mod model;
mod ops;

use super::check::{Oracle, Schema};
use super::reader::Reader;
use super::{Record, Transcript};
use model::World;

/// Runs the body on one input, sampling the schema oracle (the libFuzzer target).
pub fn run(data: &[u8]) {
    run_with(data, Schema::Sampled);
}

/// Runs the body on one input with the given oracle (twice when it asks for that).
pub fn run_with(data: &[u8], schema: Schema) {
    super::twice(data, schema, |d, record| drive(d, schema, record));
}

/// Operations per run.
const MAX_STEPS: usize = 128;

/// Runs the body once and returns its transcript, recorded as `record` says.
pub fn drive(data: &[u8], schema: Schema, record: Record) -> Transcript {
    let mut r = Reader::new(data);
    let deep = super::deep(schema, data);
    let Some(mut w) = World::new(&mut r, Oracle::new(schema, data), deep, record) else {
        return Transcript::new(record);
    };
    let mut steps = 0;
    while !r.is_empty() && steps < MAX_STEPS {
        if w.step(&mut r).is_none() {
            break;
        }
        steps += 1;
    }
    w.finish();
    std::mem::replace(&mut w.transcript, Transcript::new(Record::Off))
}
