//! Body 3: a client engine and a server engine over an in-memory wire with faults.
//!
//! The input picks which faults the run may use (drop, duplicate, reorder, restart), the
//! configurations, then a sequence of operations: deliveries (in order, out of order,
//! duplicated), drops, client commands (task-augmented and plain calls, `tasks/get`,
//! `tasks/cancel`, `tasks/result`, `tasks/list`, auto-poll on/off, answering input
//! requests), server application commands (complete, fail, update, request input, answer),
//! time advances and restarts (the survivor sees EOF, then both reconnect).
//!
//! Invariants, besides everything the single-session checks cover (validity, schema,
//! exactly-one answers, transition table on both sides' views, bounded outputs, no busy
//! loop, determinism):
//! - the client never polls a task sooner than its minimum interval;
//! - the client reports at most one `TaskResult` per task; on close, every task still open
//!   gets exactly one;
//! - once the wire is quiet, the client's view of each task it follows equals the server's
//!   (or the task has expired and the client's view says so by its ttl);
//! - without drops and duplicates, every task the client created ends with exactly one
//!   `TaskResult`, equal to what the server application supplied (or `-32602` once purged).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{json, Value};
use taskwire_engine::wire::v2025_11_25::RELATED_TASK;
use taskwire_engine::{Config, Event, Millis, ProgressTarget, RequestId, RpcError, Session};

use super::check::{
    self, id_key, output_bound, request_id_key, IdKey, Ledger, Msg, Schema, TaskWatch,
};
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

/// What the server application decided for a task.
#[derive(Clone, Debug)]
enum Outcome {
    Result(Value),
    Error(RpcError),
    Cancelled,
}

/// The client's record of a task it created.
#[derive(Debug, Default)]
struct Created {
    results: usize,
    outcome: Option<Result<Value, RpcError>>,
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
    c_watch: TaskWatch,
    s_watch: TaskWatch,
    transcript: String,
    /// Tasks the client saw created (this incarnation).
    created: BTreeMap<String, Created>,
    /// Server requests the client application must answer: (id, method).
    client_inbox: Vec<(RequestId, String)>,
    /// Plain calls the server application must answer.
    server_inbox: Vec<RequestId>,
    /// What the server application decided, per task.
    outcomes: BTreeMap<String, Outcome>,
    /// `tasks/get` requests the client application sent (the rest are automatic).
    app_gets: BTreeSet<IdKey>,
    /// When the client last polled each task on its own, or created it.
    last_poll: BTreeMap<String, u64>,
}

impl Drop for World {
    fn drop(&mut self) {
        super::dump_on_panic(&self.transcript);
    }
}

impl World {
    fn new(r: &mut Reader, schema: Schema) -> Option<Self> {
        let (b0, b1, b2) = (r.u8()?, r.u8()?, r.u8()?);
        let faults = Faults {
            drop: b0 & 1 != 0,
            dup: b0 & 2 != 0,
            reorder: b0 & 4 != 0,
            restart: b0 & 8 != 0,
        };
        let mut ccfg = config("fuzz-client");
        ccfg.client.sampling = true;
        ccfg.client.elicitation = true;
        ccfg.polling.min_interval_ms = [1, 100, 250, 0][usize::from(b1 & 3)];
        ccfg.polling.max_interval_ms = [1000, 30_000][usize::from((b1 >> 2) & 1)];
        ccfg.polling.default_interval_ms = [500, 2000][usize::from((b1 >> 3) & 1)];
        ccfg.request_timeout_ms =
            [Some(1000), Some(60_000), None, Some(5000)][usize::from(b1 >> 6)];
        if faults.drop && ccfg.request_timeout_ms.is_none() {
            // Without a timeout a lost request waits forever: no protocol can converge.
            ccfg.request_timeout_ms = Some(5000);
        }
        let mut scfg = config("fuzz-server");
        scfg.tasks.max_tasks = 1 + usize::from(b2 % 5);
        scfg.tasks.default_ttl_ms =
            [None, Some(2000), Some(60_000), Some(300_000)][usize::from((b2 >> 3) & 3)];
        scfg.tasks.max_ttl_ms = [None, Some(10_000)][usize::from((b2 >> 5) & 1)];
        scfg.tasks.poll_interval_ms = [None, Some(50), Some(500), Some(5000)][usize::from(b2 >> 6)];
        scfg.tasks.status_notifications = b1 & 32 == 0;
        scfg.request_timeout_ms = ccfg.request_timeout_ms;
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
            c_watch: TaskWatch::requestor(),
            s_watch: TaskWatch::receiver(),
            transcript: String::new(),
            created: BTreeMap::new(),
            client_inbox: Vec::new(),
            server_inbox: Vec::new(),
            outcomes: BTreeMap::new(),
            app_gets: BTreeSet::new(),
            last_poll: BTreeMap::new(),
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
        self.after_client();
    }

