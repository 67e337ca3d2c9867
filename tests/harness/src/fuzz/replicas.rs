//! Body 6: two server hosts sharing one task store as replicas (`a` and `b`, which holds at
//! most three finished tasks, letting older ones go), each with one 2025-11-25 session of
//! the same owner. The store is a model in memory that applies each
//! host's journal as the PostgreSQL store does (a finished task is never changed; the
//! change that came too late is refused, and the rest of its batch is stored) and reports
//! each stored change to the other host ([`Host::sync`]) late, out of order or twice, as a
//! store's notifications may arrive. Operations: tasks made on either host;
//! `tasks/get|cancel|result|list` on either, about any task; the work's outcome and status
//! message on the host running it; writes (stored and confirmed; refused in part, each
//! refused entry with the task as stored, which the host takes (`Host::refuse_journal`); or
//! failed and kept for the next one), deliveries of changes, fetches of a stored task, a stored task taken over
//! (`Host::adopt`, as when the other's lease ran out; here the other runs on, as a replica cut
//! off from the database does), a running task's work handed off (`Host::hand_off`, as a
//! front does: queued, attempt 0, for the other to claim with `Host::adopt`), a claim let go
//! (`Host::release`, as when the store says another host claimed the task; the store then
//! refuses that host's changes of it, as the fencing token makes PostgreSQL do), and time.
//!
//! Invariants:
//! - no panic; every message is valid JSON-RPC 2.0, labelled as what it is, and goes to the
//!   host's session; no request is answered twice, and by the end every one is answered
//!   (a parked `tasks/result` when the task ends, here or on the other host);
//! - each host's view of a task follows the transition table (a terminal task never
//!   changes); the store never changes a finished task;
//! - work runs only where the task was made or taken over: a task a host learnt of from the
//!   store, handed off or let go never runs there ([`Host::runs_here`]) until it takes it
//!   over, and then runs there, with one `Event::Restored` (`Event::Claimed` for queued work)
//!   whose attempt is one more than the store's; a call handed off or let go takes no answer;
//! - a host whose change the store refused shows the task as stored at once (its requests
//!   about it answered from it), and once every write is done and every change delivered,
//!   each host holding a stored task shows the stored status;
//! - the same input gives an identical transcript (the body runs twice).
//!
//! Messages are checked structurally here, not against the JSON schema (the other bodies do
//! that for the same encoders).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{json, Value};
use taskwire_engine::{
    CallId, Change, Durability, Event, Host, JournalEntry, Millis, Output, Role, RpcError,
    SessionId, TaskSnapshot, TaskStatus,
};

use super::check::{self, Class, Schema};
use super::reader::Reader;
use super::{add_tools, config, tline, Record, Transcript, EPOCH};

/// Operations per run.
const MAX_STEPS: usize = 96;

/// How often the replica invariants were exercised (since the process started): the seeded
/// loop asserts each is reached.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Stored changes a replica applied ([`Host::sync`]) that moved its view of a task.
    pub moved: usize,
    /// Changes the store refused (the task had finished through the other replica).
    pub refused: usize,
    /// Tasks held by both replicas compared with the store once everything was delivered.
    pub compared: usize,
    /// Tasks taken over whose work started again ([`Host::adopt`]).
    pub adopted: usize,
    /// Tasks whose work was handed off ([`Host::hand_off`]).
    pub handed_off: usize,
    /// Claims let go ([`Host::release`]).
    pub released: usize,
}

static STATS: [AtomicUsize; 6] = [const { AtomicUsize::new(0) }; 6];

fn count(i: usize, n: usize) {
    STATS[i].fetch_add(n, Ordering::Relaxed);
}

/// How often the replica invariants were exercised so far in this process.
pub fn stats() -> Stats {
    let n = |i: usize| STATS[i].load(Ordering::Relaxed);
    Stats {
        moved: n(0),
        refused: n(1),
        compared: n(2),
        adopted: n(3),
        handed_off: n(4),
        released: n(5),
    }
}

/// Runs the body on one input (the libFuzzer target).
pub fn run(data: &[u8]) {
    run_with(data, Schema::Sampled);
}

