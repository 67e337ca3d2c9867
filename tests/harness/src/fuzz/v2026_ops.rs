//! Body 4: the 2026-07-28 era beside 2025-11-25 on one server host.
//!
//! Three sessions share one host: a 2025-11-25 session of owner `a` (after `initialize`),
//! and two sessions that never say `initialize`, of owners `a` and `b`, speaking
//! 2026-07-28 with per-request `_meta` (declaring the tasks extension or not, sometimes
//! with missing, mistyped or foreign-version keys). The input picks requests
//! (`server/discover`, `tools/*`, `tasks/*` and `subscriptions/listen` about known,
//! foreign and unknown ids, removed methods, MRTR retries; a listen may also ask for tool
//! list changes), mutations of them, application commands on the calls (answers, tool
//! errors, JSON-RPC errors, status messages, input requests), the application saying its
//! tools changed, and time.
//!
//! Invariants, besides those [`drain`] checks on every message: no panic; a 2026 session
//! is sent no request, and notifications only on a `subscriptions/listen` stream it opened,
//! naming only its owner's tasks (a tools change only on one whose ack granted it); every well-formed request is
//! answered exactly once, once the application has answered its calls; every result and
//! error on a 2026 session validates against the 2026 core and extension schemas by its
//! definition (every message with [`Schema::Full`]; otherwise on the inputs the oracle's
//! hash samples); a task is created only for a request that declared the extension, and
//! only its creating owner ever reads it; a task never leaves a terminal status;
//! `inputRequests` appear exactly while `input_required`.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{json, Value};
use taskwire_engine::{CallId, Event, Host, Millis, Notice, RpcError, SessionId};

use super::check::{id_key, output_bound, Class, IdKey, Msg, Schema};
use super::reader::Reader;
use super::{add_tools, config, drain, dump_on_panic, task_ids, twice, Record, Transcript};
use super::{tline, EPOCH};
use crate::schema::{check_in, CORE_2026, TASKS_2026};

const EXT: &str = "io.modelcontextprotocol/tasks";

/// How often the 2026 paths were reached (since the process started): the seeded loop
/// asserts each is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Tasks created by a 2026 `tools/call`.
    pub created: usize,
    /// 2026 `tasks/get` answers showing `inputRequests` with at least one key.
    pub asked: usize,
    /// 2026 `tasks/get` answers with an inline `result` or `error`.
    pub outcomes: usize,
    /// 2026 `tasks/get` answers about a task created by the 2025-11-25 session.
    pub v2025_read: usize,
    /// `notifications/tasks` sent on listen streams.
    pub streamed: usize,
    /// Tool list changes sent on listen streams.
    pub tools_streamed: usize,
}

static STATS: [AtomicUsize; 6] = [const { AtomicUsize::new(0) }; 6];

fn count(i: usize) {
    STATS[i].fetch_add(1, Ordering::Relaxed);
}

/// How often the 2026 paths were reached so far in this process.
pub fn stats() -> Stats {
    let n = |i: usize| STATS[i].load(Ordering::Relaxed);
    Stats {
        created: n(0),
        asked: n(1),
        outcomes: n(2),
        v2025_read: n(3),
        streamed: n(4),
        tools_streamed: n(5),
    }
}
const OWNERS: [&str; 2] = ["a", "b"];
/// Operations per run at most.
const MAX_OPS: usize = 96;

/// Runs the body on one input, sampling the schema checks (the libFuzzer target).
pub fn run(data: &[u8]) {
    run_with(data, Schema::Sampled);
}

/// Runs the body on one input with the given oracle (and twice, as `schema` says).
pub fn run_with(data: &[u8], schema: Schema) {
    twice(data, schema, |d, record| drive(d, schema, record));
}

/// One run; returns its transcript.
pub fn drive(data: &[u8], schema: Schema, record: Record) -> Transcript {
    let mut r = Reader::new(data);
    let Some(mut h) = Harness::new(&mut r, schema, data, record) else {
        return Transcript::new(record);
    };
    for _ in 0..MAX_OPS {
        if h.step(&mut r).is_none() {
            break;
        }
    }
    h.finish();
    std::mem::replace(&mut h.transcript, Transcript::new(Record::Off))
}

