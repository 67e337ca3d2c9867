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
//! message, request input, report progress, start an offered task, create and remove
//! tasks), time moving forward, to the next deadline and backward, closing and
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
//!   and a shut-down host stay silent; `handle_timeout` leaves no deadline due;
//! - the same input gives an identical transcript (the body runs twice).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Debug;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{json, Value};
use taskwire_engine::era::v2025_11_25::{LATEST_VERSION, RELATED_TASK};
use taskwire_engine::time::MAX_MILLIS;
use taskwire_engine::{
    CallId, Event, Host, InputId, LogLevel, Millis, Outcome, Owner, Quota, Role, RpcError,
    SessionId, StopReason, TaskInfo, TaskSnapshot, TaskStatus, UsageError,
};

use super::check::{
    self, id_key, output_bound, wire_snapshot, Class, IdKey, Ledger, Oracle, Schema, TaskWatch,
};
use super::reader::Reader;
use super::{add_tools, assert_no_busy_loop, config, line, task_ids, tline, Drained, Transcript};
use super::{Out, Record, EPOCH};

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
    let Some(mut h) = Harness::new(&mut r, Oracle::new(schema, data), record) else {
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
}

static STATS: [AtomicUsize; 6] = [const { AtomicUsize::new(0) }; 6];

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
    }
}

/// Operations per run: keeps one input's cost bounded.
const MAX_STEPS: usize = 128;

/// The owners sessions act for.
const OWNERS: [&str; 3] = ["alice", "bob", "carol"];

/// Which owner each slot's sessions act for.
const LAYOUTS: [&[usize]; 4] = [&[0, 0, 1], &[0, 1, 1], &[0, 0, 1, 1], &[0, 1, 2]];

/// The fuzzed configuration facts the checks depend on.
#[derive(Debug)]
struct Fz {
    max_tasks: usize,
    per_owner: usize,
    tasks_enabled: bool,
    list: bool,
    cancel: bool,
    page_size: usize,
    notifications: bool,
    logging: bool,
}

/// What a trusted `tasks/*` request must get back.
#[derive(Debug)]
enum Expect {
    Nothing,
    Get(IdKey, String),
    Result(IdKey, String),
    Cancel(IdKey, String),
    List(IdKey, bool),
}

impl Expect {
    fn key(&self) -> Option<&IdKey> {
        match self {
            Expect::Nothing => None,
            Expect::Get(k, _)
            | Expect::Result(k, _)
            | Expect::Cancel(k, _)
            | Expect::List(k, _) => Some(k),
        }
    }

    fn task(&self) -> Option<&str> {
        match self {
            Expect::Get(_, t) | Expect::Result(_, t) | Expect::Cancel(_, t) => Some(t),
            _ => None,
        }
    }

    fn method(&self) -> &'static str {
        match self {
            Expect::Get(..) => "tasks/get",
            Expect::Result(..) => "tasks/result",
            Expect::Cancel(..) => "tasks/cancel",
            Expect::List(..) => "tasks/list",
            Expect::Nothing => "",
        }
    }
}

/// One session position: the session now open there (or closed), and what its client
/// has asked.
#[derive(Debug)]
struct Slot {
    owner: usize,
    session: SessionId,
    open: bool,
    caps: Value,
    ledger: Ledger,
    used_ids: Vec<Value>,
    /// Trusted `tasks/result` requests parked on a task.
    parked: BTreeMap<IdKey, String>,
    /// Untrusted input reached this session: it may follow tasks the harness cannot know of.
    loose: bool,
    /// Ids of the server's requests on this session.
    out_ids: BTreeSet<IdKey>,
}

impl Slot {
    fn new(owner: usize, session: SessionId) -> Self {
        Slot {
            owner,
            session,
            open: true,
            caps: Value::Null,
            ledger: Ledger::default(),
            used_ids: Vec::new(),
            parked: BTreeMap::new(),
            loose: false,
            out_ids: BTreeSet::new(),
        }
    }
}

/// The state a refused command must not change: tasks, their count, the next deadline,
/// which sessions are open.
type Snapshot = (
    Vec<Option<(TaskInfo, Option<Option<bool>>)>>,
    usize,
    Option<Millis>,
    Vec<bool>,
);

/// A call the application holds a handle to.
#[derive(Debug)]
struct AppCall {
    call: CallId,
    /// The session it came from (`None` for an app-created task).
    session: Option<SessionId>,
    task: Option<String>,
    offered: bool,
    /// The engine still knows the call (not answered, not stopped for good, not expired).
    alive: bool,
    stopped: Option<StopReason>,
}

/// A task the host holds, as last checked.
#[derive(Debug)]
struct Known {
    /// Its status fields and shown status (`None` until first checked).
    info: Option<(TaskInfo, TaskStatus)>,
    /// Its wire view.
    view: Value,
}

/// An input request of the server awaiting the client.
#[derive(Debug)]
struct Input {
    input: Option<InputId>,
    call: Option<CallId>,
    task: Option<String>,
}

struct Harness {
    host: Host,
    fz: Fz,
    now: u64,
    oracle: Oracle,
    slots: Vec<Slot>,
    watch: TaskWatch,
    /// The owner of every task the harness has seen (its latest incarnation).
    task_owner: BTreeMap<String, usize>,
    /// The session each task was created on (none for app-created tasks).
    creator: BTreeMap<String, SessionId>,
    /// Sessions following each task, in the order they started following.
    followers: BTreeMap<String, Vec<SessionId>>,
    calls: Vec<AppCall>,
    /// The server's input requests awaiting an answer: (session, id) → what they are for.
    inputs: BTreeMap<(SessionId, IdKey), Input>,
    /// Requests the server sent since the last command (an input request's message).
    new_requests: Vec<(SessionId, IdKey, Option<String>, String)>,
    /// Every task the host holds (as of the last between-steps check, plus those created
    /// since), with its last view.
    known: BTreeMap<String, Known>,
    /// Status notifications since the last between-steps check: (session, task, view).
    status_seen: Vec<(SessionId, String, Value)>,
    /// The `-32602` error each `tasks/*` method gives for a task the caller cannot see.
    not_found: BTreeMap<&'static str, Value>,
    /// Sessions closed so far (they must stay silent).
    closed: Vec<SessionId>,
    transcript: Transcript,
    next_id: i64,
    cursors: Vec<String>,
    shut: bool,
    /// The next command may be refused with the requestor told (a failed `start_task`).
    tolerate_reply: bool,
    /// The owners, as the host names them.
    owners: [Owner; 3],
    /// Tasks per owner when the host's counts were last compared.
    counted: Option<[usize; 3]>,
}

impl Drop for Harness {
    fn drop(&mut self) {
        super::dump_on_panic(&self.transcript);
    }
}

impl Harness {
    fn new(r: &mut Reader, oracle: Oracle, record: Record) -> Option<Self> {
        let (b0, b1, b2, b3, b4) = (r.u8()?, r.u8()?, r.u8()?, r.u8()?, r.u8()?);
        let mut cfg = config("fuzz-server");
        cfg.tasks.enabled = b0 & 7 != 0;
        cfg.tasks.list = b0 & 8 == 0;
        cfg.tasks.cancel = b0 & 16 == 0;
        cfg.tasks.status_notifications = b0 & 32 == 0;
        cfg.tasks.max_tasks = 1 + usize::from(b1 % 6);
        cfg.tasks.max_tasks_per_owner = 1 + usize::from((b4 >> 2) % 4);
        cfg.tasks.page_size = 1 + usize::from((b1 >> 4) % 3);
        cfg.tasks.default_ttl_ms =
            [None, Some(100), Some(1000), Some(300_000)][usize::from(b2 & 3)];
        cfg.tasks.max_ttl_ms =
            [None, Some(500), Some(60_000), Some(86_400_000)][usize::from((b2 >> 2) & 3)];
        cfg.tasks.poll_interval_ms =
            [None, Some(0), Some(500), Some(u32::MAX)][usize::from((b2 >> 4) & 3)];
        cfg.request_timeout_ms = [None, Some(0), Some(1000), Some(60_000)][usize::from(b2 >> 6)];
        cfg.tasks.min_ttl_ms = if b3 & 128 != 0 { 1000 } else { 0 };
        if b4 & 16 != 0 {
            cfg.app_methods = vec!["resources/*".into()];
        }
        cfg.logging = b4 & 32 != 0;
        let fz = Fz {
            max_tasks: cfg.tasks.max_tasks,
            per_owner: cfg.tasks.max_tasks_per_owner,
            tasks_enabled: cfg.tasks.enabled,
            list: cfg.tasks.list,
            cancel: cfg.tasks.cancel,
            page_size: cfg.tasks.page_size,
            notifications: cfg.tasks.status_notifications,
            logging: cfg.logging,
        };
        let now = Millis(EPOCH);
        let mut host = Host::new(cfg, task_ids(b3), now);
        add_tools(&mut host);
        host.accept_unknown_tools(b0 & 64 != 0);
        let slots = LAYOUTS[usize::from(b4 & 3)]
            .iter()
            .map(|&owner| Slot::new(owner, host.open(now, Role::Server, OWNERS[owner])))
            .collect();
        let mut h = Harness {
            host,
            fz,
            now: EPOCH,
            oracle,
            slots,
            watch: TaskWatch::receiver(),
            task_owner: BTreeMap::new(),
            followers: BTreeMap::new(),
            creator: BTreeMap::new(),
            calls: Vec::new(),
            inputs: BTreeMap::new(),
            new_requests: Vec::new(),
            known: BTreeMap::new(),
            status_seen: Vec::new(),
            not_found: BTreeMap::new(),
            closed: Vec::new(),
            transcript: Transcript::new(record),
            next_id: 0,
            cursors: Vec::new(),
            shut: false,
            tolerate_reply: false,
            owners: OWNERS.map(Owner::from),
            counted: None,
        };
        if b0 & 128 == 0 {
            // Most runs start initialized so that the operations reach the task handlers.
            for k in 0..h.slots.len() {
                let caps = r.u8()?;
                h.handshake(k, capabilities(if k == 0 { b3 >> 2 } else { caps }));
            }
        }
        Some(h)
    }

    /// The client of slot `k` initializes with `caps`.
    fn handshake(&mut self, k: usize, caps: Value) {
        let init = json!({"jsonrpc":"2.0","id":"init","method":"initialize","params":{
            "protocolVersion": LATEST_VERSION, "capabilities": caps,
            "clientInfo": {"name":"fuzz","version":"1"}}});
        self.feed(k, line(&init), Some(&init), Expect::Nothing);
        let done = json!({"jsonrpc":"2.0","method":"notifications/initialized"});
        self.feed(k, line(&done), Some(&done), Expect::Nothing);
    }

    // ---- operations -------------------------------------------------------------------------

