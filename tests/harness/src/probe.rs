//! One engine host driven by a scripted peer: feed lines, drain outputs.
//!
//! The host starts with one session (`session`, owner [`OWNER`]); tests that need more open
//! them with [`Probe::open`] and feed them with the `*_on` methods. Every line the engine
//! emits is checked by a [`Conformance`] of its session before a test sees it; the scripted
//! peer's own lines are only recorded (they are often malformed on purpose).

use std::collections::HashMap;

use serde_json::{json, Value};
use taskwire_engine::{CallId, Config, Event, Host, Millis, Output, Role, SessionId, Transmit};

use crate::conformance::{Conformance, Side};
use crate::msg;
use crate::pair::MAX_FIRINGS;
use crate::setup::{counter_ids, full_client_capabilities, initialize_params, T0};

/// The owner of a probe's first session.
pub const OWNER: &str = "peer";

/// A host under test and everything it has produced.
pub struct Probe {
    /// The engine.
    pub host: Host,
    /// The first session.
    pub session: SessionId,
    /// The test clock; commands use it, feeds pass it.
    pub now: Millis,
    /// Every line the engine sent, in order (all sessions).
    pub lines: Vec<String>,
    /// Every message the engine sent with its addressing, in order (all sessions).
    pub transmits: Vec<Transmit>,
    /// Every event the engine raised, in order, not yet taken.
    pub events: Vec<Event>,
    /// Journal entries reported, in order, not yet taken.
    pub journal: Vec<taskwire_engine::JournalEntry>,
    side: Side,
    conformance: HashMap<SessionId, Conformance>,
    next_id: i64,
    /// Peer bytes fed through `feed_bytes` that do not yet end a line.
    stream: Vec<u8>,
}

impl Probe {
    /// A server host at [`T0`] with task ids `task-1`, `task-2`, … and one session.
    pub fn server(config: Config) -> Probe {
        Probe::new(Host::new(config, counter_ids("task-"), T0), Side::Server)
    }

    /// A client host at [`T0`] with task ids `ctask-1`, `ctask-2`, … and one session.
    pub fn client(config: Config) -> Probe {
        Probe::new(Host::new(config, counter_ids("ctask-"), T0), Side::Client)
    }

    fn new(mut host: Host, side: Side) -> Probe {
        let role = match side {
            Side::Server => Role::Server,
            Side::Client => Role::Client,
        };
        let session = host.open(T0, role, OWNER).expect("the host takes sessions");
        Probe {
            host,
            session,
            now: T0,
            lines: Vec::new(),
            transmits: Vec::new(),
            events: Vec::new(),
            journal: Vec::new(),
            side,
            conformance: HashMap::new(),
            next_id: 1,
            stream: Vec::new(),
        }
    }

    /// A server that completed the handshake at 2025-11-25 with a client declaring
    /// elicitation, sampling and their tasks. Outputs and events so far are cleared.
    pub fn ready_server(config: Config, setup: impl FnOnce(&mut Host)) -> Probe {
        let mut d = Probe::server(config);
        setup(&mut d.host);
        let session = d.session;
        d.initialize(session);
        d.clear();
        d
    }

    /// A client that completed the handshake with a scripted server whose `initialize`
    /// result is `result`. Outputs and events so far are cleared.
    pub fn ready_client(config: Config, result: Value) -> Probe {
        let mut d = Probe::client(config);
        d.host.initialize(d.now, d.session).expect("initialize");
        let out = d.drain();
        let id = out[0]["id"].clone();
        d.feed_json(json!({ "jsonrpc": "2.0", "id": id, "result": result }));
        assert!(
            d.host.protocol_version(d.session).is_some(),
            "handshake failed"
        );
        d.clear();
        d
    }

    /// Opens another session for `owner` (server role: ready after a 2025-11-25 handshake).
    pub fn open(&mut self, owner: &str) -> SessionId {
        let role = match self.side {
            Side::Server => Role::Server,
            Side::Client => Role::Client,
        };
        let session = self
            .host
            .open(self.now, role, owner)
            .expect("the host takes sessions");
        if self.side == Side::Server {
            self.initialize(session);
        }
        self.drain();
        session
    }

