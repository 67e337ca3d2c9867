//! The reference model `pair_faults` keeps of its three hosts (alice's client, the server,
//! bob's client) and the wires between them: the tasks each side created and hosts, what each
//! application was asked, bob's probes; and how each output of a host updates it.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;
use taskwire_engine::{
    CallId, Config, Event, Host, Millis, Role, RpcError, SessionId, StopReason, TaskInfo,
    TaskStatus,
};

use crate::fuzz::check::{
    self, id_key, output_bound, request_id_key, wire_info, wire_snapshot, Class, IdKey, Ledger,
    Msg, Oracle, TaskWatch,
};
use crate::fuzz::{add_tools, tline, Drained, Out, Transcript};

/// The owners of the server's two sessions.
pub(super) const ALICE: &str = "alice";

pub(super) const BOB: &str = "bob";

#[derive(Clone, Copy, Debug)]
pub(super) struct Faults {
    pub(super) drop: bool,
    pub(super) dup: bool,
    pub(super) reorder: bool,
    pub(super) restart: bool,
}

/// What a host application decided for a task.
#[derive(Clone, Debug)]
pub(super) enum Outcome {
    Result(Value),
    Error(RpcError),
    Cancelled,
}

/// A requestor's record of a task it created.
#[derive(Debug, Default)]
pub(super) struct Created {
    pub(super) results: usize,
    pub(super) outcome: Option<Result<Value, RpcError>>,
}

/// The directions of task hosting: the server hosts alice's tasks, alice's client hosts
/// the server's sampling tasks, the server hosts bob's tasks.
pub(super) const SERVER_HOSTS: usize = 0;

pub(super) const CLIENT_HOSTS: usize = 1;

pub(super) const BOB_HOSTS: usize = 2;

/// Everything about one direction of task hosting.
#[derive(Debug)]
pub(super) struct Hosting {
    /// The host's own views (what it sends and what its getter shows).
    pub(super) host_watch: TaskWatch,
    /// The requestor's views (its events and its getter).
    pub(super) req_watch: TaskWatch,
    /// Tasks the requestor saw created.
    pub(super) created: BTreeMap<String, Created>,
    /// What the host application decided, per task.
    pub(super) outcomes: BTreeMap<String, Outcome>,
    /// `tasks/get` requests the requestor's application sent (the rest are automatic).
    pub(super) app_gets: BTreeSet<String>,
    /// When the requestor last polled each task on its own, or created it.
    pub(super) last_poll: BTreeMap<String, u64>,
    /// The tasks the host holds, with the status fields last checked (`None`: not yet);
    /// a view is built and checked again only when they change.
    pub(super) present: BTreeMap<String, Option<(TaskInfo, TaskStatus)>>,
    /// The requestor's views last checked.
    pub(super) followed: BTreeMap<String, TaskInfo>,
}

impl Hosting {
    pub(super) fn new() -> Self {
        Hosting {
            host_watch: TaskWatch::receiver(),
            req_watch: TaskWatch::requestor(),
            created: BTreeMap::new(),
            outcomes: BTreeMap::new(),
            app_gets: BTreeSet::new(),
            last_poll: BTreeMap::new(),
            present: BTreeMap::new(),
            followed: BTreeMap::new(),
        }
    }

    /// A new requestor (its connection was replaced); the host's side stays.
    pub(super) fn new_requestor(&mut self) {
        self.req_watch = TaskWatch::requestor();
        self.created.clear();
        self.app_gets.clear();
        self.last_poll.clear();
        self.followed.clear();
    }
}

/// The three hosts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Who {
    Client,
    Server,
    Other,
}

impl Who {
    pub(super) fn name(self) -> &'static str {
        match self {
            Who::Client => "client",
            Who::Server => "server",
            Who::Other => "bob",
        }
    }
}

/// The four directions of the two wires.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Wire {
    C2S,
    S2C,
    O2S,
    S2O,
}

/// A probe of bob's: a request of his about a task, and whether it is alice's.
#[derive(Debug)]
pub(super) struct Probe {
    pub(super) method: &'static str,
    pub(super) foreign: bool,
}