    fn step(&mut self, r: &mut Reader) -> Option<()> {
        let k = r.below(self.slots.len())?;
        match r.below(40)? {
            0..=13 => self.message(k, r)?,
            14 => {
                let garbage = r.bytes(256)?.to_vec();
                self.feed(k, garbage, None, Expect::Nothing);
            }
            15 | 16 => {
                let Some(c) = self.pick_call(r, |c| c.task.is_some())? else {
                    return Some(());
                };
                // A task's result is stored and re-sent with related-task `_meta`; a plain
                // call's goes out as given, so it must be valid.
                let result = if self.calls[c].task.is_some() {
                    tool_result(r)?
                } else {
                    call_result(r)?
                };
                self.respond(c, Ok(result));
            }
            17 => {
                let Some(c) = self.pick_call(r, |c| c.task.is_some())? else {
                    return Some(());
                };
                let error = rpc_error(r)?;
                self.respond(c, Err(error));
            }
            18 => {
                let Some(c) = self.pick_call(r, |c| c.task.is_some())? else {
                    return Some(());
                };
                let message = if r.bool()? { Some(r.word()?) } else { None };
                self.set_message(c, message);
            }
            19 => {
                let Some(c) = self.pick_call(r, |c| c.task.is_some() || c.session.is_some())?
                else {
                    return Some(());
                };
                let task = self.calls.get(c).is_some_and(|c| c.task.is_some());
                let (method, params) = input_request(r, task)?;
                self.request_input(c, method, params);
            }
            20 | 21 => {
                let Some(c) = self.pick_call(r, |c| c.task.is_none())? else {
                    return Some(());
                };
                let outcome = if r.one_in(4)? {
                    Err(rpc_error(r)?)
                } else {
                    Ok(call_result(r)?)
                };
                self.respond(c, outcome);
            }
            22 => {
                let task = if r.bool()? {
                    self.pick_task(r)?
                } else {
                    format!("app-{}", r.u8()?)
                };
                let owner = self.slots[k].owner;
                let ttl = [None, Some(0), Some(50), Some(10_000), Some(u64::MAX)][r.below(5)?];
                self.create_task(owner, task, ttl);
            }
            23 if r.one_in(4)? => {
                let level = [LogLevel::Debug, LogLevel::Error, LogLevel::Emergency][r.below(3)?];
                let Some(c) = self.pick_call(r, |_| true)? else {
                    return Some(());
                };
                let logger = if r.bool()? { Some(r.word()?) } else { None };
                self.log(c, level, logger);
            }
            23 => {
                let progress = [0.5, 1.0, 2.0, f64::NAN, f64::INFINITY, 1e308][r.below(6)?];
                let total = if r.bool()? { Some(10.0) } else { None };
                let message = if r.bool()? { Some(r.word()?) } else { None };
                let Some(c) = self.pick_call(r, |_| true)? else {
                    return Some(());
                };
                self.progress(c, progress, total, message);
            }
            24..=26 => {
                let delta = match r.below(6)? {
                    0 => 0,
                    1 => 1,
                    2 => u64::from(r.u8()?),
                    3 => u64::from(r.u16()?),
                    4 => u64::from(r.u16()?) * 1000,
                    _ => u64::from(r.u32()?) * 1000,
                };
                self.now = self.now.saturating_add(delta);
                self.timeout();
            }
            27 => {
                if let Some(at) = self.host.poll_timeout() {
                    self.now = self.now.max(at.0);
                }
                self.timeout();
            }
            28 => {
                // Time passed backwards is clamped, never a panic.
                let before = self.host.now();
                self.now = self.now.saturating_sub(u64::from(r.u16()?));
                self.timeout();
                assert_eq!(
                    self.host.now(),
                    before,
                    "invariant: the clock never goes back"
                );
            }
            29 => self.answer_input(k, r)?,
            30 => {
                if r.one_in(3)? {
                    let eof = r.bool()?;
                    let reopen = !r.one_in(4)?;
                    let init = !r.one_in(8)?;
                    let caps = r.u8()?;
                    self.close(k, eof);
                    if reopen {
                        self.reopen(k, init.then(|| capabilities(caps)));
                    }
                } else {
                    self.list_all(k);
                }
            }
            31 => {
                // Ask for a task's result: parked requests are the subtle part.
                let task = self.pick_task(r)?;
                self.ask(k, "tasks/result", task);
            }
            32 => {
                let Some(c) = self.pick_call(r, |c| c.offered)? else {
                    return Some(());
                };
                self.start_task(c);
            }
            33 => {
                let task = self.pick_task(r)?;
                self.remove_task(task);
            }
            34..=37 => {
                // Another owner's task, asked about by this slot: isolation.
                let owner = self.slots[k].owner;
                let foreign: Vec<String> = self
                    .task_owner
                    .iter()
                    .filter(|(id, o)| **o != owner && self.watch.knows(id))
                    .map(|(id, _)| id.clone())
                    .collect();
                if foreign.is_empty() {
                    return Some(());
                }
                let task = r.pick(&foreign)?.clone();
                let method =
                    ["tasks/get", "tasks/result", "tasks/cancel", "tasks/list"][r.below(4)?];
                if method == "tasks/list" {
                    self.list_all(k);
                } else {
                    self.ask(k, method, task);
                }
            }
            38 => {
                if r.one_in(8)? {
                    self.shutdown();
                }
            }
            _ => {
                // A slot that is closed reopens (a client reconnecting).
                if !self.slots[k].open {
                    let caps = r.u8()?;
                    self.reopen(k, Some(capabilities(caps)));
                }
            }
        }
        Some(())
    }

    /// A message from the grammar on slot `k`, possibly mutated.
    fn message(&mut self, k: usize, r: &mut Reader) -> Option<()> {
        let (mut msg, mut expect) = match r.below(17)? {
            0 => {
                let id = self.id(k, r)?;
                let version =
                    ["2025-11-25", "2025-06-18", "2024-11-05", "1999-01-01"][r.below(4)?];
                let caps = capabilities(r.u8()?);
                (
                    json!({"jsonrpc":"2.0","id":id,"method":"initialize","params":{
                        "protocolVersion":version,"capabilities":caps,
                        "clientInfo":{"name":"fuzz","version":"1"}}}),
                    Expect::Nothing,
                )
            }
            1 => (
                json!({"jsonrpc":"2.0","method":"notifications/initialized"}),
                Expect::Nothing,
            ),
            2 => (
                json!({"jsonrpc":"2.0","id":self.id(k, r)?,"method":"ping"}),
                Expect::Nothing,
            ),
            3 => {
                let params = match r.below(3)? {
                    0 => json!({}),
                    1 => json!({"cursor": format!("tools:{}", r.below(5)?)}),
                    _ => json!({"cursor": r.word()?}),
                };
                (
                    json!({"jsonrpc":"2.0","id":self.id(k, r)?,"method":"tools/list","params":params}),
                    Expect::Nothing,
                )
            }
            4 | 5 => (self.tools_call(k, r)?, Expect::Nothing),
            6..=8 => {
                let method = ["tasks/get", "tasks/result", "tasks/cancel"][r.below(3)?];
                let id = self.id(k, r)?;
                let key = id_key(&id).expect("generated ids are keys");
                let task = self.pick_task(r)?;
                let expect = match method {
                    "tasks/get" => Expect::Get(key, task.clone()),
                    "tasks/result" => Expect::Result(key, task.clone()),
                    _ => Expect::Cancel(key, task.clone()),
                };
                let mut params = json!({ "taskId": task });
                if r.one_in(8)? {
                    params["_meta"] = json!({ RELATED_TASK: {"taskId": "other"} });
                }
                (
                    json!({"jsonrpc":"2.0","id":id,"method":method,"params":params}),
                    expect,
                )
            }
            9 => {
                let id = self.id(k, r)?;
                let key = id_key(&id).expect("generated ids are keys");
                let cursor = match r.below(4)? {
                    0 | 1 if !self.cursors.is_empty() => Some(r.pick(&self.cursors)?.clone()),
                    0..=2 => None,
                    _ => Some(
                        ["", "x", "5:", ":", "99999999999999999999", "-1", "0"][r.below(7)?]
                            .to_owned(),
                    ),
                };
                let first_page = cursor.is_none();
                let params = match cursor {
                    Some(c) => json!({ "cursor": c }),
                    None => json!({}),
                };
                (
                    json!({"jsonrpc":"2.0","id":id,"method":"tasks/list","params":params}),
                    Expect::List(key, first_page),
                )
            }
            10 => {
                let used = &self.slots[k].used_ids;
                let target = if !used.is_empty() && r.below(4)? != 0 {
                    r.pick(used)?.clone()
                } else {
                    json!(r.u8()?)
                };
                (
                    json!({"jsonrpc":"2.0","method":"notifications/cancelled",
                        "params":{"requestId":target,"reason":"fuzz"}}),
                    Expect::Nothing,
                )
            }
            11 => return self.answer_input(k, r),
            12 => {
                let status = [
                    "working",
                    "input_required",
                    "completed",
                    "failed",
                    "cancelled",
                    "x",
                ][r.below(6)?];
                let task = self.pick_task(r)?;
                (
                    json!({"jsonrpc":"2.0","method":"notifications/tasks/status","params":{
                        "taskId":task,"status":status,
                        "createdAt":"2026-01-15T09:00:00Z","lastUpdatedAt":"2026-01-15T09:00:01Z",
                        "ttl":null}}),
                    Expect::Nothing,
                )
            }
            13 => (
                json!({"jsonrpc":"2.0","method":"notifications/progress",
                    "params":{"progressToken":"p","progress":1}}),
                Expect::Nothing,
            ),
            14 => {
                let method = [
                    "tools/foo",
                    "resources/list",
                    "",
                    "notifications/x",
                    "tasks/update",
                ][r.below(5)?];
                if r.bool()? {
                    (json!({"jsonrpc":"2.0","method":method}), Expect::Nothing)
                } else {
                    (
                        json!({"jsonrpc":"2.0","id":self.id(k, r)?,"method":method,"params":{}}),
                        Expect::Nothing,
                    )
                }
            }
            15 => (
                json!({"jsonrpc":"2.0","id":self.id(k, r)?,"method":"resources/read",
                    "params":{"uri":"file:///x","_meta":{"progressToken":"r"}}}),
                Expect::Nothing,
            ),
            _ => {
                let method =
                    ["sampling/createMessage", "elicitation/create", "roots/list"][r.below(3)?];
                (
                    json!({"jsonrpc":"2.0","id":self.id(k, r)?,"method":method,
                        "params":{"task":{}}}),
                    Expect::Nothing,
                )
            }
        };
        match r.below(16)? {
            0 | 1 => {
                mutate_params(&mut msg, r)?;
                expect = Expect::Nothing;
            }
            2 => {
                let bytes = mutate_envelope(msg, r)?;
                self.feed(k, bytes, None, Expect::Nothing);
                return Some(());
            }
            _ => {}
        }
        self.feed(k, line(&msg), Some(&msg), expect);
        Some(())
    }