/// Runs the body on one input, twice when `schema` asks for the determinism check.
pub fn run_with(data: &[u8], schema: Schema) {
    super::twice(data, schema, drive);
}

/// One replica: its host, its session, and what the harness knows of it.
struct Replica {
    name: &'static str,
    host: Host,
    session: SessionId,
    /// Journal entries not written yet, in order.
    pending: Vec<JournalEntry>,
    /// Running work: each call and its task.
    calls: Vec<(CallId, String)>,
    /// The tasks whose work runs here: made here, or taken over.
    made: BTreeSet<String>,
    /// Tasks whose work started again here (`Event::Restored`), with the attempt.
    restored: Vec<(String, Option<u32>)>,
    /// The last status shown of each task held.
    views: BTreeMap<String, TaskStatus>,
    /// Tasks whose change from here the store refused with no stored version to take (it
    /// was gone): their view here may differ from the store's.
    refused: BTreeSet<String>,
    /// Requests sent, and those answered.
    asked: BTreeSet<i64>,
    answered: BTreeSet<i64>,
}

impl Replica {
    fn new(name: &'static str) -> Replica {
        let now = Millis(EPOCH);
        let mut n = 0u64;
        let ids = Box::new(move || {
            n += 1;
            format!("{name}-{n}")
        });
        let mut host = Host::new(config(name), ids, now);
        add_tools(&mut host);
        host.set_durability(now, Durability::Confirmed)
            .expect("a new host takes its durability");
        if name == "b" {
            // As a process reading its tasks back from the store: few finished ones held.
            host.set_keep_finished(now, Some(3))
                .expect("a new host takes its bound");
        }
        let session = host
            .open(now, Role::Server, "owner")
            .expect("the host takes sessions");
        let mut replica = Replica {
            name,
            host,
            session,
            pending: Vec::new(),
            calls: Vec::new(),
            made: BTreeSet::new(),
            restored: Vec::new(),
            views: BTreeMap::new(),
            refused: BTreeSet::new(),
            asked: BTreeSet::new(),
            answered: BTreeSet::new(),
        };
        replica.send(
            0,
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "fuzz", "version": "1"}}),
        );
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        replica
            .host
            .handle_message(now, session, &super::line(&initialized))
            .expect("the host takes input");
        replica
    }

    /// Sends request `id` on the session.
    fn send(&mut self, id: i64, method: &str, params: Value) {
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.asked.insert(id);
        let now = self.host.now();
        self.host
            .handle_message(now, self.session, &super::line(&message))
            .expect("the host takes input");
    }

    /// Takes every output: messages checked, work and journal entries noted.
    fn drain(&mut self, t: &mut Transcript) {
        while let Some(output) = self.host.poll_output() {
            match output {
                Output::Send(sent) => {
                    tline!(t, "{} > {}", self.name, sent.message);
                    assert_eq!(sent.session, self.session, "invariant: sent to no session");
                    let msg = check::parse_output(sent.message).unwrap_or_else(|e| {
                        panic!("invariant: {} sent an invalid message: {e}", self.name)
                    });
                    check::check_kind(&sent.kind, &msg).unwrap_or_else(|e| {
                        panic!("invariant: {} mislabelled a message: {e}", self.name)
                    });
                    if matches!(msg.class, Class::Result | Class::Error { .. }) {
                        let id = msg.id().and_then(Value::as_i64).expect("an answered id");
                        assert!(
                            self.asked.contains(&id) && self.answered.insert(id),
                            "invariant: {} answered {id}, which nobody is owed: {}",
                            self.name,
                            msg.line
                        );
                    }
                }
                Output::Event(Event::ToolCall(call)) => {
                    tline!(t, "{} ! tool call {:?}", self.name, call.task);
                    if let Some(task) = call.task {
                        self.made.insert(task.to_string());
                        self.calls.push((call.call, task.to_string()));
                    }
                }
                Output::Event(Event::Claimed {
                    call,
                    task,
                    request,
                }) => {
                    tline!(t, "{} ! claimed {task}", self.name);
                    self.made.insert(task.to_string());
                    self.calls.push((call, task.to_string()));
                    self.restored
                        .push((task.to_string(), Some(request.attempt)));
                }
                Output::Event(Event::Restored {
                    call,
                    task,
                    request,
                }) => {
                    let attempt = request.map(|r| r.attempt);
                    tline!(t, "{} ! restored {task} attempt {attempt:?}", self.name);
                    self.made.insert(task.to_string());
                    self.calls.push((call, task.to_string()));
                    self.restored.push((task.to_string(), attempt));
                }
                Output::Event(Event::Stop { call, .. }) => {
                    self.calls.retain(|(c, _)| *c != call);
                }
                Output::Event(_) => {}
                Output::Journal(entry) => {
                    tline!(t, "{} journal {}", self.name, entry.seq);
                    self.pending.push(entry);
                }
                other => panic!("an output this harness does not know: {other:?}"),
            }
        }
    }

    /// Checks each task's view against the last one, and that synced work never runs here.
    fn check_views(&mut self, universe: &BTreeSet<String>) {
        for id in universe {
            let Some(task) = self.host.task(id) else {
                self.views.remove(id);
                continue;
            };
            let now = task.info.status;
            if let Some(&before) = self.views.get(id) {
                assert!(
                    now == before || before.can_become(now),
                    "invariant: {} showed {id} going {before} -> {now}",
                    self.name
                );
            }
            self.views.insert(id.clone(), now);
            assert!(
                self.made.contains(id) || !self.host.runs_here(id),
                "invariant: {} runs {id}, which it learnt of from the store",
                self.name
            );
        }
    }
}

