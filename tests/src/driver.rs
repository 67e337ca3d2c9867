//! One engine session driven by a scripted peer: feed lines, drain outputs.
//!
//! Every line the engine emits is checked by [`Conformance`] before a test sees it; the
//! scripted peer's own lines are only recorded (they are often malformed on purpose).

use serde_json::{json, Value};
use taskwire_engine::{Config, Event, Millis, Output, Session};

use crate::conformance::{Conformance, Side};
use crate::msg;
use crate::pair::MAX_FIRINGS;
use crate::setup::{counter_ids, full_client_capabilities, initialize_params, T0};

/// A session under test and everything it has produced.
pub struct Driver {
    /// The engine.
    pub session: Session,
    /// The test clock; commands use it, feeds pass it.
    pub now: Millis,
    /// Every line the engine sent, in order.
    pub lines: Vec<String>,
    /// Every event the engine raised, in order, not yet taken.
    pub events: Vec<Event>,
    side: Side,
    conformance: Conformance,
    next_id: i64,
    /// Peer bytes fed through `feed_bytes` that do not yet end a line.
    stream: Vec<u8>,
}

impl Driver {
    /// A server session at [`T0`] with task ids `task-1`, `task-2`, …
    pub fn server(config: Config) -> Driver {
        Driver::new(
            Session::server(config, counter_ids("task-"), T0),
            Side::Server,
        )
    }

    /// A client session at [`T0`] with task ids `ctask-1`, `ctask-2`, …
    pub fn client(config: Config) -> Driver {
        Driver::new(
            Session::client(config, counter_ids("ctask-"), T0),
            Side::Client,
        )
    }

    fn new(session: Session, side: Side) -> Driver {
        Driver {
            session,
            now: T0,
            lines: Vec::new(),
            events: Vec::new(),
            side,
            conformance: Conformance::default(),
            next_id: 1,
            stream: Vec::new(),
        }
    }

    /// A server that completed the handshake at 2025-11-25 with a client declaring
    /// elicitation, sampling and their tasks. Outputs and events so far are cleared.
    pub fn ready_server(config: Config, setup: impl FnOnce(&mut Session)) -> Driver {
        let mut d = Driver::server(config);
        setup(&mut d.session);
        let reply = d.call(
            "initialize",
            initialize_params("2025-11-25", full_client_capabilities()),
        );
        assert_eq!(reply["result"]["protocolVersion"], "2025-11-25", "{reply}");
        d.notify("notifications/initialized", None);
        d.lines.clear();
        d.events.clear();
        d
    }

    /// A client that completed the handshake with a scripted server whose `initialize`
    /// result is `result`. Outputs and events so far are cleared.
    pub fn ready_client(config: Config, result: Value) -> Driver {
        let mut d = Driver::client(config);
        d.session.initialize(d.now).expect("initialize");
        let out = d.drain();
        let id = out[0]["id"].clone();
        d.feed_json(json!({ "jsonrpc": "2.0", "id": id, "result": result }));
        assert!(d.session.protocol_version().is_some(), "handshake failed");
        d.lines.clear();
        d.events.clear();
        d
    }

    /// Moves outputs into `lines`/`events`; returns the new messages, parsed.
    pub fn drain(&mut self) -> Vec<Value> {
        let mut new = Vec::new();
        while let Some(output) = self.session.poll_output() {
            match output {
                Output::Send(line) => {
                    self.conformance.observe(self.side, &line, true);
                    new.push(serde_json::from_str(&line).expect("checked JSON"));
                    self.lines.push(line);
                }
                Output::Event(event) => self.events.push(event),
            }
        }
        new
    }

    /// Feeds one message (as `handle_message`) and drains.
    pub fn feed(&mut self, line: &str) -> Vec<Value> {
        self.feed_raw(line.as_bytes())
    }

    /// Feeds one message that need not be UTF-8 (as `handle_message`) and drains.
    pub fn feed_raw(&mut self, message: &[u8]) -> Vec<Value> {
        self.observe_peer(message);
        self.session.handle_message(self.now, message);
        self.drain()
    }

    /// Feeds one JSON value as a message and drains.
    pub fn feed_json(&mut self, message: Value) -> Vec<Value> {
        self.feed(&message.to_string())
    }

    /// Feeds raw stream bytes (as `handle_bytes`) and drains.
    pub fn feed_bytes(&mut self, bytes: &[u8]) -> Vec<Value> {
        self.stream.extend_from_slice(bytes);
        while let Some(nl) = self.stream.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = self.stream.drain(..=nl).collect();
            self.observe_peer(&line[..nl]);
        }
        self.session.handle_bytes(self.now, bytes);
        self.drain()
    }

    /// Ends the byte stream (as `handle_eof`) and drains.
    pub fn eof(&mut self) -> Vec<Value> {
        let rest = std::mem::take(&mut self.stream);
        self.observe_peer(&rest);
        self.session.handle_eof(self.now);
        self.drain()
    }

    fn observe_peer(&mut self, line: &[u8]) {
        if let Ok(text) = std::str::from_utf8(line) {
            self.conformance.observe(self.side.peer(), text, false);
        }
    }

    /// A fresh id for a scripted request.
    pub fn next_id(&mut self) -> Value {
        self.next_id += 1;
        json!(self.next_id - 1)
    }

    /// Sends a request with a fresh id; returns its id and everything the engine emitted.
    pub fn send(&mut self, method: &str, params: Value) -> (Value, Vec<Value>) {
        let id = self.next_id();
        let mut request = json!({ "jsonrpc": "2.0", "id": id, "method": method });
        if !params.is_null() {
            request["params"] = params;
        }
        let out = self.feed_json(request);
        (id, out)
    }

    /// Sends a request and returns its immediate answer (panics if it was not answered).
    pub fn call(&mut self, method: &str, params: Value) -> Value {
        let (id, out) = self.send(method, params);
        msg::response(&out, &id)
            .unwrap_or_else(|| panic!("{method} got no immediate answer; sent {out:?}"))
            .clone()
    }

    /// Sends a notification.
    pub fn notify(&mut self, method: &str, params: Option<Value>) -> Vec<Value> {
        let mut n = json!({ "jsonrpc": "2.0", "method": method });
        if let Some(params) = params {
            n["params"] = params;
        }
        self.feed_json(n)
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
        while let Some(at) = self.session.poll_timeout().filter(|&at| at <= target) {
            fired += 1;
            assert!(
                fired < MAX_FIRINGS,
                "poll_timeout stays at {at:?}: a busy loop"
            );
            self.now = self.now.max(at);
            self.session.handle_timeout(self.now);
            out.extend(self.drain());
        }
        self.now = target;
        self.session.handle_timeout(target);
        out.extend(self.drain());
        out
    }

    /// Takes the events raised so far.
    pub fn take_events(&mut self) -> Vec<Event> {
        std::mem::take(&mut self.events)
    }

    /// Asserts the session still answers: a `ping` gets `{}`.
    pub fn assert_alive(&mut self) {
        let reply = self.call("ping", Value::Null);
        assert_eq!(reply["result"], json!({}), "ping after the fact: {reply}");
    }
}