    fn tools_call(&mut self, k: usize, r: &mut Reader) -> Option<Value> {
        let name = ["opt", "req", "forb", "nope", "app"][r.below(5)?];
        let mut params = json!({ "name": name });
        match r.below(6)? {
            0 => {}
            1 => params["arguments"] = json!({}),
            2 => params["arguments"] = json!({"x": 1}),
            3 => params["arguments"] = json!([1]),
            4 => params["arguments"] = Value::Null,
            _ => params["arguments"] = json!("s"),
        }
        match r.below(10)? {
            0 | 1 => {}
            2 => params["task"] = json!({}),
            3 => params["task"] = json!({"ttl": r.u16()?}),
            4 => params["task"] = json!({"ttl": u64::from(r.u32()?) * 1000}),
            5 => params["task"] = json!({"ttl": null}),
            6 => params["task"] = json!({"ttl": -5}),
            7 => params["task"] = json!({"ttl": 1.5}),
            8 => {
                params["task"] = [json!(null), json!("x"), json!({"ttl": "x"})][r.below(3)?].clone()
            }
            _ => params["task"] = json!({"ttl": 0}),
        }
        match r.below(4)? {
            0 => params["_meta"] = json!({"progressToken": "p"}),
            1 => params["_meta"] = json!({"progressToken": 7}),
            _ => {}
        }
        Some(json!({"jsonrpc":"2.0","id":self.id(k, r)?,"method":"tools/call","params":params}))
    }

    /// The client of slot `k` answers one of the server's input requests (or an unknown id).
    fn answer_input(&mut self, k: usize, r: &mut Reader) -> Option<()> {
        let session = self.slots[k].session;
        let keys: Vec<IdKey> = self
            .inputs
            .keys()
            .filter(|(s, _)| *s == session)
            .map(|(_, key)| key.clone())
            .collect();
        let id = if !keys.is_empty() && r.below(4)? != 0 {
            key_json(r.pick(&keys)?)
        } else {
            json!(r.u8()?)
        };
        let msg = match r.below(4)? {
            0 => json!({"jsonrpc":"2.0","id":id,"error":{"code":-1,"message":"no"}}),
            1 => json!({"jsonrpc":"2.0","id":id,"result":{"action":"decline"}}),
            _ => json!({"jsonrpc":"2.0","id":id,"result":{"action":"accept","content":{"a":"b"}}}),
        };
        self.feed(k, line(&msg), Some(&msg), Expect::Nothing);
        Some(())
    }

    /// Slot `k` asks `method` about `task` with a fresh id.
    fn ask(&mut self, k: usize, method: &str, task: String) {
        let id = self.fresh_id(k);
        let key = id_key(&id).expect("fresh ids are keys");
        let msg = json!({"jsonrpc":"2.0","id":id,"method":method,"params":{"taskId":task}});
        let expect = match method {
            "tasks/get" => Expect::Get(key, task),
            "tasks/result" => Expect::Result(key, task),
            _ => Expect::Cancel(key, task),
        };
        self.feed(k, line(&msg), Some(&msg), expect);
    }

    /// Walks every `tasks/list` page on slot `k`: each of the owner's tasks is listed
    /// exactly once, and no other owner's.
    fn list_all(&mut self, k: usize) {
        if !self.slots[k].open
            || self.host.protocol_version(self.slots[k].session) != Some(LATEST_VERSION)
            || !self.fz.tasks_enabled
            || !self.fz.list
        {
            return;
        }
        let mut cursor: Option<String> = None;
        let mut listed: Vec<String> = Vec::new();
        for _ in 0..=self.fz.max_tasks + 1 {
            let id = self.fresh_id(k);
            let key = id_key(&id).expect("fresh ids are keys");
            let params = match &cursor {
                Some(c) => json!({ "cursor": c }),
                None => json!({}),
            };
            let msg = json!({"jsonrpc":"2.0","id":id,"method":"tasks/list","params":params});
            let out = self.feed(
                k,
                line(&msg),
                Some(&msg),
                Expect::List(key.clone(), cursor.is_none()),
            );
            let session = self.slots[k].session;
            let page = out
                .sends()
                .filter(|s| s.session == session)
                .find(|s| s.msg.response_id().and_then(id_key).as_deref() == Some(key.as_str()))
                .and_then(|s| s.msg.result().cloned())
                .expect("tasks/list is answered at once");
            for t in page["tasks"].as_array().expect("a page") {
                listed.push(t["taskId"].as_str().expect("taskId").to_owned());
            }
            match page.get("nextCursor").and_then(Value::as_str) {
                Some(next) => cursor = Some(next.to_owned()),
                None => {
                    let mut unique = listed.clone();
                    unique.sort();
                    unique.dedup();
                    assert_eq!(unique.len(), listed.len(), "invariant: a task listed twice");
                    let owner = self.slots[k].owner;
                    let mine: Vec<String> = self
                        .known
                        .keys()
                        .filter(|id| self.task_owner.get(*id) == Some(&owner))
                        .cloned()
                        .collect();
                    assert_eq!(
                        unique, mine,
                        "invariant: the pages list exactly the owner's tasks"
                    );
                    if self
                        .task_owner
                        .iter()
                        .any(|(id, o)| *o != owner && self.known.contains_key(id))
                    {
                        count(1);
                    }
                    assert_eq!(
                        unique.len(),
                        self.host.owner_task_count(&self.owners[owner]),
                        "invariant: the pages list every task of the owner"
                    );
                    return;
                }
            }
        }
        panic!("invariant: tasks/list pages never end");
    }

    // ---- application commands -----------------------------------------------------------------

    /// What a command on call `c` must give, by the one rule: a gone call is unknown, a
    /// finished task is finished, and (for `needs_task`) a plain call has no task.
    fn call_rule(&self, c: usize, needs_task: bool) -> Result<(), UsageError> {
        let call = &self.calls[c];
        if !call.alive {
            return Err(UsageError::UnknownCall(call.call));
        }
        match &call.task {
            Some(task) => match self.host.task(task) {
                Some(s) if s.info.status.is_terminal() => Err(UsageError::TaskFinished {
                    task: s.info.id.clone(),
                    status: s.info.status,
                }),
                Some(_) => Ok(()),
                None => panic!("harness: call {c} alive for gone task {task:?}"),
            },
            None if needs_task => Err(UsageError::UnknownCall(call.call)),
            None => Ok(()),
        }
    }

    fn respond(&mut self, c: usize, outcome: Result<Value, RpcError>) {
        self.fire_due();
        let want = if matches!(&outcome, Ok(v) if !v.is_object()) {
            Err(UsageError::NotAnObject("a result"))
        } else {
            self.call_rule(c, false)
        };
        let call = self.calls[c].call;
        let task = self.calls[c].task.clone();
        let is_error = match &outcome {
            Ok(v) => v.get("isError") == Some(&Value::Bool(true)),
            Err(_) => true,
        };
        let failed = outcome.is_err();
        let got = self.command("respond", |h, now| h.respond(now, call, outcome));
        assert_eq!(got, want, "invariant: respond on {call}");
        if matches!(got, Ok(()) | Err(UsageError::TaskFinished { .. })) {
            self.calls[c].alive = false;
        }
        if let (Ok(()), Some(task)) = (&got, task) {
            let s = self.host.task(&task).expect("a finished task is kept");
            let status = if failed {
                TaskStatus::Failed
            } else {
                TaskStatus::Completed
            };
            assert_eq!(
                s.info.status, status,
                "invariant: the answer decides the status"
            );
            assert_eq!(
                check::shown_status(&s) == TaskStatus::Failed,
                is_error,
                "invariant: an error result shows as failed"
            );
        }
        self.after_step();
    }

    fn set_message(&mut self, c: usize, message: Option<String>) {
        self.fire_due();
        let want = self.call_rule(c, true);
        let call = self.calls[c].call;
        let got = self.command("set_task_message", |h, now| {
            h.set_task_message(now, call, message.clone())
        });
        assert_eq!(got, want, "invariant: set_task_message on {call}");
        if got.is_ok() {
            let task = self.calls[c].task.clone().expect("a task call");
            let s = self.host.task(&task).expect("a live task");
            assert_eq!(
                s.info.status_message, message,
                "invariant: the message is set"
            );
        }
        self.after_step();
    }

    fn progress(&mut self, c: usize, progress: f64, total: Option<f64>, message: Option<String>) {
        self.fire_due();
        let want = if !progress.is_finite() || total.is_some_and(|t| !t.is_finite()) {
            Err(UsageError::NonFiniteProgress)
        } else {
            self.call_rule(c, false)
        };
        let call = self.calls[c].call;
        let session = self.calls[c].session;
        let before = self.transcript_marker();
        let got = self.command_out("notify_progress", |h, now| {
            h.notify_progress(now, call, progress, total, message)
        });
        let (got, out) = got;
        assert_eq!(got, want, "invariant: notify_progress on {call}");
        for sent in out.sends() {
            assert!(
                sent.msg.is_notification("notifications/progress") && Some(sent.session) == session,
                "invariant: progress goes to the call's session only: {}",
                sent.msg.line
            );
        }
        let _ = before;
        self.after_step();
    }

    fn log(&mut self, c: usize, level: LogLevel, logger: Option<String>) {
        self.fire_due();
        let want = match self.fz.logging {
            true => self.call_rule(c, false),
            false => Err(UsageError::LoggingOff),
        };
        let call = self.calls[c].call;
        let session = self.calls[c].session;
        let open = session
            .and_then(|s| self.slot_of(s))
            .is_some_and(|k| self.slots[k].open);
        let (got, out) = self.command_out("log", |h, now| {
            h.log(now, call, level, logger.as_deref(), json!("fuzz"))
        });
        assert_eq!(got, want, "invariant: log on {call}");
        let sends: Vec<_> = out.sends().collect();
        for sent in &sends {
            assert!(
                sent.msg.is_notification("notifications/message") && Some(sent.session) == session,
                "invariant: a log message goes to the call's session only: {}",
                sent.msg.line
            );
        }
        // No `logging/setLevel` is sent here, so every level goes to an open session.
        if got.is_ok() && open {
            assert_eq!(sends.len(), 1, "invariant: the log message is sent");
            count(5);
        }
        self.after_step();
    }

