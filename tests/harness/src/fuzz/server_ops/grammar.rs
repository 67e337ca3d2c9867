//! How `server_ops` decodes its input: the host configuration and the sessions' layout, then
//! one operation per step (a message from the grammar of MCP client messages, with parameter
//! and envelope mutations, raw garbage, an application command, time, a session closing or
//! reconnecting), each decision read from the bytes with a [`Reader`].

use std::collections::BTreeMap;

use serde_json::{json, Value};
use taskwire_engine::era::v2025_11_25::RELATED_TASK;
use taskwire_engine::{Host, LogLevel, Millis, Owner, Role, RpcError};

use crate::fuzz::check::{id_key, IdKey, Oracle, TaskWatch};
use crate::fuzz::reader::Reader;
use crate::fuzz::{add_tools, config, line, task_ids, Record, Transcript, EPOCH};

use super::model::{AppCall, Expect, Fz, Harness, Slot, LAYOUTS, OWNERS};

/// A JSON id from its key (`n:5` or `s:abc`).
pub(super) fn key_json(key: &str) -> Value {
    match key.split_once(':') {
        Some(("n", n)) => json!(n.parse::<i64>().expect("a number key")),
        Some((_, s)) => json!(s),
        None => json!(key),
    }
}

/// Client capabilities from bits: elicitation, sampling, tasks, roots, oddities.
pub(super) fn capabilities(bits: u8) -> Value {
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
pub(super) fn tool_result(r: &mut Reader) -> Option<Value> {
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
pub(super) fn call_result(r: &mut Reader) -> Option<Value> {
    Some(match r.below(5)? {
        0 => json!({"content":[{"type":"text","text": r.word()?}]}),
        1 => json!({"content":[], "isError": true, "_meta": {"k": 1}}),
        2 => json!({"content":[], "structuredContent": {"n": r.u8()?}}),
        3 => json!({"content":[{"type":"text","text":"x"}], "isError": false}),
        _ => json!([]),
    })
}

pub(super) fn rpc_error(r: &mut Reader) -> Option<RpcError> {
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
pub(super) fn input_request(r: &mut Reader, task: bool) -> Option<(&'static str, Value)> {
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
pub(super) fn mutate_params(msg: &mut Value, r: &mut Reader) -> Option<()> {
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
pub(super) fn mutate_envelope(mut msg: Value, r: &mut Reader) -> Option<Vec<u8>> {
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

impl Harness {
    pub(super) fn new(r: &mut Reader, oracle: Oracle, deep: bool, record: Record) -> Option<Self> {
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
            .map(|&owner| {
                Slot::new(
                    owner,
                    host.open(now, Role::Server, OWNERS[owner])
                        .expect("the host takes sessions"),
                )
            })
            .collect();
        let mut h = Harness {
            host,
            fz,
            now: EPOCH,
            oracle,
            deep,
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

    pub(super) fn step(&mut self, r: &mut Reader) -> Option<()> {
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
                if r.one_in(4)? {
                    self.cancel_work(c, message);
                } else {
                    self.set_message(c, message);
                }
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
    pub(super) fn message(&mut self, k: usize, r: &mut Reader) -> Option<()> {
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

    pub(super) fn tools_call(&mut self, k: usize, r: &mut Reader) -> Option<Value> {
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
    pub(super) fn answer_input(&mut self, k: usize, r: &mut Reader) -> Option<()> {
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
    pub(super) fn ask(&mut self, k: usize, method: &str, task: String) {
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

    pub(super) fn fresh_id(&mut self, k: usize) -> Value {
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
    pub(super) fn id(&mut self, k: usize, r: &mut Reader) -> Option<Value> {
        Some(match r.below(16)? {
            0 if !self.slots[k].used_ids.is_empty() => r.pick(&self.slots[k].used_ids)?.clone(),
            1 => json!([i64::MAX, i64::MIN, -1, 0][r.below(4)?]),
            2 => json!(r.word()?),
            _ => self.fresh_id(k),
        })
    }

    pub(super) fn pick_task(&mut self, r: &mut Reader) -> Option<String> {
        let n = self.watch.len();
        if n > 0 && r.below(8)? != 0 {
            Some(self.watch.nth(r.index(n)?).to_owned())
        } else {
            r.word()
        }
    }

    /// A call the application holds: mostly a live one that `fits`, sometimes any.
    /// (`Some(None)`: there is none to pick; `None`: the input ran out.)
    pub(super) fn pick_call(
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
}
