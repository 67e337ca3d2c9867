//! A client session and a server session wired together in memory.
//!
//! Messages travel in one FIFO queue (zero latency) and are delivered only when the test
//! asks: [`Pair::drain`] collects outputs without delivering them, [`Pair::deliver`] moves
//! messages until none is in flight, [`Pair::step`] delivers or else jumps the clock to the
//! earliest `poll_timeout` of either side. Every message either engine sends is checked by
//! [`Conformance`] and kept in [`Pair::sent`]; events are kept per side with their time.

use std::collections::VecDeque;

use serde_json::Value;
use taskwire_engine::{CallId, Config, Event, Host, Millis, Output, Role, RpcError, SessionId};

use crate::conformance::{Conformance, Side};
use crate::setup::{counter_ids, T0};

/// Deadline firings after which a run is taken to be a busy loop.
pub const MAX_FIRINGS: usize = 100_000;

/// One message an engine sent.
#[derive(Clone, Debug)]
pub struct Sent {
    /// When it was sent.
    pub at: Millis,
    /// Who sent it.
    pub from: Side,
    /// The line as sent.
    pub line: String,
    /// The line, parsed.
    pub json: Value,
}

/// One event an engine raised.
#[derive(Debug)]
pub struct Seen {
    /// When it was raised.
    pub at: Millis,
    /// The event.
    pub event: Event,
}

/// Two hosts with one session each, a clock, and the wire between them.
pub struct Pair {
    /// The client host.
    pub client: Host,
    /// The server host.
    pub server: Host,
    /// The client's session (its connection to the server).
    pub cs: SessionId,
    /// The server's session (its connection to the client).
    pub ss: SessionId,
    /// The shared clock; pass it to commands.
    pub now: Millis,
    /// Every message either side sent, in order.
    pub sent: Vec<Sent>,
    /// Events the client raised.
    pub client_events: Vec<Seen>,
    /// Events the server raised.
    pub server_events: Vec<Seen>,
    /// Messages sent but not yet delivered: (sender, line). Tests may reorder or drop them.
    pub in_flight: VecDeque<(Side, String)>,
    conformance: Conformance,
    firings: usize,
}

impl Pair {
    /// Two fresh sessions at [`T0`]; the client's task ids are `ctask-N`, the server's `task-N`.
    pub fn new(client: Config, server: Config) -> Pair {
        let mut client = Host::new(client, counter_ids("ctask-"), T0);
        let mut server = Host::new(server, counter_ids("task-"), T0);
        let cs = client
            .open(T0, Role::Client, "server")
            .expect("the host takes sessions");
        let ss = server
            .open(T0, Role::Server, "client")
            .expect("the host takes sessions");
        Pair {
            client,
            server,
            cs,
            ss,
            now: T0,
            sent: Vec::new(),
            client_events: Vec::new(),
            server_events: Vec::new(),
            in_flight: VecDeque::new(),
            conformance: Conformance::default(),
            firings: 0,
        }
    }

    /// A pair whose handshake is done; `setup` prepares the server first (e.g. adds tools).
    pub fn connected(client: Config, server: Config, setup: impl FnOnce(&mut Host)) -> Pair {
        let mut pair = Pair::new(client, server);
        setup(&mut pair.server);
        pair.handshake();
        pair
    }

    /// Opens the client session and asserts both sides report [`Event::Initialized`] (only
    /// the client, when it opened in 2026-07-28: that era has no handshake).
    pub fn handshake(&mut self) {
        self.client
            .initialize(self.now, self.cs)
            .expect("initialize");
        self.deliver();
        let v2026 = self.client.protocol_version(self.cs) == Some("2026-07-28");
        let sides: &[Side] = match v2026 {
            true => &[Side::Client],
            false => &[Side::Client, Side::Server],
        };
        for &side in sides {
            let done = self
                .events(side)
                .iter()
                .any(|s| matches!(s.event, Event::Initialized { .. }));
            assert!(done, "{side:?} did not finish the handshake");
        }
    }

    /// One side's host and its session.
    pub fn session(&mut self, side: Side) -> (&mut Host, SessionId) {
        match side {
            Side::Client => (&mut self.client, self.cs),
            Side::Server => (&mut self.server, self.ss),
        }
    }

    /// The call doing the work of a task hosted by `side` (panics if there is none). Take
    /// it before the task ends: the host keeps it until the app answers or the task goes.
    pub fn work(&self, side: Side, task: &str) -> CallId {
        let host = match side {
            Side::Client => &self.client,
            Side::Server => &self.server,
        };
        host.task_call(task)
            .unwrap_or_else(|| panic!("{side:?} task {task:?} has no work"))
    }

    /// One side's events.
    pub fn events(&self, side: Side) -> &[Seen] {
        match side {
            Side::Client => &self.client_events,
            Side::Server => &self.server_events,
        }
    }

    /// Collects both sides' outputs (checking every message) without delivering anything.
    /// Returns whether there was any.
    pub fn drain(&mut self) -> bool {
        let mut any = false;
        for side in [Side::Client, Side::Server] {
            while let Some(output) = self.session(side).0.poll_output() {
                any = true;
                match output {
                    Output::Send(t) => {
                        let line = t.message;
                        self.conformance.observe(side, &line, true);
                        self.sent.push(Sent {
                            at: self.now,
                            from: side,
                            json: serde_json::from_str(&line).expect("checked JSON"),
                            line: line.clone(),
                        });
                        self.in_flight.push_back((side, line));
                    }
                    Output::Event(event) => {
                        let seen = Seen {
                            at: self.now,
                            event,
                        };
                        match side {
                            Side::Client => self.client_events.push(seen),
                            Side::Server => self.server_events.push(seen),
                        }
                    }
                    _ => {}
                }
            }
        }
        any
    }