/// The shared store: each task as last stored.
#[derive(Default)]
struct Store {
    tasks: BTreeMap<String, TaskSnapshot>,
    /// (replica, task): the replica let its claim on the task go; its changes of it are
    /// refused (the fencing token) until it claims the task again.
    fenced: BTreeSet<(usize, String)>,
}

impl Store {
    /// Applies replica `x`'s `entries`; returns the tasks they changed and the entries
    /// refused, with their task.
    fn write(&mut self, x: usize, entries: &[JournalEntry]) -> (Vec<String>, Vec<(u64, String)>) {
        let (mut changed, mut refused) = (Vec::new(), Vec::new());
        for entry in entries {
            if self.fenced.contains(&(x, entry.change.task().to_string()))
                && !matches!(entry.change, Change::Delete { .. })
            {
                refused.push((entry.seq, entry.change.task().to_string()));
                continue;
            }
            match &entry.change {
                Change::Put(task) => {
                    let id = task.info.id.to_string();
                    let finished = self
                        .tasks
                        .get(&id)
                        .is_some_and(|stored| stored.info.status.is_terminal());
                    if finished {
                        refused.push((entry.seq, id));
                    } else {
                        self.tasks.insert(id.clone(), task.clone());
                        changed.push(id);
                    }
                }
                Change::Message { task, message, at } => {
                    if let Some(stored) = self.tasks.get_mut(task.as_str()) {
                        if !stored.info.status.is_terminal() {
                            stored.info.status_message = message.clone();
                            stored.info.last_updated_at = *at;
                            changed.push(task.to_string());
                        }
                    }
                }
                Change::Delete { task, .. } => {
                    self.tasks.remove(task.as_str());
                }
                other => panic!("a change this harness does not know: {other:?}"),
            }
        }
        (changed, refused)
    }
}

/// Both replicas, the store, and the changes on their way to a replica.
struct World {
    replicas: [Replica; 2],
    store: Store,
    /// (to which replica, which task): a stored change not yet heard there.
    deliveries: Vec<(usize, String)>,
    universe: BTreeSet<String>,
    next_id: i64,
    now: Millis,
    t: Transcript,
}

impl World {
    fn settle(&mut self) {
        for replica in &mut self.replicas {
            replica.drain(&mut self.t);
            for entry in &replica.pending {
                if let Change::Put(task) = &entry.change {
                    self.universe.insert(task.info.id.to_string());
                }
            }
        }
        for replica in &mut self.replicas {
            replica.check_views(&self.universe);
        }
        for task in self.store.tasks.values() {
            self.universe.insert(task.info.id.to_string());
        }
    }

