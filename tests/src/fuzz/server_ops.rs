//! Body 2: one server session driven by an operation sequence decoded from the input.
//!
//! Operations: inbound messages (a grammar of MCP 2025-11-25 client messages, with
//! parameter and envelope mutations, plus raw garbage), application commands (complete,
//! fail, update, request input, answer a plain call, create a task, report progress), time
//! moving forward, to the next deadline and backward, and closing.
//!
//! Invariants checked after every operation:
//! - no panic, a bounded number of outputs, every message valid JSON-RPC 2.0 and valid
//!   against the 2025-11-25 schema (envelope, request/notification and result payloads);
//! - every trusted inbound request gets exactly one response (parked `tasks/result` at
//!   terminal or expiry), notifications none, and nothing answers an id nobody is owed;
//! - `tasks/get|result|cancel|list` answer as the spec says for live, terminal, expired and
//!   unknown tasks (`-32602` for expired and unknown ones);
//! - every view of a task follows the transition table; terminal views never change;
//!   `createdAt ≤ lastUpdatedAt`, both never decrease, and a task is born `working` now;
//! - a task is held exactly until `createdAt + ttl`, and never more than `max_tasks` at once;
//! - `handle_timeout` leaves no deadline due; a refused command changes nothing and says
//!   nothing; a closed session stays silent;
//! - the same input gives a byte-identical transcript (the body runs twice).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Debug;

use serde_json::{json, Value};
use taskwire_engine::wire::v2025_11_25::{LATEST_VERSION, RELATED_TASK};
use taskwire_engine::{Event, Millis, ProgressTarget, RequestId, RpcError, Session, UsageError};

use super::check::{
    self, id_key, output_bound, request_id_key, IdKey, Ledger, Msg, Schema, TaskWatch,
};
use super::reader::Reader;
use super::{add_tools, assert_no_busy_loop, config, drain, line, task_ids, Drained, EPOCH};

/// Runs the body on one input (twice, comparing transcripts).
pub fn run(data: &[u8]) {
    super::twice(data, |d| drive(d, Schema::Full));
}

/// Runs the body once and returns its transcript.
pub fn drive(data: &[u8], schema: Schema) -> String {
    let mut r = Reader::new(data);
    let Some(mut h) = Harness::new(&mut r, schema) else {
        return String::new();
    };
    let mut steps = 0;
    while !r.is_empty() && steps < MAX_STEPS {
        if h.step(&mut r).is_none() {
            break;
        }
        steps += 1;
    }
    h.finish();
    std::mem::take(&mut h.transcript)
}

/// Operations per run: keeps one input's cost bounded.
const MAX_STEPS: usize = 400;

