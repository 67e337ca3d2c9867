//! Body 3: a client host and a server host over an in-memory wire with faults, and a
//! second client of another owner on the same server.
//!
//! Three hosts: alice's client, the server (one session for alice, one for bob), and
//! bob's client. Alice's wire may drop, duplicate and reorder messages (the input picks
//! which faults the run may use); bob's wire is reliable. Operations: deliveries (in
//! order, out of order, duplicated), drops, time advances, restarts (alice's client
//! restarts: the server sees EOF on alice's session, keeps her tasks, and a new session
//! of hers connects; or the server restarts: both clients see EOF and reconnect to a new
//! server), and the applications' commands in both directions of task hosting:
//! - the clients call tools as tasks (the server hosts them): `tasks/get`,
//!   `tasks/cancel`, `tasks/result`, `tasks/list`, auto-poll on/off, answering the
//!   server's input requests; the server application answers, fails, updates, asks for
//!   input and answers plain calls through call handles;
//! - the server sends task-augmented `sampling/createMessage` to alice's client (the
//!   client hosts the task), and the client application answers it;
//! - bob probes alice's tasks by id (`tasks/get|result|cancel`, `tasks/list`).
//!
//! Invariants, besides everything the single-host checks cover (validity, labels, schema
//! as the [oracle](super::check::Oracle) samples it, exactly-one answers on every session,
//! transition table on the hosts' and the requestors' views, bounded outputs, no busy
//! loop, determinism):
//! - isolation: nothing the server sends on one owner's session names a task of the
//!   other; bob's probes of alice's tasks get `-32602`, reach nothing of alice's (no
//!   message on her session, no change to her tasks), and his `tasks/list` shows only his
//!   own; bob's client never follows a task of alice's;
//! - a requestor never polls a task sooner than its minimum interval;
//! - a requestor reports at most one `TaskResult` per task, and only for tasks it created;
//!   on close, every task still open gets exactly one;
//! - the server's tasks outlive alice's connection (her client restarting) until their
//!   ttl, and a restarted client can read them by id;
//! - once the wires are quiet, each requestor's view of each task it follows equals the
//!   host's (or the task has expired and the requestor's view says so by its ttl);
//! - without drops and duplicates, every task a requestor created ends with exactly one
//!   `TaskResult`, equal to what the host application supplied (or `-32602` once purged);
//!   bob's (reliable) tasks always.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{json, Value};
use taskwire_engine::era::v2025_11_25::RELATED_TASK;
use taskwire_engine::{
    CallId, Config, Event, Host, Millis, Role, RpcError, SessionId, StopReason, TaskInfo,
    TaskStatus,
};

use super::check::{
    self, id_key, output_bound, request_id_key, wire_info, wire_snapshot, IdKey, Ledger, Msg,
    Oracle, Schema, TaskWatch,
};
use super::reader::Reader;
use super::{
    add_tools, assert_no_busy_loop, config, tline, Drained, Out, Record, Transcript, EPOCH,
};

/// Runs the body on one input, sampling the schema oracle (the libFuzzer target).
pub fn run(data: &[u8]) {
    run_with(data, Schema::Sampled);
}

/// Runs the body on one input with the given oracle (twice when it asks for that).
pub fn run_with(data: &[u8], schema: Schema) {
    super::twice(data, schema, |d, record| drive(d, schema, record));
}

/// Operations per run.
const MAX_STEPS: usize = 128;

/// Runs the body once and returns its transcript, recorded as `record` says.
pub fn drive(data: &[u8], schema: Schema, record: Record) -> Transcript {
    let mut r = Reader::new(data);
    let Some(mut w) = World::new(&mut r, Oracle::new(schema, data), record) else {
        return Transcript::new(record);
    };
    let mut steps = 0;
    while !r.is_empty() && steps < MAX_STEPS {
        if w.step(&mut r).is_none() {
            break;
        }
        steps += 1;
    }
    w.finish();
    std::mem::replace(&mut w.transcript, Transcript::new(Record::Off))
}

/// The owners of the server's two sessions.
const ALICE: &str = "alice";
const BOB: &str = "bob";

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

/// The directions of task hosting: the server hosts alice's tasks, alice's client hosts
/// the server's sampling tasks, the server hosts bob's tasks.
const SERVER_HOSTS: usize = 0;
const CLIENT_HOSTS: usize = 1;
const BOB_HOSTS: usize = 2;

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
    /// The tasks the host holds, with the status fields last checked (`None`: not yet);
    /// a view is built and checked again only when they change.
    present: BTreeMap<String, Option<(TaskInfo, TaskStatus)>>,
    /// The requestor's views last checked.
    followed: BTreeMap<String, TaskInfo>,
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
            present: BTreeMap::new(),
            followed: BTreeMap::new(),
        }
    }

    /// A new requestor (its connection was replaced); the host's side stays.
    fn new_requestor(&mut self) {
        self.req_watch = TaskWatch::requestor();
        self.created.clear();
        self.app_gets.clear();
        self.last_poll.clear();
        self.followed.clear();
    }
}

/// The three hosts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Who {
    Client,
    Server,
    Other,
}

