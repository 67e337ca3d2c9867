//! What `pair_faults` does to its hosts and wires: starting a session, delivering queued
//! messages (in order, out of order, duplicated), firing deadlines, moving time, restarting a
//! client or the server, and draining a host after each step.

use serde_json::json;
use taskwire_engine::{Host, Millis, Role, SessionId};

use crate::fuzz::check::{Ledger, Msg};
use crate::fuzz::{assert_no_busy_loop, Drained, EPOCH};

use super::grammar::client_reply;
use super::model::{
    client_host, server_host, Hosting, Who, Wire, World, ALICE, BOB, BOB_HOSTS, CLIENT_HOSTS,
    SERVER_HOSTS,
};

impl World {
    /// Sends a client's `initialize`.
    pub(super) fn start(&mut self, who: Who) {
        let now = Millis(self.now);
        let (host, session) = match who {
            Who::Client => (&mut self.client, self.cs),
            _ => (&mut self.other, self.os),
        };
        host.initialize(now, session)
            .expect("a new client initializes");
        self.after(who);
    }

    pub(super) fn queue(&mut self, wire: Wire) -> &mut Vec<Msg> {
        match wire {
            Wire::C2S => &mut self.c2s,
            Wire::S2C => &mut self.s2c,
            Wire::O2S => &mut self.o2s,
            Wire::S2O => &mut self.s2o,
        }
    }

    /// Delivers one message (the `at`-th in flight, modulo), keeping a copy when `keep`.
    pub(super) fn deliver(&mut self, wire: Wire, at: usize, keep: bool) {
        let queue = self.queue(wire);
        if queue.is_empty() {
            return;
        }
        let at = at % queue.len();
        let msg = if keep {
            queue[at].clone()
        } else {
            queue.remove(at)
        };
        let mut framed = Vec::with_capacity(msg.line.len() + 1);
        framed.extend_from_slice(msg.line.as_bytes());
        framed.push(b'\n');
        let line = &msg.line;
        match wire {
            Wire::C2S | Wire::O2S => {
                // Deadlines first (as an adapter would): then everything the input causes
                // goes to its own session, and nothing of the other owner's changes.
                self.fire(Who::Server);
                let (session, ledger) = if wire == Wire::C2S {
                    (self.ss, &mut self.s_ledger)
                } else {
                    (self.ss2, &mut self.s2_ledger)
                };
                ledger.inbound_msg(&msg);
                let other = if wire == Wire::C2S { BOB } else { ALICE };
                let others = self.deep.then(|| self.views_of(other));
                self.log(format_args!("{wire:?} {line}"));
                self.server
                    .handle_bytes(Millis(self.now), session, &framed)
                    .expect("the host takes input");
                let out = self.drain(Who::Server);
                for sent in out.sends() {
                    assert_eq!(
                        sent.session, session,
                        "invariant: input on one owner's session reached the other's: {}",
                        sent.msg.line
                    );
                }
                self.absorb(Who::Server, out);
                self.check(Who::Server);
                if let Some(others) = others {
                    assert_eq!(
                        others,
                        self.views_of(other),
                        "invariant: one owner's input changed the other's tasks"
                    );
                }
            }
            Wire::S2C => {
                self.log(format_args!("s>c {line}"));
                self.c_ledger.inbound_msg(&msg);
                self.client
                    .handle_bytes(Millis(self.now), self.cs, &framed)
                    .expect("the host takes input");
                self.after(Who::Client);
            }
            Wire::S2O => {
                self.log(format_args!("s>o {line}"));
                self.o_ledger.inbound_msg(&msg);
                self.other
                    .handle_bytes(Millis(self.now), self.os, &framed)
                    .expect("the host takes input");
                self.after(Who::Other);
            }
        }
    }

    /// Fires one host's due deadlines.
    pub(super) fn fire(&mut self, who: Who) {
        let now = Millis(self.now);
        let host = self.host(who);
        if host.poll_timeout().is_some_and(|at| at <= now) {
            host.handle_timeout(now).expect("the host takes input");
            self.after(who);
        }
    }

    /// Delivers everything in order until nothing is in flight.
    pub(super) fn settle(&mut self) {
        for _ in 0..10_000 {
            if !self.c2s.is_empty() {
                self.deliver(Wire::C2S, 0, false);
            } else if !self.s2c.is_empty() {
                self.deliver(Wire::S2C, 0, false);
            } else if !self.o2s.is_empty() {
                self.deliver(Wire::O2S, 0, false);
            } else if !self.s2o.is_empty() {
                self.deliver(Wire::S2O, 0, false);
            } else {
                return;
            }
        }
        panic!("invariant: the wire never went quiet (a message storm)");
    }

    pub(super) fn next_deadline(&self) -> Option<u64> {
        [
            self.client.poll_timeout(),
            self.server.poll_timeout(),
            self.other.poll_timeout(),
        ]
        .into_iter()
        .flatten()
        .min()
        .map(|m| m.0)
    }

    pub(super) fn advance(&mut self, to: u64) {
        self.now = self.now.max(to);
        let now = Millis(self.now);
        self.log(format_args!("time {}", self.now - EPOCH));
        for who in [Who::Client, Who::Server, Who::Other] {
            // (A host with nothing due has nothing to say: skip its checks.)
            let due = self.host(who).poll_timeout().is_some_and(|at| at <= now);
            self.host(who)
                .handle_timeout(now)
                .expect("the host takes input");
            assert_no_busy_loop(self.host(who), who.name());
            if due {
                self.after(who);
            }
        }
    }