pub(super) struct World {
    pub(super) ccfg: Config,
    pub(super) scfg: Config,
    pub(super) client: Host,
    pub(super) cs: SessionId,
    pub(super) server: Host,
    pub(super) ss: SessionId,
    pub(super) ss2: SessionId,
    pub(super) other: Host,
    pub(super) os: SessionId,
    pub(super) oracle: Oracle,
    /// Every check runs (otherwise only what drives the run and the cheap checks: see the
    /// [module docs](super)).
    pub(super) deep: bool,
    pub(super) faults: Faults,
    /// A drop or duplicate actually happened on alice's wire since her last connect.
    pub(super) lossy: bool,
    /// Incarnations of alice's client and of the server (task ids carry them).
    pub(super) cn: u32,
    pub(super) sn: u32,
    pub(super) now: u64,
    /// Messages in flight on each wire (already checked when sent).
    pub(super) c2s: Vec<Msg>,
    pub(super) s2c: Vec<Msg>,
    pub(super) o2s: Vec<Msg>,
    pub(super) s2o: Vec<Msg>,
    pub(super) c_ledger: Ledger,
    pub(super) s_ledger: Ledger,
    pub(super) s2_ledger: Ledger,
    pub(super) o_ledger: Ledger,
    pub(super) hosting: [Hosting; 3],
    /// The owner of every task the server hosts (alice's or bob's).
    pub(super) owner_of: BTreeMap<String, &'static str>,
    /// The call doing each hosted task's work, per host (server, alice's client).
    pub(super) server_work: BTreeMap<String, CallId>,
    pub(super) client_work: BTreeMap<String, CallId>,
    /// Plain requests each application must answer.
    pub(super) server_inbox: Vec<CallId>,
    pub(super) client_inbox: Vec<(CallId, String)>,
    pub(super) bob_inbox: Vec<(CallId, String)>,
    pub(super) probes: BTreeMap<IdKey, Probe>,
    pub(super) transcript: Transcript,
    /// Requests sent since the last (re)connect (all may be settled at once on close).
    pub(super) requests_sent: usize,
}

impl Drop for World {
    fn drop(&mut self) {
        crate::fuzz::dump_on_panic(&self.transcript);
    }
}

/// A client host with one session to the server; task ids `{prefix}{k}`.
pub(super) fn client_host(config: &Config, prefix: &str, now: Millis) -> (Host, SessionId) {
    let prefix = prefix.to_owned();
    let mut k = 0u64;
    let ids = Box::new(move || {
        k += 1;
        format!("{prefix}{k}")
    });
    let mut host = Host::new(config.clone(), ids, now);
    let session = host
        .open(now, Role::Client, "server")
        .expect("the host takes sessions");
    (host, session)
}

/// The server host of incarnation `n` (task ids `s{n}-task-{k}`).
pub(super) fn server_host(config: &Config, n: u32, now: Millis) -> Host {
    let mut k = 0u64;
    let ids = Box::new(move || {
        k += 1;
        format!("s{n}-task-{k}")
    });
    let mut host = Host::new(config.clone(), ids, now);
    add_tools(&mut host);
    host
}

impl World {
    pub(super) fn log(&mut self, line: std::fmt::Arguments<'_>) {
        tline!(self.transcript, "{line}");
    }

    pub(super) fn forget_work(&mut self, client_hosts: bool, task: &str) {
        if client_hosts {
            self.client_work.remove(task);
        } else {
            self.server_work.remove(task);
        }
    }

    /// The hosting direction of a task hosted by the server (by its owner) or the client.
    pub(super) fn dir_of(&self, client_hosts: bool, task: &str) -> usize {
        if client_hosts {
            CLIENT_HOSTS
        } else if self.owner_of.get(task) == Some(&BOB) {
            BOB_HOSTS
        } else {
            SERVER_HOSTS
        }
    }

    /// The server's views of one owner's tasks.
    pub(super) fn views_of(&self, owner: &str) -> Vec<Option<Value>> {
        self.owner_of
            .iter()
            .filter(|(_, o)| **o == owner)
            .map(|(id, _)| self.server.task(id).map(|s| wire_snapshot(&s)))
            .collect()
    }