    fn step(&mut self, r: &mut Reader) -> Option<()> {
        match r.below(24)? {
            0..=3 => self.deliver(true, 0, false),
            4..=7 => self.deliver(false, 0, false),
            8 => {
                let to_server = r.bool()?;
                let at = r.u8()? as usize;
                if self.faults.reorder {
                    self.deliver(to_server, at, false);
                } else if self.faults.dup && r.bool()? {
                    self.lossy = true;
                    self.deliver(to_server, at, true);
                } else if self.faults.drop {
                    let queue = if to_server {
                        &mut self.c2s
                    } else {
                        &mut self.s2c
                    };
                    if !queue.is_empty() {
                        let gone = queue.remove(at % queue.len());
                        self.lossy = true;
                        self.transcript.push_str(&format!("drop {gone}\n"));
                    }
                }
            }
            9 | 10 => {
                let name = ["opt", "req", "forb", "nope"][r.below(4)?];
                let ttl = [None, Some(500), Some(5000), Some(1_000_000)][r.below(4)?];
                let args = json!({"n": r.u8()?});
                let res = self
                    .client
                    .call_tool_as_task(Millis(self.now), name, args, ttl);
                self.transcript
                    .push_str(&format!("client call_tool_as_task -> {res:?}\n"));
                self.after_client();
            }
            11 => {
                let name = ["opt", "forb"][r.below(2)?];
                let res = self.client.call_tool(Millis(self.now), name, json!({}));
                self.transcript
                    .push_str(&format!("client call_tool -> {res:?}\n"));
                self.after_client();
            }
            12 => {
                let task = self.pick_client_task(r)?;
                let now = Millis(self.now);
                let res = match r.below(6)? {
                    0 | 1 => {
                        let res = self.client.get_task(now, &task);
                        if let Ok(id) = &res {
                            self.app_gets.insert(request_id_key(id));
                        }
                        res.map(|_| ())
                    }
                    2 => self.client.cancel_task(now, &task).map(|_| ()),
                    3 => self.client.task_result(now, &task).map(|_| ()),
                    4 => self.client.list_tasks(now, None).map(|_| ()),
                    _ => self.client.set_auto_poll(&task, r.bool()?),
                };
                self.transcript
                    .push_str(&format!("client task command -> {res:?}\n"));
                self.after_client();
            }
            13 => self.client_answers(r)?,
            14 | 15 => {
                let task = self.pick_server_task(r)?;
                let result = match r.below(3)? {
                    0 => json!({"content":[{"type":"text","text": r.word()?}]}),
                    1 => json!({"content":[{"type":"text","text":"bad"}], "isError": true}),
                    _ => json!({"content":[], "structuredContent": {"n": r.u8()?}}),
                };
                let live = self.server_task_live(&task);
                let res = self
                    .server
                    .complete_task(Millis(self.now), &task, result.clone());
                self.transcript
                    .push_str(&format!("server complete_task -> {res:?}\n"));
                if res.is_ok() && live {
                    self.outcomes
                        .insert(task.clone(), Outcome::Result(with_meta(result, &task)));
                }
                self.after_server();
            }
            16 => {
                let task = self.pick_server_task(r)?;
                let error = RpcError::new([-32603, 7][r.below(2)?], r.word()?);
                let live = self.server_task_live(&task);
                let res = self
                    .server
                    .fail_task(Millis(self.now), &task, error.clone());
                self.transcript
                    .push_str(&format!("server fail_task -> {res:?}\n"));
                if res.is_ok() && live {
                    self.outcomes.insert(task.clone(), Outcome::Error(error));
                }
                self.after_server();
            }
            17 => {
                let task = self.pick_server_task(r)?;
                let message = if r.bool()? { Some(r.word()?) } else { None };
                let res = self.server.update_task(Millis(self.now), &task, message);
                self.transcript
                    .push_str(&format!("server update_task -> {res:?}\n"));
                self.after_server();
            }
            18 => {
                let task = self.pick_server_task(r)?;
                let (method, params) = if r.bool()? {
                    (
                        "elicitation/create",
                        json!({"message":"?","requestedSchema":{"type":"object","properties":{}}}),
                    )
                } else {
                    (
                        "sampling/createMessage",
                        json!({"messages":[{"role":"user","content":{"type":"text","text":"hi"}}],
                               "maxTokens": 5}),
                    )
                };
                let res = self
                    .server
                    .request_input(Millis(self.now), &task, method, params);
                self.transcript
                    .push_str(&format!("server request_input -> {res:?}\n"));
                self.after_server();
            }
            19 => {
                if !self.server_inbox.is_empty() {
                    let request = r.pick(&self.server_inbox)?.clone();
                    let res = self.server.respond(
                        Millis(self.now),
                        &request,
                        Ok(json!({"content":[{"type":"text","text":"plain"}]})),
                    );
                    self.transcript
                        .push_str(&format!("server respond -> {res:?}\n"));
                    self.server_inbox.retain(|p| p != &request);
                    self.after_server();
                } else {
                    let task = self.pick_server_task(r)?;
                    let res = self.server.notify_progress(
                        Millis(self.now),
                        ProgressTarget::Task(&task),
                        f64::from(r.u8()?),
                        None,
                        None,
                    );
                    self.transcript
                        .push_str(&format!("server progress -> {res:?}\n"));
                    self.after_server();
                }
            }
            20 | 21 => {
                let delta = match r.below(4)? {
                    0 => u64::from(r.u8()?),
                    1 => u64::from(r.u16()?),
                    2 => u64::from(r.u8()?) * 1000,
                    _ => u64::from(r.u16()?) * 100,
                };
                self.advance(self.now + delta);
            }
            22 => {
                let next = [self.client.poll_timeout(), self.server.poll_timeout()]
                    .into_iter()
                    .flatten()
                    .min();
                if let Some(at) = next {
                    self.advance(at.0.max(self.now));
                }
            }
            _ => {
                if self.faults.restart && r.one_in(3)? {
                    self.restart(r.bool()?);
                }
            }
        }
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
            self.transcript.push_str(&format!("c>s {line}\n"));
            self.s_ledger.inbound(line.as_bytes(), true);
            self.server.handle_bytes(now, &framed);
            self.after_server();
        } else {
            self.transcript.push_str(&format!("s>c {line}\n"));
            self.c_ledger.inbound(line.as_bytes(), true);
            self.client.handle_bytes(now, &framed);
            self.after_client();
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
        self.transcript
            .push_str(&format!("time {}\n", self.now - EPOCH));
        self.client.handle_timeout(now);
        assert_no_busy_loop(&self.client, "client");
        self.after_client();
        self.server.handle_timeout(now);
        assert_no_busy_loop(&self.server, "server");
        self.after_server();
    }

