//! Fuzz bodies for the task state machine, shared by the cargo-fuzz targets (`fuzz/`) and
//! the seeded loop that runs on stable inside `cargo test` (`tests/fuzz_loop.rs`).
//!
//! Each body takes the raw fuzz input, decodes every decision from it with a
//! [`reader::Reader`] (running out of bytes ends the run cleanly), drives engine sessions,
//! and panics when an invariant breaks:
//!
//! - [`framing::run`]: bytes fed in one chunk, in random splits and byte by byte give the
//!   same outputs; every output is valid JSON-RPC.
//! - [`server_ops::run`]: one server session driven by inbound messages (a grammar of MCP
//!   messages with mutations, plus raw garbage), application commands and time.
//! - [`pair_faults::run`]: a client and a server over an in-memory wire that drops,
//!   duplicates and reorders messages, with either side restarting.

pub mod check;
pub mod framing;
pub mod pair_faults;
pub mod reader;
pub mod server_ops;

use serde_json::Value;
use taskwire_engine::{Config, Event, Output, Session, TaskIdSource, TaskSupport, Tool};

use check::{Msg, Schema};

/// 2026-01-15T09:00:00.000Z: where every run's clock starts.
pub const EPOCH: u64 = 1_768_467_600_000;

/// A small deterministic generator (xorshift64*) for the seeded loop and for split points.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator; any seed works (zero is remapped).
    pub fn new(seed: u64) -> Self {
        Rng(seed ^ 0x9E37_79B9_7F4A_7C15 | 1)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A number below `n` (`n` at least 1).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }

    /// `len` random bytes.
    pub fn bytes(&mut self, len: usize) -> Vec<u8> {
        (0..len).map(|_| self.next_u64() as u8).collect()
    }
}

/// The tools every fuzzed server offers: one per task-support level.
pub fn add_tools(session: &mut Session) {
    session.add_tool(Tool::new("opt", TaskSupport::Optional));
    session.add_tool(Tool::new("req", TaskSupport::Required));
    session.add_tool(Tool::new("forb", TaskSupport::Forbidden));
}

/// Task ids for a fuzzed receiver: unique, repeating (each id twice, to exercise the
/// collision retry), constant (every second task collides for good), or unique with
/// characters that need escaping and the cursor separator `:`.
pub fn task_ids(mode: u8) -> TaskIdSource {
    let mut n = 0u64;
    Box::new(move || {
        n += 1;
        match mode % 4 {
            0 => format!("task-{n}"),
            1 => format!("task-{}", n / 2),
            2 => "t".to_owned(),
            _ => format!("t:{n}\"é\\"),
        }
    })
}

/// A configuration for fuzzed sessions.
pub fn config(name: &str) -> Config {
    Config::new(name, "0.0.0")
}

/// Everything one call produced, in order.
#[derive(Debug, Default)]
pub struct Drained {
    /// Messages, with their validated form.
    pub sends: Vec<(String, Msg)>,
    /// Events.
    pub events: Vec<Event>,
    /// Messages and events in order, for the transcript.
    pub count: usize,
}

/// Drains a session to `None`, validating every message. Panics (with `who` in the message)
/// on an invalid message or on more than `bound` outputs.
pub fn drain(
    session: &mut Session,
    who: &str,
    schema: Schema,
    bound: usize,
    transcript: &mut String,
) -> Drained {
    let mut out = Drained::default();
    while let Some(output) = session.poll_output() {
        out.count += 1;
        assert!(
            out.count <= bound,
            "invariant: {who} produced more than {bound} outputs for one input"
        );
        match output {
            Output::Send(line) => {
                let msg = check::parse_output(&line, schema)
                    .unwrap_or_else(|e| panic!("invariant: {who} sent an invalid message: {e}"));
                transcript.push_str(who);
                transcript.push_str(" > ");
                transcript.push_str(&line);
                transcript.push('\n');
                out.sends.push((line, msg));
            }
            Output::Event(event) => {
                transcript.push_str(&format!("{who} ! {event:?}\n"));
                out.events.push(event);
            }
        }
    }
    out
}

/// Panics unless `session` has no deadline at or before its own clock (called right after
/// `handle_timeout`: handling a deadline must not leave it due).
pub fn assert_no_busy_loop(session: &Session, who: &str) {
    if let Some(at) = session.poll_timeout() {
        assert!(
            at > session.now(),
            "invariant: {who} still has a deadline due after handle_timeout \
             (deadline {at:?}, now {:?})",
            session.now()
        );
    }
}

/// Serializes a JSON value the way a peer would write it (compact, one line).
pub fn line(value: &Value) -> Vec<u8> {
    serde_json::to_vec(value).expect("JSON values serialize")
}

/// Runs `body` twice on the same input and panics unless both transcripts are identical.
pub fn twice(input: &[u8], body: impl Fn(&[u8]) -> String) {
    let first = body(input);
    let second = body(input);
    if first != second {
        let at = first
            .lines()
            .zip(second.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(0);
        panic!(
            "invariant: the same input gave different outputs (first difference at line {at}):\n\
             {:?}\n{:?}",
            first.lines().nth(at),
            second.lines().nth(at)
        );
    }
}

/// Prints the end of a transcript when a check panics and `TASKWIRE_FUZZ_TRACE` is set
/// (call from a harness's `Drop`).
pub fn dump_on_panic(transcript: &str) {
    if std::thread::panicking() && std::env::var_os("TASKWIRE_FUZZ_TRACE").is_some() {
        let lines: Vec<&str> = transcript.lines().collect();
        let from = lines.len().saturating_sub(60);
        eprintln!("--- transcript (last {} lines) ---", lines.len() - from);
        for l in &lines[from..] {
            eprintln!("{l}");
        }
    }
}
