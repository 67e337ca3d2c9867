//! Body 3: a client engine and a server engine over an in-memory wire with faults.
//!
//! The input picks which faults the run may use (drop, duplicate, reorder, restart), the
//! configurations, then a sequence of operations: deliveries (in order, out of order,
//! duplicated), drops, time advances, restarts (the survivor sees EOF, then both sides
//! reconnect), and the applications' commands in both directions of task hosting:
//! - the client calls tools as tasks (the server hosts them): `tasks/get`, `tasks/cancel`,
//!   `tasks/result`, `tasks/list`, auto-poll on/off, answering the server's input requests;
//!   the server application completes, fails, updates, asks for input, answers plain calls;
//! - the server sends task-augmented `sampling/createMessage` (the client hosts the task),
//!   and the client application completes or fails it.
//!
//! Invariants, besides everything the single-session checks cover (validity, schema,
//! exactly-one answers on both sides, transition table on the host's and the requestor's
//! views, bounded outputs, no busy loop, determinism):
//! - a requestor never polls a task sooner than its minimum interval;
//! - a requestor reports at most one `TaskResult` per task, and only for tasks it created;
//!   on close, every task still open gets exactly one;
//! - once the wire is quiet, the requestor's view of each task it follows equals the host's
//!   (or the task has expired and the requestor's view says so by its ttl);
//! - without drops and duplicates, every task a requestor created ends with exactly one
//!   `TaskResult`, equal to what the host application supplied (or `-32602` once purged).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{json, Value};
use taskwire_engine::wire::v2025_11_25::RELATED_TASK;
use taskwire_engine::{
    Config, Event, Millis, ProgressTarget, RequestId, RpcError, Session, StopReason,
};

use super::check::{self, id_key, output_bound, request_id_key, Ledger, Msg, Schema, TaskWatch};
use super::reader::Reader;
use super::{add_tools, assert_no_busy_loop, config, drain, Drained, EPOCH};

/// Runs the body on one input (twice, comparing transcripts).
pub fn run(data: &[u8]) {
    super::twice(data, |d| drive(d, Schema::Full));
}

/// Operations per run.
const MAX_STEPS: usize = 300;

/// Runs the body once and returns its transcript.
pub fn drive(data: &[u8], schema: Schema) -> String {
    let mut r = Reader::new(data);
    let Some(mut w) = World::new(&mut r, schema) else {
        return String::new();
    };
    let mut steps = 0;
    while !r.is_empty() && steps < MAX_STEPS {
        if w.step(&mut r).is_none() {
            break;
        }
        steps += 1;
    }
    w.finish();
    std::mem::take(&mut w.transcript)
}

#[derive(Clone, Copy, Debug)]
struct Faults {
    drop: bool,
    dup: bool,
    reorder: bool,
    restart: bool,
}

/// What a host application decided for a task.
#[derive(Clone, Debug)]
enum Outcome {
    Result(Value),
    Error(RpcError),
    Cancelled,
}

/// A requestor's record of a task it created.
#[derive(Debug, Default)]
struct Created {
    results: usize,
    outcome: Option<Result<Value, RpcError>>,
}

/// The two directions of task hosting.
const SERVER_HOSTS: usize = 0;
const CLIENT_HOSTS: usize = 1;

/// Everything about one direction of task hosting.
#[derive(Debug)]
struct Hosting {
    /// The host's own views (what it sends and what its getter shows).
    host_watch: TaskWatch,
    /// The requestor's views (its events and its getter).
    req_watch: TaskWatch,
    /// Tasks the requestor saw created.
    created: BTreeMap<String, Created>,
    /// What the host application decided, per task.
    outcomes: BTreeMap<String, Outcome>,
    /// `tasks/get` requests the requestor's application sent (the rest are automatic).
    app_gets: BTreeSet<String>,
    /// When the requestor last polled each task on its own, or created it.
    last_poll: BTreeMap<String, u64>,
}

impl Hosting {
    fn new() -> Self {
        Hosting {
            host_watch: TaskWatch::receiver(),
            req_watch: TaskWatch::requestor(),
            created: BTreeMap::new(),
            outcomes: BTreeMap::new(),
            app_gets: BTreeSet::new(),
            last_poll: BTreeMap::new(),
        }
    }
}