impl Who {
    fn name(self) -> &'static str {
        match self {
            Who::Client => "client",
            Who::Server => "server",
            Who::Other => "bob",
        }
    }
}

/// The four directions of the two wires.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Wire {
    C2S,
    S2C,
    O2S,
    S2O,
}

/// A probe of bob's: a request of his about a task, and whether it is alice's.
#[derive(Debug)]
struct Probe {
    method: &'static str,
    foreign: bool,
}

struct World {
    ccfg: Config,
    scfg: Config,
    client: Host,
    cs: SessionId,
    server: Host,
    ss: SessionId,
    ss2: SessionId,
    other: Host,
    os: SessionId,
    oracle: Oracle,
    faults: Faults,
    /// A drop or duplicate actually happened on alice's wire since her last connect.
    lossy: bool,
    /// Incarnations of alice's client and of the server (task ids carry them).
    cn: u32,
    sn: u32,
    now: u64,
    /// Messages in flight on each wire (already checked when sent).
    c2s: Vec<Msg>,
    s2c: Vec<Msg>,
    o2s: Vec<Msg>,
    s2o: Vec<Msg>,
    c_ledger: Ledger,
    s_ledger: Ledger,
    s2_ledger: Ledger,
    o_ledger: Ledger,
    hosting: [Hosting; 3],
    /// The owner of every task the server hosts (alice's or bob's).
    owner_of: BTreeMap<String, &'static str>,
    /// The call doing each hosted task's work, per host (server, alice's client).
    server_work: BTreeMap<String, CallId>,
    client_work: BTreeMap<String, CallId>,
    /// Plain requests each application must answer.
    server_inbox: Vec<CallId>,
    client_inbox: Vec<(CallId, String)>,
    bob_inbox: Vec<(CallId, String)>,
    probes: BTreeMap<IdKey, Probe>,
    transcript: Transcript,
    /// Requests sent since the last (re)connect (all may be settled at once on close).
    requests_sent: usize,
}

impl Drop for World {
    fn drop(&mut self) {
        super::dump_on_panic(&self.transcript);
    }
}

impl World {
    fn new(r: &mut Reader, oracle: Oracle, record: Record) -> Option<Self> {
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
        ccfg.polling.max_interval_ms = Some([1000, 10_000][usize::from((b1 >> 2) & 1)]);
        ccfg.polling.default_interval_ms = [500, 2000][usize::from((b1 >> 3) & 1)];
        ccfg.tasks.status_notifications = b1 & 16 == 0;
        ccfg.tasks.max_tasks = 1 + usize::from(b3 % 4);
        ccfg.tasks.default_ttl_ms = [None, Some(3000)][usize::from((b3 >> 2) & 1)];
        ccfg.tasks.poll_interval_ms = [None, Some(100)][usize::from((b3 >> 3) & 1)];
        let mut scfg = config("fuzz-server");
        scfg.request_timeout_ms = timeout;
        scfg.polling.min_interval_ms = [1, 100][usize::from((b3 >> 4) & 1)];
        scfg.polling.max_interval_ms = Some([1000, 10_000][usize::from((b3 >> 5) & 1)]);
        scfg.tasks.max_tasks = 1 + usize::from(b2 % 6);
        scfg.tasks.max_tasks_per_owner = 1 + usize::from((b2 >> 3) % 4);
        scfg.tasks.default_ttl_ms =
            [None, Some(2000), Some(60_000), Some(300_000)][usize::from((b2 >> 5) & 3)];
        scfg.tasks.max_ttl_ms = [None, Some(10_000)][usize::from((b3 >> 6) & 1)];
        scfg.tasks.poll_interval_ms = [None, Some(50), Some(500), Some(5000)]
            [usize::from(b2 >> 6 & 1) * 2 + usize::from(b3 >> 7)];
        scfg.tasks.status_notifications = b1 & 32 == 0;
        let now = Millis(EPOCH);
        let (client, cs) = client_host(&ccfg, "c0-ctask-", now);
        let (other, os) = client_host(&ccfg, "bob-ctask-", now);
        let mut server = server_host(&scfg, 0, now);
        let ss = server.open(now, Role::Server, ALICE);
        let ss2 = server.open(now, Role::Server, BOB);
        let mut w = World {
            ccfg,
            scfg,
            client,
            cs,
            server,
            ss,
            ss2,
            other,
            os,
            oracle,
            faults,
            lossy: false,
            cn: 0,
            sn: 0,
            now: EPOCH,
            c2s: Vec::new(),
            s2c: Vec::new(),
            o2s: Vec::new(),
            s2o: Vec::new(),
            c_ledger: Ledger::default(),
            s_ledger: Ledger::default(),
            s2_ledger: Ledger::default(),
            o_ledger: Ledger::default(),
            hosting: [Hosting::new(), Hosting::new(), Hosting::new()],
            owner_of: BTreeMap::new(),
            server_work: BTreeMap::new(),
            client_work: BTreeMap::new(),
            server_inbox: Vec::new(),
            client_inbox: Vec::new(),
            bob_inbox: Vec::new(),
            probes: BTreeMap::new(),
            transcript: Transcript::new(record),
            requests_sent: 0,
        };
        w.start(Who::Client);
        w.start(Who::Other);
        Some(w)
    }