    pub(super) fn host(&mut self, who: Who) -> &mut Host {
        match who {
            Who::Client => &mut self.client,
            Who::Server => &mut self.server,
            Who::Other => &mut self.other,
        }
    }

    pub(super) fn bound(&self) -> usize {
        output_bound(
            self.c2s.len()
                + self.s2c.len()
                + self.o2s.len()
                + self.s2o.len()
                + self.c_ledger.outstanding_count()
                + self.s_ledger.outstanding_count()
                + self.s2_ledger.outstanding_count()
                + self.o_ledger.outstanding_count()
                + self.server.task_count()
                + self.client.task_count()
                + self.client.remote_task_ids(self.cs).len()
                + self.server.remote_task_ids(self.ss).len()
                + self.other.remote_task_ids(self.os).len()
                + self.hosting.iter().map(|h| h.created.len()).sum::<usize>()
                + self.client_inbox.len()
                + self.server_inbox.len()
                + self.bob_inbox.len()
                // Bob's probes: each gets its response, at the latest when his session ends.
                + self.probes.len()
                + self.requests_sent,
        )
    }

    pub(super) fn absorb(&mut self, who: Who, out: Drained) {
        let now = self.host(who).now().0;
        for item in out.items {
            match item {
                Out::Send(sent) => self.absorb_send(who, *sent, now),
                Out::Event(event) => self.absorb_event(who, event, now),
            }
        }
    }

    pub(super) fn absorb_send(&mut self, who: Who, sent: crate::fuzz::Sent, now: u64) {
        // Where it goes, which ledger owes answers there, what it hosts and follows.
        let (hosts, follows, min_interval) = match (who, sent.session == self.ss2) {
            (Who::Client, _) => (
                CLIENT_HOSTS,
                SERVER_HOSTS,
                self.ccfg.polling.min_interval_ms,
            ),
            (Who::Other, _) => (usize::MAX, BOB_HOSTS, self.ccfg.polling.min_interval_ms),
            (Who::Server, false) => (
                SERVER_HOSTS,
                CLIENT_HOSTS,
                self.scfg.polling.min_interval_ms,
            ),
            (Who::Server, true) => (BOB_HOSTS, usize::MAX, self.scfg.polling.min_interval_ms),
        };
        let ledger = match who {
            Who::Client => &mut self.c_ledger,
            Who::Other => &mut self.o_ledger,
            Who::Server if sent.session == self.ss2 => &mut self.s2_ledger,
            Who::Server => &mut self.s_ledger,
        };
        let msg = &sent.msg;
        let answered = ledger.outbound(msg);
        self.oracle
            .check(msg, answered.as_deref())
            .unwrap_or_else(|e| panic!("invariant: {} sent an invalid message: {e}", who.name()));
        if !self.deep {
            self.absorb_send_lean(who, sent, hosts);
            return;
        }
        if msg.names_tasks() && hosts != usize::MAX {
            for (task, fresh) in check::tasks_in(msg, answered.as_deref()) {
                if fresh {
                    let id = task["taskId"].as_str().expect("schema-checked").to_owned();
                    if who == Who::Server {
                        let owner = if hosts == BOB_HOSTS { BOB } else { ALICE };
                        self.owner_of.insert(id.clone(), owner);
                    }
                    self.hosting[hosts].present.insert(id, None);
                }
                self.hosting[hosts]
                    .host_watch
                    .observe(&task, now, fresh)
                    .unwrap_or_else(|e| panic!("invariant (host view): {e}"));
            }
        }
        // (A `tasks/*` request of the server is about a task its peer hosts, by an id the
        // application chose: it tells the peer nothing.)
        let peer_task_request =
            msg.is_request() && msg.method().is_some_and(|m| m.starts_with("tasks/"));
        if who == Who::Server && msg.names_tasks() && !peer_task_request {
            // Isolation: what goes to one owner's session never names the other's tasks.
            let to = if sent.session == self.ss2 { BOB } else { ALICE };
            for id in check::mentioned_tasks(msg) {
                if let Some(owner) = self.owner_of.get(id) {
                    assert_eq!(
                        *owner, to,
                        "invariant: {to} was told about a task of {owner}: {}",
                        msg.line
                    );
                }
            }
        }
        if msg.is_request() {
            self.requests_sent += 1;
            if follows != usize::MAX && msg.method() == Some("tasks/get") {
                let h = &mut self.hosting[follows];
                let key = id_key(msg.id().expect("a request")).expect("valid");
                if !h.app_gets.contains(&key) {
                    let task = msg
                        .params()
                        .and_then(|p| p["taskId"].as_str())
                        .expect("taskId")
                        .to_owned();
                    if let Some(&last) = h.last_poll.get(&task) {
                        assert!(
                            now >= last + min_interval,
                            "invariant: polled {task:?} after {} ms, minimum {min_interval}",
                            now - last
                        );
                    }
                    h.last_poll.insert(task, now);
                }
            }
        }
        let to_bob = sent.session == self.ss2;
        let msg = sent.msg;
        match (who, to_bob) {
            (Who::Client, _) => self.c2s.push(msg),
            (Who::Other, _) => self.o2s.push(msg),
            (Who::Server, false) => self.s2c.push(msg),
            (Who::Server, true) => self.s2o.push(msg),
        }
    }