    fn request_input(&mut self, c: usize, method: &'static str, params: Value) {
        self.fire_due();
        let capability = match method {
            "elicitation/create" => Some("elicitation"),
            "sampling/createMessage" => Some("sampling"),
            "roots/list" => Some("roots"),
            _ => None,
        };
        let call = self.calls[c].call;
        let session = self.calls[c].session;
        let task = self.calls[c].task.clone();
        let here = session
            .and_then(|s| self.slot_of(s))
            .filter(|&k| self.slots[k].open);
        let want = match capability {
            None => Some(Err(UsageError::NotAnInputMethod(method.to_owned()))),
            Some(_) if !params.is_object() => {
                Some(Err(UsageError::NotAnObject("input request params")))
            }
            Some(cap) => match self.call_rule(c, false) {
                Err(e) => Some(Err(e)),
                Ok(()) => match here {
                    Some(k) if declares(&self.slots[k].caps, cap) => Some(Ok(())),
                    Some(_) => Some(Err(UsageError::NotNegotiated(cap))),
                    // Another session following the task carries it, if any declares it.
                    None => None,
                },
            },
        };
        self.new_requests.clear();
        let got = self.command("request_input", |h, now| {
            h.request_input(now, call, method, params)
        });
        match (&want, &got) {
            (Some(Ok(())), Ok(_)) => {}
            (Some(w), g) => assert_eq!(
                w.as_ref().map_err(Clone::clone),
                g.as_ref().map(|_| &()).map_err(Clone::clone),
                "invariant: request_input on {call}"
            ),
            (None, Ok(_) | Err(UsageError::NotNegotiated(_))) => {}
            (None, Err(e)) => {
                panic!("invariant: request_input on {call} (no open session) gave {e}")
            }
        }
        let requests = std::mem::take(&mut self.new_requests);
        let Ok(input) = got else {
            assert!(
                requests.is_empty(),
                "invariant: a refused input request was sent"
            );
            self.after_step();
            return;
        };
        assert_eq!(
            requests.len(),
            1,
            "invariant: one input request, one message"
        );
        let (to, key, related, sent_method) = requests.into_iter().next().expect("one");
        assert_eq!(sent_method, method, "invariant: the input request's method");
        let k = self.slot_of(to).expect("sent to a slot");
        if let Some(here) = here {
            assert_eq!(
                k, here,
                "invariant: input goes to the call's own session while open"
            );
        }
        let cap = capability.expect("an input method");
        assert!(
            declares(&self.slots[k].caps, cap),
            "invariant: input request to a session that did not declare {cap}"
        );
        assert_eq!(related, task, "invariant: related-task of an input request");
        if let Some(task) = &task {
            assert_eq!(
                self.slots[k].owner, self.task_owner[task],
                "invariant: input for a task goes to its owner"
            );
            let status = self.host.task(task).map(|t| t.info.status);
            assert_eq!(
                status,
                Some(TaskStatus::InputRequired),
                "invariant: a task asking for input is input_required"
            );
        }
        self.inputs.insert(
            (to, key),
            Input {
                input: Some(input),
                call: Some(call),
                task,
            },
        );
        self.after_step();
    }

    fn start_task(&mut self, c: usize) {
        self.fire_due();
        let call = self.calls[c].call;
        let rule = if !self.calls[c].alive {
            Err(UsageError::UnknownCall(call))
        } else if !self.calls[c].offered {
            Err(UsageError::NotATaskOffer(call))
        } else {
            Ok(())
        };
        self.tolerate_reply = rule.is_ok();
        let got = self.command("start_task", |h, now| h.start_task(now, call));
        self.tolerate_reply = false;
        match (&rule, &got) {
            (Ok(()), Ok(task)) => {
                let c = &mut self.calls[c];
                c.task = Some(task.to_string());
                c.offered = false;
                assert_eq!(
                    self.host.task_call(task),
                    Some(call),
                    "invariant: the call works the task"
                );
            }
            // The task could not be created (a quota, the id source repeating): the engine
            // answered the request with the error and the call is over.
            (Ok(()), Err(UsageError::TaskRefused { call: refused, .. })) => {
                assert_eq!(*refused, call, "invariant: the refusal names the call");
                self.calls[c].alive = false;
                assert_eq!(
                    self.host
                        .respond(Millis(self.now), call, Ok(json!({"content": []}))),
                    Err(UsageError::UnknownCall(call)),
                    "invariant: a refused call takes no second answer"
                );
            }
            (w, g) => assert_eq!(
                w.clone(),
                g.clone().map(|_| ()),
                "invariant: start_task on {call}"
            ),
        }
        self.after_step();
    }

    fn create_task(&mut self, owner: usize, task: String, ttl: Option<u64>) {
        self.fire_due();
        let at = self.at();
        let (total, mine) = self.live_counts(owner, at);
        let want = if self.host.task(&task).is_some() {
            Err(UsageError::DuplicateTask(task.as_str().into()))
        } else if total >= self.fz.max_tasks {
            Err(UsageError::QuotaExceeded(Quota::Host(self.fz.max_tasks)))
        } else if mine >= self.fz.per_owner {
            Err(UsageError::QuotaExceeded(Quota::Owner(self.fz.per_owner)))
        } else {
            Ok(())
        };
        let name = Owner::from(OWNERS[owner]);
        let got = self.command("create_task", |h, now| {
            h.create_task(now, &name, &task, ttl)
        });
        assert_eq!(
            got.clone().map(|_| ()),
            want,
            "invariant: create_task of {task:?}"
        );
        if let Ok(call) = got {
            let s = self.host.task(&task).expect("created");
            assert_eq!(
                s.owner, name,
                "invariant: the task belongs to the owner named"
            );
            self.fresh_task(&task, owner, None);
            self.watch
                .observe(&wire_snapshot(&s), self.host.now().0, true)
                .unwrap_or_else(|e| panic!("invariant: {e}"));
            self.calls.push(AppCall {
                call,
                session: None,
                task: Some(task),
                offered: false,
                alive: true,
                stopped: None,
            });
        }
        self.after_step();
    }

    fn remove_task(&mut self, task: String) {
        self.fire_due();
        let existed = self.host.task(&task);
        let want = match &existed {
            Some(_) => Ok(()),
            None => Err(UsageError::UnknownTask(task.as_str().into())),
        };
        let call = self
            .calls
            .iter()
            .position(|c| c.alive && c.task.as_deref() == Some(task.as_str()));
        let (got, out) = self.command_out("remove_task", |h, now| h.remove_task(now, &task));
        assert_eq!(got, want, "invariant: remove_task of {task:?}");
        let Some(before) = existed else {
            self.after_step();
            return;
        };
        assert!(
            self.host.task(&task).is_none(),
            "invariant: a removed task is gone"
        );
        let running = !before.info.status.is_terminal();
        let stops = out
            .events()
            .filter(|e| {
                matches!(
                    e,
                    Event::Stop {
                        reason: StopReason::Removed,
                        ..
                    }
                )
            })
            .count();
        assert_eq!(
            stops,
            usize::from(running && call.is_some()),
            "invariant: removing a running task stops its work, once"
        );
        if let Some(c) = call {
            self.calls[c].alive = false;
        }
        self.watch.forget(&task);
        self.known.remove(&task);
        self.followers.remove(&task);
        self.after_step();
    }

    /// Runs an application command and checks that a refusal changes nothing (the caller
    /// updates its model, then runs the between-steps checks).
    fn command<T: Debug>(
        &mut self,
        name: &str,
        f: impl FnOnce(&mut Host, Millis) -> Result<T, UsageError>,
    ) -> Result<T, UsageError> {
        self.command_out(name, f).0
    }

    /// [`Harness::command`], also returning what the command produced.
    fn command_out<T: Debug>(
        &mut self,
        name: &str,
        f: impl FnOnce(&mut Host, Millis) -> Result<T, UsageError>,
    ) -> (Result<T, UsageError>, Drained) {
        let before = self.snapshot();
        let bound = output_bound(self.state_size());
        let result = f(&mut self.host, Millis(self.now));
        tline!(self.transcript, "app {name} -> {result:?}");
        let out = self.drain(bound);
        let answered_refusal = self.tolerate_reply
            && out.count() == 1
            && out.sends().all(|s| s.msg.code() == Some(-32603));
        if let Err(e) = &result {
            assert!(
                out.count() == 0 || answered_refusal,
                "invariant: refused {name} ({e}) produced output"
            );
            assert_eq!(
                before,
                self.snapshot(),
                "invariant: refused {name} ({e}) changed state"
            );
        }
        assert!(
            !self.shut || result.is_err(),
            "invariant: a shut-down host accepted {name}"
        );
        self.absorb(&out, None);
        (result, out)
    }

    /// An adapter fires due deadlines before anything else: then a refused command must
    /// leave everything as it was.
    fn fire_due(&mut self) {
        if self.host.poll_timeout().is_some_and(|at| at.0 <= self.at()) {
            self.timeout();
        }
    }

    /// Everything a refused command must leave as it was.
    fn snapshot(&self) -> Snapshot {
        let tasks = self
            .known
            .keys()
            .map(|id| {
                self.host.task(id).map(|s| {
                    let outcome = s.outcome.map(|o| match o {
                        Outcome::Result { is_error, .. } => Some(is_error),
                        Outcome::Error(_) => None,
                    });
                    (s.info, outcome)
                })
            })
            .collect();
        let open = self
            .slots
            .iter()
            .map(|s| self.host.is_closed(s.session))
            .collect();
        (
            tasks,
            self.host.task_count(),
            self.host.poll_timeout(),
            open,
        )
    }

    fn transcript_marker(&self) -> (u64, usize) {
        self.transcript.digest()
    }

    // ---- what the server says -----------------------------------------------------------------

    /// Takes in what the host said: responses, task views, its own requests, events.
    /// `fed` is the session whose input caused it, if any.
    fn absorb(&mut self, out: &Drained, fed: Option<SessionId>) {
        let now = self.host.now().0;
        for item in &out.items {
            match item {
                Out::Send(sent) => self.absorb_send(sent, now),
                Out::Event(event) => self.absorb_event(event, fed),
            }
        }
    }

    fn absorb_send(&mut self, sent: &super::Sent, now: u64) {
        let k = self
            .slot_of(sent.session)
            .unwrap_or_else(|| panic!("invariant: a message for unknown {}", sent.session));
        let owner = self.slots[k].owner;
        let msg = &sent.msg;
        let answered = self.slots[k].ledger.outbound(msg);
        self.oracle
            .check(msg, answered.as_deref())
            .unwrap_or_else(|e| panic!("invariant: server sent an invalid message: {e}"));
        if msg.names_tasks() {
            self.absorb_tasks(sent, owner, answered.as_deref(), now);
        }
        self.absorb_kind(sent, k);
    }