struct World {
    ccfg: Config,
    scfg: Config,
    client: Session,
    server: Session,
    schema: Schema,
    faults: Faults,
    /// A drop or duplicate actually happened in this incarnation.
    lossy: bool,
    incarnation: u32,
    now: u64,
    c2s: Vec<String>,
    s2c: Vec<String>,
    c_ledger: Ledger,
    s_ledger: Ledger,
    hosting: [Hosting; 2],
    transcript: String,
    /// Plain server requests the client application must answer: (id, method).
    client_inbox: Vec<(RequestId, String)>,
    /// Plain calls the server application must answer.
    server_inbox: Vec<RequestId>,
    /// Requests each side sent in this incarnation (all may be settled at once on close).
    requests_sent: usize,
}

impl Drop for World {
    fn drop(&mut self) {
        super::dump_on_panic(&self.transcript);
    }
}

impl World {
    fn new(r: &mut Reader, schema: Schema) -> Option<Self> {
        let (b0, b1, b2, b3) = (r.u8()?, r.u8()?, r.u8()?, r.u8()?);
        let faults = Faults {
            drop: b0 & 1 != 0,
            dup: b0 & 2 != 0,
            reorder: b0 & 4 != 0,
            restart: b0 & 8 != 0,
        };
        let timeout = [Some(1000), Some(8000), None, Some(3000)][usize::from(b1 >> 6)];
        // Without a timeout a lost request waits forever: no protocol can converge.
        let timeout = if faults.drop {
            timeout.or(Some(5000))
        } else {
            timeout
        };
        let mut ccfg = config("fuzz-client");
        ccfg.client.sampling = true;
        ccfg.client.elicitation = true;
        ccfg.request_timeout_ms = timeout;
        ccfg.polling.min_interval_ms = [1, 100, 250, 0][usize::from(b1 & 3)];
        ccfg.polling.max_interval_ms = [1000, 10_000][usize::from((b1 >> 2) & 1)];
        ccfg.polling.default_interval_ms = [500, 2000][usize::from((b1 >> 3) & 1)];
        ccfg.tasks.status_notifications = b1 & 16 == 0;
        ccfg.tasks.max_tasks = 1 + usize::from(b3 % 4);
        ccfg.tasks.default_ttl_ms = [None, Some(3000)][usize::from((b3 >> 2) & 1)];
        ccfg.tasks.poll_interval_ms = [None, Some(100)][usize::from((b3 >> 3) & 1)];
        let mut scfg = config("fuzz-server");
        scfg.request_timeout_ms = timeout;
        scfg.polling.min_interval_ms = [1, 100][usize::from((b3 >> 4) & 1)];
        scfg.polling.max_interval_ms = [1000, 10_000][usize::from((b3 >> 5) & 1)];
        scfg.tasks.max_tasks = 1 + usize::from(b2 % 5);
        scfg.tasks.default_ttl_ms =
            [None, Some(2000), Some(60_000), Some(300_000)][usize::from((b2 >> 3) & 3)];
        scfg.tasks.max_ttl_ms = [None, Some(10_000)][usize::from((b2 >> 5) & 1)];
        scfg.tasks.poll_interval_ms = [None, Some(50), Some(500), Some(5000)][usize::from(b2 >> 6)];
        scfg.tasks.status_notifications = b1 & 32 == 0;
        let (client, server) = connect(&ccfg, &scfg, 0, EPOCH);
        let mut w = World {
            ccfg,
            scfg,
            client,
            server,
            schema,
            faults,
            lossy: false,
            incarnation: 0,
            now: EPOCH,
            c2s: Vec::new(),
            s2c: Vec::new(),
            c_ledger: Ledger::default(),
            s_ledger: Ledger::default(),
            hosting: [Hosting::new(), Hosting::new()],
            transcript: String::new(),
            client_inbox: Vec::new(),
            server_inbox: Vec::new(),
            requests_sent: 0,
        };
        w.start();
        Some(w)
    }

    /// Sends the client's `initialize`.
    fn start(&mut self) {
        let now = Millis(self.now);
        self.client
            .initialize(now)
            .expect("a new client initializes");
        self.after(true);
    }