    /// [`World::absorb_send`] in a lean run: a new task is learnt (unchecked), the server
    /// names no task of the other owner's, and the message goes on the wire.
    pub(super) fn absorb_send_lean(&mut self, who: Who, sent: crate::fuzz::Sent, hosts: usize) {
        let msg = &sent.msg;
        if hosts != usize::MAX && msg.class == Class::Result && msg.line.contains("\"task\":") {
            let task = msg
                .result()
                .and_then(|r| r.get("task"))
                .filter(|t| t.is_object());
            if let Some(task) = task {
                let id = task["taskId"].as_str().expect("a task id").to_owned();
                if who == Who::Server {
                    let owner = if hosts == BOB_HOSTS { BOB } else { ALICE };
                    self.owner_of.insert(id.clone(), owner);
                }
                self.hosting[hosts].host_watch.admit(task);
                self.hosting[hosts].present.insert(id, None);
            }
        }
        let to_bob = sent.session == self.ss2;
        let peer_task_request =
            || msg.is_request() && msg.method().is_some_and(|m| m.starts_with("tasks/"));
        if who == Who::Server && msg.names_tasks() && !peer_task_request() {
            // Isolation (the server's own `tasks/*` requests name its peer's tasks).
            let to = if to_bob { BOB } else { ALICE };
            for id in check::named_ids(&msg.line) {
                if let Some(owner) = self.owner_of.get(&id) {
                    assert_eq!(
                        *owner, to,
                        "invariant: {to} was told about a task of {owner}: {}",
                        msg.line
                    );
                }
            }
        }
        if msg.is_request() {
            self.requests_sent += 1;
        }
        let msg = sent.msg;
        match (who, to_bob) {
            (Who::Client, _) => self.c2s.push(msg),
            (Who::Other, _) => self.o2s.push(msg),
            (Who::Server, false) => self.s2c.push(msg),
            (Who::Server, true) => self.s2o.push(msg),
        }
    }