/// The fuzzed configuration facts the checks depend on.
#[derive(Debug)]
struct Fz {
    max_tasks: usize,
    tasks_enabled: bool,
    list: bool,
    cancel: bool,
    page_size: usize,
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

struct Harness {
    s: Session,
    fz: Fz,
    now: u64,
    schema: Schema,
    ledger: Ledger,
    watch: TaskWatch,
    transcript: String,
    next_id: i64,
    used_ids: Vec<Value>,
    /// Plain `tools/call` requests the application must answer.
    app_pending: Vec<RequestId>,
    /// The server's own input requests awaiting the client: id → (id, task).
    out_requests: BTreeMap<IdKey, (RequestId, String)>,
    out_ids: BTreeSet<IdKey>,
    /// Trusted `tasks/result` requests parked on a task.
    parked: BTreeMap<IdKey, String>,
    cursors: Vec<String>,
}

impl Drop for Harness {
    fn drop(&mut self) {
        super::dump_on_panic(&self.transcript);
    }
}

impl Harness {
    fn new(r: &mut Reader, schema: Schema) -> Option<Self> {
        let (b0, b1, b2, b3) = (r.u8()?, r.u8()?, r.u8()?, r.u8()?);
        let mut cfg = config("fuzz-server");
        cfg.tasks.enabled = b0 & 7 != 0;
        cfg.tasks.list = b0 & 8 == 0;
        cfg.tasks.cancel = b0 & 16 == 0;
        cfg.tasks.status_notifications = b0 & 32 == 0;
        cfg.tasks.max_tasks = 1 + usize::from(b1 % 6);
        cfg.tasks.page_size = 1 + usize::from((b1 >> 4) % 3);
        cfg.tasks.default_ttl_ms =
            [None, Some(100), Some(1000), Some(300_000)][usize::from(b2 & 3)];
        cfg.tasks.max_ttl_ms =
            [None, Some(500), Some(60_000), Some(86_400_000)][usize::from((b2 >> 2) & 3)];
        cfg.tasks.poll_interval_ms =
            [None, Some(0), Some(500), Some(u64::MAX)][usize::from((b2 >> 4) & 3)];
        cfg.request_timeout_ms = [None, Some(0), Some(1000), Some(60_000)][usize::from(b2 >> 6)];
        cfg.tasks.min_ttl_ms = if b3 & 128 != 0 { 1000 } else { 0 };
        let fz = Fz {
            max_tasks: cfg.tasks.max_tasks,
            tasks_enabled: cfg.tasks.enabled,
            list: cfg.tasks.list,
            cancel: cfg.tasks.cancel,
            page_size: cfg.tasks.page_size,
        };
        let mut s = Session::server(cfg, task_ids(b3), Millis(EPOCH));
        add_tools(&mut s);
        s.accept_unknown_tools(b0 & 64 != 0);
        let mut h = Harness {
            s,
            fz,
            now: EPOCH,
            schema,
            ledger: Ledger::default(),
            watch: TaskWatch::receiver(),
            transcript: String::new(),
            next_id: 0,
            used_ids: Vec::new(),
            app_pending: Vec::new(),
            out_requests: BTreeMap::new(),
            out_ids: BTreeSet::new(),
            parked: BTreeMap::new(),
            cursors: Vec::new(),
        };
        if b0 & 128 == 0 {
            // Most runs start initialized so that the operations reach the task handlers.
            let caps = capabilities(b3 >> 2);
            let init = json!({"jsonrpc":"2.0","id":"init","method":"initialize","params":{
                "protocolVersion": LATEST_VERSION, "capabilities": caps,
                "clientInfo": {"name":"fuzz","version":"1"}}});
            h.feed(line(&init), true, Expect::Nothing);
            let done = json!({"jsonrpc":"2.0","method":"notifications/initialized"});
            h.feed(line(&done), true, Expect::Nothing);
        }
        Some(h)
    }

    // ---- operations -------------------------------------------------------------------------