    fn step(&mut self, r: &mut Reader) -> Option<()> {
        match r.below(28)? {
            0..=3 => self.deliver(true, 0, false),
            4..=7 => self.deliver(false, 0, false),
            8 => self.fault(r)?,
            9 | 10 => {
                let name = ["opt", "req", "forb", "nope"][r.below(4)?];
                let ttl = [None, Some(500), Some(5000), Some(1_000_000)][r.below(4)?];
                let args = json!({"n": r.u8()?});
                let res = self
                    .client
                    .call_tool_as_task(Millis(self.now), name, args, ttl);
                self.log(format!("client call_tool_as_task -> {res:?}"));
                self.after(true);
            }
            11 => {
                let name = ["opt", "forb"][r.below(2)?];
                let res = self.client.call_tool(Millis(self.now), name, json!({}));
                self.log(format!("client call_tool -> {res:?}"));
                self.after(true);
            }
            12 | 13 => {
                let client = r.bool()?;
                self.task_command(client, r)?;
            }
            14 => self.client_answers(r)?,
            15 | 16 => {
                let client_hosts = r.one_in(3)?;
                self.finish_task(client_hosts, r)?;
            }
            17 => {
                let task = self.pick_hosted(SERVER_HOSTS, r)?;
                let message = if r.bool()? { Some(r.word()?) } else { None };
                let res = self.server.update_task(Millis(self.now), &task, message);
                self.log(format!("server update_task -> {res:?}"));
                self.after(false);
            }
            18 => {
                let task = self.pick_hosted(SERVER_HOSTS, r)?;
                let (method, params) = if r.bool()? {
                    (
                        "elicitation/create",
                        json!({"message":"?","requestedSchema":{"type":"object","properties":{}}}),
                    )
                } else {
                    ("sampling/createMessage", sampling_params())
                };
                let res = self
                    .server
                    .request_input(Millis(self.now), &task, method, params);
                self.log(format!("server request_input -> {res:?}"));
                self.after(false);
            }
            19 => {
                if !self.server_inbox.is_empty() {
                    let request = r.pick(&self.server_inbox)?.clone();
                    let reply = json!({"content":[{"type":"text","text":"plain"}]});
                    let res = self.server.respond(Millis(self.now), &request, Ok(reply));
                    self.log(format!("server respond -> {res:?}"));
                    self.server_inbox.retain(|p| p != &request);
                } else {
                    let task = self.pick_hosted(SERVER_HOSTS, r)?;
                    let res = self.server.notify_progress(
                        Millis(self.now),
                        ProgressTarget::Task(&task),
                        f64::from(r.u8()?),
                        None,
                        None,
                    );
                    self.log(format!("server progress -> {res:?}"));
                }
                self.after(false);
            }
            20 => {
                // The server asks the client to host a sampling task.
                let ttl = [None, Some(500), Some(5000)][r.below(3)?];
                let res = self.server.request_as_task(
                    Millis(self.now),
                    "sampling/createMessage",
                    sampling_params(),
                    ttl,
                );
                self.log(format!("server request_as_task -> {res:?}"));
                self.after(false);
            }
            21..=23 => {
                let delta = match r.below(4)? {
                    0 => u64::from(r.u8()?),
                    1 => u64::from(r.u16()?),
                    2 => u64::from(r.u8()?) * 1000,
                    _ => u64::from(r.u16()?) * 100,
                };
                self.advance(self.now + delta);
            }
            24 | 25 => {
                let next = [self.client.poll_timeout(), self.server.poll_timeout()]
                    .into_iter()
                    .flatten()
                    .min();
                if let Some(at) = next {
                    self.advance(at.0.max(self.now));
                }
            }
            _ => {
                if self.faults.restart && r.one_in(4)? {
                    self.restart(r.bool()?);
                }
            }
        }
        Some(())
    }

    fn log(&mut self, line: String) {
        self.transcript.push_str(&line);
        self.transcript.push('\n');
    }

    /// One fault among those the run allows: reorder, duplicate or drop a message.
    fn fault(&mut self, r: &mut Reader) -> Option<()> {
        let to_server = r.bool()?;
        let at = r.u8()? as usize;
        let mut kinds = Vec::new();
        if self.faults.reorder {
            kinds.push(0);
        }
        if self.faults.dup {
            kinds.push(1);
        }
        if self.faults.drop {
            kinds.push(2);
        }
        if kinds.is_empty() {
            return Some(());
        }
        match r.pick(&kinds)? {
            0 => self.deliver(to_server, at, false),
            1 => {
                self.lossy = true;
                self.deliver(to_server, at, true);
            }
            _ => {
                let queue = if to_server {
                    &mut self.c2s
                } else {
                    &mut self.s2c
                };
                if !queue.is_empty() {
                    let gone = queue.remove(at % queue.len());
                    self.lossy = true;
                    self.log(format!("drop {gone}"));
                }
            }
        }
        Some(())
    }