    fn initialize(&mut self, session: SessionId) {
        let reply = self.call_on(
            session,
            "initialize",
            initialize_params("2025-11-25", full_client_capabilities()),
        );
        assert_eq!(reply["result"]["protocolVersion"], "2025-11-25", "{reply}");
        self.notify_on(session, "notifications/initialized", None);
    }

    /// Forgets what was produced so far.
    pub fn clear(&mut self) {
        self.lines.clear();
        self.transmits.clear();
        self.events.clear();
        self.journal.clear();
    }

    /// Moves outputs into `lines`/`events`; returns the new messages, parsed (all sessions).
    pub fn drain(&mut self) -> Vec<Value> {
        self.drain_addressed().into_iter().map(|(_, v)| v).collect()
    }

    /// Like [`Probe::drain`], with the session each message goes to.
    pub fn drain_addressed(&mut self) -> Vec<(SessionId, Value)> {
        let mut new = Vec::new();
        while let Some(output) = self.host.poll_output() {
            match output {
                Output::Send(t) => {
                    self.conformance
                        .entry(t.session)
                        .or_default()
                        .observe(self.side, &t.message, true);
                    new.push((
                        t.session,
                        serde_json::from_str(&t.message).expect("checked JSON"),
                    ));
                    self.lines.push(t.message.clone());
                    self.transmits.push(t);
                }
                Output::Event(event) => self.events.push(event),
                Output::Journal(entry) => self.journal.push(entry),
                other => panic!("an output this harness does not know: {other:?}"),
            }
        }
        new
    }

    /// Feeds one message (as `handle_message`) and drains.
    pub fn feed(&mut self, line: &str) -> Vec<Value> {
        self.feed_raw(line.as_bytes())
    }

    /// Feeds one message on `session` and drains (every session's messages).
    pub fn feed_on(&mut self, session: SessionId, line: &str) -> Vec<(SessionId, Value)> {
        self.observe_peer(session, line.as_bytes());
        self.host
            .handle_message(self.now, session, line.as_bytes())
            .expect("the host takes input");
        self.drain_addressed()
    }

    /// Feeds one message that need not be UTF-8 (as `handle_message`) and drains.
    pub fn feed_raw(&mut self, message: &[u8]) -> Vec<Value> {
        let session = self.session;
        self.observe_peer(session, message);
        self.host
            .handle_message(self.now, session, message)
            .expect("the host takes input");
        self.drain()
    }

    /// Feeds one JSON value as a message and drains.
    pub fn feed_json(&mut self, message: Value) -> Vec<Value> {
        self.feed(&message.to_string())
    }