    /// What a message naming tasks says: new tasks, views, isolation, following.
    fn absorb_tasks(&mut self, sent: &super::Sent, owner: usize, answered: Option<&str>, now: u64) {
        let msg = &sent.msg;
        for (task, fresh) in check::tasks_in(msg, answered) {
            let id = task["taskId"].as_str().expect("schema-checked").to_owned();
            if fresh {
                let stored = self.host.task(&id).map(|s| s.owner);
                assert_eq!(
                    stored.as_deref(),
                    Some(OWNERS[owner]),
                    "invariant: a task created on a session belongs to its owner"
                );
                self.fresh_task(&id, owner, Some(sent.session));
            }
            self.watch
                .observe(&task, now, fresh)
                .unwrap_or_else(|e| panic!("invariant: {e}"));
        }
        for id in check::mentioned_tasks(msg) {
            let known = self.task_owner.get(id).copied();
            assert!(
                known.is_some(),
                "invariant: {} names task {id:?}, which no one created",
                sent.msg.line
            );
            assert_eq!(
                known,
                Some(owner),
                "invariant: a session of {} was told about a task of {}: {}",
                OWNERS[owner],
                OWNERS[known.unwrap_or(0)],
                sent.msg.line
            );
        }
        let flat = msg
            .result()
            .filter(|r| r.get("status").is_some())
            .and_then(|r| r.get("taskId"))
            .and_then(Value::as_str)
            .map(str::to_owned);
        if let Some(task) = &flat {
            // A `tasks/get` or `tasks/cancel` answer: the session follows the task.
            self.follow(task, sent.session);
        }
    }

    /// What a message's kind says: the server's own requests, its notifications.
    fn absorb_kind(&mut self, sent: &super::Sent, k: usize) {
        let msg = &sent.msg;
        match msg.class {
            Class::Request => {
                let key = id_key(msg.id().expect("a request id")).expect("validated");
                assert!(
                    self.slots[k].out_ids.insert(key.clone()),
                    "invariant: server reused id {key} on {}",
                    sent.session
                );
                let method = msg.method().expect("a method").to_owned();
                assert!(
                    matches!(
                        method.as_str(),
                        "elicitation/create" | "sampling/createMessage" | "roots/list"
                    ),
                    "invariant: unexpected server request {method}"
                );
                let related = msg
                    .params()
                    .and_then(|p| p["_meta"][RELATED_TASK]["taskId"].as_str())
                    .map(str::to_owned);
                self.inputs.insert(
                    (sent.session, key.clone()),
                    Input {
                        input: None,
                        call: None,
                        task: related.clone(),
                    },
                );
                self.new_requests.push((sent.session, key, related, method));
            }
            Class::Notification => match msg.method() {
                Some("notifications/tasks/status") => {
                    let params = msg.params().expect("schema-checked");
                    let task = params["taskId"].as_str().expect("taskId").to_owned();
                    self.status_seen
                        .push((sent.session, task, check::strip_meta(params)));
                }
                Some("notifications/cancelled") => {
                    let target = msg
                        .params()
                        .and_then(|p| p.get("requestId"))
                        .and_then(id_key)
                        .expect("cancel names a request");
                    let input = self
                        .inputs
                        .remove(&(sent.session, target.clone()))
                        .unwrap_or_else(|| panic!("invariant: cancel of unknown request {target}"));
                    let live = input.task.as_ref().and_then(|t| self.host.task(t));
                    assert!(
                        live.is_none_or(|t| t.info.status.is_terminal()),
                        "invariant: input request for live {:?} withdrawn",
                        input.task
                    );
                }
                Some("notifications/progress" | "notifications/message") => {}
                other => panic!("invariant: unexpected server notification {other:?}"),
            },
            Class::Result | Class::Error { .. } => {}
        }
    }

    fn absorb_event(&mut self, event: &Event, fed: Option<SessionId>) {
        let from_fed = |session: &SessionId, what: &str| {
            assert_eq!(
                Some(*session),
                fed,
                "invariant: {what} names {session}, not the session that spoke"
            );
        };
        match event {
            Event::ToolCall(tc) => {
                from_fed(&tc.session, "ToolCall");
                if let Some(t) = &tc.task {
                    let s = self.host.task(t);
                    assert!(
                        s.is_some(),
                        "invariant: ToolCall names task {t:?}, which is not stored"
                    );
                    assert_eq!(
                        self.host.task_call(t),
                        Some(tc.call),
                        "invariant: the ToolCall's call works its task"
                    );
                }
                assert!(
                    !tc.task_offered || (tc.name == "app" && tc.task.is_none()),
                    "invariant: only an app-decided tool offers a task: {tc:?}"
                );
                assert!(
                    self.calls.iter().all(|c| c.call != tc.call || !c.alive),
                    "invariant: a live call handle was reused"
                );
                self.calls.push(AppCall {
                    call: tc.call,
                    session: Some(tc.session),
                    task: tc.task.as_ref().map(ToString::to_string),
                    offered: tc.task_offered,
                    alive: true,
                    stopped: None,
                });
            }
            Event::Request(ar) => {
                from_fed(&ar.session, "Request");
                assert!(
                    ar.method.starts_with("resources/") && ar.task.is_none(),
                    "invariant: only listed methods reach the application: {ar:?}"
                );
                self.calls.push(AppCall {
                    call: ar.call,
                    session: Some(ar.session),
                    task: None,
                    offered: false,
                    alive: true,
                    stopped: None,
                });
            }
            Event::Stop {
                call,
                reason,
                message,
            } => {
                let c = self
                    .calls
                    .iter_mut()
                    .rev()
                    .find(|c| c.call == *call)
                    .unwrap_or_else(|| panic!("invariant: Stop for unknown {call}"));
                assert!(c.alive, "invariant: Stop for {call}, which was over");
                assert!(c.stopped.is_none(), "invariant: {call} stopped twice");
                c.stopped = Some(*reason);
                match (&c.task, reason) {
                    (Some(t), StopReason::Cancelled) => {
                        let status = self.host.task(t).map(|s| s.info.status);
                        assert_eq!(
                            status,
                            Some(TaskStatus::Cancelled),
                            "invariant: Stop(Cancelled) for a task that is not cancelled"
                        );
                        assert_eq!(message, &None, "invariant: a task cancel carries no reason");
                    }
                    (Some(t), StopReason::Expired | StopReason::Removed) => {
                        // (Its id may already name a new task.)
                        assert!(
                            self.host.task_call(t) != Some(*call),
                            "invariant: Stop({reason:?}) for a kept task"
                        );
                        c.alive = false;
                    }
                    // (The peer's reason, as sent: mutations may change it.)
                    (None, StopReason::Cancelled) => c.alive = false,
                    (_, StopReason::Closed) => c.alive = false,
                    (None, other) => panic!("invariant: a plain call stopped for {other:?}"),
                    (Some(_), other) => panic!("invariant: a task stopped for {other:?}"),
                }
            }
            Event::InputResponse { call, input, .. } => {
                let key = self
                    .inputs
                    .iter()
                    .find(|(_, i)| i.input == Some(*input))
                    .map(|(k, _)| k.clone())
                    .unwrap_or_else(|| panic!("invariant: InputResponse for unknown {input}"));
                let i = self.inputs.remove(&key).expect("found");
                assert_eq!(
                    i.call,
                    Some(*call),
                    "invariant: InputResponse names its call"
                );
            }
            Event::Notification { session, .. } => from_fed(session, "Notification"),
            Event::PeerError { session, .. } => from_fed(session, "PeerError"),
            Event::Initialized { session, .. } => from_fed(session, "Initialized"),
            Event::Progress { session, .. } => from_fed(session, "Progress"),
            Event::Closed { session } => {
                assert!(
                    fed.is_none(),
                    "invariant: {session} closed while handling input"
                );
            }
            other => panic!("invariant: unexpected server event {other:?}"),
        }
    }

    /// A task the harness has just seen created by `owner` (on `session`, if any).
    fn fresh_task(&mut self, task: &str, owner: usize, session: Option<SessionId>) {
        self.task_owner.insert(task.to_owned(), owner);
        match session {
            Some(s) => self.creator.insert(task.to_owned(), s),
            None => self.creator.remove(task),
        };
        self.followers
            .insert(task.to_owned(), session.into_iter().collect());
        // A reborn id is a new task: its predecessor's view is no "change".
        self.known.insert(
            task.to_owned(),
            Known {
                info: None,
                view: Value::Null,
            },
        );
    }

    fn follow(&mut self, task: &str, session: SessionId) {
        // (A finished task never changes again: following it is harmless.)
        if self.known.contains_key(task) {
            let f = self.followers.entry(task.to_owned()).or_default();
            if !f.contains(&session) {
                f.push(session);
            }
        }
    }

    /// Checks that hold between any two operations.
    fn after_step(&mut self) {
        let now = self.host.now().0;
        let total = self.host.task_count();
        assert!(
            total <= self.fz.max_tasks,
            "invariant: {total} tasks exceed the cap {}",
            self.fz.max_tasks
        );
        // A task created with a ttl of 0 is expired at birth: the host holds it only until
        // the next input, and must report that deadline as due.
        let due = self.shut || self.host.poll_timeout().is_some_and(|at| at.0 <= now);
        let mut per_owner = [0usize; 3];
        let mut changed = Vec::new();
        let mut gone = Vec::new();
        for (id, known) in &mut self.known {
            match self.host.task(id) {
                Some(s) => {
                    assert!(
                        due || !self.watch.is_expired(id, now),
                        "invariant: task {id:?} outlived its ttl"
                    );
                    let owner = self.task_owner[id];
                    assert_eq!(
                        s.owner.as_str(),
                        OWNERS[owner],
                        "invariant: a task's owner never changes"
                    );
                    per_owner[owner] += 1;
                    let shown = check::shown_status(&s);
                    if known
                        .info
                        .as_ref()
                        .is_none_or(|(info, was)| *info != s.info || *was != shown)
                    {
                        // Only a changed task needs its view built and checked again.
                        let view = check::wire_task(&s.info, shown);
                        self.watch
                            .observe(&view, now, false)
                            .unwrap_or_else(|e| panic!("invariant: {e}"));
                        if known.info.is_some() {
                            changed.push(id.clone());
                        }
                        known.info = Some((s.info, shown));
                        known.view = view;
                    }
                }
                None => {
                    assert!(
                        self.watch.is_expired(id, now),
                        "invariant: task {id:?} vanished before its ttl ran out"
                    );
                    let running = known
                        .info
                        .as_ref()
                        .is_some_and(|(i, _)| !i.status.is_terminal());
                    gone.push((id.clone(), running));
                }
            }
        }
        for (id, running) in gone {
            self.known.remove(&id);
            if let Some(c) = self
                .calls
                .iter()
                .position(|c| c.alive && c.task.as_deref() == Some(id.as_str()))
            {
                assert!(
                    !running,
                    "invariant: running task {id:?} expired without Stop"
                );
                self.calls[c].alive = false;
            }
            self.followers.remove(&id);
        }
        for (owner, &n) in per_owner.iter().enumerate() {
            assert!(
                n <= self.fz.per_owner,
                "invariant: {} holds {n} tasks, over max_tasks_per_owner {}",
                OWNERS[owner],
                self.fz.per_owner
            );
        }
        if self.counted != Some(per_owner) {
            // The host's own counts, whenever the harness's change.
            for (owner, &n) in per_owner.iter().enumerate() {
                assert_eq!(
                    self.host.owner_task_count(&self.owners[owner]),
                    n,
                    "invariant: the owner's task count"
                );
            }
            self.counted = Some(per_owner);
        }
        assert_eq!(
            total,
            per_owner.iter().sum::<usize>(),
            "invariant: every task has an owner the harness knows"
        );
        self.check_notifications(&changed);
        for k in 0..self.slots.len() {
            let slot = &mut self.slots[k];
            let parked = std::mem::take(&mut slot.parked);
            for (key, task) in parked {
                if !slot.ledger.is_pending(&key) {
                    if self.creator.get(&task) != Some(&slot.session) {
                        count(4);
                    }
                    continue;
                }
                let live = self
                    .host
                    .task(&task)
                    .is_some_and(|t| !t.info.status.is_terminal());
                assert!(
                    live || !slot.open,
                    "invariant: tasks/result {key} still parked on finished task {task:?}"
                );
                slot.parked.insert(key, task);
            }
            assert_eq!(
                self.host.is_closed(slot.session),
                !slot.open,
                "invariant: the session's open state"
            );
        }
        for c in &self.calls {
            if let (true, Some(task)) = (c.alive, &c.task) {
                assert_eq!(
                    self.host.task_call(task),
                    Some(c.call),
                    "invariant: the call doing {task:?}"
                );
            }
        }
    }