    fn step(&mut self, r: &mut Reader) -> Option<()> {
        match r.below(32)? {
            0..=13 => self.message(r)?,
            14 => {
                let garbage = r.bytes(256)?.to_vec();
                self.feed(garbage, false, Expect::Nothing);
            }
            15 | 16 => {
                let task = self.pick_task(r)?;
                let result = tool_result(r)?;
                let gone = self.gone(&task) && result.is_object();
                let res = self.command("complete_task", |s, now| {
                    s.complete_task(now, &task, result)
                });
                self.expect_gone(gone, &task, &res);
            }
            17 => {
                let task = self.pick_task(r)?;
                let error = rpc_error(r)?;
                let gone = self.gone(&task);
                let res = self.command("fail_task", |s, now| s.fail_task(now, &task, error));
                self.expect_gone(gone, &task, &res);
            }
            18 => {
                let task = self.pick_task(r)?;
                let message = if r.bool()? { Some(r.word()?) } else { None };
                let gone = self.gone(&task);
                let res = self.command("update_task", |s, now| s.update_task(now, &task, message));
                self.expect_gone(gone, &task, &res);
            }
            19 => {
                let task = self.pick_task(r)?;
                let (method, params) = input_request(r)?;
                if let Ok(id) = self.command("request_input", |s, now| {
                    s.request_input(now, &task, method, params)
                }) {
                    let status = self.s.hosted_task(&task).map(|t| t.status.as_str());
                    assert_eq!(
                        status,
                        Some("input_required"),
                        "invariant: a task asking for input is input_required"
                    );
                    assert!(self.out_requests.contains_key(&request_id_key(&id)));
                }
            }
            20 | 21 => {
                let request = self.pick_app_request(r)?;
                let outcome = if r.one_in(4)? {
                    Err(rpc_error(r)?)
                } else {
                    Ok(call_result(r)?)
                };
                let owed = self.app_pending.contains(&request);
                let valid = !matches!(&outcome, Ok(v) if !v.is_object());
                let done = self.command("respond", |s, now| s.respond(now, &request, outcome));
                if owed && valid && !self.s.is_closed() {
                    assert!(done.is_ok(), "invariant: respond refused a pending call");
                }
                if done.is_ok() {
                    self.app_pending.retain(|p| p != &request);
                }
            }
            22 => {
                let task = if r.bool()? {
                    self.pick_task(r)?
                } else {
                    format!("app-{}", r.u8()?)
                };
                let ttl = [None, Some(0), Some(50), Some(10_000), Some(u64::MAX)][r.below(5)?];
                let _ = self.command_with(
                    "create_task",
                    |s, now| s.create_task(now, &task, ttl),
                    |h, created| {
                        let view = serde_json::to_value(created).expect("task serializes");
                        let now = h.s.now().0;
                        h.watch
                            .observe(&view, now, true)
                            .unwrap_or_else(|e| panic!("invariant: {e}"));
                    },
                );
            }
            23 => {
                let progress = [0.5, 1.0, 2.0, f64::NAN, f64::INFINITY, 1e308][r.below(6)?];
                let total = if r.bool()? { Some(10.0) } else { None };
                let message = if r.bool()? { Some(r.word()?) } else { None };
                if r.bool()? {
                    let task = self.pick_task(r)?;
                    let was_terminal = self
                        .s
                        .hosted_task(&task)
                        .is_some_and(|t| t.status.is_terminal());
                    let before = self.transcript.len();
                    let _ = self.command("notify_progress", |s, now| {
                        s.notify_progress(
                            now,
                            ProgressTarget::Task(&task),
                            progress,
                            total,
                            message,
                        )
                    });
                    if was_terminal {
                        assert!(
                            !self.transcript[before..].contains(" > "),
                            "invariant: progress sent for a terminal task"
                        );
                    }
                } else {
                    let request = self.pick_app_request(r)?;
                    let _ = self.command("notify_progress", |s, now| {
                        s.notify_progress(
                            now,
                            ProgressTarget::Request(&request),
                            progress,
                            total,
                            message,
                        )
                    });
                }
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
                if let Some(at) = self.s.poll_timeout() {
                    self.now = self.now.max(at.0);
                }
                self.timeout();
            }
            28 => {
                // Time passed backwards is clamped, never a panic.
                let before = self.s.now();
                self.now = self.now.saturating_sub(u64::from(r.u16()?));
                self.timeout();
                assert_eq!(self.s.now(), before, "invariant: the clock never goes back");
            }
            29 => self.answer_input(r)?,
            30 => {
                if r.one_in(4)? {
                    self.close(r.bool()?);
                } else {
                    self.list_all();
                }
            }
            _ => {
                // Ask for a live task's result: parked requests are the subtle part.
                let task = self.pick_task(r)?;
                let id = self.fresh_id();
                let key = id_key(&id).expect("fresh ids are keys");
                let msg = json!({"jsonrpc":"2.0","id":id,"method":"tasks/result",
                    "params":{"taskId":task}});
                self.feed(line(&msg), true, Expect::Result(key, task));
            }
        }
        Some(())
    }