    pub(super) fn absorb_event(&mut self, who: Who, event: Event, now: u64) {
        let follows = match who {
            Who::Client => SERVER_HOSTS,
            Who::Server => CLIENT_HOSTS,
            Who::Other => BOB_HOSTS,
        };
        let h = &mut self.hosting[follows];
        match event {
            Event::TaskCreated { task, .. } => {
                if self.deep {
                    h.req_watch
                        .observe(&wire_info(&task), now, false)
                        .unwrap_or_else(|e| panic!("invariant (requestor view): {e}"));
                }
                let id = task.id.to_string();
                h.last_poll.insert(id.clone(), now);
                let fresh = h.created.insert(id.clone(), Created::default());
                assert!(fresh.is_none(), "invariant: task {id} created twice");
                if who == Who::Other {
                    assert_ne!(
                        self.owner_of.get(&id),
                        Some(&ALICE),
                        "invariant: bob created one of alice's tasks"
                    );
                }
            }
            Event::TaskStatus { task, .. } => {
                if self.deep {
                    h.req_watch
                        .observe(&wire_info(&task), now, false)
                        .unwrap_or_else(|e| panic!("invariant (requestor view): {e}"));
                }
                assert!(
                    h.created.contains_key(task.id.as_str()),
                    "invariant: status event for a task this side did not create"
                );
            }
            Event::TaskResult { task, outcome, .. } => {
                let c = h.created.get_mut(task.as_str()).unwrap_or_else(|| {
                    panic!("invariant: TaskResult for {task:?}, which this side never created")
                });
                c.results += 1;
                assert_eq!(c.results, 1, "invariant: TaskResult for {task:?} twice");
                c.outcome = Some(outcome);
            }
            Event::Response {
                request, outcome, ..
            } if who == Who::Other => {
                if let Some(probe) = self.probes.remove(&request_id_key(&request)) {
                    self.check_probe(&probe, &[], outcome.as_ref().err());
                }
            }
            Event::TaskAnswer {
                request, outcome, ..
            } if who == Who::Other => {
                if let Some(probe) = self.probes.remove(&request_id_key(&request)) {
                    self.check_probe(&probe, &[], outcome.as_ref().err());
                }
            }
            Event::TaskPage {
                request, outcome, ..
            } if who == Who::Other => {
                if let Some(probe) = self.probes.remove(&request_id_key(&request)) {
                    let listed = outcome.as_ref().map_or(&[][..], |page| &page.tasks[..]);
                    self.check_probe(&probe, listed, outcome.as_ref().err());
                }
            }
            Event::ToolCall(tc) => match &tc.task {
                Some(task) => {
                    self.server_work.insert(task.to_string(), tc.call);
                }
                None => self.server_inbox.push(tc.call),
            },
            Event::Request(ar) => match (&ar.task, who) {
                (Some(task), Who::Client) => {
                    self.client_work.insert(task.to_string(), ar.call);
                }
                (None, Who::Client) => self.client_inbox.push((ar.call, ar.method)),
                (None, Who::Other) => self.bob_inbox.push((ar.call, ar.method)),
                (Some(t), _) => panic!("invariant: {} hosts task {t:?}", who.name()),
                (None, Who::Server) => {
                    panic!("invariant: a request reached the server app: {ar:?}")
                }
            },
            Event::Stop { call, reason, .. } => self.absorb_stop(who, call, reason),
            _ => {}
        }
    }

    pub(super) fn absorb_stop(&mut self, who: Who, call: CallId, reason: StopReason) {
        let (work, client_hosts) = match who {
            Who::Client => (&mut self.client_work, true),
            Who::Server => (&mut self.server_work, false),
            Who::Other => {
                self.bob_inbox.retain(|(c, _)| *c != call);
                return;
            }
        };
        let task = work
            .iter()
            .find(|(_, c)| **c == call)
            .map(|(t, _)| t.clone());
        match task {
            Some(task) => {
                if reason == StopReason::Cancelled {
                    let dir = self.dir_of(client_hosts, &task);
                    self.hosting[dir].outcomes.insert(task, Outcome::Cancelled);
                } else {
                    // Expired (or removed): the handle is spent.
                    self.forget_work(client_hosts, &task);
                }
            }
            // (Call handles are per host.)
            None if client_hosts => self.client_inbox.retain(|(c, _)| *c != call),
            None => self.server_inbox.retain(|c| *c != call),
        }
    }

    /// The requestor and the host of direction `dir`, with the requestor's session.
    pub(super) fn ends(&self, dir: usize) -> (&Host, SessionId, &Host) {
        match dir {
            SERVER_HOSTS => (&self.client, self.cs, &self.server),
            CLIENT_HOSTS => (&self.server, self.ss, &self.client),
            _ => (&self.other, self.os, &self.server),
        }
    }
}