    /// A requestor's command on a task (`client` picks the client as the requestor).
    fn task_command(&mut self, client: bool, r: &mut Reader) -> Option<()> {
        let dir = if client { SERVER_HOSTS } else { CLIENT_HOSTS };
        let task = self.pick_created(dir, r)?;
        let now = Millis(self.now);
        let choice = r.below(6)?;
        let on = r.bool()?;
        let session = if client {
            &mut self.client
        } else {
            &mut self.server
        };
        let res = match choice {
            0 | 1 => {
                let res = session.get_task(now, &task);
                if let Ok(id) = &res {
                    self.hosting[dir].app_gets.insert(request_id_key(id));
                }
                res.map(|_| ())
            }
            2 => session.cancel_task(now, &task).map(|_| ()),
            3 => session.task_result(now, &task).map(|_| ()),
            4 => session.list_tasks(now, None).map(|_| ()),
            _ => session.set_auto_poll(&task, on),
        };
        self.log(format!("task command (client={client}) -> {res:?}"));
        self.after(client);
        Some(())
    }

    /// The host application finishes a task (complete or fail).
    fn finish_task(&mut self, client_hosts: bool, r: &mut Reader) -> Option<()> {
        let dir = if client_hosts {
            CLIENT_HOSTS
        } else {
            SERVER_HOSTS
        };
        let task = self.pick_hosted(dir, r)?;
        let now = Millis(self.now);
        let fail = r.one_in(4)?;
        let result = if client_hosts {
            json!({"role":"assistant","content":{"type":"text","text": r.word()?},"model":"m"})
        } else {
            match r.below(3)? {
                0 => json!({"content":[{"type":"text","text": r.word()?}]}),
                1 => json!({"content":[{"type":"text","text":"bad"}], "isError": true}),
                _ => json!({"content":[], "structuredContent": {"n": r.u8()?}}),
            }
        };
        let error = RpcError::new([-32603, 7][r.below(2)?], r.word()?);
        let session = if client_hosts {
            &mut self.client
        } else {
            &mut self.server
        };
        let live = session
            .hosted_task(&task)
            .is_some_and(|t| !t.status.is_terminal());
        let (res, outcome) = if fail {
            let res = session.fail_task(now, &task, error.clone());
            (res, Outcome::Error(error))
        } else {
            let res = session.complete_task(now, &task, result.clone());
            (res, Outcome::Result(with_meta(result, &task)))
        };
        self.log(format!("finish (client hosts={client_hosts}) -> {res:?}"));
        if res.is_ok() && live {
            self.hosting[dir].outcomes.insert(task, outcome);
        }
        self.after(client_hosts);
        Some(())
    }

    // ---- the wire -----------------------------------------------------------------------------

    /// Delivers one message (the `at`-th in flight, modulo), keeping a copy when `keep`.
    fn deliver(&mut self, to_server: bool, at: usize, keep: bool) {
        let queue = if to_server {
            &mut self.c2s
        } else {
            &mut self.s2c
        };
        if queue.is_empty() {
            return;
        }
        let at = at % queue.len();
        let line = if keep {
            queue[at].clone()
        } else {
            queue.remove(at)
        };
        let now = Millis(self.now);
        let mut framed = line.clone().into_bytes();
        framed.push(b'\n');
        if to_server {
            self.log(format!("c>s {line}"));
            self.s_ledger.inbound(line.as_bytes(), true);
            self.server.handle_bytes(now, &framed);
            self.after(false);
        } else {
            self.log(format!("s>c {line}"));
            self.c_ledger.inbound(line.as_bytes(), true);
            self.client.handle_bytes(now, &framed);
            self.after(true);
        }
    }

    /// Delivers everything in order until nothing is in flight.
    fn settle(&mut self) {
        for _ in 0..10_000 {
            if !self.c2s.is_empty() {
                self.deliver(true, 0, false);
            } else if !self.s2c.is_empty() {
                self.deliver(false, 0, false);
            } else {
                return;
            }
        }
        panic!("invariant: the wire never went quiet (a message storm)");
    }

    fn advance(&mut self, to: u64) {
        self.now = self.now.max(to);
        let now = Millis(self.now);
        self.log(format!("time {}", self.now - EPOCH));
        self.client.handle_timeout(now);
        assert_no_busy_loop(&self.client, "client");
        self.after(true);
        self.server.handle_timeout(now);
        assert_no_busy_loop(&self.server, "server");
        self.after(false);
    }