    /// A message from the grammar, possibly mutated.
    fn message(&mut self, r: &mut Reader) -> Option<()> {
        let (mut msg, mut expect) = match r.below(16)? {
            0 => {
                let id = self.id(r)?;
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
                json!({"jsonrpc":"2.0","id":self.id(r)?,"method":"ping"}),
                Expect::Nothing,
            ),
            3 => {
                let params = match r.below(3)? {
                    0 => json!({}),
                    1 => json!({"cursor": format!("tools:{}", r.below(5)?)}),
                    _ => json!({"cursor": r.word()?}),
                };
                (
                    json!({"jsonrpc":"2.0","id":self.id(r)?,"method":"tools/list","params":params}),
                    Expect::Nothing,
                )
            }
            4 | 5 => (self.tools_call(r)?, Expect::Nothing),
            6..=8 => {
                let method = ["tasks/get", "tasks/result", "tasks/cancel"][r.below(3)?];
                let id = self.id(r)?;
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
                let id = self.id(r)?;
                let key = id_key(&id).expect("generated ids are keys");
                let cursor = match r.below(4)? {
                    0 | 1 if !self.cursors.is_empty() => Some(r.pick(&self.cursors)?.clone()),
                    0 | 1 => None,
                    2 => None,
                    _ => Some(
                        ["", "x", "5:", ":", "99999999999999999999:a", "0:"][r.below(6)?]
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
                let target = if !self.used_ids.is_empty() && r.below(4)? != 0 {
                    r.pick(&self.used_ids)?.clone()
                } else {
                    json!(r.u8()?)
                };
                (
                    json!({"jsonrpc":"2.0","method":"notifications/cancelled",
                        "params":{"requestId":target,"reason":"fuzz"}}),
                    Expect::Nothing,
                )
            }
            11 => return self.answer_input(r),
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
                        json!({"jsonrpc":"2.0","id":self.id(r)?,"method":method,"params":{}}),
                        Expect::Nothing,
                    )
                }
            }
            _ => {
                let method =
                    ["sampling/createMessage", "elicitation/create", "roots/list"][r.below(3)?];
                (
                    json!({"jsonrpc":"2.0","id":self.id(r)?,"method":method,
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
                self.feed(bytes, false, Expect::Nothing);
                return Some(());
            }
            _ => {}
        }
        self.feed(line(&msg), true, expect);
        Some(())
    }

    fn tools_call(&mut self, r: &mut Reader) -> Option<Value> {
        let name = ["opt", "req", "forb", "nope"][r.below(4)?];
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
        Some(json!({"jsonrpc":"2.0","id":self.id(r)?,"method":"tools/call","params":params}))
    }

    /// The client answers one of the server's input requests (or an unknown id).
    fn answer_input(&mut self, r: &mut Reader) -> Option<()> {
        let keys: Vec<_> = self
            .out_requests
            .values()
            .map(|(id, _)| id.clone())
            .collect();
        let id = if !keys.is_empty() && r.below(4)? != 0 {
            serde_json::to_value(r.pick(&keys)?).expect("ids serialize")
        } else {
            json!(r.u8()?)
        };
        let msg = match r.below(4)? {
            0 => json!({"jsonrpc":"2.0","id":id,"error":{"code":-1,"message":"no"}}),
            1 => json!({"jsonrpc":"2.0","id":id,"result":{"action":"decline"}}),
            _ => json!({"jsonrpc":"2.0","id":id,"result":{"action":"accept","content":{"a":"b"}}}),
        };
        self.feed(line(&msg), true, Expect::Nothing);
        Some(())
    }

    /// Walks every `tasks/list` page: each stored task is listed exactly once.
    fn list_all(&mut self) {
        if self.s.protocol_version() != Some(LATEST_VERSION)
            || !self.fz.tasks_enabled
            || !self.fz.list
            || self.s.is_closed()
        {
            return;
        }
        let mut cursor: Option<String> = None;
        let mut listed: Vec<String> = Vec::new();
        for _ in 0..=self.fz.max_tasks + 1 {
            let id = self.fresh_id();
            let key = id_key(&id).expect("fresh ids are keys");
            let params = match &cursor {
                Some(c) => json!({ "cursor": c }),
                None => json!({}),
            };
            let msg = json!({"jsonrpc":"2.0","id":id,"method":"tasks/list","params":params});
            let before = self.transcript.len();
            self.feed(
                line(&msg),
                true,
                Expect::List(key.clone(), cursor.is_none()),
            );
            // The answer is the last line the server sent with this id.
            let page = self.transcript[before..]
                .lines()
                .filter_map(|l| l.strip_prefix("server > "))
                .filter_map(|l| serde_json::from_str::<Value>(l).ok())
                .find(|v| v.get("id").and_then(id_key).as_deref() == Some(key.as_str()))
                .expect("tasks/list is answered at once");
            let result = &page["result"];
            for t in result["tasks"].as_array().expect("a page") {
                listed.push(t["taskId"].as_str().expect("taskId").to_owned());
            }
            match result.get("nextCursor").and_then(Value::as_str) {
                Some(next) => cursor = Some(next.to_owned()),
                None => {
                    let mut unique = listed.clone();
                    unique.sort();
                    unique.dedup();
                    assert_eq!(unique.len(), listed.len(), "invariant: a task listed twice");
                    assert_eq!(
                        unique.len(),
                        self.s.hosted_task_count(),
                        "invariant: the pages list every stored task"
                    );
                    return;
                }
            }
        }
        panic!("invariant: tasks/list pages never end");
    }

    fn close(&mut self, eof: bool) {
        let now = Millis(self.now);
        if eof {
            self.s.handle_eof(now);
        } else {
            self.s.close(now);
        }
        self.transcript.push_str("close\n");
        let out = self.drain_checked();
        assert!(
            out.sends.is_empty(),
            "invariant: closing sends nothing: {:?}",
            out.sends
        );
        self.absorb(out);
        self.ledger.connection_closed();
        self.parked.clear();
        self.app_pending.clear();
        self.out_requests.clear();
        self.after_step();
    }

    fn timeout(&mut self) {
        let was_closed = self.s.is_closed();
        self.s.handle_timeout(Millis(self.now));
        assert_no_busy_loop(&self.s, "server");
        let out = self.drain_checked();
        if was_closed {
            assert_eq!(out.count, 0, "invariant: a closed session stays silent");
        }
        self.absorb(out);
        self.after_step();
    }

    // ---- plumbing -----------------------------------------------------------------------------

    fn fresh_id(&mut self) -> Value {
        self.next_id += 1;
        let id = if self.next_id % 3 == 0 {
            json!(format!("r{}", self.next_id))
        } else {
            json!(self.next_id)
        };
        self.used_ids.push(id.clone());
        id
    }

    /// Mostly a fresh id; sometimes a used one (a duplicate while in flight) or an extreme.
    fn id(&mut self, r: &mut Reader) -> Option<Value> {
        Some(match r.below(16)? {
            0 if !self.used_ids.is_empty() => r.pick(&self.used_ids)?.clone(),
            1 => json!([i64::MAX, i64::MIN, -1, 0][r.below(4)?]),
            2 => json!(r.word()?),
            _ => self.fresh_id(),
        })
    }

    fn pick_task(&mut self, r: &mut Reader) -> Option<String> {
        let known = self.watch.ids();
        if !known.is_empty() && r.below(8)? != 0 {
            Some(r.pick(&known)?.clone())
        } else {
            r.word()
        }
    }

    fn pick_app_request(&mut self, r: &mut Reader) -> Option<RequestId> {
        if !self.app_pending.is_empty() && r.below(8)? != 0 {
            Some(r.pick(&self.app_pending)?.clone())
        } else {
            Some(RequestId::Number(i64::from(r.u8()?)))
        }
    }

    /// Whether `task` is one the harness saw, which has since expired (an open session only).
    fn gone(&self, task: &str) -> bool {
        !self.s.is_closed() && self.watch.knows(task) && self.live(task).is_none()
    }

    /// An expired task is unknown to every application command.
    fn expect_gone<T: Debug>(&self, gone: bool, task: &str, result: &Result<T, UsageError>) {
        if gone {
            assert!(
                matches!(result, Err(UsageError::UnknownTask(t)) if t == task),
                "invariant: a command on expired task {task:?} gave {result:?}"
            );
        }
    }

    /// A stored task that has not reached its expiry at the session's clock.
    fn live(&self, task: &str) -> Option<taskwire_engine::Task> {
        let now = self.s.now().0;
        self.s.hosted_task(task).filter(|t| {
            let born = check::timestamp_ms(&t.created_at).expect("checked timestamps");
            !check::expired(born, t.ttl, now)
        })
    }

    fn state_size(&self) -> usize {
        self.ledger.outstanding_count()
            + self.s.hosted_task_count()
            + self.out_requests.len()
            + self.app_pending.len()
            + 2
    }

    fn drain_checked(&mut self) -> Drained {
        let bound = output_bound(self.state_size());
        drain(
            &mut self.s,
            "server",
            self.schema,
            bound,
            &mut self.transcript,
        )
    }

    /// Feeds one inbound line and checks what came back.
    fn feed(&mut self, bytes: Vec<u8>, trusted: bool, mut expect: Expect) {
        if let Expect::Get(k, _)
        | Expect::Result(k, _)
        | Expect::Cancel(k, _)
        | Expect::List(k, _) = &expect
        {
            if self.ledger.is_exempt(k) {
                // Garbage used this id; whether it is still in flight is unknown.
                expect = Expect::Nothing;
            }
        }
        let hosts = self.s.protocol_version() == Some(LATEST_VERSION) && self.fz.tasks_enabled;
        let ready = self.s.protocol_version().is_some();
        let closed = self.s.is_closed();
        let dup = match &expect {
            Expect::Get(k, _)
            | Expect::Result(k, _)
            | Expect::Cancel(k, _)
            | Expect::List(k, _) => self.ledger.is_pending(k),
            Expect::Nothing => false,
        };
        let task_before = match &expect {
            Expect::Get(_, t) | Expect::Result(_, t) | Expect::Cancel(_, t) => self.live(t),
            _ => None,
        };
        let bound = output_bound(self.state_size());
        self.ledger.inbound(&bytes, trusted);
        self.transcript.push_str("client > ");
        self.transcript.push_str(&String::from_utf8_lossy(&bytes));
        self.transcript.push('\n');
        self.s.handle_message(Millis(self.now), &bytes);
        let out = drain(
            &mut self.s,
            "server",
            self.schema,
            bound,
            &mut self.transcript,
        );
        if closed {
            assert_eq!(out.count, 0, "invariant: a closed session stays silent");
        }
        if trusted {
            assert!(
                !out.sends
                    .iter()
                    .any(|(_, m)| matches!(m, Msg::Error { id: None, .. })),
                "invariant: a well-formed message drew an id-less error: {:?}",
                out.sends
            );
        } else {
            let idless = out
                .sends
                .iter()
                .filter(|(_, m)| matches!(m, Msg::Error { id: None, .. }))
                .count();
            assert!(idless <= 1, "invariant: one bad line, at most one error");
        }
        if !closed {
            self.expect(&expect, &out, hosts, ready, dup, task_before);
        }
        self.absorb(out);
        self.after_step();
    }

    /// Checks the answer to a trusted `tasks/*` request against the spec.
    fn expect(
        &mut self,
        expect: &Expect,
        out: &Drained,
        hosts: bool,
        ready: bool,
        dup: bool,
        before: Option<taskwire_engine::Task>,
    ) {
        let key = match expect {
            Expect::Nothing => return,
            Expect::Get(k, _)
            | Expect::Result(k, _)
            | Expect::Cancel(k, _)
            | Expect::List(k, _) => k,
        };
        let answers: Vec<&Msg> = out
            .sends
            .iter()
            .map(|(_, m)| m)
            .filter(|m| m.response_id().and_then(id_key).as_ref() == Some(key))
            .collect();
        let code = |m: &Msg| match m {
            Msg::Error { code, .. } => Some(*code),
            _ => None,
        };
        let single = || {
            assert_eq!(answers.len(), 1, "invariant: {expect:?} got {answers:?}");
            answers[0]
        };
        if dup {
            assert_eq!(
                code(single()),
                Some(-32600),
                "invariant: a duplicate id is refused"
            );
            return;
        }
        if !hosts {
            let c = code(single());
            let want = if ready { -32601 } else { -32600 };
            assert_eq!(
                c,
                Some(want),
                "invariant: tasks/* without tasks: {expect:?}"
            );
            return;
        }
        let now = self.s.now().0;
        match expect {
            Expect::Nothing => {}
            Expect::Get(_, task) => match &before {
                None => assert_eq!(
                    code(single()),
                    Some(-32602),
                    "invariant: tasks/get of unknown or expired {task:?}"
                ),
                Some(view) => match single() {
                    Msg::Result { result, .. } => {
                        let want = serde_json::to_value(view).expect("task serializes");
                        assert_eq!(result, &want, "invariant: tasks/get shows the stored task");
                    }
                    other => panic!("invariant: tasks/get of live {task:?} failed: {other:?}"),
                },
            },
            Expect::Result(k, task) => match &before {
                None => assert_eq!(
                    code(single()),
                    Some(-32602),
                    "invariant: tasks/result of unknown or expired {task:?}"
                ),
                Some(view) if view.status.is_terminal() => {
                    let m = single();
                    if let Msg::Result { result, .. } = m {
                        assert_eq!(
                            result["_meta"][RELATED_TASK]["taskId"],
                            json!(task),
                            "invariant: tasks/result carries the related-task meta"
                        );
                    }
                }
                Some(_) => {
                    assert!(
                        answers.is_empty(),
                        "invariant: tasks/result of a live task parks"
                    );
                    self.parked.insert(k.clone(), task.clone());
                }
            },
            Expect::Cancel(_, task) => {
                let c = code(single());
                if !self.fz.cancel {
                    assert_eq!(c, Some(-32601), "invariant: tasks/cancel not declared");
                } else {
                    match &before {
                        None => assert_eq!(c, Some(-32602), "invariant: cancel unknown {task:?}"),
                        Some(v) if v.status.is_terminal() => {
                            assert_eq!(c, Some(-32602), "invariant: cancel terminal {task:?}")
                        }
                        Some(_) => {
                            let Msg::Result { result, .. } = single() else {
                                panic!("invariant: cancelling live {task:?} failed: {answers:?}");
                            };
                            assert_eq!(result["status"], "cancelled", "invariant: cancel result");
                            let after = self.s.hosted_task(task).map(|t| t.status.as_str());
                            assert_eq!(after, Some("cancelled"), "invariant: cancel stored");
                        }
                    }
                }
            }
            Expect::List(_, first) => {
                let m = single();
                if !self.fz.list {
                    assert_eq!(code(m), Some(-32601), "invariant: tasks/list not declared");
                    return;
                }
                let Msg::Result { result, .. } = m else {
                    assert_eq!(code(m), Some(-32602), "invariant: bad cursor is -32602");
                    return;
                };
                let listed = result["tasks"].as_array().expect("schema-checked");
                for t in listed {
                    let id = t["taskId"].as_str().expect("schema-checked");
                    let stored = self
                        .s
                        .hosted_task(id)
                        .map(|t| serde_json::to_value(t).unwrap());
                    assert_eq!(
                        stored.as_ref(),
                        Some(t),
                        "invariant: listed tasks exist as listed"
                    );
                    assert!(
                        !self.watch.is_expired(id, now),
                        "invariant: expired task listed"
                    );
                }
                if *first {
                    let total = self.s.hosted_task_count();
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

    /// Runs an application command and checks that a refusal changes nothing.
    fn command<T: Debug>(
        &mut self,
        name: &str,
        f: impl FnOnce(&mut Session, Millis) -> Result<T, UsageError>,
    ) -> Result<T, UsageError> {
        self.command_with(name, f, |_, _| {})
    }

    /// [`Harness::command`], with `seen` called on success before the between-steps checks.
    fn command_with<T: Debug>(
        &mut self,
        name: &str,
        f: impl FnOnce(&mut Session, Millis) -> Result<T, UsageError>,
        seen: impl FnOnce(&mut Self, &T),
    ) -> Result<T, UsageError> {
        if self.s.poll_timeout().is_some_and(|at| at <= self.s.now()) {
            // An adapter fires due deadlines before anything else; then a refused command
            // must leave everything as it was.
            self.timeout();
        }
        let before = self.snapshot();
        let was_closed = self.s.is_closed();
        let bound = output_bound(self.state_size());
        let result = f(&mut self.s, Millis(self.now));
        self.transcript
            .push_str(&format!("app {name} -> {result:?}\n"));
        let out = drain(
            &mut self.s,
            "server",
            self.schema,
            bound,
            &mut self.transcript,
        );
        match &result {
            Err(e) => {
                assert_eq!(
                    out.count, 0,
                    "invariant: refused {name} ({e}) produced output"
                );
                assert_eq!(
                    before,
                    self.snapshot(),
                    "invariant: refused {name} ({e}) changed state"
                );
            }
            Ok(_) => assert!(!was_closed, "invariant: a closed session accepted {name}"),
        }
        self.absorb(out);
        if let Ok(value) = &result {
            seen(self, value);
        }
        self.after_step();
        result
    }

    fn snapshot(&self) -> String {
        let views: Vec<_> = self
            .watch
            .ids()
            .into_iter()
            .map(|id| format!("{:?}", self.s.hosted_task(&id)))
            .collect();
        format!(
            "{views:?} {} {:?} {}",
            self.s.hosted_task_count(),
            self.s.poll_timeout(),
            self.s.is_closed()
        )
    }

    /// Takes in what the server said: responses, task views, its own requests, events.
    fn absorb(&mut self, out: Drained) {
        let now = self.s.now().0;
        for (_, msg) in &out.sends {
            let answered = self.ledger.outbound(msg);
            if let (Some(method), Msg::Result { result, .. }, Schema::Full) =
                (&answered, msg, self.schema)
            {
                if let Some(definition) = check::result_definition(method, result) {
                    crate::schema::check(definition, result)
                        .unwrap_or_else(|e| panic!("invariant: {method} answer: {e}"));
                }
            }
            for (task, fresh) in check::tasks_in(msg, answered.as_deref()) {
                self.watch
                    .observe(&task, now, fresh)
                    .unwrap_or_else(|e| panic!("invariant: {e}"));
            }
            match msg {
                Msg::Request { id, method, params } => {
                    let key = id_key(id).expect("validated");
                    assert!(
                        self.out_ids.insert(key.clone()),
                        "invariant: server reused id {key}"
                    );
                    assert!(
                        matches!(
                            method.as_str(),
                            "elicitation/create" | "sampling/createMessage"
                        ),
                        "unexpected server request {method}"
                    );
                    let task = params
                        .as_ref()
                        .and_then(|p| p["_meta"][RELATED_TASK]["taskId"].as_str());
                    let task = task
                        .unwrap_or_else(|| panic!("invariant: input request without related-task"))
                        .to_owned();
                    let rid: RequestId = serde_json::from_value(id.clone()).expect("id");
                    self.out_requests.insert(key, (rid, task));
                }
                Msg::Notification { method, params } if method == "notifications/cancelled" => {
                    let target = params
                        .as_ref()
                        .and_then(|p| p.get("requestId"))
                        .and_then(id_key);
                    let target = target.expect("cancel names a request");
                    let (_, task) = self
                        .out_requests
                        .remove(&target)
                        .unwrap_or_else(|| panic!("invariant: cancel of unknown request {target}"));
                    let live = self
                        .s
                        .hosted_task(&task)
                        .is_some_and(|t| !t.status.is_terminal());
                    assert!(
                        !live,
                        "invariant: input request for live {task:?} abandoned"
                    );
                }
                _ => {}
            }
        }
        for event in &out.events {
            match event {
                Event::ToolCall {
                    request,
                    task: None,
                    ..
                } => self.app_pending.push(request.clone()),
                Event::ToolCall { task: Some(t), .. } => {
                    let status = self.s.hosted_task(t).map(|t| t.status.as_str());
                    assert!(
                        status.is_some(),
                        "invariant: ToolCall names task {t:?}, which is not stored"
                    );
                }
                Event::RequestCancelled { request, .. } => {
                    self.app_pending.retain(|p| p != request);
                }
                Event::InputResponse { request, .. } => {
                    self.out_requests.remove(&request_id_key(request));
                }
                _ => {}
            }
        }
    }

    /// Checks that hold between any two operations.
    fn after_step(&mut self) {
        let now = self.s.now().0;
        assert!(
            self.s.hosted_task_count() <= self.fz.max_tasks,
            "invariant: {} live tasks exceed the cap {}",
            self.s.hosted_task_count(),
            self.fz.max_tasks
        );
        // A closed session's store is frozen: nothing expires and nothing is said.
        let ids = if self.s.is_closed() {
            Vec::new()
        } else {
            self.watch.ids()
        };
        for id in ids {
            match self.s.hosted_task(&id) {
                Some(task) => {
                    let view = serde_json::to_value(task).expect("task serializes");
                    self.watch
                        .observe(&view, now, false)
                        .unwrap_or_else(|e| panic!("invariant: {e}"));
                    // A task created with a ttl of 0 is expired at birth: the engine holds
                    // it only until the next input, and must report that deadline as due.
                    let due = self.s.poll_timeout().is_some_and(|at| at.0 <= now);
                    assert!(
                        !self.watch.is_expired(&id, now) || due,
                        "invariant: task {id:?} outlived its ttl"
                    );
                }
                None => assert!(
                    self.watch.is_expired(&id, now),
                    "invariant: task {id:?} vanished before its ttl ran out"
                ),
            }
        }
        let parked = std::mem::take(&mut self.parked);
        for (key, task) in parked {
            if !self.ledger.is_pending(&key) {
                continue;
            }
            let live = self
                .s
                .hosted_task(&task)
                .is_some_and(|t| !t.status.is_terminal());
            assert!(
                live || self.s.is_closed(),
                "invariant: tasks/result {key} still parked on finished task {task:?}"
            );
            self.parked.insert(key, task);
        }
        if self.s.is_closed() {
            assert_eq!(
                self.s.poll_timeout(),
                None,
                "invariant: closed, no deadline"
            );
        }
    }

    /// Ends the run: the application answers everything, every task finishes, and every
    /// trusted request must then have had exactly one answer.
    fn finish(&mut self) {
        if self.s.is_closed() {
            return;
        }
        for request in self.app_pending.clone() {
            let reply = json!({"content":[{"type":"text","text":"done"}]});
            self.command("respond", |s, now| s.respond(now, &request, Ok(reply)))
                .expect("invariant: a pending call can be answered");
        }
        self.timeout();
        for id in self.watch.ids() {
            if self.live(&id).is_some_and(|t| !t.status.is_terminal()) {
                let result = json!({"content":[]});
                self.command("complete_task", |s, now| s.complete_task(now, &id, result))
                    .expect("invariant: a live task can be completed");
            }
        }
        self.ledger.assert_all_answered("server at the end");
        assert!(
            self.parked.is_empty(),
            "invariant: parked requests left: {:?}",
            self.parked
        );
        self.close(false);
        let mut transcript = std::mem::take(&mut self.transcript);
        transcript.push_str(&format!("answered {}\n", self.ledger.answered()));
        self.transcript = transcript;
    }
}

/// Client capabilities from bits: elicitation, sampling, tasks, oddities.
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

fn input_request(r: &mut Reader) -> Option<(&'static str, Value)> {
    Some(match r.below(6)? {
        0 | 1 => (
            "elicitation/create",
            json!({"message": r.word()?, "requestedSchema": {"type":"object","properties":{}}}),
        ),
        2 | 3 => (
            "sampling/createMessage",
            json!({"messages":[{"role":"user","content":{"type":"text","text":"hi"}}],
                   "maxTokens": 5, "_meta": 3}),
        ),
        4 => ("roots/list", json!({})),
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
