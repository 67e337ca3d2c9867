//! Fuzz bodies for the task host, shared by the cargo-fuzz targets (`fuzz/`) and the
//! seeded loop that runs on stable inside `cargo test` (`tests/tests/fuzz/`).
//!
//! Each body takes the raw fuzz input, decodes every decision from it with a
//! [`reader::Reader`] (running out of bytes ends the run cleanly), drives engine hosts and
//! their sessions, and panics when an invariant breaks:
//!
//! - [`framing::run`]: bytes fed to a server session in one chunk, in random splits and
//!   byte by byte give the same outputs; every output is valid JSON-RPC; a second session
//!   of another owner on the same host hears nothing.
//! - [`server_ops::run`]: one server host with three or four sessions of two or three
//!   owners (sessions close and reconnect), driven by inbound messages (a grammar of MCP
//!   messages with mutations, plus raw garbage), application commands through call
//!   handles, and time; owner isolation is an invariant.
//! - [`v2026_ops::run`]: one server host serving the 2026-07-28 era on two sessions of two
//!   owners beside a 2025-11-25 session: requests with right and wrong per-request
//!   `_meta`, application commands, time; answers checked against the 2026 schemas.
//! - [`pair_faults::run`]: a client host and a server host over an in-memory wire that
//!   drops, duplicates and reorders messages, either side restarting, plus a second client
//!   host of another owner on the same server whose traffic never reaches the first.
//! - [`replicas::run`]: two server hosts sharing one task store as replicas: each one's
//!   journal written to a store model that never changes a finished task, each stored change
//!   reported to the other ([`Host::sync`]) late, out of order or twice; the replicas agree
//!   with the store once everything is delivered.
//!
//! # What is checked in depth, and what on a sample
//!
//! A run in depth checks every message: one line of JSON, JSON-RPC 2.0 structure
//! ([`check::parse_output`]), its [`MessageKind`] matching its
//! content ([`check::check_kind`]), the session it goes to being open, exactly-one-response
//! accounting, task views against the transition table, owner isolation, and every other
//! invariant listed in each body's docs, after every operation. The seeded loop and
//! `replay` in `cargo test` ([`check::Schema::Full`]) run every input in depth. The
//! libFuzzer targets ([`check::Schema::Sampled`]) sample by the input's 64-bit FNV-1a hash
//! `h` ([`fnv`]), so a crash replays and a replay in `cargo test` checks a superset:
//!
//! - Depth ([`deep`]): inputs with `h % 8 == 0` ([`DEEP_ONE_IN`]) run in depth; the others
//!   run lean: each message is taken as its `MessageKind` labels it ([`check::Msg::labelled`];
//!   its envelope is read only when a check asks for a member past the id, and then an
//!   invalid one still panics), and of the per-operation checks only those the model needs to
//!   stay in step with the host run (response accounting, owner isolation, statuses against
//!   the transition table); the whole-host snapshots, the views other sessions would see and
//!   the quota recounts are skipped. `tests/tests/fuzz/digests.rs` shows that lean and deep
//!   runs decode every seed input alike, so a lean run explores the same states.
//! - The JSON-Schema oracle (the MCP 2025-11-25 schema through `jsonschema`: a message as
//!   a `JSONRPCMessage`, as its request or notification definition, and a success result
//!   as the result definition of the method it answers, or `CreateTaskResult`), by
//!   [`check::Oracle`]: every message when `h % 64 == 0` ([`check::FULL_ONE_IN`]);
//!   otherwise, when `h % 8 == 0` ([`check::KINDS_ONE_IN`]), the first message
//!   ([`check::PER_KIND`]) of each kind in the run, a kind being the envelope (request,
//!   notification, result, error) and the specific definition it is checked against (the
//!   first `tasks/get` answer, the first `notifications/tasks/status`, the first
//!   `CreateTaskResult`, the first error, …); otherwise none. ([`check::Schema::Structural`],
//!   the seed-corpus writer: in depth, no schema.)
//! - The determinism check (the body runs twice and the transcripts' digests must be
//!   equal): every input with `Full`; with `Sampled`, the inputs with `h % 8 == 1`
//!   ([`TWICE_ONE_IN`]). Framing always compares its three feeds.
//!
//! Transcripts are hashed as they are written ([`Transcript`]) and not written at all
//! when nothing compares or reads them; the text is kept only when asked for (the
//! seed-corpus writer, or `TASKWIRE_FUZZ_TRACE=<lines>` to print the end of a failing run,
//! 80 lines unless more than 1 is given).