    /// One side restarts: the survivor sees EOF; then both sides reconnect from scratch.
    fn restart(&mut self, client_restarts: bool) {
        let now = Millis(self.now);
        self.log(format!("restart client={client_restarts}"));
        self.c2s.clear();
        self.s2c.clear();
        let survivor_is_client = !client_restarts;
        let out = {
            let survivor = if survivor_is_client {
                &mut self.client
            } else {
                &mut self.server
            };
            survivor.handle_eof(now);
            self.drain(survivor_is_client)
        };
        assert!(out.sends.is_empty(), "invariant: closing sends nothing");
        self.absorb(survivor_is_client, out);
        let dir = if survivor_is_client {
            SERVER_HOSTS
        } else {
            CLIENT_HOSTS
        };
        for (task, c) in &self.hosting[dir].created {
            assert_eq!(
                c.results, 1,
                "invariant: on close, task {task:?} gets exactly one TaskResult"
            );
        }
        self.incarnation += 1;
        let (client, server) = connect(&self.ccfg, &self.scfg, self.incarnation, self.now);
        self.client = client;
        self.server = server;
        self.c_ledger = Ledger::default();
        self.s_ledger = Ledger::default();
        self.hosting = [Hosting::new(), Hosting::new()];
        self.client_inbox.clear();
        self.server_inbox.clear();
        self.requests_sent = 0;
        self.lossy = false;
        self.start();
    }

    // ---- outputs --------------------------------------------------------------------------------

    fn bound(&self) -> usize {
        output_bound(
            self.c2s.len()
                + self.s2c.len()
                + self.c_ledger.outstanding_count()
                + self.s_ledger.outstanding_count()
                + self.server.hosted_task_count()
                + self.client.hosted_task_count()
                + self.client.remote_task_ids().len()
                + self.server.remote_task_ids().len()
                + self.hosting[0].created.len()
                + self.hosting[1].created.len()
                + self.client_inbox.len()
                + self.server_inbox.len()
                + self.requests_sent,
        )
    }

    fn drain(&mut self, client: bool) -> Drained {
        let bound = self.bound();
        if client {
            drain(
                &mut self.client,
                "client",
                self.schema,
                bound,
                &mut self.transcript,
            )
        } else {
            drain(
                &mut self.server,
                "server",
                self.schema,
                bound,
                &mut self.transcript,
            )
        }
    }

    /// Drains one side, takes in what it said, and checks its state.
    fn after(&mut self, client: bool) {
        let out = self.drain(client);
        self.absorb(client, out);
        self.check(client);
    }