/// A session the harness speaks on.
struct Slot {
    session: SessionId,
    owner: usize,
    v2026: bool,
    /// Well-formed requests not answered yet: id → method.
    pending: BTreeMap<IdKey, &'static str>,
    /// The listen streams whose ack granted `toolsListChanged`.
    hears_tools: BTreeSet<IdKey>,
    next_id: i64,
}

/// What the harness knows of a task.
struct Known {
    owner: usize,
    /// Created by the 2025-11-25 session.
    v2025: bool,
    /// The last status a 2026 `tasks/get` showed.
    status: Option<String>,
    /// The keys of its last `inputRequests`.
    keys: Vec<String>,
}

struct Harness {
    host: Host,
    slots: Vec<Slot>,
    tasks: BTreeMap<String, Known>,
    calls: Vec<(CallId, bool)>,
    /// Input requests the application made that no `InputResponse` has answered yet (each
    /// may end in one, e.g. when its session closes).
    inputs: usize,
    now: u64,
    /// Every check runs (otherwise only the cheap ones: see the [module docs](self)).
    deep: bool,
    validate: bool,
    transcript: Transcript,
}

impl Drop for Harness {
    fn drop(&mut self) {
        dump_on_panic(&self.transcript);
    }
}

impl Harness {
    fn new(r: &mut Reader, schema: Schema, data: &[u8], record: Record) -> Option<Harness> {
        let mode = r.u8()?;
        let mut cfg = config("v2026");
        cfg.tools_list_changed = true;
        cfg.tasks.poll_interval_ms = [None, Some(200)][usize::from(mode & 1)];
        cfg.tasks.default_ttl_ms = [None, Some(60_000)][usize::from(mode >> 1 & 1)];
        cfg.tasks.max_tasks_per_owner = 1 + usize::from(mode >> 2 & 7);
        let mut host = Host::new(cfg, task_ids(mode >> 5), Millis(EPOCH));
        add_tools(&mut host);
        let deep = super::deep(schema, data);
        let validate = deep && schema != Schema::Structural;
        let mut h = Harness {
            host,
            slots: Vec::new(),
            tasks: BTreeMap::new(),
            calls: Vec::new(),
            inputs: 0,
            now: EPOCH,
            deep,
            validate,
            transcript: Transcript::new(record),
        };
        for (owner, v2026) in [(0, false), (0, true), (1, true)] {
            let session = h
                .host
                .open(Millis(EPOCH), taskwire_engine::Role::Server, OWNERS[owner])
                .expect("the host takes sessions");
            h.slots.push(Slot {
                session,
                owner,
                v2026,
                pending: BTreeMap::new(),
                hears_tools: BTreeSet::new(),
                next_id: 1,
            });
        }
        let init = json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
            "protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},
            "clientInfo":{"name":"fuzz","version":"1"}}});
        h.feed(0, &init, Some("initialize"));
        Some(h)
    }

    fn step(&mut self, r: &mut Reader) -> Option<()> {
        match r.below(11)? {
            0..=4 => self.v2026_request(r)?,
            5 => self.v2025_request(r)?,
            6 | 7 => self.app_command(r)?,
            8 => self.answer_inputs(r)?,
            9 => self.tools_changed(r)?,
            _ => {
                self.now += [50, 1_000, 30_000, 120_000][r.below(4)?];
                self.host
                    .handle_timeout(Millis(self.now))
                    .expect("the host takes input");
                self.absorb();
            }
        }
        Some(())
    }

    /// A 2026 request on session 1 or 2.
    fn v2026_request(&mut self, r: &mut Reader) -> Option<()> {
        let mut k = 1 + r.below(2)?;
        let methods = [
            "server/discover",
            "tools/list",
            "tools/call",
            "tools/call",
            "tasks/get",
            "tasks/get",
            "tasks/cancel",
            "tasks/update",
            "tasks/result",
            "tasks/list",
            "resources/list",
            "subscriptions/listen",
        ];
        let method = *r.pick(&methods)?;
        let mut params = match method {
            "tools/call" => {
                let name = *r.pick(&["opt", "req", "forb", "app", "nope"])?;
                let mut p = json!({ "name": name, "arguments": {}, "task": { "ttl": 5 } });
                // MRTR retries: answers to earlier rounds, a state we wrote or a forged one.
                match r.below(4)? {
                    0 => p["inputResponses"] = json!({ "input-1": { "action": "accept" } }),
                    1 => p["requestState"] = json!("{\"input-1\":{\"action\":\"decline\"}}"),
                    2 if r.bool()? => p["requestState"] = json!("forged"),
                    _ => {}
                }
                p
            }
            m if m.starts_with("tasks/") => {
                let task = self.pick_task(r)?;
                // Mostly on the session of the task's owner, sometimes on the other one.
                if let (Some(known), false) = (self.tasks.get(&task), r.one_in(4)?) {
                    k = 1 + known.owner;
                }
                let mut p = json!({ "taskId": task });
                if m == "tasks/update" {
                    let keys = self
                        .tasks
                        .get(&task)
                        .map(|t| t.keys.clone())
                        .unwrap_or_default();
                    let mut responses = serde_json::Map::new();
                    for key in keys
                        .iter()
                        .chain(std::iter::once(&"unknown-key".to_owned()))
                    {
                        if r.bool()? {
                            responses
                                .insert(key.clone(), json!({ "action": "accept", "content": {} }));
                        }
                    }
                    p["inputResponses"] = Value::Object(responses);
                }
                p
            }
            "subscriptions/listen" => {
                let (a, b) = (self.pick_task(r)?, self.pick_task(r)?);
                let mut filter = json!({ "taskIds": [a, b] });
                if r.bool()? {
                    filter["toolsListChanged"] = json!(true);
                }
                json!({ "notifications": filter })
            }
            _ => json!({}),
        };
        let caps = match r.below(6)? {
            0 => json!({}),
            4 | 5 => json!({ "elicitation": {}, "extensions": { EXT: {} } }),
            1 => json!({ "extensions": { EXT: {} } }),
            2 => json!({ "elicitation": {}, "extensions": { EXT: {} } }),
            _ => json!({ "elicitation": {}, "sampling": {} }),
        };
        let declared = caps["extensions"].get(EXT).is_some();
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": caps,
        });
        // Sometimes malformed: the answer is an error, still exactly one.
        match r.below(12)? {
            0 => params["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("2025-11-25"),
            1 => {
                params["_meta"]
                    .as_object_mut()
                    .expect("an object")
                    .remove("io.modelcontextprotocol/clientCapabilities");
            }
            2 => params["_meta"]["io.modelcontextprotocol/clientCapabilities"] = json!(7),
            3 => params["taskId"] = json!(5),
            _ => {}
        }
        let id = self.fresh_id(k);
        let message = json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params });
        let before = self.host.task_count();
        self.feed(k, &message, Some(method));
        if !declared || method != "tools/call" {
            assert_eq!(
                self.host.task_count(),
                before,
                "invariant: a task was created for a request that did not declare the extension: {message}"
            );
        }
        Some(())
    }

    /// The application says its tools changed, on one session.
    fn tools_changed(&mut self, r: &mut Reader) -> Option<()> {
        let k = r.index(self.slots.len())?;
        let session = self.slots[k].session;
        let sent = self
            .host
            .notify(Millis(self.now), session, &Notice::ToolsListChanged);
        tline!(self.transcript, "app tools changed on {k} -> {sent:?}");
        assert!(
            sent.is_ok(),
            "invariant: a ready session takes a notice: {sent:?}"
        );
        self.absorb();
        Some(())
    }

    /// A 2025-11-25 request on session 0: a task-augmented call, or `tasks/get`.
    fn v2025_request(&mut self, r: &mut Reader) -> Option<()> {
        let message = if r.bool()? {
            let name = *r.pick(&["opt", "req", "app"])?;
            json!({ "jsonrpc": "2.0", "id": self.fresh_id(0), "method": "tools/call",
                    "params": { "name": name, "task": { "ttl": 60_000 } } })
        } else {
            let task = self.pick_task(r)?;
            json!({ "jsonrpc": "2.0", "id": self.fresh_id(0), "method": "tasks/get",
                    "params": { "taskId": task } })
        };
        let method = if message["method"] == "tools/call" {
            "tools/call"
        } else {
            "tasks/get"
        };
        self.feed(0, &message, Some(method));
        Some(())
    }

    fn app_command(&mut self, r: &mut Reader) -> Option<()> {
        if self.calls.is_empty() {
            return Some(());
        }
        let c = r.index(self.calls.len())?;
        let (call, _) = self.calls[c];
        let now = Millis(self.now);
        let choice = r.below(8)?;
        let result = match choice {
            0 => self.host.respond(
                now,
                call,
                Ok(json!({"content":[{"type":"text","text":"ok"}]})),
            ),
            1 => self.host.respond(
                now,
                call,
                Ok(json!({"content":[{"type":"text","text":"bad"}],"isError":true})),
            ),
            2 => self
                .host
                .respond(now, call, Err(RpcError::internal("boom"))),
            3 => self.host.set_task_message(now, call, Some("step".into())),
            _ => {
                let params = json!({ "mode": "form", "message": "ok?",
                    "requestedSchema": { "type": "object", "properties": {} } });
                self.host
                    .request_input(now, call, "elicitation/create", params)
                    .map(|_| ())
            }
        };
        tline!(self.transcript, "app on {call} -> {result:?}");
        if choice > 3 && result.is_ok() {
            self.inputs += 1;
        }
        if choice < 3 && result.is_ok() {
            // Answered: the call is over.
            self.calls.swap_remove(c);
        }
        self.absorb();
        Some(())
    }

    /// `tasks/update` with the keys the last `tasks/get` showed, on the owner's session.
    fn answer_inputs(&mut self, r: &mut Reader) -> Option<()> {
        let waiting: Vec<String> = self
            .tasks
            .iter()
            .filter(|(_, t)| !t.keys.is_empty())
            .map(|(id, _)| id.clone())
            .collect();
        if waiting.is_empty() {
            return Some(());
        }
        let task = r.pick(&waiting)?.clone();
        let known = &self.tasks[&task];
        let k = 1 + known.owner;
        let responses: serde_json::Map<String, Value> = known
            .keys
            .iter()
            .map(|key| (key.clone(), json!({ "action": "accept", "content": {} })))
            .collect();
        let id = self.fresh_id(k);
        let message = json!({ "jsonrpc": "2.0", "id": id, "method": "tasks/update", "params": {
            "taskId": task, "inputResponses": responses,
            "_meta": { "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                       "io.modelcontextprotocol/clientCapabilities": { "extensions": { EXT: {} } } } } });
        self.feed(k, &message, Some("tasks/update"));
        if let Some(t) = self.tasks.get_mut(&task) {
            t.keys.clear();
        }
        Some(())
    }

    /// A known task of either owner, or an unknown id.
    fn pick_task(&mut self, r: &mut Reader) -> Option<String> {
        let ids: Vec<String> = self.tasks.keys().cloned().collect();
        Some(match r.below(4)? {
            0 => "nope".to_owned(),
            _ if ids.is_empty() => "nope".to_owned(),
            _ => r.pick(&ids)?.clone(),
        })
    }

    fn fresh_id(&mut self, k: usize) -> Value {
        let slot = &mut self.slots[k];
        slot.next_id += 1;
        json!(slot.next_id)
    }

    /// Feeds one message to slot `k`; `method` marks it as a request owed one answer.
    fn feed(&mut self, k: usize, message: &Value, method: Option<&'static str>) {
        let line = super::line(message);
        tline!(
            self.transcript,
            "{} < {}",
            self.slots[k].session,
            String::from_utf8_lossy(&line)
        );
        if let (Some(method), Some(key)) = (method, message.get("id").and_then(id_key)) {
            self.slots[k].pending.insert(key, method);
        }
        let session = self.slots[k].session;
        self.host
            .handle_message(Millis(self.now), session, &line)
            .expect("the host takes input");
        self.absorb();
    }

    fn absorb(&mut self) {
        // Each open request may be answered now, and each open listen stream told of a change.
        let open: usize = self.slots.iter().map(|s| s.pending.len()).sum();
        let bound = output_bound(self.tasks.len() + self.calls.len() + self.inputs + open + 8);
        let out = drain(
            &mut self.host,
            "server",
            bound,
            &|_| true,
            &mut self.transcript,
            self.deep,
        );
        for event in out.events() {
            match event {
                Event::ToolCall(c) => self.calls.push((c.call, true)),
                Event::Stop { call, .. } => self.calls.retain(|(c, _)| c != call),
                Event::InputResponse { .. } => self.inputs = self.inputs.saturating_sub(1),
                _ => {}
            }
        }
        for sent in out.sends() {
            let k = self
                .slots
                .iter()
                .position(|s| s.session == sent.session)
                .expect("a session of ours");
            let msg = &sent.msg;
            if matches!(msg.class, Class::Request | Class::Notification) {
                if self.slots[k].v2026 {
                    self.check_stream(k, msg);
                }
                continue;
            }
            let Some(key) = msg.response_id().and_then(id_key) else {
                continue;
            };
            let method = self.slots[k]
                .pending
                .remove(&key)
                .unwrap_or_else(|| panic!("invariant: an answer no request is owed: {}", msg.line));
            if self.slots[k].v2026 {
                self.check_v2026(k, method, msg);
            } else if let (Some(result), "tools/call") = (msg.result(), method) {
                if let Some(id) = result["task"]["taskId"].as_str() {
                    self.learn(id, 0, true);
                }
            }
        }
    }

    /// A task was created (an id may come back once its earlier task is gone).
    fn learn(&mut self, task: &str, owner: usize, v2025: bool) {
        let known = Known {
            v2025,
            owner,
            status: None,
            keys: Vec::new(),
        };
        self.tasks.insert(task.to_owned(), known);
    }

    /// A 2026 session hears notifications only on a listen stream it opened, about its
    /// owner's tasks, valid against the schemas.
    fn check_stream(&mut self, k: usize, msg: &Msg) {
        let method = msg.method().unwrap_or("");
        let params = msg.params().unwrap_or(&Value::Null);
        let stream = &params["_meta"]["io.modelcontextprotocol/subscriptionId"];
        let open = id_key(stream)
            .is_some_and(|key| self.slots[k].pending.get(&key) == Some(&"subscriptions/listen"));
        assert!(
            open && msg.class == Class::Notification,
            "invariant: a 2026 session was sent a request or a notification off a listen stream: {}",
            msg.line
        );
        let key = id_key(stream).expect("an open stream's id");
        let (file, definition) = match method {
            "notifications/subscriptions/acknowledged" => {
                if params["notifications"]["toolsListChanged"] == true {
                    self.slots[k].hears_tools.insert(key);
                }
                (CORE_2026, "SubscriptionsAcknowledgedNotification")
            }
            "notifications/tools/list_changed" => {
                assert!(
                    self.slots[k].hears_tools.contains(&key),
                    "invariant: a tools change on a stream that was not granted it: {}",
                    msg.line
                );
                count(5);
                (CORE_2026, "ToolListChangedNotification")
            }
            "notifications/tasks" => {
                count(4);
                (TASKS_2026, "TaskStatusNotification")
            }
            other => panic!("invariant: {other} on a listen stream: {}", msg.line),
        };
        if self.validate {
            check_in(file, definition, msg.value()).unwrap_or_else(|e| panic!("invariant: {e}"));
        }
        let owner = self.slots[k].owner;
        let named: Vec<&str> = match method {
            "notifications/tasks" => params["taskId"].as_str().into_iter().collect(),
            _ => params["notifications"]["taskIds"]
                .as_array()
                .map(|ids| ids.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default(),
        };
        for task in named {
            assert_eq!(
                self.tasks.get(task).map(|t| t.owner),
                Some(owner),
                "invariant: a listen stream of {} named task {task}: {}",
                OWNERS[owner],
                msg.line
            );
        }
    }

    /// Schema, isolation and status checks of one answer on a 2026 session.
    fn check_v2026(&mut self, k: usize, method: &str, answer: &Msg) {
        let owner = self.slots[k].owner;
        if let Class::Error { code } = answer.class {
            if self.validate {
                let definition = match code {
                    -32021 => "MissingRequiredClientCapabilityError",
                    -32022 => "UnsupportedProtocolVersionError",
                    _ => "JSONRPCErrorResponse",
                };
                check_in(CORE_2026, definition, answer.value())
                    .unwrap_or_else(|e| panic!("invariant: {e}"));
            }
            return;
        }
        let result = answer.result().expect("a result");
        let (file, definition) = match (method, result["resultType"].as_str()) {
            ("server/discover", _) => (CORE_2026, "DiscoverResult"),
            ("tools/list", _) => (CORE_2026, "ListToolsResult"),
            ("tools/call", Some("task")) => (TASKS_2026, "CreateTaskResult"),
            ("tools/call", Some("input_required")) => (CORE_2026, "InputRequiredResult"),
            ("tools/call", _) => (CORE_2026, "CallToolResult"),
            ("tasks/get", _) => (TASKS_2026, "GetTaskResult"),
            ("tasks/cancel", _) => (TASKS_2026, "CancelTaskResult"),
            ("tasks/update", _) => (TASKS_2026, "UpdateTaskResult"),
            ("subscriptions/listen", _) => (CORE_2026, "SubscriptionsListenResult"),
            (other, _) => panic!("invariant: {other} answered with a result: {}", answer.line),
        };
        if self.validate {
            check_in(CORE_2026, "JSONRPCResultResponse", answer.value())
                .and_then(|()| check_in(file, definition, result))
                .unwrap_or_else(|e| panic!("invariant: {e}"));
        }
        let Some(task) = result["taskId"].as_str() else {
            return;
        };
        if definition == "CreateTaskResult" {
            count(0);
            self.learn(task, owner, false);
            return;
        }
        let known = self.tasks.get_mut(task).unwrap_or_else(|| {
            panic!(
                "invariant: an answer names a task never created: {}",
                answer.line
            )
        });
        assert_eq!(
            known.owner, owner,
            "invariant: owner {} read a task of owner {}: {}",
            OWNERS[owner], OWNERS[known.owner], answer.line
        );
        let status = result["status"].as_str().expect("a status").to_owned();
        if let Some(before) = &known.status {
            let terminal = |s: &str| matches!(s, "completed" | "failed" | "cancelled");
            assert!(
                !terminal(before) || *before == status,
                "invariant: task {task} left {before} for {status}"
            );
        }
        if method == "tasks/get" {
            if known.v2025 {
                count(3);
            }
            if result.get("result").is_some() || result.get("error").is_some() {
                count(2);
            }
        }
        let inputs = result.get("inputRequests");
        if inputs
            .and_then(Value::as_object)
            .is_some_and(|m| !m.is_empty())
        {
            count(1);
        }
        assert_eq!(
            inputs.is_some(),
            status == "input_required",
            "invariant: inputRequests exactly while input_required: {}",
            answer.line
        );
        known.keys = inputs
            .and_then(Value::as_object)
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default();
        known.status = Some(status);
    }

    /// The application answers every call; then every request has had its one answer.
    fn finish(&mut self) {
        for (call, _) in std::mem::take(&mut self.calls) {
            let result = self.host.respond(
                Millis(self.now),
                call,
                Ok(json!({"content":[{"type":"text","text":"done"}]})),
            );
            tline!(self.transcript, "app finish {call} -> {result:?}");
            self.absorb();
        }
        // Streams still open (a task that expired stays followed) are ended by the client.
        for k in 1..self.slots.len() {
            let streams: Vec<IdKey> = self.slots[k]
                .pending
                .iter()
                .filter(|(_, m)| **m == "subscriptions/listen")
                .map(|(key, _)| key.clone())
                .collect();
            for key in streams {
                self.slots[k].pending.remove(&key);
                let id: i64 = key
                    .trim_start_matches("n:")
                    .parse()
                    .expect("our ids are numbers");
                let cancel = json!({ "jsonrpc": "2.0", "method": "notifications/cancelled",
                                     "params": { "requestId": id } });
                self.feed(k, &cancel, None);
            }
        }
        for slot in &self.slots {
            assert!(
                slot.pending.is_empty(),
                "invariant: requests never answered on {}: {:?}",
                slot.session,
                slot.pending
            );
        }
        self.host.shutdown(Millis(self.now));
        self.absorb();
    }
}