    /// Writes replica `x`'s pending entries: stored and confirmed, or (`fail`) refused by
    /// a failing store and kept for the next write.
    fn write(&mut self, x: usize, fail: bool) {
        let replica = &mut self.replicas[x];
        let Some(last) = replica.pending.last().map(|e| e.seq) else {
            return;
        };
        if fail {
            tline!(self.t, "{} write fails", replica.name);
            replica
                .host
                .fail_journal(self.now, last, &RpcError::internal("the store is down"));
            return;
        }
        let entries = std::mem::take(&mut replica.pending);
        let before: BTreeMap<String, TaskStatus> = self
            .store
            .tasks
            .iter()
            .map(|(id, t)| (id.clone(), t.info.status))
            .collect();
        let (changed, refused) = self.store.write(x, &entries);
        for (id, task) in &self.store.tasks {
            if let Some(&was) = before.get(id) {
                assert!(
                    !was.is_terminal() || task.info.status == was,
                    "invariant: the store changed finished task {id}"
                );
            }
        }
        tline!(
            self.t,
            "{} wrote {last}: {changed:?}, refused {refused:?}",
            replica.name
        );
        count(1, refused.len());
        if refused.is_empty() {
            replica.host.confirm(self.now, last);
        } else {
            // As the PostgreSQL store does: each refused entry with the task as stored, which
            // the host takes, answering the requests about it from it.
            let errors: Vec<(u64, RpcError)> = refused
                .iter()
                .map(|(seq, _)| (*seq, RpcError::internal("refused by the store")))
                .collect();
            let tasks: BTreeSet<&String> = refused.iter().map(|(_, task)| task).collect();
            let stored: Vec<TaskSnapshot> = tasks
                .iter()
                .filter_map(|task| self.store.tasks.get(*task).cloned())
                .collect();
            replica
                .host
                .refuse_journal(self.now, last, &errors, stored.clone());
            for task in &stored {
                let id = task.info.id.as_str();
                // Its view becomes the store's, whatever it showed.
                replica.views.remove(id);
                if let Some(held) = replica.host.task(id) {
                    assert_eq!(
                        held.info.status, task.info.status,
                        "invariant: {} took {id} as stored, yet shows it otherwise",
                        replica.name
                    );
                }
            }
            // Refused with no stored version (the task is gone): its own view may stay.
            replica.refused.extend(
                tasks
                    .into_iter()
                    .filter(|task| !self.store.tasks.contains_key(*task))
                    .cloned(),
            );
        }
        for task in changed {
            self.deliveries.push((1 - x, task));
        }
    }

    /// Replica `to` hears the stored state of `task` (nothing when it is no longer stored).
    fn deliver(&mut self, to: usize, task: &str) {
        if let Some(stored) = self.store.tasks.get(task) {
            tline!(self.t, "{} syncs {task}", self.replicas[to].name);
            let host = &mut self.replicas[to].host;
            let before = host.task(task).map(|t| t.info.status);
            host.sync(self.now, stored.clone())
                .expect("the host takes input");
            if host.task(task).map(|t| t.info.status) != before {
                count(0, 1);
            }
        }
    }

    /// Replica `x` takes over the stored `task`: its work runs there again, one attempt more
    /// than stored, unless it ended, expired or runs there already.
    fn adopt(&mut self, x: usize, task: &str) {
        let Some(stored) = self.store.tasks.get(task).cloned() else {
            return;
        };
        self.store.fenced.remove(&(x, task.to_owned()));
        let replica = &mut self.replicas[x];
        tline!(self.t, "{} takes over {task}", replica.name);
        let ran_here = replica.host.runs_here(task);
        let attempt = stored.request.as_ref().map(|r| r.attempt + 1);
        (replica.host.adopt(self.now, stored)).expect("the host takes input");
        replica.drain(&mut self.t);
        let restored = std::mem::take(&mut replica.restored);
        let live = (replica.host.task(task)).is_some_and(|t| !t.info.status.is_terminal());
        if live && !ran_here {
            assert!(
                replica.host.runs_here(task),
                "invariant: {} took over {task} but does not run it",
                replica.name
            );
            assert_eq!(
                restored,
                [(task.to_owned(), attempt)],
                "invariant: {} took over {task}: one restart, one attempt more than stored",
                replica.name
            );
            count(3, 1);
        } else {
            assert!(
                restored.is_empty(),
                "invariant: {} restarted {task}, which ended or ran there: {restored:?}",
                replica.name
            );
        }
    }