    fn absorb(&mut self, client: bool, out: Drained) {
        let session = if client { &self.client } else { &self.server };
        let now = session.now().0;
        // Tasks this side hosts, and tasks it follows as a requestor.
        let (hosts, follows) = if client {
            (CLIENT_HOSTS, SERVER_HOSTS)
        } else {
            (SERVER_HOSTS, CLIENT_HOSTS)
        };
        let min_interval = if client {
            self.ccfg.polling.min_interval_ms
        } else {
            self.scfg.polling.min_interval_ms
        };
        for (line, msg) in out.sends {
            let ledger = if client {
                &mut self.c_ledger
            } else {
                &mut self.s_ledger
            };
            let answered = ledger.outbound(&msg);
            if let (Some(method), Msg::Result { result, .. }, Schema::Full) =
                (&answered, &msg, self.schema)
            {
                if let Some(definition) = check::result_definition(method, result) {
                    crate::schema::check(definition, result)
                        .unwrap_or_else(|e| panic!("invariant: {method} answer: {e}"));
                }
            }
            for (task, fresh) in check::tasks_in(&msg, answered.as_deref()) {
                self.hosting[hosts]
                    .host_watch
                    .observe(&task, now, fresh)
                    .unwrap_or_else(|e| panic!("invariant (host view): {e}"));
            }
            if let Msg::Request { id, method, params } = &msg {
                self.requests_sent += 1;
                let h = &mut self.hosting[follows];
                if method == "tasks/get" && !h.app_gets.contains(&id_key(id).expect("valid")) {
                    let task = params
                        .as_ref()
                        .and_then(|p| p["taskId"].as_str())
                        .expect("taskId");
                    if let Some(&last) = h.last_poll.get(task) {
                        assert!(
                            now >= last + min_interval,
                            "invariant: polled {task:?} after {} ms, minimum {min_interval}",
                            now - last
                        );
                    }
                    h.last_poll.insert(task.to_owned(), now);
                }
            }
            if client {
                self.c2s.push(line);
            } else {
                self.s2c.push(line);
            }
        }
        for event in out.events {
            let h = &mut self.hosting[follows];
            match event {
                Event::TaskCreated { task, .. } => {
                    let view = serde_json::to_value(&task).expect("task serializes");
                    h.req_watch
                        .observe(&view, now, false)
                        .unwrap_or_else(|e| panic!("invariant (requestor view): {e}"));
                    h.last_poll.insert(task.task_id.clone(), now);
                    let fresh = h.created.insert(task.task_id.clone(), Created::default());
                    assert!(
                        fresh.is_none(),
                        "invariant: task {} created twice",
                        task.task_id
                    );
                }
                Event::TaskStatus { task } => {
                    let view = serde_json::to_value(&task).expect("task serializes");
                    h.req_watch
                        .observe(&view, now, false)
                        .unwrap_or_else(|e| panic!("invariant (requestor view): {e}"));
                    assert!(
                        h.created.contains_key(&task.task_id),
                        "invariant: status event for a task this side did not create"
                    );
                }
                Event::TaskResult { task, outcome } => {
                    let c = h.created.get_mut(&task).unwrap_or_else(|| {
                        panic!("invariant: TaskResult for {task:?}, which this side never created")
                    });
                    c.results += 1;
                    assert_eq!(c.results, 1, "invariant: TaskResult for {task:?} twice");
                    c.outcome = Some(outcome);
                }
                Event::ToolCall {
                    request,
                    task: None,
                    ..
                } => self.server_inbox.push(request),
                Event::Request {
                    request,
                    method,
                    task: None,
                    ..
                } => self.client_inbox.push((request, method)),
                Event::RequestCancelled { request, .. } if client => {
                    self.client_inbox.retain(|(p, _)| p != &request);
                }
                Event::RequestCancelled { request, .. } => {
                    self.server_inbox.retain(|p| p != &request);
                }
                Event::StopTask {
                    task,
                    reason: StopReason::Cancelled,
                } => {
                    self.hosting[hosts]
                        .outcomes
                        .insert(task, Outcome::Cancelled);
                }
                _ => {}
            }
        }
    }

    /// Between-steps checks of one side: its hosted tasks and the tasks it follows.
    fn check(&mut self, client: bool) {
        let (session, hosts, follows, max_tasks) = if client {
            (
                &self.client,
                CLIENT_HOSTS,
                SERVER_HOSTS,
                self.ccfg.tasks.max_tasks,
            )
        } else {
            (
                &self.server,
                SERVER_HOSTS,
                CLIENT_HOSTS,
                self.scfg.tasks.max_tasks,
            )
        };
        let now = session.now().0;
        assert!(
            session.hosted_task_count() <= max_tasks,
            "invariant: live tasks exceed the cap"
        );
        let watch = &mut self.hosting[hosts].host_watch;
        for id in watch.ids() {
            match session.hosted_task(&id) {
                Some(task) => {
                    let view = serde_json::to_value(task).expect("task serializes");
                    watch
                        .observe(&view, now, false)
                        .unwrap_or_else(|e| panic!("invariant (host view): {e}"));
                    let due = session.poll_timeout().is_some_and(|at| at.0 <= now);
                    assert!(
                        !watch.is_expired(&id, now) || due,
                        "invariant: task {id:?} outlived its ttl"
                    );
                }
                None => assert!(
                    watch.is_expired(&id, now),
                    "invariant: task {id:?} vanished before its ttl ran out"
                ),
            }
        }
        let watch = &mut self.hosting[follows].req_watch;
        for id in session.remote_task_ids() {
            if let Some(task) = session.remote_task(id) {
                let view = serde_json::to_value(task).expect("task serializes");
                watch
                    .observe(&view, now, false)
                    .unwrap_or_else(|e| panic!("invariant (requestor view): {e}"));
            }
        }
    }

    // ---- applications ---------------------------------------------------------------------------

    fn client_answers(&mut self, r: &mut Reader) -> Option<()> {
        if self.client_inbox.is_empty() {
            return Some(());
        }
        let (request, method) = r.pick(&self.client_inbox)?.clone();
        let outcome = if r.one_in(4)? {
            Err(RpcError::new(-1, "user declined"))
        } else {
            Ok(client_reply(&method))
        };
        let res = self.client.respond(Millis(self.now), &request, outcome);
        self.log(format!("client respond -> {res:?}"));
        self.client_inbox.retain(|(p, _)| p != &request);
        self.after(true);
        Some(())
    }