    /// Every session following a changed task heard of the change, with the new view;
    /// no session heard of a task it does not follow, or of a task that did not change.
    fn check_notifications(&mut self, changed: &[String]) {
        let seen = std::mem::take(&mut self.status_seen);
        if !self.fz.notifications {
            assert!(
                seen.is_empty(),
                "invariant: status notifications are off: {seen:?}"
            );
            return;
        }
        for (session, task, _) in &seen {
            assert!(
                changed.contains(task),
                "invariant: {session} was told about {task:?}, which did not change"
            );
            let k = self.slot_of(*session).expect("a slot");
            let follows = self
                .followers
                .get(task)
                .is_some_and(|f| f.contains(session));
            assert!(
                follows || self.slots[k].loose,
                "invariant: {session} was told about {task:?}, which it does not follow"
            );
        }
        for task in changed {
            for session in self.followers.get(task).into_iter().flatten() {
                let last = seen
                    .iter()
                    .rev()
                    .find(|(s, t, _)| s == session && t == task)
                    .map(|(_, _, v)| v);
                assert_eq!(
                    last,
                    self.known.get(task).map(|k| &k.view),
                    "invariant: {session} follows {task:?} and must hear its change"
                );
                if self.creator.get(task) != Some(session) {
                    count(3);
                }
            }
        }
    }

    /// Ends the run: the application answers everything, every task finishes, every
    /// trusted request must then have had exactly one answer, and the host shuts down.
    fn finish(&mut self) {
        if self.shut {
            return;
        }
        for c in 0..self.calls.len() {
            if self.calls[c].alive && self.calls[c].task.is_none() {
                let reply = json!({"content":[{"type":"text","text":"done"}]});
                let call = self.calls[c].call;
                self.fire_due();
                if !self.calls[c].alive {
                    continue;
                }
                self.command("respond", |h, now| h.respond(now, call, Ok(reply)))
                    .expect("invariant: a pending call can be answered");
                self.calls[c].alive = false;
                self.after_step();
            }
        }
        self.timeout();
        for c in 0..self.calls.len() {
            let running = self.calls[c].alive
                && self.calls[c]
                    .task
                    .as_ref()
                    .and_then(|t| self.host.task(t))
                    .is_some_and(|t| !t.info.status.is_terminal());
            if running {
                let call = self.calls[c].call;
                let result = json!({"content":[]});
                self.command("respond", |h, now| h.respond(now, call, Ok(result)))
                    .expect("invariant: a live task can be completed");
                self.calls[c].alive = false;
                self.after_step();
            }
        }
        for slot in &self.slots {
            if slot.open {
                slot.ledger.assert_all_answered("server at the end");
                assert!(
                    slot.parked.is_empty(),
                    "invariant: parked requests left: {:?}",
                    slot.parked
                );
            }
        }
        self.shutdown();
        let answered: usize = self.slots.iter().map(|s| s.ledger.answered()).sum();
        tline!(self.transcript, "answered {answered}");
    }

    // ---- sessions --------------------------------------------------------------------------------

    /// Closes slot `k` (`eof`: the byte stream ended): exactly its plain calls stop, exactly
    /// its input requests fail, nothing is sent, and its tasks live on.
    fn close(&mut self, k: usize, eof: bool) {
        if !self.slots[k].open {
            return;
        }
        self.fire_due();
        let session = self.slots[k].session;
        let plain: BTreeSet<CallId> = self
            .calls
            .iter()
            .filter(|c| c.alive && c.task.is_none() && c.session == Some(session))
            .map(|c| c.call)
            .collect();
        let inputs: BTreeSet<InputId> = self
            .inputs
            .iter()
            .filter(|((s, _), _)| *s == session)
            .filter_map(|(_, i)| i.input)
            .collect();
        let tasks = self.host.task_count();
        if eof {
            self.host.handle_eof(Millis(self.now), session);
        } else {
            self.host.close(Millis(self.now), session);
        }
        tline!(self.transcript, "close {k} eof={eof}");
        self.slots[k].open = false;
        self.closed.push(session);
        let bound = output_bound(self.state_size());
        let out = self.drain(bound);
        assert_eq!(out.send_count(), 0, "invariant: closing sends nothing");
        let mut stopped = BTreeSet::new();
        let mut failed = BTreeSet::new();
        let mut closed = 0;
        for e in out.events() {
            match e {
                Event::Stop {
                    call,
                    reason: StopReason::Closed,
                    message,
                } => {
                    assert_eq!(message.as_deref(), Some("Connection closed"));
                    assert!(stopped.insert(*call), "invariant: {call} stopped twice");
                }
                Event::InputResponse {
                    input,
                    outcome: Err(e),
                    ..
                } if e.code == -32000 => {
                    assert!(failed.insert(*input), "invariant: {input} failed twice");
                }
                Event::Closed { session: s } => {
                    assert_eq!(*s, session, "invariant: Closed names the session");
                    closed += 1;
                }
                other => panic!("invariant: closing a session raised {other:?}"),
            }
        }
        assert_eq!(closed, 1, "invariant: one Closed per close");
        assert_eq!(
            stopped, plain,
            "invariant: closing stops exactly the session's plain calls"
        );
        assert_eq!(
            failed, inputs,
            "invariant: closing fails exactly the session's input requests"
        );
        assert_eq!(
            self.host.task_count(),
            tasks,
            "invariant: closing a session keeps its tasks"
        );
        self.absorb(&out, None);
        let slot = &mut self.slots[k];
        slot.ledger.connection_closed();
        slot.parked.clear();
        for f in self.followers.values_mut() {
            f.retain(|s| *s != session);
        }
        self.after_step();
    }

    /// Opens a new session in slot `k` for the same owner (a client reconnecting), and
    /// completes its handshake with `caps` when given.
    fn reopen(&mut self, k: usize, caps: Option<Value>) {
        if self.slots[k].open || self.shut {
            return;
        }
        let owner = self.slots[k].owner;
        let session = self
            .host
            .open(Millis(self.now), Role::Server, OWNERS[owner]);
        tline!(self.transcript, "open {k} as {session}");
        assert!(
            !self.closed.contains(&session),
            "invariant: a session id was reused"
        );
        self.slots[k] = Slot::new(owner, session);
        count(2);
        let bound = output_bound(self.state_size());
        let out = self.drain(bound);
        self.absorb(&out, None);
        self.after_step();
        if let Some(caps) = caps {
            self.handshake(k, caps);
        }
    }

    /// Shuts the host down: every session closes, every running task and plain call stops
    /// once, nothing is sent, nothing stays scheduled, and everything is silent after.
    fn shutdown(&mut self) {
        self.fire_due();
        let running: BTreeSet<CallId> = self
            .calls
            .iter()
            .filter(|c| c.alive)
            .filter(|c| match &c.task {
                None => true,
                Some(t) => self
                    .host
                    .task(t)
                    .is_some_and(|s| !s.info.status.is_terminal()),
            })
            .map(|c| c.call)
            .collect();
        let open: BTreeSet<SessionId> = self
            .slots
            .iter()
            .filter(|s| s.open)
            .map(|s| s.session)
            .collect();
        let tasks = self.host.task_count();
        self.host.shutdown(Millis(self.now));
        tline!(self.transcript, "shutdown");
        self.shut = true;
        for slot in &mut self.slots {
            slot.open = false;
            self.closed.push(slot.session);
        }
        let bound = output_bound(self.state_size());
        let out = self.drain(bound);
        assert_eq!(
            out.send_count(),
            0,
            "invariant: shutting down sends nothing"
        );
        let mut stopped = BTreeSet::new();
        let mut closed = BTreeSet::new();
        for e in out.events() {
            match e {
                Event::Stop {
                    call,
                    reason: StopReason::Closed,
                    ..
                } => assert!(stopped.insert(*call), "invariant: {call} stopped twice"),
                Event::Closed { session } => {
                    assert!(closed.insert(*session), "invariant: {session} closed twice")
                }
                Event::InputResponse {
                    outcome: Err(e), ..
                } if e.code == -32000 => {}
                other => panic!("invariant: shutting down raised {other:?}"),
            }
        }
        assert_eq!(
            stopped, running,
            "invariant: shutdown stops every running task and plain call"
        );
        assert_eq!(closed, open, "invariant: shutdown closes every session");
        assert_eq!(
            self.host.poll_timeout(),
            None,
            "invariant: a shut-down host schedules nothing"
        );
        assert_eq!(
            self.host.task_count(),
            tasks,
            "invariant: shutdown keeps the tasks"
        );
        self.absorb(&out, None);
        // Every call is over (a cancelled task's kept work goes quietly).
        for c in &mut self.calls {
            c.alive = false;
        }
        for slot in &mut self.slots {
            slot.ledger.connection_closed();
            slot.parked.clear();
        }
        self.followers.clear();
        self.after_step();
        // Silence afterwards: input on any session, time far ahead.
        let ping = br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
        for s in self.closed.clone() {
            self.host.handle_message(Millis(self.now), s, ping);
        }
        self.host.handle_timeout(Millis(MAX_MILLIS.0));
        assert!(
            self.host.poll_output().is_none(),
            "invariant: a shut-down host stays silent"
        );
    }