    /// Replica `x` hands the work of one of its running tasks off (a front's queue): the task
    /// stays, its call is over there.
    fn hand_off(&mut self, x: usize, r: &mut Reader) -> Option<()> {
        let replica = &mut self.replicas[x];
        if replica.calls.is_empty() {
            return Some(());
        }
        let (call, task) = replica.calls[r.index(replica.calls.len())?].clone();
        tline!(self.t, "{} hands {task} off", replica.name);
        if replica
            .host
            .hand_off(self.now, call, Some("queued".into()))
            .is_err()
        {
            // A cancelled task's work: nothing to hand off.
            return Some(());
        }
        replica.calls.retain(|(c, _)| *c != call);
        replica.made.remove(&task);
        assert!(
            !replica.host.runs_here(&task),
            "invariant: {} handed {task} off but runs it",
            replica.name
        );
        let answered = replica
            .host
            .respond(self.now, call, Ok(json!({"content": []})));
        assert!(
            answered.is_err(),
            "invariant: {} took an answer on a call it handed off",
            replica.name
        );
        count(4, 1);
        Some(())
    }

    /// Replica `x` lets its claim on a task whose work it runs go (the store says another
    /// host claimed it): the work stops there, the task becomes what is stored, and the store
    /// refuses that replica's changes of it from now on.
    fn release(&mut self, x: usize, r: &mut Reader) -> Option<()> {
        let replica = &mut self.replicas[x];
        if replica.calls.is_empty() {
            return Some(());
        }
        let (call, task) = replica.calls[r.index(replica.calls.len())?].clone();
        let Some(stored) = self.store.tasks.get(&task).cloned() else {
            return Some(());
        };
        // Its work may be over already (answered, or the task ended).
        if replica.host.task_call(&task) != Some(call) || !replica.host.runs_here(&task) {
            return Some(());
        }
        tline!(self.t, "{} lets {task} go", replica.name);
        self.store.fenced.insert((x, task.clone()));
        (replica.host.release(self.now, stored)).expect("the host takes input");
        replica.drain(&mut self.t);
        replica.made.remove(&task);
        assert!(
            !replica.calls.iter().any(|(c, _)| *c == call),
            "invariant: {} let {task} go but its work was not stopped",
            replica.name
        );
        assert!(
            !replica.host.runs_here(&task),
            "invariant: {} let {task} go but runs it",
            replica.name
        );
        count(5, 1);
        Some(())
    }

    /// A task id to ask about: any task seen, or one nobody made.
    fn some_task(&self, r: &mut Reader) -> Option<String> {
        let known: Vec<&String> = self.universe.iter().collect();
        if known.is_empty() || r.one_in(8)? {
            return Some("nobody-1".to_owned());
        }
        Some(r.pick(&known)?.to_string())
    }