    /// A task the requestor of direction `dir` created (or a made-up id).
    fn pick_created(&mut self, dir: usize, r: &mut Reader) -> Option<String> {
        let ids: Vec<String> = self.hosting[dir].created.keys().cloned().collect();
        if !ids.is_empty() && r.below(8)? != 0 {
            Some(r.pick(&ids)?.clone())
        } else {
            Some(format!("i{}-task-{}", self.incarnation, r.u8()?))
        }
    }

    /// A task the host of direction `dir` holds (or a made-up id).
    fn pick_hosted(&mut self, dir: usize, r: &mut Reader) -> Option<String> {
        let ids = self.hosting[dir].host_watch.ids();
        if !ids.is_empty() && r.below(8)? != 0 {
            Some(r.pick(&ids)?.clone())
        } else {
            Some(format!("i{}-task-{}", self.incarnation, r.u8()?))
        }
    }

    // ---- the end ---------------------------------------------------------------------------------

    /// How long until every followed task has been polled at least once.
    fn window(&self) -> u64 {
        let longest = |c: &Config| c.polling.max_interval_ms.max(c.polling.min_interval_ms);
        longest(&self.ccfg).max(longest(&self.scfg))
            + self
                .ccfg
                .request_timeout_ms
                .max(self.scfg.request_timeout_ms)
                .unwrap_or(0)
            + 1
    }

    /// Moves time through every deadline up to `now + span`, delivering as it goes.
    fn run_quietly(&mut self, span: u64) {
        let end = self.now + span;
        for _ in 0..10_000 {
            self.settle();
            let next = [self.client.poll_timeout(), self.server.poll_timeout()]
                .into_iter()
                .flatten()
                .min();
            match next {
                Some(at) if at.0 <= end => self.advance(at.0.max(self.now)),
                _ => {
                    self.advance(end);
                    self.settle();
                    return;
                }
            }
        }
        panic!("invariant: deadlines keep firing (busy loop)");
    }

    /// Both applications answer whatever they were asked (plain requests only).
    fn answer_everything(&mut self) {
        for (request, method) in std::mem::take(&mut self.client_inbox) {
            let res = self
                .client
                .respond(Millis(self.now), &request, Ok(client_reply(&method)));
            self.log(format!("client respond -> {res:?}"));
            self.after(true);
        }
        for request in std::mem::take(&mut self.server_inbox) {
            let reply = Ok(json!({"content":[{"type":"text","text":"plain"}]}));
            let res = self.server.respond(Millis(self.now), &request, reply);
            self.log(format!("server respond -> {res:?}"));
            self.after(false);
        }
    }

    /// The requestor's view of each followed task equals the host's, or has expired.
    fn assert_converged(&mut self, dir: usize) {
        let (requestor, host) = if dir == SERVER_HOSTS {
            (&self.client, &self.server)
        } else {
            (&self.server, &self.client)
        };
        let now = self.now;
        let ids: Vec<String> = requestor
            .remote_task_ids()
            .into_iter()
            .map(str::to_owned)
            .collect();
        for id in &ids {
            let seen = requestor.remote_task(id).cloned();
            match (seen, host.hosted_task(id)) {
                (Some(c), Some(s)) => assert_eq!(
                    c, s,
                    "invariant: once quiet, the requestor's view of {id:?} equals the host's"
                ),
                (Some(c), None) => {
                    let born = check::timestamp_ms(&c.created_at).expect("timestamp");
                    assert!(
                        check::expired(born, c.ttl, now),
                        "invariant: the requestor follows {id:?}, which the host lost before its ttl"
                    );
                }
                (None, _) => {}
            }
        }
        self.log(format!("converge {} tasks (dir {dir})", ids.len()));
    }

    /// Without loss, each created task got exactly its outcome.
    fn assert_outcomes(&mut self, dir: usize) {
        let host = if dir == SERVER_HOSTS {
            &self.server
        } else {
            &self.client
        };
        let h = &self.hosting[dir];
        for (task, c) in &h.created {
            assert_eq!(
                c.results, 1,
                "invariant: task {task:?} ends with exactly one TaskResult"
            );
            let gone = host.hosted_task(task).is_none();
            let outcome = c.outcome.as_ref().expect("counted");
            match (outcome, h.outcomes.get(task)) {
                (Err(e), _) if gone && e.code == -32602 => {}
                (Ok(v), Some(Outcome::Result(want))) => {
                    assert_eq!(v, want, "invariant: task {task:?} result is the app's")
                }
                (Err(e), Some(Outcome::Error(want))) => {
                    assert_eq!(e, want, "invariant: task {task:?} error is the app's")
                }
                (Err(e), Some(Outcome::Cancelled)) if e.code == -32602 => {}
                (got, want) => {
                    panic!("invariant: task {task:?} ended with {got:?}, the host decided {want:?}")
                }
            }
        }
        let count = h.created.len();
        let requestor = if dir == SERVER_HOSTS {
            &self.client
        } else {
            &self.server
        };
        let left = requestor.remote_task_ids();
        assert!(
            left.is_empty(),
            "invariant: finished tasks are forgotten by the requestor: {left:?}"
        );
        self.log(format!("outcomes checked {count} (dir {dir})"));
    }

