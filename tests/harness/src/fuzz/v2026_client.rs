//! Body 5: our client in 2026-07-28 against our server, over a wire that mangles what the
//! server says.
//!
//! A client host opens with `server/discover` (under `Auto` or `Only(Era::V2026_07_28)`) against a server
//! host with the fuzz tools. The input picks client commands (`call_tool`,
//! `call_tool_as_task`, each sent plainly or with `_meta` members of its own (`send_with_meta`: a trace context; the engine's own keys are refused), `get_task`, `cancel_task`, `follow_task`, `cancel_request`, answering or failing the input the server
//! asks for), server commands (answers, tool errors, JSON-RPC errors, status messages, input
//! requests), time, and what becomes of each server-to-client message: delivered, dropped,
//! duplicated, or mutated (`resultType` swapped, a key removed, a status changed, invented
//! `inputRequests`, a truncated line), besides forged `notifications/tasks`.
//!
//! Invariants: no panic and no busy loop; every message the client sends is valid JSON-RPC,
//! and on a 2026-07-28 session none is a result (the server asks nothing); each request validates against its 2026 definition and carries
//! the per-request `_meta` (the extension declared except on a plain `tools/call`), and no
//! `tasks/result` or `tasks/list` is sent; `tasks/update` answers only keys the server asked
//! of that task, each handed to the application once per following of the task; every call the application makes
//! ends exactly once (a response, or a created or followed task and then one outcome, or
//! given up with `cancel_request`, after which nothing reports it), at the latest when the
//! session closes.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{json, Map, Value};
use taskwire_engine::{
    CallId, ClientEra, ClientFeatures, Event, Host, Millis, Request, RequestId, Role, RpcError,
    SessionId, UsageError,
};

use super::check::{request_id_key, Class, IdKey, Msg, Schema};
use super::reader::Reader;
use super::{
    add_tools, assert_no_busy_loop, config, drain, dump_on_panic, line, twice, Drained, Record,
    Transcript, EPOCH,
};
use crate::schema::{check_in, v2026_request_definition, CORE_2026};

/// Operations per run at most.
const MAX_OPS: usize = 120;
const TOOLS: [&str; 4] = ["opt", "req", "forb", "app"];
const VERSION_KEY: &str = "io.modelcontextprotocol/protocolVersion";
const CAPS_KEY: &str = "io.modelcontextprotocol/clientCapabilities";
const EXT: &str = "io.modelcontextprotocol/tasks";
const TRACEPARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

/// The members of a JSON object.
fn object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(members) => members,
        _ => Map::new(),
    }
}

/// How often the paths were reached (since the process started): the seeded loop asserts
/// each is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Sessions opened in 2026-07-28.
    pub opened: usize,
    /// Tasks the client followed.
    pub created: usize,
    /// Task outcomes reported from an inline `tasks/get` answer.
    pub outcomes: usize,
    /// Input requests handed to the client application.
    pub asked: usize,
    /// `tasks/update` sent.
    pub updates: usize,
}

static STATS: [AtomicUsize; 5] = [const { AtomicUsize::new(0) }; 5];

fn count(i: usize) {
    STATS[i].fetch_add(1, Ordering::Relaxed);
}

/// How often the paths were reached so far in this process.
pub fn stats() -> Stats {
    let n = |i: usize| STATS[i].load(Ordering::Relaxed);
    Stats {
        opened: n(0),
        created: n(1),
        outcomes: n(2),
        asked: n(3),
        updates: n(4),
    }
}

/// Runs the body on one input (the libFuzzer target).
pub fn run(data: &[u8]) {
    run_with(data, Schema::Sampled);
}

/// Runs the body on one input (and twice, as `schema` says, comparing the runs).
pub fn run_with(data: &[u8], schema: Schema) {
    twice(data, schema, |d, record| drive(d, schema, record));
}