    fn step(&mut self, r: &mut Reader) -> Option<()> {
        let x = r.below(2)?;
        let op = r.below(14)?;
        self.next_id += 1;
        let id = self.next_id;
        match op {
            0 | 1 => {
                let ttl = [json!(2_000), json!(60_000), Value::Null][r.below(3)?].clone();
                let mut task = json!({});
                if !ttl.is_null() {
                    task["ttl"] = ttl;
                }
                self.replicas[x].send(
                    id,
                    "tools/call",
                    json!({"name": "opt", "arguments": {}, "task": task}),
                );
            }
            2..=5 => {
                let method = ["tasks/get", "tasks/cancel", "tasks/result", "tasks/list"][op - 2];
                let params = if method == "tasks/list" {
                    json!({})
                } else {
                    json!({ "taskId": self.some_task(r)? })
                };
                self.replicas[x].send(id, method, params);
            }
            6 => {
                let replica = &mut self.replicas[x];
                if replica.calls.is_empty() {
                    return Some(());
                }
                let (call, _) = replica.calls[r.index(replica.calls.len())?].clone();
                let outcome = if r.bool()? {
                    Ok(json!({"content": [{"type": "text", "text": "done"}]}))
                } else {
                    Err(RpcError::internal("the work failed"))
                };
                // A cancelled task's answer is refused (`TaskFinished`): a race, not a bug.
                let _ = replica.host.respond(self.now, call, outcome);
            }
            7 => {
                let replica = &mut self.replicas[x];
                if let Some((call, _)) = replica.calls.first().cloned() {
                    let message = r.word()?;
                    let _ = replica.host.set_task_message(self.now, call, Some(message));
                }
            }
            8 => {
                let fail = r.one_in(4)?;
                self.write(x, fail);
            }
            9 => {
                if self.deliveries.is_empty() {
                    return Some(());
                }
                let at = r.index(self.deliveries.len())?;
                // Now and then a notification arrives twice.
                let (to, task) = if r.one_in(6)? {
                    self.deliveries[at].clone()
                } else {
                    self.deliveries.remove(at)
                };
                self.deliver(to, &task);
            }
            10 => {
                let task = self.some_task(r)?;
                if r.one_in(4)? {
                    self.adopt(x, &task);
                } else {
                    self.deliver(x, &task);
                }
            }
            12 => self.hand_off(x, r)?,
            13 => self.release(x, r)?,
            _ => {
                self.now = Millis(self.now.0 + u64::from(r.u16()?));
                for replica in &mut self.replicas {
                    replica
                        .host
                        .handle_timeout(self.now)
                        .expect("the host takes input");
                }
            }
        }
        self.settle();
        Some(())
    }

    /// Ends every work, writes everything, delivers everything; then checks that the
    /// replicas agree with the store, and that every request gets its answer once the tasks
    /// have expired.
    fn finish(&mut self) {
        for _ in 0..8 {
            for x in 0..2 {
                let calls = std::mem::take(&mut self.replicas[x].calls);
                for (call, _) in calls {
                    let done = Ok(json!({"content": []}));
                    let _ = self.replicas[x].host.respond(self.now, call, done);
                }
            }
            self.settle();
            for x in 0..2 {
                self.write(x, false);
            }
            for (to, task) in std::mem::take(&mut self.deliveries) {
                self.deliver(to, &task);
            }
            self.settle();
            let quiet = self
                .replicas
                .iter()
                .all(|r| r.pending.is_empty() && r.calls.is_empty());
            if quiet && self.deliveries.is_empty() {
                break;
            }
        }
        for (id, stored) in &self.store.tasks {
            if self.replicas.iter().all(|r| r.host.has_task(id)) {
                count(2, 1);
            }
            for replica in &self.replicas {
                let Some(held) = replica.host.task(id) else {
                    continue;
                };
                if replica.refused.contains(id) {
                    continue;
                }
                assert_eq!(
                    held.info.status, stored.info.status,
                    "invariant: once everything is delivered {} shows {id} {} but the store {}",
                    replica.name, held.info.status, stored.info.status
                );
            }
        }
        // Every task has ended; past every retention the expired ones are gone too.
        self.now = Millis(self.now.0 + 86_400_000);
        for replica in &mut self.replicas {
            replica
                .host
                .handle_timeout(self.now)
                .expect("the host takes input");
            replica.drain(&mut self.t);
            let owed: Vec<&i64> = replica.asked.difference(&replica.answered).collect();
            assert!(
                owed.is_empty(),
                "invariant: {} never answered {owed:?}",
                replica.name
            );
        }
    }
}

/// Runs the body once; its transcript.
pub fn drive(data: &[u8], record: Record) -> Transcript {
    let mut r = Reader::new(data);
    let mut world = World {
        replicas: [Replica::new("a"), Replica::new("b")],
        store: Store::default(),
        deliveries: Vec::new(),
        universe: BTreeSet::new(),
        next_id: 0,
        now: Millis(EPOCH),
        t: Transcript::new(record),
    };
    world.settle();
    let mut steps = 0;
    while !r.is_empty() && steps < MAX_STEPS {
        if world.step(&mut r).is_none() {
            break;
        }
        steps += 1;
    }
    world.finish();
    std::mem::replace(&mut world.t, Transcript::new(Record::Off))
}