    fn timeout(&mut self) {
        self.host.handle_timeout(Millis(self.now));
        if !self.shut {
            assert_no_busy_loop(&self.host, "server");
        }
        let bound = output_bound(self.state_size());
        let out = self.drain(bound);
        if self.shut {
            assert_eq!(out.count(), 0, "invariant: a shut-down host stays silent");
        }
        tline!(self.transcript, "time {}", self.now.saturating_sub(EPOCH));
        self.absorb(&out, None);
        self.after_step();
    }

    // ---- plumbing -----------------------------------------------------------------------------

    fn slot_of(&self, session: SessionId) -> Option<usize> {
        self.slots.iter().position(|s| s.session == session)
    }

    /// The time the next input is handled at: the host's clock never goes back.
    fn at(&self) -> u64 {
        self.host.now().0.max(self.now.min(MAX_MILLIS.0))
    }

    fn fresh_id(&mut self, k: usize) -> Value {
        self.next_id += 1;
        let id = if self.next_id % 3 == 0 {
            json!(format!("r{}", self.next_id))
        } else {
            json!(self.next_id)
        };
        self.slots[k].used_ids.push(id.clone());
        id
    }

    /// Mostly a fresh id; sometimes a used one (a duplicate while in flight) or an extreme.
    fn id(&mut self, k: usize, r: &mut Reader) -> Option<Value> {
        Some(match r.below(16)? {
            0 if !self.slots[k].used_ids.is_empty() => r.pick(&self.slots[k].used_ids)?.clone(),
            1 => json!([i64::MAX, i64::MIN, -1, 0][r.below(4)?]),
            2 => json!(r.word()?),
            _ => self.fresh_id(k),
        })
    }

    fn pick_task(&mut self, r: &mut Reader) -> Option<String> {
        let n = self.watch.len();
        if n > 0 && r.below(8)? != 0 {
            Some(self.watch.nth(r.index(n)?).to_owned())
        } else {
            r.word()
        }
    }

    /// A call the application holds: mostly a live one that `fits`, sometimes any.
    /// (`Some(None)`: there is none to pick; `None`: the input ran out.)
    fn pick_call(
        &mut self,
        r: &mut Reader,
        fits: impl Fn(&AppCall) -> bool,
    ) -> Option<Option<usize>> {
        let live: Vec<usize> = (0..self.calls.len())
            .filter(|&c| self.calls[c].alive && fits(&self.calls[c]))
            .collect();
        Some(if !live.is_empty() && r.below(8)? != 0 {
            Some(*r.pick(&live)?)
        } else if !self.calls.is_empty() {
            Some(r.index(self.calls.len())?)
        } else {
            None
        })
    }

    /// Live tasks at `at`: all, and `owner`'s (from the last check's views; a task created
    /// since is looked up).
    fn live_counts(&self, owner: usize, at: u64) -> (usize, usize) {
        let mut total = 0;
        let mut mine = 0;
        for (id, known) in &self.known {
            let live = match &known.info {
                Some((info, _)) => self.shut || !check::expired(info.created_at.0, info.ttl_ms, at),
                None => self.live(id, at).is_some(),
            };
            if live {
                total += 1;
                if self.task_owner.get(id) == Some(&owner) {
                    mine += 1;
                }
            }
        }
        (total, mine)
    }

    /// A stored task that has not reached its expiry at `at`.
    fn live(&self, task: &str, at: u64) -> Option<TaskSnapshot> {
        self.host
            .task(task)
            .filter(|t| self.shut || !check::expired(t.info.created_at.0, t.info.ttl_ms, at))
    }

    fn state_size(&self) -> usize {
        self.slots
            .iter()
            .map(|s| s.ledger.outstanding_count() + 2)
            .sum::<usize>()
            + self.host.task_count() * self.slots.len()
            + self.inputs.len()
            + self.calls.iter().filter(|c| c.alive).count()
            + 2
    }

    fn drain(&mut self, bound: usize) -> Drained {
        let slots = &self.slots;
        let open = |s: SessionId| slots.iter().any(|slot| slot.open && slot.session == s);
        super::drain(&mut self.host, "server", bound, &open, &mut self.transcript)
    }

    /// Feeds one inbound line on slot `k` (`value`: the trusted message it encodes; `None`
    /// for untrusted bytes) and checks what came back. Returns what the host produced.
    fn feed(
        &mut self,
        k: usize,
        bytes: Vec<u8>,
        value: Option<&Value>,
        mut expect: Expect,
    ) -> Drained {
        let session = self.slots[k].session;
        if !self.slots[k].open {
            // A closed session stays silent (deadlines fire first, as an adapter would).
            self.fire_due();
            self.host.handle_message(Millis(self.now), session, &bytes);
            tline!(
                self.transcript,
                "client {k} (closed) > {}",
                String::from_utf8_lossy(&bytes)
            );
            let out = self.drain(1);
            assert_eq!(out.count(), 0, "invariant: a closed session stays silent");
            return out;
        }
        let trusted = value.is_some();
        if expect
            .key()
            .is_some_and(|k2| self.slots[k].ledger.is_exempt(k2))
        {
            // Garbage used this id; whether it is still in flight is unknown.
            expect = Expect::Nothing;
        }
        let version = self.host.protocol_version(session).map(str::to_owned);
        let hosts = version.as_deref() == Some(LATEST_VERSION) && self.fz.tasks_enabled;
        let ready = version.is_some();
        let dup = expect
            .key()
            .is_some_and(|key| self.slots[k].ledger.is_pending(key));
        let at = self.at();
        let owner = self.slots[k].owner;
        let task_before = expect.task().and_then(|t| self.live(t, at));
        let quota_before = self.live_counts(owner, at);
        let bound = output_bound(self.state_size());
        let result_ask = value
            .filter(|v| v["method"] == "tasks/result")
            .and_then(|v| {
                Some((
                    id_key(v.get("id")?)?,
                    v["params"]["taskId"].as_str()?.to_owned(),
                ))
            })
            .filter(|(key, _)| !self.slots[k].ledger.is_pending(key));
        let input_answer = value
            .filter(|v| v.get("method").is_none())
            .and_then(|v| id_key(v.get("id")?))
            .map(|key| (session, key))
            .filter(|key| self.inputs.contains_key(key));
        let init_caps = value
            .filter(|v| v["method"] == "initialize" && !ready)
            .map(|v| v["params"]["capabilities"].clone());
        match value {
            Some(v) => self.slots[k].ledger.inbound_value(v, true),
            None => {
                self.slots[k].loose = true;
                self.slots[k].ledger.inbound(&bytes, false)
            }
        };
        tline!(
            self.transcript,
            "client {k} > {}",
            String::from_utf8_lossy(&bytes)
        );
        self.host.handle_message(Millis(self.now), session, &bytes);
        let out = self.drain(bound);
        if let Some(caps) = init_caps {
            if self.host.protocol_version(session).is_some() {
                self.slots[k].caps = caps;
            }
        }
        let idless = out
            .sends()
            .filter(|s| s.msg.response_id().is_none() && s.msg.code().is_some())
            .count();
        if trusted {
            assert_eq!(
                idless, 0,
                "invariant: a well-formed message drew an id-less error"
            );
        } else {
            assert!(idless <= 1, "invariant: one bad line, at most one error");
        }
        self.check_quota_errors(k, &out, quota_before);
        self.expect(k, &expect, &out, hosts, ready, dup, task_before);
        self.absorb(&out, Some(session));
        if let Some(key) = input_answer {
            if let Some(input) = self.inputs.remove(&key) {
                // No InputResponse: only right when the call had already ended.
                let alive = self
                    .calls
                    .iter()
                    .any(|c| Some(c.call) == input.call && c.alive);
                assert!(
                    !alive,
                    "invariant: the answer to {key:?} never reached its live call"
                );
            }
        }
        if let Some((key, task)) = result_ask {
            if self.slots[k].ledger.is_pending(&key) {
                // Parked: the session follows the task until it ends.
                self.slots[k].parked.insert(key, task.clone());
                self.follow(&task, session);
            }
        }
        self.after_step();
        out
    }

    /// A "Task limit reached" answer names a limit that was really reached.
    fn check_quota_errors(&self, k: usize, out: &Drained, (total, mine): (usize, usize)) {
        let session = self.slots[k].session;
        for sent in out.sends().filter(|s| s.session == session) {
            let Some(error) = sent.msg.error() else {
                continue;
            };
            let message = error["message"].as_str().unwrap_or("");
            if !message.starts_with("Task limit reached") {
                continue;
            }
            assert_eq!(
                sent.msg.code(),
                Some(-32603),
                "invariant: a quota error is -32603"
            );
            if message.contains("(max_tasks)") {
                assert!(
                    total >= self.fz.max_tasks,
                    "invariant: {message} with {total} tasks"
                );
            } else {
                assert!(
                    message.contains("(max_tasks_per_owner)")
                        && total < self.fz.max_tasks
                        && mine >= self.fz.per_owner,
                    "invariant: {message} with {total} tasks, {mine} of the owner"
                );
            }
        }
    }