/// One run; returns its transcript.
pub fn drive(data: &[u8], schema: Schema, record: Record) -> Transcript {
    let mut r = Reader::new(data);
    let deep = super::deep(schema, data);
    let validate = deep && schema != Schema::Structural;
    let Some(mut h) = Harness::new(&mut r, deep, validate, record) else {
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

/// Where a call of the client application stands.
#[derive(Debug, PartialEq, Eq)]
enum Call {
    Waiting,
    Task(String),
    Ended,
}

struct Harness {
    client: Host,
    server: Host,
    cs: SessionId,
    ss: SessionId,
    now: u64,
    to_server: VecDeque<Vec<u8>>,
    to_client: VecDeque<Vec<u8>>,
    /// The client application's calls, by request.
    calls: BTreeMap<IdKey, Call>,
    /// Input requests the client application has not answered: (call, task, key).
    inputs: Vec<(CallId, Option<String>, String)>,
    /// Keys handed to the application, per task.
    asked: BTreeMap<String, BTreeSet<String>>,
    /// Tasks the client heard of (created or named by the server).
    tasks: Vec<String>,
    /// The server application's calls.
    work: Vec<CallId>,
    closed: bool,
    /// Every message is checked structurally (otherwise taken as labelled).
    deep: bool,
    /// The client's requests are validated against their schema definitions.
    validate: bool,
    transcript: Transcript,
}

impl Drop for Harness {
    fn drop(&mut self) {
        dump_on_panic(&self.transcript);
    }
}

impl Harness {
    fn new(r: &mut Reader, deep: bool, validate: bool, record: Record) -> Option<Harness> {
        let mode = r.u8()?;
        let mut ccfg = config("fuzz-client");
        ccfg.client_era = [
            ClientEra::Auto,
            ClientEra::Only(taskwire_engine::Era::V2026_07_28),
        ][usize::from(mode & 1)];
        ccfg.client = ClientFeatures {
            elicitation: true,
            sampling: mode & 2 == 0,
            roots: false,
        };
        ccfg.request_timeout_ms = [None, Some(5_000)][usize::from(mode >> 2 & 1)];
        let mut scfg = config("fuzz-server");
        scfg.tasks.poll_interval_ms = [Some(200), Some(1_000)][usize::from(mode >> 3 & 1)];
        let now = Millis(EPOCH);
        let mut n = 0u64;
        let mut client = Host::new(ccfg, Box::new(unused_ids), now);
        let mut server = Host::new(
            scfg,
            Box::new(move || {
                n += 1;
                format!("task-{n}")
            }),
            now,
        );
        add_tools(&mut server);
        let cs = client
            .open(now, Role::Client, "server")
            .expect("the host takes sessions");
        let ss = server
            .open(now, Role::Server, "client")
            .expect("the host takes sessions");
        let mut h = Harness {
            client,
            server,
            cs,
            ss,
            now: EPOCH,
            to_server: VecDeque::new(),
            to_client: VecDeque::new(),
            calls: BTreeMap::new(),
            inputs: Vec::new(),
            asked: BTreeMap::new(),
            tasks: Vec::new(),
            work: Vec::new(),
            closed: false,
            deep,
            validate,
            transcript: Transcript::new(record),
        };
        h.client
            .initialize(now, cs)
            .expect("a fresh client session opens");
        h.settle();
        Some(h)
    }

    fn step(&mut self, r: &mut Reader) -> Option<()> {
        let now = Millis(self.now);
        match r.below(12)? {
            0 | 1 => {
                let (name, arguments) = ((*r.pick(&TOOLS)?).to_owned(), json!({}));
                let request = match r.bool()? {
                    true => Request::CallToolAsTask {
                        name,
                        arguments,
                        ttl_ms: None,
                    },
                    false => Request::CallTool { name, arguments },
                };
                // Members of our own in `_meta`, some of them the engine's (which win).
                let sent = match r.below(3)? {
                    0 => self.client.send(now, self.cs, request),
                    1 => {
                        let meta = json!({ "traceparent": TRACEPARENT, "tracestate": "a=1" });
                        self.client
                            .send_with_meta(now, self.cs, request, object(meta))
                    }
                    _ => {
                        let key = *r.pick(&[VERSION_KEY, "progressToken"])?;
                        let meta = object(json!({ key: [], "traceparent": TRACEPARENT }));
                        let refused = self.client.send_with_meta(now, self.cs, request, meta);
                        let expected = UsageError::ReservedMeta(key.to_owned());
                        assert_eq!(refused, Err(expected), "invariant: the engine's keys");
                        return Some(());
                    }
                };
                if let Ok(id) = sent {
                    self.calls.insert(request_id_key(&id), Call::Waiting);
                }
            }
            2 if r.below(4)? == 0 => {
                // Gives up a call still waiting: nothing may report it afterwards.
                let waiting: Vec<IdKey> = (self.calls.iter())
                    .filter(|(_, c)| **c == Call::Waiting)
                    .map(|(k, _)| k.clone())
                    .collect();
                if !waiting.is_empty() {
                    let key = waiting[r.index(waiting.len())?].clone();
                    let request = request_id_of(&key);
                    if let Ok(true) = self.client.cancel_request(now, self.cs, &request) {
                        self.calls.insert(key, Call::Ended);
                    }
                }
            }
            2 => {
                let task = self.some_task(r)?;
                let _ = match r.below(3)? {
                    0 => self.client.get_task(now, self.cs, &task),
                    1 => self.client.cancel_task(now, self.cs, &task),
                    _ => {
                        let sent = self.client.follow_task(now, self.cs, &task);
                        if let Ok(id) = &sent {
                            self.calls.insert(request_id_key(id), Call::Waiting);
                        }
                        sent
                    }
                };
            }
            3 => {
                if !self.inputs.is_empty() {
                    let (call, ..) = self.inputs.remove(r.index(self.inputs.len())?);
                    let answer = match r.below(3)? {
                        0 => Err(RpcError::internal("no user")),
                        1 => Ok(json!({ "action": "decline" })),
                        _ => Ok(json!({ "action": "accept", "content": { "ok": true } })),
                    };
                    let _ = self.client.respond(now, call, answer);
                }
            }
            4 => {
                if !self.work.is_empty() {
                    let call = self.work.remove(r.index(self.work.len())?);
                    let answer = match r.below(3)? {
                        0 => Err(RpcError::new(-32000, "tool broke")),
                        1 => Ok(
                            json!({ "content": [{ "type": "text", "text": "bad" }], "isError": true }),
                        ),
                        _ => Ok(json!({ "content": [{ "type": "text", "text": "done" }] })),
                    };
                    let _ = self.server.respond(now, call, answer);
                }
            }
            5 => {
                if let Some(&call) = self.work.get(r.index(self.work.len().max(1))?) {
                    let method = *r.pick(&["elicitation/create", "sampling/createMessage"])?;
                    let params = match method {
                        "elicitation/create" => json!({ "mode": "form", "message": "ok?",
                            "requestedSchema": { "type": "object", "properties": {} } }),
                        _ => json!({ "messages": [], "maxTokens": 8 }),
                    };
                    let _ = self.server.request_input(now, call, method, params);
                }
            }
            6 => {
                if let Some(&call) = self.work.get(r.index(self.work.len().max(1))?) {
                    let _ = self.server.set_task_message(now, call, Some(r.word()?));
                }
            }
            7 => self.deliver_to_server(),
            8 | 9 => self.deliver_to_client(r)?,
            10 => self.forge(r)?,
            _ => {
                self.now += u64::from(r.u16()? % 3_000);
                let now = Millis(self.now);
                self.client
                    .handle_timeout(now)
                    .expect("the host takes input");
                self.server
                    .handle_timeout(now)
                    .expect("the host takes input");
                assert_no_busy_loop(&self.client, "client");
                assert_no_busy_loop(&self.server, "server");
            }
        }
        self.settle();
        Some(())
    }

    /// A task to ask about: one heard of, or one nobody knows.
    fn some_task(&self, r: &mut Reader) -> Option<String> {
        match self.tasks.get(r.index(self.tasks.len() + 1)?) {
            Some(task) => Some(task.clone()),
            None => Some("task-nobody".into()),
        }
    }

    fn deliver_to_server(&mut self) {
        if let Some(line) = self.to_server.pop_front() {
            self.server
                .handle_message(Millis(self.now), self.ss, &line)
                .expect("the host takes input");
        }
    }

    /// The next server-to-client message, as the input decides its fate.
    fn deliver_to_client(&mut self, r: &mut Reader) -> Option<()> {
        let Some(line) = self.to_client.pop_front() else {
            return Some(());
        };
        let now = Millis(self.now);
        let fate = r.below(10)?;
        let line = match fate {
            0 => return Some(()), // dropped
            1 => {
                self.client
                    .handle_message(now, self.cs, &line)
                    .expect("the host takes input");
                line
            }
            2..=5 => mutate(&line, r)?,
            6 => line[..r.index(line.len())?].to_vec(),
            _ => line,
        };
        self.client
            .handle_message(now, self.cs, &line)
            .expect("the host takes input");
        Some(())
    }

    /// A `notifications/tasks` the server never sent.
    fn forge(&mut self, r: &mut Reader) -> Option<()> {
        let task = self.some_task(r)?;
        let status = *r.pick(&[
            "working",
            "input_required",
            "completed",
            "failed",
            "cancelled",
            "?",
        ])?;
        let updated = format!("2026-01-15T09:{:02}:00Z", r.below(60)?);
        let mut params = json!({ "taskId": task, "status": status, "ttlMs": null,
            "createdAt": "2026-01-15T09:00:00Z", "lastUpdatedAt": updated });
        match status {
            "completed" if r.bool()? => params["result"] = json!({ "content": [] }),
            "failed" if r.bool()? => params["error"] = json!({ "code": -1, "message": "x" }),
            "input_required" => {
                params["inputRequests"] = json!({ r.word()?: { "method": "elicitation/create",
                    "params": { "message": "forged" } } })
            }
            _ => {}
        }
        let note = json!({ "jsonrpc": "2.0", "method": "notifications/tasks", "params": params });
        self.client
            .handle_message(Millis(self.now), self.cs, &line(&note))
            .expect("the host takes input");
        Some(())
    }

    /// Drains both hosts, checking the client's messages and following the calls.
    fn settle(&mut self) {
        let bound = 10_000;
        let server = drain(
            &mut self.server,
            "server",
            bound,
            &|_| true,
            &mut self.transcript,
            self.deep,
        );
        for sent in server.sends() {
            self.to_client.push_back(sent.msg.line.clone().into_bytes());
        }
        for event in server.events() {
            match event {
                Event::ToolCall(call) => self.work.push(call.call),
                Event::Stop { call, .. } => self.work.retain(|c| c != call),
                _ => {}
            }
        }
        let open = !self.closed;
        let client = drain(
            &mut self.client,
            "client",
            bound,
            &|_| open,
            &mut self.transcript,
            self.deep,
        );
        self.check_client(&client);
    }

    fn check_client(&mut self, out: &Drained) {
        let v2026 = self.client.protocol_version(self.cs) == Some("2026-07-28");
        for sent in out.sends() {
            let msg = &sent.msg;
            if v2026 {
                // Errors about unreadable input are fine; a result would answer a request,
                // and the server sends none in this era.
                assert!(
                    msg.class != Class::Result,
                    "invariant: the client answered a request in 2026-07-28: {}",
                    msg.line
                );
            }
            if msg.is_request() {
                let method = msg.method().unwrap_or_default();
                if v2026 || method == "server/discover" {
                    self.check_request(method, msg);
                } else if self.validate {
                    check_in(CORE_2026, "JSONRPCMessage", msg.value())
                        .unwrap_or_else(|e| panic!("invariant: {e}"));
                }
            }
            self.to_server.push_back(msg.line.clone().into_bytes());
        }
        for event in out.events() {
            self.follow(event);
        }
    }

    /// A 2026-07-28 request of the client: its `_meta`, what it may ask, its definition.
    fn check_request(&mut self, method: &str, msg: &Msg) {
        assert!(
            !matches!(method, "tasks/result" | "tasks/list"),
            "invariant: {method} in 2026-07-28"
        );
        let params = msg.params().unwrap_or(&Value::Null);
        let meta = &params["_meta"];
        assert_eq!(
            meta[VERSION_KEY], "2026-07-28",
            "invariant: _meta: {}",
            msg.line
        );
        let declares = meta[CAPS_KEY]["extensions"].get(EXT).is_some();
        if method != "tools/call" {
            assert!(declares, "invariant: {method} declares the extension");
        }
        if let (true, Some((file, definition))) = (self.validate, v2026_request_definition(method))
        {
            check_in(file, definition, msg.value()).unwrap_or_else(|e| panic!("invariant: {e}"));
        }
        if method == "tasks/update" {
            count(4);
            let task = params["taskId"].as_str().unwrap_or_default();
            let asked = self.asked.get(task);
            for key in params["inputResponses"]
                .as_object()
                .into_iter()
                .flatten()
                .map(|(k, _)| k)
            {
                assert!(
                    asked.is_some_and(|a| a.contains(key)),
                    "invariant: tasks/update answers {key:?}, which task {task} never asked"
                );
            }
        }
    }

    fn follow(&mut self, event: &Event) {
        match event {
            Event::Initialized {
                protocol_version, ..
            } if protocol_version == "2026-07-28" => count(0),
            Event::Response { request, .. }
            | Event::TaskAnswer { request, .. }
            | Event::TimedOut { request, .. } => {
                if let Some(call) = self.calls.get_mut(&request_id_key(request)) {
                    assert_eq!(
                        *call,
                        Call::Waiting,
                        "invariant: request {request} answered after it ended"
                    );
                    *call = Call::Ended;
                }
            }
            Event::TaskCreated { request, task, .. } => {
                count(1);
                let call = self.calls.get_mut(&request_id_key(request));
                let call = call.unwrap_or_else(|| {
                    panic!("invariant: a task for {request}, which no call made")
                });
                assert_eq!(
                    *call,
                    Call::Waiting,
                    "invariant: {request} created a task after it ended"
                );
                *call = Call::Task(task.id.to_string());
                self.heard(task.id.as_str());
            }
            Event::TaskResult { task, .. } => {
                let mut owners = self
                    .calls
                    .values_mut()
                    .filter(|c| **c == Call::Task(task.to_string()));
                let call = owners.next().unwrap_or_else(|| {
                    panic!("invariant: an outcome for {task}, which no call waits for")
                });
                *call = Call::Ended;
                assert!(
                    owners.next().is_none(),
                    "invariant: two calls wait for task {task}"
                );
                // The following ended: a later one (`follow_task`) hands its open input
                // requests out afresh.
                self.asked.remove(task.as_str());
                count(2);
            }
            Event::Request(request) => {
                count(3);
                let v2026 = self.client.protocol_version(self.cs) == Some("2026-07-28");
                let key = match &request.request {
                    RequestId::String(key) => key.clone(),
                    other if v2026 => {
                        panic!("invariant: an input key that is not a string: {other}")
                    }
                    other => other.to_string(),
                };
                let task = request.related_task.as_ref().map(|t| t.to_string());
                if let (true, Some(task)) = (v2026, &task) {
                    let fresh = self
                        .asked
                        .entry(task.clone())
                        .or_default()
                        .insert(key.clone());
                    assert!(
                        fresh,
                        "invariant: input {key:?} of task {task} handed out twice"
                    );
                }
                self.inputs.push((request.call, task, key));
            }
            _ => {}
        }
    }

    fn heard(&mut self, task: &str) {
        if !self.tasks.iter().any(|t| t == task) {
            self.tasks.push(task.to_owned());
        }
    }

    /// Closes the client session: every call still open ends now, exactly once.
    fn finish(&mut self) {
        self.client.close(Millis(self.now), self.cs);
        self.settle();
        self.closed = true;
        for (request, call) in &self.calls {
            assert_eq!(
                *call,
                Call::Ended,
                "invariant: call {request:?} never ended"
            );
        }
    }
}

/// Ids for the tasks the client hosts (a 2025-11-25 fallback may ask it to).
fn unused_ids() -> String {
    "client-task".into()
}

/// `line` with one thing changed, as the input picks.
fn mutate(line: &[u8], r: &mut Reader) -> Option<Vec<u8>> {
    let Ok(mut v) = serde_json::from_slice::<Value>(line) else {
        return Some(line.to_vec());
    };
    let target = match v.get_mut("result") {
        Some(result) => result,
        None => match v.get_mut("params") {
            Some(params) => params,
            None => return Some(line.to_vec()),
        },
    };
    let Some(object) = target.as_object_mut() else {
        return Some(line.to_vec());
    };
    match r.below(5)? {
        0 => {
            let kinds = [
                json!("task"),
                json!("input_required"),
                json!("complete"),
                json!("bogus"),
                json!(7),
                Value::Null,
            ];
            object.insert("resultType".into(), r.pick(&kinds)?.clone());
        }
        1 => {
            if !object.is_empty() {
                let key = object.keys().nth(r.index(object.len())?).cloned()?;
                object.remove(&key);
            }
        }
        2 => {
            let statuses = [
                json!("working"),
                json!("input_required"),
                json!("completed"),
                json!("failed"),
                json!("cancelled"),
                json!(3),
            ];
            object.insert("status".into(), r.pick(&statuses)?.clone());
        }
        3 => {
            let method = *r.pick(&[
                "elicitation/create",
                "sampling/createMessage",
                "roots/list",
                "nope",
            ])?;
            object.insert("status".into(), json!("input_required"));
            object.insert(
                "inputRequests".into(),
                json!({ r.word()?: { "method": method, "params": {} } }),
            );
        }
        _ => {
            object.insert("requestState".into(), json!(r.word()?));
        }
    }
    Some(super::line(&v))
}

/// The request id a key of [`request_id_key`] was made from.
fn request_id_of(key: &str) -> RequestId {
    match key.split_once(':') {
        Some(("n", n)) => RequestId::Number(n.parse().expect("a numeric key")),
        _ => RequestId::String(key[2..].to_owned()),
    }
}