    /// One side restarts: the survivor sees EOF; then both sides reconnect from scratch.
    fn restart(&mut self, client_restarts: bool) {
        let now = Millis(self.now);
        self.transcript
            .push_str(&format!("restart client={client_restarts}\n"));
        self.c2s.clear();
        self.s2c.clear();
        if client_restarts {
            self.server.handle_eof(now);
            let out = self.drain_server();
            assert!(out.sends.is_empty(), "invariant: closing sends nothing");
            self.absorb_server(out);
        } else {
            self.client.handle_eof(now);
            let out = self.drain_client();
            assert!(out.sends.is_empty(), "invariant: closing sends nothing");
            self.absorb_client(out);
            for (task, c) in &self.created {
                assert_eq!(
                    c.results, 1,
                    "invariant: on close, task {task:?} gets exactly one TaskResult"
                );
            }
        }
        self.incarnation += 1;
        let (client, server) = connect(&self.ccfg, &self.scfg, self.incarnation, self.now);
        self.client = client;
        self.server = server;
        self.c_ledger = Ledger::default();
        self.s_ledger = Ledger::default();
        self.c_watch = TaskWatch::requestor();
        self.s_watch = TaskWatch::receiver();
        self.created.clear();
        self.client_inbox.clear();
        self.server_inbox.clear();
        self.outcomes.clear();
        self.app_gets.clear();
        self.last_poll.clear();
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
                + self.client.remote_task_ids().len()
                + self.created.len()
                + self.client_inbox.len()
                + self.server_inbox.len(),
        )
    }

    fn drain_server(&mut self) -> Drained {
        let bound = self.bound();
        drain(
            &mut self.server,
            "server",
            self.schema,
            bound,
            &mut self.transcript,
        )
    }

    fn drain_client(&mut self) -> Drained {
        let bound = self.bound();
        drain(
            &mut self.client,
            "client",
            self.schema,
            bound,
            &mut self.transcript,
        )
    }

    fn after_server(&mut self) {
        let out = self.drain_server();
        self.absorb_server(out);
        self.check_server();
    }

    fn after_client(&mut self) {
        let out = self.drain_client();
        self.absorb_client(out);
        self.check_client();
    }

    fn check_result_schema(&self, method: Option<&str>, msg: &Msg) {
        if let (Some(method), Msg::Result { result, .. }, Schema::Full) = (method, msg, self.schema)
        {
            if let Some(definition) = check::result_definition(method, result) {
                crate::schema::check(definition, result)
                    .unwrap_or_else(|e| panic!("invariant: {method} answer: {e}"));
            }
        }
    }

    fn absorb_server(&mut self, out: Drained) {
        let now = self.server.now().0;
        for (line, msg) in out.sends {
            let answered = self.s_ledger.outbound(&msg);
            self.check_result_schema(answered.as_deref(), &msg);
            for (task, fresh) in check::tasks_in(&msg, answered.as_deref()) {
                self.s_watch
                    .observe(&task, now, fresh)
                    .unwrap_or_else(|e| panic!("invariant (server view): {e}"));
            }
            self.s2c.push(line);
        }
        for event in out.events {
            match event {
                Event::ToolCall {
                    request,
                    task: None,
                    ..
                } => self.server_inbox.push(request),
                Event::RequestCancelled { request, .. } => {
                    self.server_inbox.retain(|p| p != &request);
                }
                Event::StopTask {
                    task,
                    reason: taskwire_engine::StopReason::Cancelled,
                } => {
                    self.outcomes.insert(task, Outcome::Cancelled);
                }
                _ => {}
            }
        }
    }

    fn absorb_client(&mut self, out: Drained) {
        let now = self.client.now().0;
        for (line, msg) in out.sends {
            let answered = self.c_ledger.outbound(&msg);
            self.check_result_schema(answered.as_deref(), &msg);
            if let Msg::Request { id, method, params } = &msg {
                if method == "tasks/get" && !self.app_gets.contains(&id_key(id).expect("valid")) {
                    let task = params
                        .as_ref()
                        .and_then(|p| p["taskId"].as_str())
                        .expect("taskId");
                    let min = self.ccfg.polling.min_interval_ms;
                    if let Some(&last) = self.last_poll.get(task) {
                        assert!(
                            now >= last + min,
                            "invariant: client polled {task:?} after {} ms, minimum {min}",
                            now - last
                        );
                    }
                    self.last_poll.insert(task.to_owned(), now);
                }
            }
            self.c2s.push(line);
        }
        for event in out.events {
            match event {
                Event::TaskCreated { task, .. } => {
                    let view = serde_json::to_value(&task).expect("task serializes");
                    self.c_watch
                        .observe(&view, now, false)
                        .unwrap_or_else(|e| panic!("invariant (client view): {e}"));
                    self.last_poll.insert(task.task_id.clone(), now);
                    let fresh = self
                        .created
                        .insert(task.task_id.clone(), Created::default());
                    assert!(
                        fresh.is_none(),
                        "invariant: task {} created twice",
                        task.task_id
                    );
                }
                Event::TaskStatus { task } => {
                    let view = serde_json::to_value(&task).expect("task serializes");
                    self.c_watch
                        .observe(&view, now, false)
                        .unwrap_or_else(|e| panic!("invariant (client view): {e}"));
                    assert!(
                        self.created.contains_key(&task.task_id),
                        "invariant: status event for a task the client did not create"
                    );
                }
                Event::TaskResult { task, outcome } => {
                    let c = self.created.get_mut(&task).unwrap_or_else(|| {
                        panic!("invariant: TaskResult for {task:?}, which the client never created")
                    });
                    c.results += 1;
                    assert_eq!(c.results, 1, "invariant: TaskResult for {task:?} twice");
                    c.outcome = Some(outcome);
                }
                Event::Request {
                    request,
                    method,
                    task: None,
                    ..
                } => self.client_inbox.push((request, method)),
                Event::RequestCancelled { request, .. } => {
                    self.client_inbox.retain(|(p, _)| p != &request);
                }
                _ => {}
            }
        }
    }

    fn check_server(&mut self) {
        let now = self.server.now().0;
        assert!(
            self.server.hosted_task_count() <= self.scfg.tasks.max_tasks,
            "invariant: live tasks exceed the cap"
        );
        for id in self.s_watch.ids() {
            match self.server.hosted_task(&id) {
                Some(task) => {
                    let view = serde_json::to_value(task).expect("task serializes");
                    self.s_watch
                        .observe(&view, now, false)
                        .unwrap_or_else(|e| panic!("invariant (server view): {e}"));
                    let due = self.server.poll_timeout().is_some_and(|at| at.0 <= now);
                    assert!(
                        !self.s_watch.is_expired(&id, now) || due,
                        "invariant: task {id:?} outlived its ttl"
                    );
                }
                None => assert!(
                    self.s_watch.is_expired(&id, now),
                    "invariant: task {id:?} vanished before its ttl ran out"
                ),
            }
        }
    }

    fn check_client(&mut self) {
        let now = self.client.now().0;
        let ids: Vec<String> = self
            .client
            .remote_task_ids()
            .into_iter()
            .map(str::to_owned)
            .collect();
        for id in ids {
            if let Some(task) = self.client.remote_task(&id) {
                let view = serde_json::to_value(task).expect("task serializes");
                self.c_watch
                    .observe(&view, now, false)
                    .unwrap_or_else(|e| panic!("invariant (client view): {e}"));
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
        self.transcript
            .push_str(&format!("client respond -> {res:?}\n"));
        self.client_inbox.retain(|(p, _)| p != &request);
        self.after_client();
        Some(())
    }

    fn pick_client_task(&mut self, r: &mut Reader) -> Option<String> {
        let ids: Vec<String> = self.created.keys().cloned().collect();
        if !ids.is_empty() && r.below(8)? != 0 {
            Some(r.pick(&ids)?.clone())
        } else {
            Some(format!("i{}-task-{}", self.incarnation, r.u8()?))
        }
    }

    fn pick_server_task(&mut self, r: &mut Reader) -> Option<String> {
        let ids = self.s_watch.ids();
        if !ids.is_empty() && r.below(8)? != 0 {
            Some(r.pick(&ids)?.clone())
        } else {
            Some(format!("i{}-task-{}", self.incarnation, r.u8()?))
        }
    }

    fn server_task_live(&self, task: &str) -> bool {
        self.server
            .hosted_task(task)
            .is_some_and(|t| !t.status.is_terminal())
    }

    // ---- the end ---------------------------------------------------------------------------------

    /// How long until every followed task has been polled at least once.
    fn window(&self) -> u64 {
        let polling = self.ccfg.polling;
        polling.max_interval_ms.max(polling.min_interval_ms)
            + self.ccfg.request_timeout_ms.unwrap_or(0)
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

    fn finish(&mut self) {
        // Faults stop; both applications answer what they were asked.
        self.settle();
        for (request, method) in std::mem::take(&mut self.client_inbox) {
            let _ = self
                .client
                .respond(Millis(self.now), &request, Ok(client_reply(&method)));
            self.after_client();
        }
        for request in std::mem::take(&mut self.server_inbox) {
            let reply = Ok(json!({"content":[{"type":"text","text":"plain"}]}));
            let _ = self.server.respond(Millis(self.now), &request, reply);
            self.after_server();
        }
        let followed: Vec<String> = self.created.keys().cloned().collect();
        for task in &followed {
            let _ = self.client.set_auto_poll(task, true);
        }
        self.after_client();
        self.settle();

        // The wire goes quiet: the client's view converges to the server's.
        self.run_quietly(self.window());
        let now = self.now;
        let ids: Vec<String> = self
            .client
            .remote_task_ids()
            .into_iter()
            .map(str::to_owned)
            .collect();
        for id in &ids {
            let client_view = self.client.remote_task(id).cloned();
            let server_view = self.server.hosted_task(id);
            match (client_view, server_view) {
                (Some(c), Some(s)) => assert_eq!(
                    c, s,
                    "invariant: once quiet, the client's view of {id:?} equals the server's"
                ),
                (Some(c), None) => {
                    let born = check::timestamp_ms(&c.created_at).expect("timestamp");
                    assert!(
                        check::expired(born, c.ttl, now),
                        "invariant: the client follows {id:?}, which the server lost before its ttl"
                    );
                }
                (None, _) => {}
            }
        }

        // Every task finishes; without loss, each gets exactly its outcome.
        for id in self.s_watch.ids() {
            if self.server_task_live(&id) {
                let result = json!({"content":[{"type":"text","text":"final"}]});
                self.server
                    .complete_task(Millis(self.now), &id, result.clone())
                    .expect("invariant: a live task can be completed");
                self.outcomes
                    .insert(id.clone(), Outcome::Result(with_meta(result, &id)));
                self.after_server();
            }
        }
        for (request, method) in std::mem::take(&mut self.client_inbox) {
            let _ = self
                .client
                .respond(Millis(self.now), &request, Ok(client_reply(&method)));
            self.after_client();
        }
        self.run_quietly(self.window());
        self.s_ledger.assert_all_answered("server at the end");
        if !self.client.is_closed() {
            self.c_ledger.assert_all_answered("client at the end");
        }
        if self.lossy || self.client.is_closed() {
            return;
        }
        for (task, c) in &self.created {
            assert_eq!(
                c.results, 1,
                "invariant: task {task:?} ends with exactly one TaskResult"
            );
            let gone = self.server.hosted_task(task).is_none();
            let outcome = c.outcome.as_ref().expect("counted");
            match (outcome, self.outcomes.get(task)) {
                (Err(e), _) if gone && e.code == -32602 => {}
                (Ok(v), Some(Outcome::Result(want))) => {
                    assert_eq!(v, want, "invariant: task {task:?} result is the app's")
                }
                (Err(e), Some(Outcome::Error(want))) => {
                    assert_eq!(e, want, "invariant: task {task:?} error is the app's")
                }
                (Err(e), Some(Outcome::Cancelled)) if e.code == -32602 => {}
                (got, want) => {
                    panic!(
                        "invariant: task {task:?} ended with {got:?}, the server decided {want:?}"
                    )
                }
            }
        }
        let left = self.client.remote_task_ids();
        assert!(
            left.is_empty(),
            "invariant: finished tasks are forgotten by the client: {left:?}"
        );
    }
}

/// A fresh client and server for incarnation `n` (task ids `i{n}-task-{k}`).
fn connect(ccfg: &Config, scfg: &Config, n: u32, now: u64) -> (Session, Session) {
    let now = Millis(now);
    let client = Session::client(ccfg.clone(), Box::new(|| "client-task".to_owned()), now);
    let mut k = 0u64;
    let ids = Box::new(move || {
        k += 1;
        format!("i{n}-task-{k}")
    });
    let mut server = Session::server(scfg.clone(), ids, now);
    add_tools(&mut server);
    (client, server)
}

/// What a client application answers to a server's input request.
fn client_reply(method: &str) -> Value {
    match method {
        "sampling/createMessage" => json!({"role":"assistant",
            "content":{"type":"text","text":"ok"},"model":"fuzz"}),
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