pub mod check;
pub mod framing;
pub mod pair_faults;
pub mod reader;
pub mod replicas;
pub mod server_ops;
pub mod v2026_client;
pub mod v2026_ops;

use std::fmt;
use std::sync::OnceLock;

use serde_json::Value;
use taskwire_engine::{
    Config, Event, Host, MessageKind, Output, RequestId, SessionId, TaskDecision, TaskIdSource,
    TaskSupport, Tool, ToolDef, UsageError,
};

use check::{Msg, Schema};

/// 2026-01-15T09:00:00.000Z: where every run's clock starts.
pub const EPOCH: u64 = 1_768_467_600_000;

/// With [`Schema::Sampled`], the body runs twice (determinism) on the inputs whose hash is
/// 1 modulo this.
pub const TWICE_ONE_IN: u64 = 8;

/// With [`Schema::Sampled`], the inputs whose hash is 0 modulo this are checked in depth
/// (every check, as with [`Schema::Full`] but for the schema sample); the others as with
/// [`Schema::Lean`].
pub const DEEP_ONE_IN: u64 = 8;

/// Whether a run on `input` checks in depth: always but with [`Schema::Lean`], and with
/// [`Schema::Sampled`] on one input in [`DEEP_ONE_IN`] by its hash.
pub fn deep(schema: Schema, input: &[u8]) -> bool {
    match schema {
        Schema::Full | Schema::Structural => true,
        Schema::Sampled => fnv(input) % DEEP_ONE_IN == 0,
        Schema::Lean => false,
    }
}

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

/// 64-bit FNV-1a of `bytes`: the hash that picks an input's sample.
pub fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The tools every fuzzed server offers: one per task-support level (`req` with an
/// immediate response), and `app`, whose requested tasks the application decides on.
pub fn add_tools(host: &mut Host) {
    host.add_tool(Tool::new("opt", TaskSupport::Optional));
    host.add_tool(ToolDef {
        tool: Tool::new("req", TaskSupport::Required),
        immediate_response: Some("working on it".into()),
        decision: TaskDecision::Policy,
    });
    host.add_tool(Tool::new("forb", TaskSupport::Forbidden));
    host.add_tool(ToolDef {
        tool: Tool::new("app", TaskSupport::Optional),
        immediate_response: None,
        decision: TaskDecision::App,
    });
}

/// Task ids for a fuzzed receiver: unique, repeating (each id twice, to exercise the
/// collision retry), constant (every second task collides for good), or unique with
/// characters that need escaping.
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

/// A configuration for fuzzed hosts (a client opens in 2025-11-25).
pub fn config(name: &str) -> Config {
    Config {
        client_era: taskwire_engine::ClientEra::Only(taskwire_engine::Era::V2025_11_25),
        ..Config::new(name, "0.0.0")
    }
}

/// How much of a run's transcript is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Record {
    /// Nothing (the run is not compared with another and nobody reads it).
    Off,
    /// A digest only (the determinism check compares two runs' digests).
    Digest,
    /// The whole text (the seed-corpus writer; a failing determinism check).
    Text,
}

/// A running transcript of one run: every line is hashed as it is written, and kept as
/// text only when asked for.
#[derive(Debug)]
pub struct Transcript {
    on: bool,
    text: Option<String>,
    hash: u64,
    bytes: usize,
}

impl Transcript {
    /// A transcript recording as `record` says (the whole text when `TASKWIRE_FUZZ_TRACE`
    /// is set).
    pub fn new(record: Record) -> Self {
        let text = record == Record::Text || tracing();
        Transcript {
            on: text || record == Record::Digest,
            text: text.then(String::new),
            hash: 0x243F_6A88_85A3_08D3,
            bytes: 0,
        }
    }

    /// Whether anything is recorded (lines are not even formatted otherwise).
    pub fn on(&self) -> bool {
        self.on
    }

    /// The digest of everything written: compared between the two runs of one input.
    pub fn digest(&self) -> (u64, usize) {
        (self.hash, self.bytes)
    }

    /// The text, when kept (empty otherwise).
    pub fn text(&self) -> &str {
        self.text.as_deref().unwrap_or("")
    }

    /// Takes the text out (empty when not kept).
    pub fn into_text(self) -> String {
        self.text.unwrap_or_default()
    }