    /// Feeds raw stream bytes (as `handle_bytes`) and drains.
    pub fn feed_bytes(&mut self, bytes: &[u8]) -> Vec<Value> {
        self.stream.extend_from_slice(bytes);
        let session = self.session;
        while let Some(nl) = self.stream.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = self.stream.drain(..=nl).collect();
            self.observe_peer(session, &line[..nl]);
        }
        self.host
            .handle_bytes(self.now, session, bytes)
            .expect("the host takes input");
        self.drain()
    }

    /// Ends the byte stream (as `handle_eof`) and drains.
    pub fn eof(&mut self) -> Vec<Value> {
        let rest = std::mem::take(&mut self.stream);
        let session = self.session;
        self.observe_peer(session, &rest);
        self.host
            .handle_eof(self.now, session)
            .expect("the host takes input");
        self.drain()
    }

    fn observe_peer(&mut self, session: SessionId, line: &[u8]) {
        if let Ok(text) = std::str::from_utf8(line) {
            self.conformance
                .entry(session)
                .or_default()
                .observe(self.side.peer(), text, false);
        }
    }

    /// A fresh id for a scripted request.
    pub fn next_id(&mut self) -> Value {
        self.next_id += 1;
        json!(self.next_id - 1)
    }

    /// Sends a request with a fresh id; returns its id and everything the engine emitted.
    pub fn send(&mut self, method: &str, params: Value) -> (Value, Vec<Value>) {
        let session = self.session;
        let (id, out) = self.send_on(session, method, params);
        (id, out.into_iter().map(|(_, v)| v).collect())
    }

    /// Sends a request on `session`; returns its id and every session's messages.
    pub fn send_on(
        &mut self,
        session: SessionId,
        method: &str,
        params: Value,
    ) -> (Value, Vec<(SessionId, Value)>) {
        let id = self.next_id();
        let mut request = json!({ "jsonrpc": "2.0", "id": id, "method": method });
        if !params.is_null() {
            request["params"] = params;
        }
        let out = self.feed_on(session, &request.to_string());
        (id, out)
    }

    /// Sends a request and returns its immediate answer (panics if it was not answered).
    pub fn call(&mut self, method: &str, params: Value) -> Value {
        let session = self.session;
        self.call_on(session, method, params)
    }

    /// Sends a request on `session` and returns its immediate answer there.
    pub fn call_on(&mut self, session: SessionId, method: &str, params: Value) -> Value {
        let (id, out) = self.send_on(session, method, params);
        let mine: Vec<Value> = out
            .into_iter()
            .filter(|(s, _)| *s == session)
            .map(|(_, v)| v)
            .collect();
        msg::response(&mine, &id)
            .unwrap_or_else(|| panic!("{method} got no immediate answer; sent {mine:?}"))
            .clone()
    }

    /// Sends a notification.
    pub fn notify(&mut self, method: &str, params: Option<Value>) -> Vec<Value> {
        let session = self.session;
        self.notify_on(session, method, params)
            .into_iter()
            .map(|(_, v)| v)
            .collect()
    }

    /// Sends a notification on `session`.
    pub fn notify_on(
        &mut self,
        session: SessionId,
        method: &str,
        params: Option<Value>,
    ) -> Vec<(SessionId, Value)> {
        let mut n = json!({ "jsonrpc": "2.0", "method": method });
        if let Some(params) = params {
            n["params"] = params;
        }
        self.feed_on(session, &n.to_string())
    }

    /// Answers one of the engine's requests.
    pub fn reply(&mut self, id: &Value, result: Value) -> Vec<Value> {
        self.feed_json(json!({ "jsonrpc": "2.0", "id": id, "result": result }))
    }

    /// Moves the clock `ms` forward, firing every deadline on the way in order.
    pub fn advance(&mut self, ms: u64) -> Vec<Value> {
        let target = self.now.plus(ms);
        let mut out = Vec::new();
        let mut fired = 0;
        while let Some(at) = self.host.poll_timeout().filter(|&at| at <= target) {
            fired += 1;
            assert!(
                fired < MAX_FIRINGS,
                "poll_timeout stays at {at:?}: a busy loop"
            );
            self.now = self.now.max(at);
            self.host
                .handle_timeout(self.now)
                .expect("the host takes input");
            out.extend(self.drain());
        }
        self.now = target;
        self.host
            .handle_timeout(target)
            .expect("the host takes input");
        out.extend(self.drain());
        out
    }

    /// Takes the events raised so far.
    pub fn take_events(&mut self) -> Vec<Event> {
        std::mem::take(&mut self.events)
    }

    /// The call doing a task's work (panics if there is none).
    pub fn work(&self, task: &str) -> CallId {
        self.host
            .task_call(task)
            .unwrap_or_else(|| panic!("task {task:?} has no work"))
    }

    /// The calls of the tool calls raised so far, in order (events are kept).
    pub fn tool_calls(&self) -> Vec<CallId> {
        self.events
            .iter()
            .filter_map(|e| match e {
                Event::ToolCall(c) => Some(c.call),
                _ => None,
            })
            .collect()
    }

    /// The call raised for the peer's request `id` (a tool call or an app request).
    pub fn call_for(&self, id: &Value) -> CallId {
        let want: taskwire_engine::RequestId = serde_json::from_value(id.clone()).expect("an id");
        self.events
            .iter()
            .find_map(|e| match e {
                Event::ToolCall(c) if c.request == want => Some(c.call),
                Event::Request(r) if r.request == want => Some(r.call),
                _ => None,
            })
            .unwrap_or_else(|| panic!("no call for request {id}"))
    }

    /// Asserts the session still answers: a `ping` gets `{}`.
    pub fn assert_alive(&mut self) {
        let reply = self.call("ping", Value::Null);
        assert_eq!(reply["result"], json!({}), "ping after the fact: {reply}");
    }
}