    /// Checks the answer to a trusted `tasks/*` request against the spec, and isolation.
    #[allow(clippy::too_many_arguments)]
    fn expect(
        &mut self,
        k: usize,
        expect: &Expect,
        out: &Drained,
        hosts: bool,
        ready: bool,
        dup: bool,
        before: Option<TaskSnapshot>,
    ) {
        let Some(key) = expect.key() else {
            return;
        };
        let session = self.slots[k].session;
        let owner = self.slots[k].owner;
        let answers: Vec<&check::Msg> = out
            .sends()
            .filter(|s| s.session == session)
            .map(|s| &s.msg)
            .filter(|m| m.response_id().and_then(id_key).as_ref() == Some(key))
            .collect();
        let single = || {
            assert_eq!(answers.len(), 1, "invariant: {expect:?} got {answers:?}");
            answers[0]
        };
        if dup {
            assert_eq!(
                single().code(),
                Some(-32600),
                "invariant: a duplicate id is refused"
            );
            return;
        }
        if !hosts {
            // Before initialize, a request without the 2026-07-28 `_meta` is a malformed
            // modern one.
            let want = if ready { -32601 } else { -32602 };
            assert_eq!(
                single().code(),
                Some(want),
                "invariant: tasks/* without tasks: {expect:?}"
            );
            return;
        }
        if matches!(expect, Expect::Cancel(..)) && !self.fz.cancel
            || matches!(expect, Expect::List(..)) && !self.fz.list
        {
            assert_eq!(
                single().code(),
                Some(-32601),
                "invariant: {expect:?} not declared"
            );
            return;
        }
        // `before`: the task as stored and not expired; visible only to its owner.
        let visible = before
            .as_ref()
            .filter(|s| s.owner.as_str() == OWNERS[owner]);
        let foreign = before.is_some() && visible.is_none();
        if let (Some(task), None) = (expect.task(), visible) {
            // Unknown, expired, or another owner's: one and the same "not found".
            let m = single();
            assert_eq!(
                m.code(),
                Some(-32602),
                "invariant: {expect:?} of a task not ours"
            );
            let mut error = m.error().expect("an error").clone();
            if let Some(e) = error.as_object_mut() {
                e.remove("id");
                // Its owner may be told that one of its tasks expired lately; another owner
                // (foreign) must get the very answer an unknown id gets.
                if let (false, Some(Value::String(message))) = (foreign, e.get_mut("message")) {
                    *message = message.replace("Task has expired", "Task not found");
                }
            }
            let first = self
                .not_found
                .entry(expect.method())
                .or_insert_with(|| error.clone());
            assert_eq!(
                *first,
                error,
                "invariant: {} of {task:?} (foreign: {foreign}) answers unlike an unknown id",
                expect.method()
            );
            if foreign {
                count(0);
                let now = self.host.task(task).map(|s| wire_snapshot(&s));
                let was = before.as_ref().map(wire_snapshot);
                assert_eq!(
                    now, was,
                    "invariant: another owner's request changed {task:?}"
                );
            }
            return;
        }
        let now = self.host.now().0;
        match expect {
            Expect::Nothing => {}
            Expect::Get(_, task) => match single().result() {
                Some(result) => {
                    let stored = self.host.task(task).map(|s| wire_snapshot(&s));
                    assert_eq!(
                        Some(result),
                        stored.as_ref(),
                        "invariant: tasks/get shows the stored task"
                    );
                }
                None => panic!("invariant: tasks/get of live {task:?} failed: {answers:?}"),
            },
            Expect::Result(k2, task) => {
                let view = visible.expect("checked");
                if view.info.status.is_terminal() {
                    let m = single();
                    if let Some(result) = m.result() {
                        assert_eq!(
                            result["_meta"][RELATED_TASK]["taskId"],
                            json!(task),
                            "invariant: tasks/result carries the related-task meta"
                        );
                    }
                } else {
                    assert!(
                        answers.is_empty(),
                        "invariant: tasks/result of a live task parks"
                    );
                    self.slots[k].parked.insert(k2.clone(), task.clone());
                }
            }
            Expect::Cancel(_, task) => {
                let view = visible.expect("checked");
                let m = single();
                if check::shown_status(view).is_terminal() {
                    assert_eq!(
                        m.code(),
                        Some(-32602),
                        "invariant: cancel terminal {task:?}"
                    );
                } else {
                    let Some(result) = m.result() else {
                        panic!("invariant: cancelling live {task:?} failed: {answers:?}");
                    };
                    assert_eq!(result["status"], "cancelled", "invariant: cancel result");
                    let after = self.host.task(task).map(|t| t.info.status);
                    assert_eq!(
                        after,
                        Some(TaskStatus::Cancelled),
                        "invariant: cancel stored"
                    );
                    let work = self.host.task_call(task);
                    let stops = out
                        .events()
                        .filter(|e| matches!(e, Event::Stop { call, reason: StopReason::Cancelled, .. } if Some(*call) == work))
                        .count();
                    assert_eq!(
                        stops, 1,
                        "invariant: cancelling a running task stops its work once"
                    );
                }
            }
            Expect::List(_, first) => {
                let m = single();
                let Some(result) = m.result() else {
                    assert_eq!(m.code(), Some(-32602), "invariant: bad cursor is -32602");
                    return;
                };
                let listed = result["tasks"].as_array().expect("schema-checked");
                for t in listed {
                    let id = t["taskId"].as_str().expect("schema-checked");
                    let stored = self.host.task(id);
                    assert_eq!(
                        stored.as_ref().map(|s| s.owner.as_str()),
                        Some(OWNERS[owner]),
                        "invariant: tasks/list lists only the caller's tasks"
                    );
                    assert_eq!(
                        stored.as_ref().map(wire_snapshot).as_ref(),
                        Some(t),
                        "invariant: listed tasks exist as listed"
                    );
                    assert!(
                        !self.watch.is_expired(id, now),
                        "invariant: expired task listed"
                    );
                }
                if *first {
                    let total = self.host.owner_task_count(&self.owners[owner]);
                    assert_eq!(
                        listed.len(),
                        total.min(self.fz.page_size),
                        "invariant: page size"
                    );
                    assert_eq!(
                        result.get("nextCursor").is_some(),
                        total > self.fz.page_size,
                        "invariant: nextCursor iff more tasks remain"
                    );
                }
                if let Some(c) = result.get("nextCursor").and_then(Value::as_str) {
                    self.cursors.push(c.to_owned());
                }
            }
        }
    }
}

/// A JSON id from its key (`n:5` or `s:abc`).
fn key_json(key: &str) -> Value {
    match key.split_once(':') {
        Some(("n", n)) => json!(n.parse::<i64>().expect("a number key")),
        Some((_, s)) => json!(s),
        None => json!(key),
    }
}

/// Whether the client capabilities declare `capability` (an object, or `true` as some
/// peers write).
fn declares(caps: &Value, capability: &str) -> bool {
    caps.get(capability)
        .is_some_and(|v| v.is_object() || v == &Value::Bool(true))
}

/// Client capabilities from bits: elicitation, sampling, tasks, roots, oddities.
fn capabilities(bits: u8) -> Value {
    let mut caps = json!({});
    if bits & 1 != 0 {
        caps["elicitation"] = json!({"form": {}});
    }
    if bits & 2 != 0 {
        caps["sampling"] = json!({});
    }
    if bits & 4 != 0 {
        caps["tasks"] = json!({"cancel": {}, "requests": {"elicitation": {"create": {}}}});
    }
    if bits & 8 != 0 {
        caps["elicitation"] = json!(true);
    }
    if bits & 16 != 0 {
        caps["sampling"] = json!(5);
    }
    if bits & 32 != 0 {
        caps["roots"] = json!({});
    }
    caps
}

/// A tool result as an application would return it (or, rarely, a non-object).
fn tool_result(r: &mut Reader) -> Option<Value> {
    Some(match r.below(7)? {
        0 => json!({"content":[{"type":"text","text": r.word()?}]}),
        1 => json!({"content":[{"type":"text","text": r.word()?}], "isError": true}),
        2 => json!({"content":[], "isError": false, "_meta": 5}),
        3 => json!({"content":[], "structuredContent": {"n": r.u8()?}, "_meta": {"k": "v"}}),
        4 => json!({"content":[{"type":"text","text":"x"}], "isError": true,
                   "_meta": {RELATED_TASK: {"taskId": "other"}}}),
        5 => json!({"content":[{"type":"text","text":"x"}], "isError": false}),
        _ => json!(7),
    })
}

/// A plain `CallToolResult` for `respond` (passed through as is, so always valid), or,
/// rarely, a non-object the engine must refuse.
fn call_result(r: &mut Reader) -> Option<Value> {
    Some(match r.below(5)? {
        0 => json!({"content":[{"type":"text","text": r.word()?}]}),
        1 => json!({"content":[], "isError": true, "_meta": {"k": 1}}),
        2 => json!({"content":[], "structuredContent": {"n": r.u8()?}}),
        3 => json!({"content":[{"type":"text","text":"x"}], "isError": false}),
        _ => json!([]),
    })
}

fn rpc_error(r: &mut Reader) -> Option<RpcError> {
    let code = [-32603, -32602, 1, i64::MIN][r.below(4)?];
    let error = RpcError::new(code, r.word()?);
    Some(if r.bool()? {
        error.with_data(json!({"why": r.word()?}))
    } else {
        error
    })
}

/// An input request for a call (`task`: the call runs a task, whose related-task `_meta`
/// the engine sets; a plain call's params are passed through, so they stay valid).
fn input_request(r: &mut Reader, task: bool) -> Option<(&'static str, Value)> {
    Some(match r.below(7)? {
        0 | 1 => (
            "elicitation/create",
            json!({"message": r.word()?, "requestedSchema": {"type":"object","properties":{}}}),
        ),
        2 | 3 => {
            let mut params = json!({"messages":[{"role":"user","content":{"type":"text","text":"hi"}}],
                   "maxTokens": 5});
            if task {
                params["_meta"] = json!(3);
            }
            ("sampling/createMessage", params)
        }
        4 => ("roots/list", json!({})),
        5 => ("tools/list", json!({})),
        _ => ("elicitation/create", json!(5)),
    })
}

/// Breaks `params` while keeping the envelope well-formed: the request must still get
/// exactly one answer.
fn mutate_params(msg: &mut Value, r: &mut Reader) -> Option<()> {
    let choice = r.below(8)?;
    let Value::Object(obj) = msg else {
        return Some(());
    };
    match choice {
        0 => {
            obj.insert("params".into(), json!([]));
        }
        1 => {
            obj.insert("params".into(), json!("x"));
        }
        2 => {
            obj.insert("params".into(), Value::Null);
        }
        3 => {
            obj.remove("params");
        }
        _ => {
            if let Some(Value::Object(params)) = obj.get_mut("params") {
                let keys: Vec<String> = params.keys().cloned().collect();
                if !keys.is_empty() {
                    let key = r.pick(&keys)?.clone();
                    let weird = [
                        json!(null),
                        json!(5),
                        json!("x"),
                        json!([]),
                        json!({}),
                        json!(-1),
                        json!(1.5),
                    ];
                    if choice == 4 {
                        params.remove(&key);
                    } else {
                        params.insert(key, r.pick(&weird)?.clone());
                    }
                }
            }
        }
    }
    Some(())
}

/// Breaks the envelope (or the bytes): the line is untrusted from here on.
fn mutate_envelope(mut msg: Value, r: &mut Reader) -> Option<Vec<u8>> {
    let choice = r.below(12)?;
    if let Value::Object(obj) = &mut msg {
        match choice {
            0 => {
                obj.remove("jsonrpc");
            }
            1 => {
                obj.insert("jsonrpc".into(), json!("1.0"));
            }
            2 => {
                obj.insert("id".into(), Value::Null);
            }
            3 => {
                obj.insert("id".into(), json!(1.5));
            }
            4 => {
                obj.insert("id".into(), json!({"a": 1}));
            }
            5 => {
                obj.insert("result".into(), json!({}));
            }
            6 => {
                obj.insert("method".into(), json!(7));
            }
            _ => {}
        }
    }
    let mut bytes = line(&msg);
    match choice {
        7 => {
            let cut = r.index(bytes.len().max(1))?;
            bytes.truncate(cut);
        }
        8 => bytes = [b"[".as_slice(), &bytes, b"]"].concat(),
        9 => bytes = [b"\xef\xbb\xbf".as_slice(), &bytes].concat(),
        10 => bytes.extend_from_slice(r.bytes(8)?),
        11 => {
            let at = r.index(bytes.len().max(1))?;
            bytes.insert(at.min(bytes.len()), b"\n\"\x00"[r.below(3)?]);
        }
        _ => {}
    }
    Some(bytes)
}