    fn mix(&mut self, word: u64) {
        self.hash = (self.hash.rotate_left(5) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

impl fmt::Write for Transcript {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        if !self.on {
            return Ok(());
        }
        let bytes = s.as_bytes();
        self.bytes += bytes.len();
        let mut chunks = bytes.chunks_exact(8);
        for chunk in chunks.by_ref() {
            self.mix(u64::from_le_bytes(chunk.try_into().expect("8 bytes")));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut word = [0u8; 8];
            word[..rest.len()].copy_from_slice(rest);
            self.mix(u64::from_le_bytes(word) ^ (rest.len() as u64) << 59);
        }
        if let Some(text) = &mut self.text {
            text.push_str(s);
        }
        Ok(())
    }
}

/// Appends one line to a transcript (`format_args!` style).
macro_rules! tline {
    ($t:expr, $($arg:tt)*) => {{
        use ::std::fmt::Write as _;
        if $t.on() {
            let _ = writeln!($t, $($arg)*);
        }
    }};
}
pub(crate) use tline;

/// Whether `TASKWIRE_FUZZ_TRACE` is set (read once).
pub fn tracing() -> bool {
    static TRACE: OnceLock<bool> = OnceLock::new();
    *TRACE.get_or_init(|| std::env::var_os("TASKWIRE_FUZZ_TRACE").is_some())
}

/// One message a host sent, checked structurally.
#[derive(Debug)]
pub struct Sent {
    /// The session it goes to.
    pub session: SessionId,
    /// What the host says it is.
    pub kind: MessageKind,
    /// The line as sent, classified.
    pub msg: Msg,
}

/// One output, in order.
#[derive(Debug)]
pub enum Out {
    /// A message (boxed: it is the larger variant by far).
    Send(Box<Sent>),
    /// An event.
    Event(Event),
}

/// Everything one call produced, in order.
#[derive(Debug, Default)]
pub struct Drained {
    /// The outputs.
    pub items: Vec<Out>,
}

impl Drained {
    /// The messages, in order.
    pub fn sends(&self) -> impl Iterator<Item = &Sent> {
        self.items.iter().filter_map(|o| match o {
            Out::Send(s) => Some(&**s),
            Out::Event(_) => None,
        })
    }

    /// The events, in order.
    pub fn events(&self) -> impl Iterator<Item = &Event> {
        self.items.iter().filter_map(|o| match o {
            Out::Event(e) => Some(e),
            Out::Send(_) => None,
        })
    }

    /// Number of outputs.
    pub fn count(&self) -> usize {
        self.items.len()
    }

    /// Number of messages.
    pub fn send_count(&self) -> usize {
        self.sends().count()
    }
}

/// Drains a host to `None`, checking every message structurally and against its
/// [`MessageKind`] when `checked` (otherwise each message is taken as labelled, see
/// [`check::Msg::labelled`]); panics (naming `who`) on an invalid message, a message for a
/// session that `open` says is not open (or that closed earlier in this drain), a journal
/// entry (these hosts are volatile), or more than `bound` outputs. Schema validation is the
/// caller's (it knows what each response answers).
pub fn drain(
    host: &mut Host,
    who: &str,
    bound: usize,
    open: &dyn Fn(SessionId) -> bool,
    transcript: &mut Transcript,
    checked: bool,
) -> Drained {
    let mut out = Drained::default();
    let mut closed: Vec<SessionId> = Vec::new();
    let mut answered: Vec<(SessionId, RequestId)> = Vec::new();
    while let Some(output) = host.poll_output() {
        assert!(
            out.items.len() < bound,
            "invariant: {who} produced more than {bound} outputs for one input"
        );
        match output {
            Output::Send(t) => {
                tline!(transcript, "{who} {} > {}", t.session, t.message);
                let msg = if checked {
                    let msg = check::parse_output(t.message).unwrap_or_else(|e| {
                        panic!("invariant: {who} sent an invalid message: {e}")
                    });
                    check::check_kind(&t.kind, &msg).unwrap_or_else(|e| {
                        panic!("invariant: {who} mislabelled a message: {e}: {}", msg.line)
                    });
                    msg
                } else {
                    check::Msg::labelled(t.message, &t.kind)
                };
                assert!(
                    open(t.session) && !closed.contains(&t.session),
                    "invariant: {who} sent to {}, which is closed: {}",
                    t.session,
                    msg.line
                );
                check_stream(who, t.session, &t.kind, &mut answered, &msg.line);
                out.items.push(Out::Send(Box::new(Sent {
                    session: t.session,
                    kind: t.kind,
                    msg,
                })));
            }
            Output::Event(event) => {
                if let Event::Closed { session } = &event {
                    closed.push(*session);
                }
                tline!(transcript, "{who} ! {event:?}");
                out.items.push(Out::Event(event));
            }
            Output::Journal(entry) => {
                panic!("invariant: {who} journals without durability: {entry:?}")
            }
            other => panic!("{who}: an output this harness does not know: {other:?}"),
        }
    }
    out
}

/// A message's stream ([`MessageKind::stream`]): nothing but a reply rides a request after
/// its reply (`answered`: the replies of this drain). A peer may send a request again under
/// an id whose request was answered (the engine answers each request it reads), so a
/// second reply on the same id is that request's; anything else there is a message riding
/// a finished stream.
fn check_stream(
    who: &str,
    session: SessionId,
    kind: &MessageKind,
    answered: &mut Vec<(SessionId, RequestId)>,
    line: &str,
) {
    let Some(id) = kind.stream() else {
        return;
    };
    let key = (session, id.clone());
    let reply = matches!(kind, MessageKind::Reply { .. });
    assert!(
        reply || !answered.contains(&key),
        "invariant: {who} sent on the stream of {id} after answering it: {line}"
    );
    if reply {
        answered.push(key);
    }
}

/// Checks an input's answer: taken, or refused with `UsageError::ShutDown` exactly when the
/// host was shut down (a shut-down host takes nothing more).
pub fn checked_input(result: Result<(), UsageError>, shut: bool) {
    match result {
        Ok(()) => assert!(!shut, "invariant: a shut-down host took input"),
        Err(UsageError::ShutDown) => assert!(shut, "invariant: a running host refused input"),
        Err(e) => panic!("invariant: input was refused: {e}"),
    }
}

/// Panics unless `host` has no deadline at or before its own clock (called right after
/// `handle_timeout`: handling a deadline must not leave it due).
pub fn assert_no_busy_loop(host: &Host, who: &str) {
    if let Some(at) = host.poll_timeout() {
        assert!(
            at > host.now(),
            "invariant: {who} still has a deadline due after handle_timeout \
             (deadline {at:?}, now {:?})",
            host.now()
        );
    }
}

/// Serializes a JSON value the way a peer would write it (compact, one line).
pub fn line(value: &Value) -> Vec<u8> {
    serde_json::to_vec(value).expect("JSON values serialize")
}

/// Runs `body` on the input, and again to compare transcript digests when `schema` asks
/// for the determinism check (always with [`Schema::Full`]; with [`Schema::Sampled`] when
/// the input's FNV-1a hash is 1 modulo [`TWICE_ONE_IN`]); panics unless both agree. On a
/// difference both runs are repeated keeping their text to show the first differing line.
pub fn twice(input: &[u8], schema: Schema, body: impl Fn(&[u8], Record) -> Transcript) {
    let again = match schema {
        Schema::Full | Schema::Structural => true,
        Schema::Sampled => fnv(input) % TWICE_ONE_IN == 1,
        Schema::Lean => false,
    };
    if !again {
        body(input, Record::Off);
        return;
    }
    let first = body(input, Record::Digest);
    let second = body(input, Record::Digest);
    if first.digest() == second.digest() {
        return;
    }
    let (a, b) = (body(input, Record::Text), body(input, Record::Text));
    let (a, b) = (a.text(), b.text());
    let at = a
        .lines()
        .zip(b.lines())
        .position(|(x, y)| x != y)
        .unwrap_or(0);
    panic!(
        "invariant: the same input gave different outputs (first difference at line {at}):\n\
         {:?}\n{:?}",
        a.lines().nth(at),
        b.lines().nth(at)
    );
}

/// Prints the end of a transcript when a check panics and `TASKWIRE_FUZZ_TRACE` is set
/// (its value: how many lines, 80 unless more than 1 is given; call from a harness's
/// `Drop`).
pub fn dump_on_panic(transcript: &Transcript) {
    if std::thread::panicking() && tracing() {
        let lines: Vec<&str> = transcript.text().lines().collect();
        let from = lines.len().saturating_sub(
            std::env::var("TASKWIRE_FUZZ_TRACE")
                .ok()
                .and_then(|v| v.parse::<usize>().ok())
                .filter(|&n| n > 1)
                .unwrap_or(80),
        );
        eprintln!("--- transcript (last {} lines) ---", lines.len() - from);
        for l in &lines[from..] {
            eprintln!("{l}");
        }
    }
}