    /// A restart: alice's client (the server sees EOF on her session, keeps her tasks,
    /// and she reconnects with a new client), or the server (both clients see EOF, keep
    /// what they host, and reconnect to a new server).
    pub(super) fn restart(&mut self, client_restarts: bool) {
        let now = Millis(self.now);
        self.log(format_args!("restart client={client_restarts}"));
        self.c2s.clear();
        self.s2c.clear();
        if client_restarts {
            let tasks = self.server.task_count();
            self.server
                .handle_eof(now, self.ss)
                .expect("the host takes input");
            let out = self.drain(Who::Server);
            assert_eq!(out.send_count(), 0, "invariant: closing sends nothing");
            self.absorb(Who::Server, out);
            assert_eq!(
                self.server.task_count(),
                tasks,
                "invariant: closing keeps the tasks"
            );
            self.assert_closed_results(CLIENT_HOSTS);
            self.cn += 1;
            let (client, cs) = client_host(&self.ccfg, &format!("c{}-ctask-", self.cn), now);
            self.client = client;
            self.cs = cs;
            self.ss = self
                .server
                .open(now, Role::Server, ALICE)
                .expect("the host takes sessions");
            self.hosting[SERVER_HOSTS].new_requestor();
            self.hosting[CLIENT_HOSTS] = Hosting::new();
            self.client_work.clear();
            self.client_inbox.clear();
            self.c_ledger = Ledger::default();
            self.s_ledger = Ledger::default();
            let after = self.drain(Who::Server);
            self.absorb(Who::Server, after);
            self.start(Who::Client);
        } else {
            self.o2s.clear();
            self.s2o.clear();
            for (who, dir) in [(Who::Client, SERVER_HOSTS), (Who::Other, BOB_HOSTS)] {
                let (host, session) = match who {
                    Who::Client => (&mut self.client, self.cs),
                    _ => (&mut self.other, self.os),
                };
                host.handle_eof(now, session).expect("the host takes input");
                let out = self.drain(who);
                assert_eq!(out.send_count(), 0, "invariant: closing sends nothing");
                self.absorb(who, out);
                self.assert_closed_results(dir);
            }
            self.sn += 1;
            self.server = server_host(&self.scfg, self.sn, now);
            self.ss = self
                .server
                .open(now, Role::Server, ALICE)
                .expect("the host takes sessions");
            self.ss2 = self
                .server
                .open(now, Role::Server, BOB)
                .expect("the host takes sessions");
            self.cs = self
                .client
                .open(now, Role::Client, "server")
                .expect("the host takes sessions");
            self.os = self
                .other
                .open(now, Role::Client, "server")
                .expect("the host takes sessions");
            // The client keeps hosting its tasks (their requestor is gone).
            self.hosting[CLIENT_HOSTS].new_requestor();
            self.hosting[SERVER_HOSTS] = Hosting::new();
            self.hosting[BOB_HOSTS] = Hosting::new();
            self.owner_of.clear();
            self.server_work.clear();
            self.server_inbox.clear();
            self.bob_inbox.clear();
            self.client_inbox.clear();
            self.probes.clear();
            self.c_ledger = Ledger::default();
            self.s_ledger = Ledger::default();
            self.s2_ledger = Ledger::default();
            self.o_ledger = Ledger::default();
            for who in [Who::Client, Who::Other] {
                let out = self.drain(who);
                self.absorb(who, out);
                self.start(who);
            }
        }
        self.requests_sent = 0;
        self.lossy = false;
    }

    pub(super) fn drain(&mut self, who: Who) -> Drained {
        let bound = self.bound();
        let (cs, ss, ss2, os) = (self.cs, self.ss, self.ss2, self.os);
        let (host, open): (&mut Host, &dyn Fn(SessionId) -> bool) = match who {
            Who::Client => (&mut self.client, &move |s| s == cs),
            Who::Server => (&mut self.server, &move |s| s == ss || s == ss2),
            Who::Other => (&mut self.other, &move |s| s == os),
        };
        crate::fuzz::drain(
            host,
            who.name(),
            bound,
            open,
            &mut self.transcript,
            self.deep,
        )
    }

    /// Drains one host, takes in what it said, and checks its state.
    pub(super) fn after(&mut self, who: Who) {
        let out = self.drain(who);
        self.absorb(who, out);
        self.check(who);
    }

    /// Moves time through every deadline up to `now + span`, delivering as it goes.
    pub(super) fn run_quietly(&mut self, span: u64) {
        let end = self.now + span;
        for _ in 0..10_000 {
            self.settle();
            match self.next_deadline() {
                Some(at) if at <= end => self.advance(at.max(self.now)),
                _ => {
                    self.advance(end);
                    self.settle();
                    return;
                }
            }
        }
        panic!("invariant: deadlines keep firing (busy loop)");
    }

    /// Every application answers whatever it was asked (plain requests only).
    pub(super) fn answer_everything(&mut self) {
        for (call, method) in std::mem::take(&mut self.client_inbox) {
            let res = self
                .client
                .respond(Millis(self.now), call, Ok(client_reply(&method)));
            self.log(format_args!("client respond -> {res:?}"));
            self.after(Who::Client);
        }
        for (call, method) in std::mem::take(&mut self.bob_inbox) {
            let res = self
                .other
                .respond(Millis(self.now), call, Ok(client_reply(&method)));
            self.log(format_args!("bob respond -> {res:?}"));
            self.after(Who::Other);
        }
        for call in std::mem::take(&mut self.server_inbox) {
            let reply = Ok(json!({"content":[{"type":"text","text":"plain"}]}));
            let res = self.server.respond(Millis(self.now), call, reply);
            self.log(format_args!("server respond -> {res:?}"));
            self.after(Who::Server);
        }
    }
}