    /// Sends a client's `initialize`.
    fn start(&mut self, who: Who) {
        let now = Millis(self.now);
        let (host, session) = match who {
            Who::Client => (&mut self.client, self.cs),
            _ => (&mut self.other, self.os),
        };
        host.initialize(now, session)
            .expect("a new client initializes");
        self.after(who);
    }

    fn step(&mut self, r: &mut Reader) -> Option<()> {
        match r.below(32)? {
            0..=3 => self.deliver(Wire::C2S, 0, false),
            4..=7 => self.deliver(Wire::S2C, 0, false),
            8 => self.fault(r)?,
            9 | 10 => {
                let name = ["opt", "req", "forb", "nope"][r.below(4)?];
                let ttl = [None, Some(500), Some(5000), Some(1_000_000)][r.below(4)?];
                let args = json!({"n": r.u8()?});
                let res = self
                    .client
                    .call_tool_as_task(Millis(self.now), self.cs, name, args, ttl);
                self.log(format_args!("client call_tool_as_task -> {res:?}"));
                self.after(Who::Client);
            }
            11 => {
                let name = ["opt", "forb"][r.below(2)?];
                let res = self
                    .client
                    .call_tool(Millis(self.now), self.cs, name, json!({}));
                self.log(format_args!("client call_tool -> {res:?}"));
                self.after(Who::Client);
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
                let Some((call, _)) = self.pick_server_work(r)? else {
                    return Some(());
                };
                let message = if r.bool()? { Some(r.word()?) } else { None };
                let res = self
                    .server
                    .set_task_message(Millis(self.now), call, message);
                self.log(format_args!("server set_task_message -> {res:?}"));
                self.after(Who::Server);
            }
            18 => {
                let Some((call, _)) = self.pick_server_work(r)? else {
                    return Some(());
                };
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
                    .request_input(Millis(self.now), call, method, params);
                self.log(format_args!("server request_input -> {res:?}"));
                self.after(Who::Server);
            }
            19 => {
                if !self.server_inbox.is_empty() {
                    let call = *r.pick(&self.server_inbox)?;
                    let reply = json!({"content":[{"type":"text","text":"plain"}]});
                    let res = self.server.respond(Millis(self.now), call, Ok(reply));
                    self.log(format_args!("server respond -> {res:?}"));
                    self.server_inbox.retain(|c| *c != call);
                } else {
                    let Some((call, _)) = self.pick_server_work(r)? else {
                        return Some(());
                    };
                    let res = self.server.notify_progress(
                        Millis(self.now),
                        call,
                        f64::from(r.u8()?),
                        None,
                        None,
                    );
                    self.log(format_args!("server progress -> {res:?}"));
                }
                self.after(Who::Server);
            }
            20 => {
                // The server asks alice's client to host a sampling task.
                let ttl = [None, Some(500), Some(5000)][r.below(3)?];
                let res = self.server.request_as_task(
                    Millis(self.now),
                    self.ss,
                    "sampling/createMessage",
                    sampling_params(),
                    ttl,
                );
                self.log(format_args!("server request_as_task -> {res:?}"));
                self.after(Who::Server);
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
            24 => {
                let next = self.next_deadline();
                if let Some(at) = next {
                    self.advance(at.max(self.now));
                }
            }
            25 | 26 => self.bob(r)?,
            27 => self.deliver(Wire::O2S, 0, false),
            28 => self.deliver(Wire::S2O, 0, false),
            _ => {
                if self.faults.restart && r.one_in(4)? {
                    self.restart(r.bool()?);
                }
            }
        }
        Some(())
    }

    fn log(&mut self, line: std::fmt::Arguments<'_>) {
        tline!(self.transcript, "{line}");
    }

    /// One fault among those the run allows, on alice's wire: reorder, duplicate, drop.
    fn fault(&mut self, r: &mut Reader) -> Option<()> {
        let wire = if r.bool()? { Wire::C2S } else { Wire::S2C };
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
            0 => self.deliver(wire, at, false),
            1 => {
                self.lossy = true;
                self.deliver(wire, at, true);
            }
            _ => {
                let queue = self.queue(wire);
                if !queue.is_empty() {
                    let gone = queue.remove(at % queue.len());
                    self.lossy = true;
                    self.log(format_args!("drop {}", gone.line));
                }
            }
        }
        Some(())
    }