    fn finish(&mut self) {
        // Faults stop; both applications answer what they were asked.
        self.settle();
        self.answer_everything();
        for dir in [SERVER_HOSTS, CLIENT_HOSTS] {
            let followed: Vec<String> = self.hosting[dir].created.keys().cloned().collect();
            let requestor = if dir == SERVER_HOSTS {
                &mut self.client
            } else {
                &mut self.server
            };
            for task in &followed {
                let _ = requestor.set_auto_poll(task, true);
            }
            self.after(dir == SERVER_HOSTS);
        }
        self.settle();

        // The wire goes quiet: each requestor's view converges to the host's.
        self.run_quietly(self.window());
        self.assert_converged(SERVER_HOSTS);
        self.assert_converged(CLIENT_HOSTS);

        // Every task finishes; without loss, each gets exactly its outcome.
        for dir in [SERVER_HOSTS, CLIENT_HOSTS] {
            let client_hosts = dir == CLIENT_HOSTS;
            for id in self.hosting[dir].host_watch.ids() {
                let host = if client_hosts {
                    &mut self.client
                } else {
                    &mut self.server
                };
                if host
                    .hosted_task(&id)
                    .is_some_and(|t| !t.status.is_terminal())
                {
                    let result = if client_hosts {
                        json!({"role":"assistant","content":{"type":"text","text":"final"},"model":"m"})
                    } else {
                        json!({"content":[{"type":"text","text":"final"}]})
                    };
                    host.complete_task(Millis(self.now), &id, result.clone())
                        .expect("invariant: a live task can be completed");
                    self.hosting[dir]
                        .outcomes
                        .insert(id.clone(), Outcome::Result(with_meta(result, &id)));
                    self.after(client_hosts);
                }
            }
        }
        self.answer_everything();
        self.run_quietly(self.window());
        self.s_ledger.assert_all_answered("server at the end");
        if !self.client.is_closed() {
            self.c_ledger.assert_all_answered("client at the end");
        }
        if self.lossy || self.client.is_closed() {
            return;
        }
        self.assert_outcomes(SERVER_HOSTS);
        self.assert_outcomes(CLIENT_HOSTS);
    }
}

/// A fresh client and server for incarnation `n` (task ids `i{n}-task-{k}` on the server,
/// `i{n}-ctask-{k}` on the client).
fn connect(ccfg: &Config, scfg: &Config, n: u32, now: u64) -> (Session, Session) {
    let now = Millis(now);
    let counter = |prefix: &'static str| {
        let mut k = 0u64;
        Box::new(move || {
            k += 1;
            format!("i{n}-{prefix}-{k}")
        })
    };
    let client = Session::client(ccfg.clone(), counter("ctask"), now);
    let mut server = Session::server(scfg.clone(), counter("task"), now);
    add_tools(&mut server);
    (client, server)
}

fn sampling_params() -> Value {
    json!({"messages":[{"role":"user","content":{"type":"text","text":"hi"}}],"maxTokens": 5})
}

/// What a client application answers to a server's plain request.
fn client_reply(method: &str) -> Value {
    match method {
        "sampling/createMessage" => {
            json!({"role":"assistant","content":{"type":"text","text":"ok"},"model":"fuzz"})
        }
        _ => json!({"action":"accept","content":{"a":"b"}}),
    }
}

/// The result as `tasks/result` returns it: the app's object plus the related-task meta.
fn with_meta(mut result: Value, task: &str) -> Value {
    if let Value::Object(obj) = &mut result {
        let meta = obj.entry("_meta").or_insert_with(|| json!({}));
        if !meta.is_object() {
            *meta = json!({});
        }
        meta[RELATED_TASK] = json!({ "taskId": task });
    }
    result
}