    /// Delivers the oldest message in flight, if any. No time passes.
    pub fn deliver_one(&mut self) -> bool {
        self.drain();
        let Some((from, line)) = self.in_flight.pop_front() else {
            return false;
        };
        let now = self.now;
        let (host, session) = self.session(from.peer());
        host.handle_message(now, session, line.as_bytes())
            .expect("the host takes input");
        self.drain();
        true
    }

    /// Delivers messages, oldest first, until none is in flight. No time passes.
    /// Returns how many were delivered.
    pub fn deliver(&mut self) -> usize {
        let mut delivered = 0;
        while self.deliver_one() {
            delivered += 1;
        }
        delivered
    }

    /// The earliest deadline of either side.
    pub fn next_timeout(&self) -> Option<Millis> {
        match (self.client.poll_timeout(), self.server.poll_timeout()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Jumps the clock to `at` (never back) and fires both sides' deadlines there.
    fn fire(&mut self, at: Millis) {
        self.firings += 1;
        assert!(
            self.firings < MAX_FIRINGS,
            "deadlines keep firing at {at:?}: a busy loop"
        );
        self.now = self.now.max(at);
        let now = self.now;
        self.client
            .handle_timeout(now)
            .expect("the host takes input");
        self.server
            .handle_timeout(now)
            .expect("the host takes input");
        self.drain();
    }

    /// Delivers what is in flight or, when nothing is, fires the earliest deadline.
    /// Returns `false` when there was nothing to do.
    pub fn step(&mut self) -> bool {
        if self.deliver() > 0 {
            return true;
        }
        match self.next_timeout() {
            Some(at) => {
                self.fire(at);
                true
            }
            None => false,
        }
    }

    /// Runs everything due up to `now + ms`, in order, and leaves the clock there.
    pub fn advance(&mut self, ms: u64) {
        self.advance_to(self.now.plus(ms));
    }

    /// Runs everything due up to `target`, in order, and leaves the clock there.
    pub fn advance_to(&mut self, target: Millis) {
        loop {
            self.deliver();
            match self.next_timeout() {
                Some(at) if at <= target => self.fire(at),
                _ => break,
            }
        }
        if target > self.now {
            self.fire(target);
            self.deliver();
        }
    }

    /// Steps until `done` holds; panics if it does not within `limit_ms` of simulated time.
    pub fn run_until(&mut self, limit_ms: u64, mut done: impl FnMut(&Pair) -> bool) {
        let deadline = self.now.plus(limit_ms);
        loop {
            self.drain();
            if done(self) {
                return;
            }
            if self.deliver() > 0 {
                continue;
            }
            match self.next_timeout() {
                Some(at) if at <= deadline => self.fire(at),
                _ => panic!(
                    "condition not reached within {limit_ms} ms (now {:?}); sent:\n{}",
                    self.now,
                    self.transcript()
                ),
            }
        }
    }

    /// Steps until the client reports a task outcome (within `limit_ms`), then returns every
    /// outcome it reported so far, in order.
    pub fn run_until_task_result(&mut self, limit_ms: u64) -> Vec<Result<Value, RpcError>> {
        self.run_until(limit_ms, |p| {
            p.events(Side::Client)
                .iter()
                .any(|s| matches!(s.event, Event::TaskResult { .. }))
        });
        self.task_results()
    }

    /// Every task outcome the client reported so far, in order.
    pub fn task_results(&self) -> Vec<Result<Value, RpcError>> {
        self.find(Side::Client, |e| match e {
            Event::TaskResult { outcome, .. } => Some(outcome.clone()),
            _ => None,
        })
    }

    /// Steps until nothing is in flight and neither side has a deadline. Retention timers
    /// count, so tasks with a finite `ttl` expire on the way.
    pub fn run_until_quiet(&mut self) {
        while self.step() {}
    }

    /// Messages one side sent.
    pub fn sent_by(&self, side: Side) -> impl Iterator<Item = &Sent> {
        self.sent.iter().filter(move |s| s.from == side)
    }

    /// Requests and notifications with `method` that one side sent.
    pub fn sent_method(&self, side: Side, method: &str) -> Vec<&Sent> {
        self.sent_by(side)
            .filter(|s| s.json["method"] == method)
            .collect()
    }

    /// What `pick` extracts from one side's events, in order.
    pub fn find<T>(&self, side: Side, pick: impl FnMut(&Event) -> Option<T>) -> Vec<T> {
        self.events(side)
            .iter()
            .map(|s| &s.event)
            .filter_map(pick)
            .collect()
    }

    /// Every message so far, one per line with time and sender (for failure messages).
    pub fn transcript(&self) -> String {
        self.sent
            .iter()
            .map(|s| format!("  +{}ms {:?}: {}", s.at.0 - T0.0, s.from, s.line))
            .collect::<Vec<_>>()
            .join("\n")
    }
}