    /// A requestor's command on a task (`client`: alice's client asks the server, else the
    /// server asks alice's client).
    fn task_command(&mut self, client: bool, r: &mut Reader) -> Option<()> {
        let dir = if client { SERVER_HOSTS } else { CLIENT_HOSTS };
        let task = self.pick_created(dir, r)?;
        let now = Millis(self.now);
        let choice = r.below(6)?;
        let on = r.bool()?;
        let (host, session) = if client {
            (&mut self.client, self.cs)
        } else {
            (&mut self.server, self.ss)
        };
        let res = match choice {
            0 | 1 => {
                let res = host.get_task(now, session, &task);
                if let Ok(id) = &res {
                    self.hosting[dir].app_gets.insert(request_id_key(id));
                }
                res.map(|_| ())
            }
            2 => host.cancel_task(now, session, &task).map(|_| ()),
            3 => host.task_result(now, session, &task).map(|_| ()),
            4 => host.list_tasks(now, session, None).map(|_| ()),
            _ => host.set_auto_poll(session, &task, on),
        };
        self.log(format_args!("task command (client={client}) -> {res:?}"));
        self.after(if client { Who::Client } else { Who::Server });
        Some(())
    }

    /// Bob: calls a tool as a task, or probes a task by id (often one of alice's).
    fn bob(&mut self, r: &mut Reader) -> Option<()> {
        let now = Millis(self.now);
        match r.below(4)? {
            0 => {
                let name = ["opt", "req"][r.below(2)?];
                let ttl = [None, Some(800), Some(50_000)][r.below(3)?];
                let res = self
                    .other
                    .call_tool_as_task(now, self.os, name, json!({}), ttl);
                self.log(format_args!("bob call_tool_as_task -> {res:?}"));
            }
            1 => {
                let res = self.other.list_tasks(now, self.os, None);
                if let Ok(id) = &res {
                    let probe = Probe {
                        method: "tasks/list",
                        foreign: false,
                    };
                    self.probes.insert(request_id_key(id), probe);
                }
                self.log(format_args!("bob list -> {res:?}"));
            }
            _ => {
                let alices = self.hosting[SERVER_HOSTS].host_watch.ids();
                let mine: Vec<String> = self.hosting[BOB_HOSTS].created.keys().cloned().collect();
                let task = match r.below(4)? {
                    0 | 1 if !alices.is_empty() => r.pick(&alices)?.clone(),
                    2 if !mine.is_empty() => r.pick(&mine)?.clone(),
                    _ => format!("s{}-task-{}", self.sn, r.u8()?),
                };
                let foreign = self.owner_of.get(&task) == Some(&ALICE);
                let method = ["tasks/get", "tasks/result", "tasks/cancel"][r.below(3)?];
                let res = match method {
                    "tasks/get" => self.other.get_task(now, self.os, &task),
                    "tasks/result" => self.other.task_result(now, self.os, &task),
                    _ => self.other.cancel_task(now, self.os, &task),
                };
                if let Ok(id) = &res {
                    if method == "tasks/get" {
                        self.hosting[BOB_HOSTS].app_gets.insert(request_id_key(id));
                    }
                    self.probes
                        .insert(request_id_key(id), Probe { method, foreign });
                }
                self.log(format_args!(
                    "bob {method} {task:?} (foreign={foreign}) -> {res:?}"
                ));
            }
        }
        self.after(Who::Other);
        Some(())
    }

    /// The host application finishes a task (answers it, or fails it).
    fn finish_task(&mut self, client_hosts: bool, r: &mut Reader) -> Option<()> {
        let picked = if client_hosts {
            let tasks: Vec<String> = self.client_work.keys().cloned().collect();
            if tasks.is_empty() {
                return Some(());
            }
            let task = r.pick(&tasks)?.clone();
            Some((self.client_work[&task], task))
        } else {
            self.pick_server_work(r)?
        };
        let Some((call, task)) = picked else {
            return Some(());
        };
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
        let host = if client_hosts {
            &mut self.client
        } else {
            &mut self.server
        };
        let live = host
            .task(&task)
            .is_some_and(|t| !t.info.status.is_terminal());
        let (res, outcome) = if fail {
            let res = host.respond(now, call, Err(error.clone()));
            (res, Outcome::Error(error))
        } else {
            let res = host.respond(now, call, Ok(result.clone()));
            (res, Outcome::Result(with_meta(result, &task)))
        };
        self.log(format_args!(
            "finish (client hosts={client_hosts}) -> {res:?}"
        ));
        if res.is_ok() || !live {
            // Answered, or the task was already over: the handle is spent either way.
            self.forget_work(client_hosts, &task);
        }
        if res.is_ok() && live {
            let dir = self.dir_of(client_hosts, &task);
            self.hosting[dir].outcomes.insert(task, outcome);
        }
        self.after(if client_hosts {
            Who::Client
        } else {
            Who::Server
        });
        Some(())
    }

    fn forget_work(&mut self, client_hosts: bool, task: &str) {
        if client_hosts {
            self.client_work.remove(task);
        } else {
            self.server_work.remove(task);
        }
    }

    /// The hosting direction of a task hosted by the server (by its owner) or the client.
    fn dir_of(&self, client_hosts: bool, task: &str) -> usize {
        if client_hosts {
            CLIENT_HOSTS
        } else if self.owner_of.get(task) == Some(&BOB) {
            BOB_HOSTS
        } else {
            SERVER_HOSTS
        }
    }

    /// A server task's work: (call, task), or `None` when there is none.
    fn pick_server_work(&mut self, r: &mut Reader) -> Option<Option<(CallId, String)>> {
        let tasks: Vec<String> = self.server_work.keys().cloned().collect();
        if tasks.is_empty() {
            return Some(None);
        }
        let task = r.pick(&tasks)?.clone();
        Some(Some((self.server_work[&task], task)))
    }

    // ---- the wires ----------------------------------------------------------------------------

    fn queue(&mut self, wire: Wire) -> &mut Vec<Msg> {
        match wire {
            Wire::C2S => &mut self.c2s,
            Wire::S2C => &mut self.s2c,
            Wire::O2S => &mut self.o2s,
            Wire::S2O => &mut self.s2o,
        }
    }

    /// Delivers one message (the `at`-th in flight, modulo), keeping a copy when `keep`.
    fn deliver(&mut self, wire: Wire, at: usize, keep: bool) {
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
                let others = self.views_of(if wire == Wire::C2S { BOB } else { ALICE });
                self.log(format_args!("{wire:?} {line}"));
                self.server.handle_bytes(Millis(self.now), session, &framed);
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
                let after = self.views_of(if wire == Wire::C2S { BOB } else { ALICE });
                assert_eq!(
                    others, after,
                    "invariant: one owner's input changed the other's tasks"
                );
            }
            Wire::S2C => {
                self.log(format_args!("s>c {line}"));
                self.c_ledger.inbound_msg(&msg);
                self.client.handle_bytes(Millis(self.now), self.cs, &framed);
                self.after(Who::Client);
            }
            Wire::S2O => {
                self.log(format_args!("s>o {line}"));
                self.o_ledger.inbound_msg(&msg);
                self.other.handle_bytes(Millis(self.now), self.os, &framed);
                self.after(Who::Other);
            }
        }
    }

    /// The server's views of one owner's tasks.
    fn views_of(&self, owner: &str) -> Vec<Option<Value>> {
        self.owner_of
            .iter()
            .filter(|(_, o)| **o == owner)
            .map(|(id, _)| self.server.task(id).map(|s| wire_snapshot(&s)))
            .collect()
    }

    /// Fires one host's due deadlines.
    fn fire(&mut self, who: Who) {
        let now = Millis(self.now);
        let host = self.host(who);
        if host.poll_timeout().is_some_and(|at| at <= now) {
            host.handle_timeout(now);
            self.after(who);
        }
    }

    /// Delivers everything in order until nothing is in flight.
    fn settle(&mut self) {
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

    fn next_deadline(&self) -> Option<u64> {
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

    fn advance(&mut self, to: u64) {
        self.now = self.now.max(to);
        let now = Millis(self.now);
        self.log(format_args!("time {}", self.now - EPOCH));
        for who in [Who::Client, Who::Server, Who::Other] {
            // (A host with nothing due has nothing to say: skip its checks.)
            let due = self.host(who).poll_timeout().is_some_and(|at| at <= now);
            self.host(who).handle_timeout(now);
            assert_no_busy_loop(self.host(who), who.name());
            if due {
                self.after(who);
            }
        }
    }

    /// A restart: alice's client (the server sees EOF on her session, keeps her tasks,
    /// and she reconnects with a new client), or the server (both clients see EOF, keep
    /// what they host, and reconnect to a new server).
    fn restart(&mut self, client_restarts: bool) {
        let now = Millis(self.now);
        self.log(format_args!("restart client={client_restarts}"));
        self.c2s.clear();
        self.s2c.clear();
        if client_restarts {
            let tasks = self.server.task_count();
            self.server.handle_eof(now, self.ss);
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
            self.ss = self.server.open(now, Role::Server, ALICE);
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
                host.handle_eof(now, session);
                let out = self.drain(who);
                assert_eq!(out.send_count(), 0, "invariant: closing sends nothing");
                self.absorb(who, out);
                self.assert_closed_results(dir);
            }
            self.sn += 1;
            self.server = server_host(&self.scfg, self.sn, now);
            self.ss = self.server.open(now, Role::Server, ALICE);
            self.ss2 = self.server.open(now, Role::Server, BOB);
            self.cs = self.client.open(now, Role::Client, "server");
            self.os = self.other.open(now, Role::Client, "server");
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

    /// After its connection closed, the requestor of `dir` reported exactly one
    /// `TaskResult` for each task it created.
    fn assert_closed_results(&self, dir: usize) {
        for (task, c) in &self.hosting[dir].created {
            assert_eq!(
                c.results, 1,
                "invariant: on close, task {task:?} gets exactly one TaskResult"
            );
        }
    }

    // ---- outputs --------------------------------------------------------------------------------

    fn host(&mut self, who: Who) -> &mut Host {
        match who {
            Who::Client => &mut self.client,
            Who::Server => &mut self.server,
            Who::Other => &mut self.other,
        }
    }

    fn bound(&self) -> usize {
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
                + self.requests_sent,
        )
    }

    fn drain(&mut self, who: Who) -> Drained {
        let bound = self.bound();
        let (cs, ss, ss2, os) = (self.cs, self.ss, self.ss2, self.os);
        let (host, open): (&mut Host, &dyn Fn(SessionId) -> bool) = match who {
            Who::Client => (&mut self.client, &move |s| s == cs),
            Who::Server => (&mut self.server, &move |s| s == ss || s == ss2),
            Who::Other => (&mut self.other, &move |s| s == os),
        };
        super::drain(host, who.name(), bound, open, &mut self.transcript)
    }

    /// Drains one host, takes in what it said, and checks its state.
    fn after(&mut self, who: Who) {
        let out = self.drain(who);
        self.absorb(who, out);
        self.check(who);
    }

    fn absorb(&mut self, who: Who, out: Drained) {
        let now = self.host(who).now().0;
        for item in out.items {
            match item {
                Out::Send(sent) => self.absorb_send(who, sent, now),
                Out::Event(event) => self.absorb_event(who, event, now),
            }
        }
    }

    fn absorb_send(&mut self, who: Who, sent: super::Sent, now: u64) {
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

    fn absorb_event(&mut self, who: Who, event: Event, now: u64) {
        let follows = match who {
            Who::Client => SERVER_HOSTS,
            Who::Server => CLIENT_HOSTS,
            Who::Other => BOB_HOSTS,
        };
        let h = &mut self.hosting[follows];
        match event {
            Event::TaskCreated { task, .. } => {
                h.req_watch
                    .observe(&wire_info(&task), now, false)
                    .unwrap_or_else(|e| panic!("invariant (requestor view): {e}"));
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
                h.req_watch
                    .observe(&wire_info(&task), now, false)
                    .unwrap_or_else(|e| panic!("invariant (requestor view): {e}"));
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
                    self.check_probe(&probe, &outcome);
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

    fn absorb_stop(&mut self, who: Who, call: CallId, reason: StopReason) {
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

    /// Bob's probe got an answer: another owner's task is "not found", and a listing
    /// shows only his own tasks.
    fn check_probe(&self, probe: &Probe, outcome: &Result<Value, RpcError>) {
        if probe.method == "tasks/list" {
            if let Ok(page) = outcome {
                for t in page["tasks"].as_array().into_iter().flatten() {
                    let id = t["taskId"].as_str().unwrap_or("");
                    assert_ne!(
                        self.owner_of.get(id),
                        Some(&ALICE),
                        "invariant: bob's tasks/list shows alice's task {id:?}"
                    );
                }
            }
            return;
        }
        if probe.foreign {
            // (-32000: the connection closed before the answer came.)
            assert!(
                matches!(outcome, Err(e) if e.code == -32602 || e.code == -32000),
                "invariant: bob's {} of alice's task gave {outcome:?}",
                probe.method
            );
        }
    }

    /// Between-steps checks of one host: its hosted tasks and the tasks it follows.
    fn check(&mut self, who: Who) {
        let now = self.host(who).now().0;
        match who {
            Who::Server => {
                assert!(
                    self.server.task_count() <= self.scfg.tasks.max_tasks,
                    "invariant: tasks exceed the cap"
                );
                for dir in [SERVER_HOSTS, BOB_HOSTS] {
                    self.check_hosted(Who::Server, dir, now);
                }
                for owner in [ALICE, BOB] {
                    assert!(
                        self.server.owner_task_count(&owner.into())
                            <= self.scfg.tasks.max_tasks_per_owner,
                        "invariant: {owner}'s tasks exceed max_tasks_per_owner"
                    );
                }
                self.check_followed(Who::Server, now);
            }
            Who::Client => {
                assert!(
                    self.client.task_count() <= self.ccfg.tasks.max_tasks,
                    "invariant: tasks exceed the cap"
                );
                self.check_hosted(Who::Client, CLIENT_HOSTS, now);
                self.check_followed(Who::Client, now);
            }
            Who::Other => {
                self.check_followed(Who::Other, now);
                for id in self.other.remote_task_ids(self.os) {
                    assert_ne!(
                        self.owner_of.get(id.as_str()),
                        Some(&ALICE),
                        "invariant: bob follows alice's task {id:?}"
                    );
                }
            }
        }
    }

    fn check_hosted(&mut self, who: Who, dir: usize, now: u64) {
        let host = match who {
            Who::Client => &self.client,
            _ => &self.server,
        };
        let due = host.poll_timeout().is_some_and(|at| at.0 <= now);
        let h = &mut self.hosting[dir];
        let mut gone = Vec::new();
        for (id, last) in &mut h.present {
            match host.task(id) {
                Some(task) => {
                    let shown = check::shown_status(&task);
                    if last
                        .as_ref()
                        .is_none_or(|(info, was)| *info != task.info || *was != shown)
                    {
                        h.host_watch
                            .observe(&check::wire_task(&task.info, shown), now, false)
                            .unwrap_or_else(|e| panic!("invariant (host view): {e}"));
                        *last = Some((task.info, shown));
                    }
                    assert!(
                        !h.host_watch.is_expired(id, now) || due,
                        "invariant: task {id:?} outlived its ttl"
                    );
                }
                None => {
                    assert!(
                        h.host_watch.is_expired(id, now),
                        "invariant: task {id:?} vanished before its ttl ran out"
                    );
                    gone.push(id.clone());
                }
            }
        }
        for id in gone {
            h.present.remove(&id);
        }
    }

    fn check_followed(&mut self, who: Who, now: u64) {
        let (host, session, dir) = match who {
            Who::Client => (&self.client, self.cs, SERVER_HOSTS),
            Who::Server => (&self.server, self.ss, CLIENT_HOSTS),
            Who::Other => (&self.other, self.os, BOB_HOSTS),
        };
        let h = &mut self.hosting[dir];
        for id in host.remote_task_ids(session) {
            if let Some(task) = host.remote_task(session, id) {
                if h.followed.get(id.as_str()) != Some(task) {
                    h.req_watch
                        .observe(&wire_info(task), now, false)
                        .unwrap_or_else(|e| panic!("invariant (requestor view): {e}"));
                    h.followed.insert(id.to_string(), task.clone());
                }
            }
        }
    }

    // ---- applications ---------------------------------------------------------------------------

    fn client_answers(&mut self, r: &mut Reader) -> Option<()> {
        if self.client_inbox.is_empty() {
            return Some(());
        }
        let (call, method) = r.pick(&self.client_inbox)?.clone();
        let outcome = if r.one_in(4)? {
            Err(RpcError::new(-1, "user declined"))
        } else {
            Ok(client_reply(&method))
        };
        let res = self.client.respond(Millis(self.now), call, outcome);
        self.log(format_args!("client respond -> {res:?}"));
        self.client_inbox.retain(|(c, _)| *c != call);
        self.after(Who::Client);
        Some(())
    }

    /// A task the requestor of direction `dir` created, one the server kept from alice's
    /// earlier connection (a reconnecting client reads it by id), or a made-up id.
    fn pick_created(&mut self, dir: usize, r: &mut Reader) -> Option<String> {
        let ids: Vec<String> = self.hosting[dir].created.keys().cloned().collect();
        match r.below(8)? {
            0 if dir == SERVER_HOSTS && !self.hosting[dir].host_watch.is_empty() => {
                let n = self.hosting[dir].host_watch.len();
                Some(self.hosting[dir].host_watch.nth(r.index(n)?).to_owned())
            }
            1 => Some(format!("s{}-task-{}", self.sn, r.u8()?)),
            _ if !ids.is_empty() => Some(r.pick(&ids)?.clone()),
            _ => Some(format!("c{}-ctask-{}", self.cn, r.u8()?)),
        }
    }

    // ---- the end ---------------------------------------------------------------------------------

    /// How long until every followed task has been polled at least once: the longest
    /// poll interval a requestor uses for a task it follows (the task's `pollInterval`
    /// clamped by the requestor's limits), plus a request timeout when a request may
    /// have been lost.
    fn window(&self) -> u64 {
        let interval = |c: &Config, t: &TaskInfo| {
            let p = c.polling;
            let max = p.max_interval_ms.unwrap_or(u64::MAX);
            t.poll_interval_ms
                .unwrap_or(p.default_interval_ms)
                .clamp(p.min_interval_ms, max.max(p.min_interval_ms))
        };
        let longest = |host: &Host, session: SessionId, c: &Config| {
            host.remote_task_ids(session)
                .into_iter()
                .filter_map(|id| host.remote_task(session, id))
                .map(|t| interval(c, t))
                .max()
                .unwrap_or(0)
        };
        let poll = longest(&self.client, self.cs, &self.ccfg)
            .max(longest(&self.server, self.ss, &self.scfg))
            .max(longest(&self.other, self.os, &self.ccfg));
        let timeout = self
            .ccfg
            .request_timeout_ms
            .max(self.scfg.request_timeout_ms)
            .unwrap_or(0);
        poll + if self.lossy { timeout } else { 0 } + 1
    }

    /// Moves time through every deadline up to `now + span`, delivering as it goes.
    fn run_quietly(&mut self, span: u64) {
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
    fn answer_everything(&mut self) {
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

    /// The requestor and the host of direction `dir`, with the requestor's session.
    fn ends(&self, dir: usize) -> (&Host, SessionId, &Host) {
        match dir {
            SERVER_HOSTS => (&self.client, self.cs, &self.server),
            CLIENT_HOSTS => (&self.server, self.ss, &self.client),
            _ => (&self.other, self.os, &self.server),
        }
    }

    /// The requestor's view of each followed task equals the host's, or has expired.
    fn assert_converged(&mut self, dir: usize) {
        let now = self.now;
        let (requestor, session, host) = self.ends(dir);
        let ids: Vec<String> = requestor
            .remote_task_ids(session)
            .into_iter()
            .map(ToString::to_string)
            .collect();
        for id in &ids {
            let seen: Option<TaskInfo> = requestor.remote_task(session, id).cloned();
            match (seen, host.task(id)) {
                (Some(c), Some(s)) => assert_eq!(
                    wire_info(&c),
                    wire_snapshot(&s),
                    "invariant: once quiet, the requestor's view of {id:?} equals the host's"
                ),
                (Some(c), None) => {
                    assert!(
                        check::expired(c.created_at.0, c.ttl_ms, now),
                        "invariant: the requestor follows {id:?}, which the host lost before its ttl"
                    );
                }
                (None, _) => {}
            }
        }
        self.log(format_args!("converge {} tasks (dir {dir})", ids.len()));
    }

    /// Without loss, each created task got exactly its outcome.
    fn assert_outcomes(&mut self, dir: usize) {
        let (requestor, session, host) = self.ends(dir);
        let h = &self.hosting[dir];
        for (task, c) in &h.created {
            assert_eq!(
                c.results, 1,
                "invariant: task {task:?} ends with exactly one TaskResult"
            );
            let gone = host.task(task).is_none();
            let outcome = c.outcome.as_ref().expect("counted");
            match (outcome, h.outcomes.get(task)) {
                (Err(e), _) if gone && e.code == -32602 => {}
                // The wire held the answer to `tasks/result` of a finished task longer than
                // the requestor waits for it (a delay while faults were on): the timeout is
                // the outcome, reported once.
                (Err(e), _) if e.code == taskwire_engine::jsonrpc::code::REQUEST_TIMEOUT => {}
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
        let left = requestor.remote_task_ids(session);
        assert!(
            left.is_empty(),
            "invariant: finished tasks are forgotten by the requestor: {left:?}"
        );
        self.log(format_args!("outcomes checked {count} (dir {dir})"));
    }

    fn finish(&mut self) {
        // Faults stop; every application answers what it was asked.
        self.settle();
        self.answer_everything();
        for dir in [SERVER_HOSTS, CLIENT_HOSTS, BOB_HOSTS] {
            let followed: Vec<String> = self.hosting[dir].created.keys().cloned().collect();
            let (who, session) = match dir {
                SERVER_HOSTS => (Who::Client, self.cs),
                CLIENT_HOSTS => (Who::Server, self.ss),
                _ => (Who::Other, self.os),
            };
            for task in &followed {
                let _ = self.host(who).set_auto_poll(session, task, true);
            }
            self.after(who);
        }
        self.settle();

        // The wires go quiet: each requestor's view converges to the host's.
        self.run_quietly(self.window());
        for dir in [SERVER_HOSTS, CLIENT_HOSTS, BOB_HOSTS] {
            self.assert_converged(dir);
        }

        // Every task finishes; without loss, each gets exactly its outcome.
        for client_hosts in [false, true] {
            let work: Vec<(String, CallId)> = if client_hosts {
                self.client_work
                    .iter()
                    .map(|(t, c)| (t.clone(), *c))
                    .collect()
            } else {
                self.server_work
                    .iter()
                    .map(|(t, c)| (t.clone(), *c))
                    .collect()
            };
            for (id, call) in work {
                let who = if client_hosts {
                    Who::Client
                } else {
                    Who::Server
                };
                let live = self
                    .host(who)
                    .task(&id)
                    .is_some_and(|t| !t.info.status.is_terminal());
                if !live {
                    continue;
                }
                let result = if client_hosts {
                    json!({"role":"assistant","content":{"type":"text","text":"final"},"model":"m"})
                } else {
                    json!({"content":[{"type":"text","text":"final"}]})
                };
                let now = Millis(self.now);
                self.host(who)
                    .respond(now, call, Ok(result.clone()))
                    .expect("invariant: a live task can be completed");
                self.forget_work(client_hosts, &id);
                let dir = self.dir_of(client_hosts, &id);
                self.hosting[dir]
                    .outcomes
                    .insert(id.clone(), Outcome::Result(with_meta(result, &id)));
                self.after(who);
            }
        }
        self.answer_everything();
        self.run_quietly(self.window());
        self.s_ledger
            .assert_all_answered("server (alice) at the end");
        self.s2_ledger
            .assert_all_answered("server (bob) at the end");
        // A client whose handshake failed closed its session: nothing reaches it.
        let client_open = !self.client.is_closed(self.cs);
        let bob_open = !self.other.is_closed(self.os);
        if client_open {
            self.c_ledger.assert_all_answered("client at the end");
        }
        if bob_open {
            self.o_ledger.assert_all_answered("bob's client at the end");
            self.assert_outcomes(BOB_HOSTS);
        }
        if !self.lossy && client_open {
            self.assert_outcomes(SERVER_HOSTS);
            self.assert_outcomes(CLIENT_HOSTS);
        }
    }
}

/// A client host with one session to the server; task ids `{prefix}{k}`.
fn client_host(config: &Config, prefix: &str, now: Millis) -> (Host, SessionId) {
    let prefix = prefix.to_owned();
    let mut k = 0u64;
    let ids = Box::new(move || {
        k += 1;
        format!("{prefix}{k}")
    });
    let mut host = Host::new(config.clone(), ids, now);
    let session = host.open(now, Role::Client, "server");
    (host, session)
}

/// The server host of incarnation `n` (task ids `s{n}-task-{k}`).
fn server_host(config: &Config, n: u32, now: Millis) -> Host {
    let mut k = 0u64;
    let ids = Box::new(move || {
        k += 1;
        format!("s{n}-task-{k}")
    });
    let mut host = Host::new(config.clone(), ids, now);
    add_tools(&mut host);
    host
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
