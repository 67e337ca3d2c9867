//! The reference model `server_ops` keeps of the host under test: its sessions (slots) and
//! what each client asked, the calls the application holds, every task with its owner, creator,
//! followers and last view; and how each output of the host updates it.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;
use taskwire_engine::era::v2025_11_25::RELATED_TASK;
use taskwire_engine::time::MAX_MILLIS;
use taskwire_engine::{
    CallId, Event, Host, InputId, Millis, Outcome, Owner, SessionId, StopReason, TaskInfo,
    TaskSnapshot, TaskStatus,
};

use crate::fuzz::check::{self, id_key, Class, IdKey, Ledger, Oracle, TaskWatch};
use crate::fuzz::{Drained, Out, Transcript};

/// The owners sessions act for.
pub(super) const OWNERS: [&str; 3] = ["alice", "bob", "carol"];

/// Which owner each slot's sessions act for.
pub(super) const LAYOUTS: [&[usize]; 4] = [&[0, 0, 1], &[0, 1, 1], &[0, 0, 1, 1], &[0, 1, 2]];

/// The fuzzed configuration facts the checks depend on.
#[derive(Debug)]
pub(super) struct Fz {
    pub(super) max_tasks: usize,
    pub(super) per_owner: usize,
    pub(super) tasks_enabled: bool,
    pub(super) list: bool,
    pub(super) cancel: bool,
    pub(super) page_size: usize,
    pub(super) notifications: bool,
    pub(super) logging: bool,
}

/// What a trusted `tasks/*` request must get back.
#[derive(Debug)]
pub(super) enum Expect {
    Nothing,
    Get(IdKey, String),
    Result(IdKey, String),
    Cancel(IdKey, String),
    List(IdKey, bool),
}

impl Expect {
    pub(super) fn key(&self) -> Option<&IdKey> {
        match self {
            Expect::Nothing => None,
            Expect::Get(k, _)
            | Expect::Result(k, _)
            | Expect::Cancel(k, _)
            | Expect::List(k, _) => Some(k),
        }
    }

    pub(super) fn task(&self) -> Option<&str> {
        match self {
            Expect::Get(_, t) | Expect::Result(_, t) | Expect::Cancel(_, t) => Some(t),
            _ => None,
        }
    }

    pub(super) fn method(&self) -> &'static str {
        match self {
            Expect::Get(..) => "tasks/get",
            Expect::Result(..) => "tasks/result",
            Expect::Cancel(..) => "tasks/cancel",
            Expect::List(..) => "tasks/list",
            Expect::Nothing => "",
        }
    }
}

/// One session position: the session now open there (or closed), and what its client
/// has asked.
#[derive(Debug)]
pub(super) struct Slot {
    pub(super) owner: usize,
    pub(super) session: SessionId,
    pub(super) open: bool,
    pub(super) caps: Value,
    pub(super) ledger: Ledger,
    pub(super) used_ids: Vec<Value>,
    /// Trusted `tasks/result` requests parked on a task.
    pub(super) parked: BTreeMap<IdKey, String>,
    /// Untrusted input reached this session: it may follow tasks the harness cannot know of.
    pub(super) loose: bool,
    /// Ids of the server's requests on this session.
    pub(super) out_ids: BTreeSet<IdKey>,
}

impl Slot {
    pub(super) fn new(owner: usize, session: SessionId) -> Self {
        Slot {
            owner,
            session,
            open: true,
            caps: Value::Null,
            ledger: Ledger::default(),
            used_ids: Vec::new(),
            parked: BTreeMap::new(),
            loose: false,
            out_ids: BTreeSet::new(),
        }
    }
}

/// The state a refused command must not change: tasks, their count, the next deadline,
/// which sessions are open.
pub(super) type Snapshot = (
    Vec<Option<(TaskInfo, Option<Option<bool>>)>>,
    usize,
    Option<Millis>,
    Vec<bool>,
);

/// A call the application holds a handle to.
#[derive(Debug)]
pub(super) struct AppCall {
    pub(super) call: CallId,
    /// The session it came from (`None` for an app-created task).
    pub(super) session: Option<SessionId>,
    pub(super) task: Option<String>,
    pub(super) offered: bool,
    /// The engine still knows the call (not answered, not stopped for good, not expired).
    pub(super) alive: bool,
    pub(super) stopped: Option<StopReason>,
}

/// A task the host holds, as last checked.
#[derive(Debug)]
pub(super) struct Known {
    /// Its status fields and shown status (`None` until first checked).
    pub(super) info: Option<(TaskInfo, TaskStatus)>,
    /// Its wire view.
    pub(super) view: Value,
}

/// An input request of the server awaiting the client.
#[derive(Debug)]
pub(super) struct Input {
    pub(super) input: Option<InputId>,
    pub(super) call: Option<CallId>,
    pub(super) task: Option<String>,
}

pub(super) struct Harness {
    pub(super) host: Host,
    pub(super) fz: Fz,
    pub(super) now: u64,
    pub(super) oracle: Oracle,
    /// Every check runs (otherwise only what drives the run and the cheap checks: see the
    /// [module docs](super)).
    pub(super) deep: bool,
    pub(super) slots: Vec<Slot>,
    pub(super) watch: TaskWatch,
    /// The owner of every task the harness has seen (its latest incarnation).
    pub(super) task_owner: BTreeMap<String, usize>,
    /// The session each task was created on (none for app-created tasks).
    pub(super) creator: BTreeMap<String, SessionId>,
    /// Sessions following each task, in the order they started following.
    pub(super) followers: BTreeMap<String, Vec<SessionId>>,
    pub(super) calls: Vec<AppCall>,
    /// The server's input requests awaiting an answer: (session, id) → what they are for.
    pub(super) inputs: BTreeMap<(SessionId, IdKey), Input>,
    /// Requests the server sent since the last command (an input request's message).
    pub(super) new_requests: Vec<(SessionId, IdKey, Option<String>, String)>,
    /// Every task the host holds (as of the last between-steps check, plus those created
    /// since), with its last view.
    pub(super) known: BTreeMap<String, Known>,
    /// Status notifications since the last between-steps check: (session, task, view).
    pub(super) status_seen: Vec<(SessionId, String, Value)>,
    /// The `-32602` error each `tasks/*` method gives for a task the caller cannot see.
    pub(super) not_found: BTreeMap<&'static str, Value>,
    /// Sessions closed so far (they must stay silent).
    pub(super) closed: Vec<SessionId>,
    pub(super) transcript: Transcript,
    pub(super) next_id: i64,
    pub(super) cursors: Vec<String>,
    pub(super) shut: bool,
    /// The next command may be refused with the requestor told (a failed `start_task`).
    pub(super) tolerate_reply: bool,
    /// The owners, as the host names them.
    pub(super) owners: [Owner; 3],
    /// Tasks per owner when the host's counts were last compared.
    pub(super) counted: Option<[usize; 3]>,
}

impl Drop for Harness {
    fn drop(&mut self) {
        crate::fuzz::dump_on_panic(&self.transcript);
    }
}

/// Whether the client capabilities declare `capability` (an object, or `true` as some
/// peers write).
pub(super) fn declares(caps: &Value, capability: &str) -> bool {
    caps.get(capability)
        .is_some_and(|v| v.is_object() || v == &Value::Bool(true))
}

impl Harness {
    /// Everything a refused command must leave as it was.
    pub(super) fn snapshot(&self) -> Snapshot {
        let tasks = self
            .known
            .keys()
            .map(|id| {
                self.host.task(id).map(|s| {
                    let outcome = s.outcome.map(|o| match o {
                        Outcome::Result { is_error, .. } => Some(is_error),
                        Outcome::Error(_) => None,
                    });
                    (s.info, outcome)
                })
            })
            .collect();
        let open = self
            .slots
            .iter()
            .map(|s| self.host.is_closed(s.session))
            .collect();
        (
            tasks,
            self.host.task_count(),
            self.host.poll_timeout(),
            open,
        )
    }

    pub(super) fn transcript_marker(&self) -> (u64, usize) {
        self.transcript.digest()
    }

    /// Takes in what the host said: responses, task views, its own requests, events.
    /// `fed` is the session whose input caused it, if any.
    pub(super) fn absorb(&mut self, out: &Drained, fed: Option<SessionId>) {
        let now = self.host.now().0;
        for item in &out.items {
            match item {
                Out::Send(sent) => self.absorb_send(sent, now),
                Out::Event(event) => self.absorb_event(event, fed),
            }
        }
    }

    pub(super) fn absorb_send(&mut self, sent: &crate::fuzz::Sent, now: u64) {
        let k = self
            .slot_of(sent.session)
            .unwrap_or_else(|| panic!("invariant: a message for unknown {}", sent.session));
        let owner = self.slots[k].owner;
        let msg = &sent.msg;
        let answered = self.slots[k].ledger.outbound(msg);
        self.oracle
            .check(msg, answered.as_deref())
            .unwrap_or_else(|e| panic!("invariant: server sent an invalid message: {e}"));
        if msg.names_tasks() {
            if self.deep {
                self.absorb_tasks(sent, owner, answered.as_deref(), now);
            } else {
                self.absorb_tasks_lean(sent, owner);
            }
        }
        self.absorb_kind(sent, k);
    }

    /// [`Harness::absorb_tasks`] in a lean run: a new task is learnt (unchecked), and no
    /// message to a session names a task the harness knows to be another owner's.
    pub(super) fn absorb_tasks_lean(&mut self, sent: &crate::fuzz::Sent, owner: usize) {
        let msg = &sent.msg;
        if msg.class == Class::Result && msg.line.contains("\"task\":") {
            let task = msg
                .result()
                .and_then(|r| r.get("task"))
                .filter(|t| t.is_object());
            if let Some(task) = task {
                let id = task["taskId"].as_str().expect("a task id").to_owned();
                self.watch.admit(task);
                self.fresh_task(&id, owner, Some(sent.session));
            }
        }
        for id in check::named_ids(&msg.line) {
            if let Some(&other) = self.task_owner.get(&id) {
                assert_eq!(
                    other, owner,
                    "invariant: a session of {} was told about a task of {}: {}",
                    OWNERS[owner], OWNERS[other], msg.line
                );
            }
        }
    }

    /// What a message naming tasks says: new tasks, views, isolation, following (in a deep
    /// run).
    pub(super) fn absorb_tasks(
        &mut self,
        sent: &crate::fuzz::Sent,
        owner: usize,
        answered: Option<&str>,
        now: u64,
    ) {
        let msg = &sent.msg;
        for (task, fresh) in check::tasks_in(msg, answered) {
            let id = task["taskId"].as_str().expect("schema-checked").to_owned();
            if fresh {
                let stored = self.host.task(&id).map(|s| s.owner);
                assert_eq!(
                    stored.as_deref(),
                    Some(OWNERS[owner]),
                    "invariant: a task created on a session belongs to its owner"
                );
                self.fresh_task(&id, owner, Some(sent.session));
            }
            self.watch
                .observe(&task, now, fresh)
                .unwrap_or_else(|e| panic!("invariant: {e}"));
        }
        for id in check::mentioned_tasks(msg) {
            let known = self.task_owner.get(id).copied();
            assert!(
                known.is_some(),
                "invariant: {} names task {id:?}, which no one created",
                sent.msg.line
            );
            assert_eq!(
                known,
                Some(owner),
                "invariant: a session of {} was told about a task of {}: {}",
                OWNERS[owner],
                OWNERS[known.unwrap_or(0)],
                sent.msg.line
            );
        }
        let flat = msg
            .result()
            .filter(|r| r.get("status").is_some())
            .and_then(|r| r.get("taskId"))
            .and_then(Value::as_str)
            .map(str::to_owned);
        if let Some(task) = &flat {
            // A `tasks/get` or `tasks/cancel` answer: the session follows the task.
            self.follow(task, sent.session);
        }
    }

    /// What a message's kind says: the server's own requests, its notifications.
    pub(super) fn absorb_kind(&mut self, sent: &crate::fuzz::Sent, k: usize) {
        let msg = &sent.msg;
        match msg.class {
            Class::Request => {
                let key = id_key(msg.id().expect("a request id")).expect("validated");
                assert!(
                    self.slots[k].out_ids.insert(key.clone()),
                    "invariant: server reused id {key} on {}",
                    sent.session
                );
                // (What it asks is read in a deep run only.)
                let (method, related) = if self.deep {
                    let method = msg.method().expect("a method").to_owned();
                    assert!(
                        matches!(
                            method.as_str(),
                            "elicitation/create" | "sampling/createMessage" | "roots/list"
                        ),
                        "invariant: unexpected server request {method}"
                    );
                    let related = msg
                        .params()
                        .and_then(|p| p["_meta"][RELATED_TASK]["taskId"].as_str())
                        .map(str::to_owned);
                    (method, related)
                } else {
                    (String::new(), None)
                };
                self.inputs.insert(
                    (sent.session, key.clone()),
                    Input {
                        input: None,
                        call: None,
                        task: related.clone(),
                    },
                );
                self.new_requests.push((sent.session, key, related, method));
            }
            Class::Notification => match msg.method() {
                Some("notifications/tasks/status") => {
                    if self.deep {
                        let params = msg.params().expect("schema-checked");
                        let task = params["taskId"].as_str().expect("taskId").to_owned();
                        self.status_seen
                            .push((sent.session, task, check::strip_meta(params)));
                    }
                }
                Some("notifications/cancelled") => {
                    let target = msg
                        .params()
                        .and_then(|p| p.get("requestId"))
                        .and_then(id_key)
                        .expect("cancel names a request");
                    let input = self
                        .inputs
                        .remove(&(sent.session, target.clone()))
                        .unwrap_or_else(|| panic!("invariant: cancel of unknown request {target}"));
                    if self.deep {
                        let live = input.task.as_ref().and_then(|t| self.host.task(t));
                        assert!(
                            live.is_none_or(|t| t.info.status.is_terminal()),
                            "invariant: input request for live {:?} withdrawn",
                            input.task
                        );
                    }
                }
                Some("notifications/progress" | "notifications/message") => {}
                other => panic!("invariant: unexpected server notification {other:?}"),
            },
            Class::Result | Class::Error { .. } => {}
        }
    }

    pub(super) fn absorb_event(&mut self, event: &Event, fed: Option<SessionId>) {
        let from_fed = |session: &SessionId, what: &str| {
            assert_eq!(
                Some(*session),
                fed,
                "invariant: {what} names {session}, not the session that spoke"
            );
        };
        match event {
            Event::ToolCall(tc) => {
                from_fed(&tc.session, "ToolCall");
                if let (true, Some(t)) = (self.deep, &tc.task) {
                    let s = self.host.task(t);
                    assert!(
                        s.is_some(),
                        "invariant: ToolCall names task {t:?}, which is not stored"
                    );
                    assert_eq!(
                        self.host.task_call(t),
                        Some(tc.call),
                        "invariant: the ToolCall's call works its task"
                    );
                }
                assert!(
                    !tc.task_offered || (tc.name == "app" && tc.task.is_none()),
                    "invariant: only an app-decided tool offers a task: {tc:?}"
                );
                assert!(
                    self.calls.iter().all(|c| c.call != tc.call || !c.alive),
                    "invariant: a live call handle was reused"
                );
                self.calls.push(AppCall {
                    call: tc.call,
                    session: Some(tc.session),
                    task: tc.task.as_ref().map(ToString::to_string),
                    offered: tc.task_offered,
                    alive: true,
                    stopped: None,
                });
            }
            Event::Request(ar) => {
                from_fed(&ar.session, "Request");
                assert!(
                    ar.method.starts_with("resources/") && ar.task.is_none(),
                    "invariant: only listed methods reach the application: {ar:?}"
                );
                self.calls.push(AppCall {
                    call: ar.call,
                    session: Some(ar.session),
                    task: None,
                    offered: false,
                    alive: true,
                    stopped: None,
                });
            }
            Event::Stop {
                call,
                reason,
                message,
            } => {
                let c = self
                    .calls
                    .iter_mut()
                    .rev()
                    .find(|c| c.call == *call)
                    .unwrap_or_else(|| panic!("invariant: Stop for unknown {call}"));
                assert!(c.alive, "invariant: Stop for {call}, which was over");
                assert!(c.stopped.is_none(), "invariant: {call} stopped twice");
                c.stopped = Some(*reason);
                match (&c.task, reason) {
                    (Some(t), StopReason::Cancelled) if self.deep => {
                        let status = self.host.task(t).map(|s| s.info.status);
                        assert_eq!(
                            status,
                            Some(TaskStatus::Cancelled),
                            "invariant: Stop(Cancelled) for a task that is not cancelled"
                        );
                        assert_eq!(message, &None, "invariant: a task cancel carries no reason");
                    }
                    (Some(_), StopReason::Cancelled) => {}
                    (Some(t), StopReason::Expired | StopReason::Removed) => {
                        // (Its id may already name a new task.)
                        assert!(
                            self.host.task_call(t) != Some(*call),
                            "invariant: Stop({reason:?}) for a kept task"
                        );
                        c.alive = false;
                    }
                    // (The peer's reason, as sent: mutations may change it.)
                    (None, StopReason::Cancelled) => c.alive = false,
                    (_, StopReason::Closed) => c.alive = false,
                    (None, other) => panic!("invariant: a plain call stopped for {other:?}"),
                    (Some(_), other) => panic!("invariant: a task stopped for {other:?}"),
                }
            }
            Event::InputResponse { call, input, .. } => {
                let key = self
                    .inputs
                    .iter()
                    .find(|(_, i)| i.input == Some(*input))
                    .map(|(k, _)| k.clone())
                    .unwrap_or_else(|| panic!("invariant: InputResponse for unknown {input}"));
                let i = self.inputs.remove(&key).expect("found");
                assert_eq!(
                    i.call,
                    Some(*call),
                    "invariant: InputResponse names its call"
                );
            }
            Event::Notification { session, .. } => from_fed(session, "Notification"),
            Event::PeerError { session, .. } => from_fed(session, "PeerError"),
            Event::Initialized {
                session,
                capabilities,
                ..
            } => {
                from_fed(session, "Initialized");
                // What the session declared, as the host read it: also from an initialize
                // the grammar mangled into untrusted bytes the host still accepts.
                if let Some(k) = self.slot_of(*session) {
                    self.slots[k].caps = capabilities.clone();
                }
            }
            Event::Progress { session, .. } => from_fed(session, "Progress"),
            Event::Log { session, .. } => from_fed(session, "Log"),
            Event::Closed { session } => {
                assert!(
                    fed.is_none(),
                    "invariant: {session} closed while handling input"
                );
            }
            other => panic!("invariant: unexpected server event {other:?}"),
        }
    }

    /// A task the harness has just seen created by `owner` (on `session`, if any).
    pub(super) fn fresh_task(&mut self, task: &str, owner: usize, session: Option<SessionId>) {
        self.task_owner.insert(task.to_owned(), owner);
        match session {
            Some(s) => self.creator.insert(task.to_owned(), s),
            None => self.creator.remove(task),
        };
        self.followers
            .insert(task.to_owned(), session.into_iter().collect());
        // A reborn id is a new task: its predecessor's view is no "change".
        self.known.insert(
            task.to_owned(),
            Known {
                info: None,
                view: Value::Null,
            },
        );
    }

    pub(super) fn follow(&mut self, task: &str, session: SessionId) {
        // (A finished task never changes again: following it is harmless.)
        if self.known.contains_key(task) {
            let f = self.followers.entry(task.to_owned()).or_default();
            if !f.contains(&session) {
                f.push(session);
            }
        }
    }

    pub(super) fn slot_of(&self, session: SessionId) -> Option<usize> {
        self.slots.iter().position(|s| s.session == session)
    }

    /// The time the next input is handled at: the host's clock never goes back.
    pub(super) fn at(&self) -> u64 {
        self.host.now().0.max(self.now.min(MAX_MILLIS.0))
    }

    /// Live tasks at `at`: all, and `owner`'s (from the last check's views; a task created
    /// since is looked up).
    pub(super) fn live_counts(&self, owner: usize, at: u64) -> (usize, usize) {
        let mut total = 0;
        let mut mine = 0;
        for (id, known) in &self.known {
            let live = match &known.info {
                Some((info, _)) => self.shut || !check::expired(info.created_at.0, info.ttl_ms, at),
                None => self.live(id, at).is_some(),
            };
            if live {
                total += 1;
                if self.task_owner.get(id) == Some(&owner) {
                    mine += 1;
                }
            }
        }
        (total, mine)
    }

    /// A stored task that has not reached its expiry at `at`.
    pub(super) fn live(&self, task: &str, at: u64) -> Option<TaskSnapshot> {
        self.host
            .task(task)
            .filter(|t| self.shut || !check::expired(t.info.created_at.0, t.info.ttl_ms, at))
    }

    pub(super) fn state_size(&self) -> usize {
        self.slots
            .iter()
            .map(|s| s.ledger.outstanding_count() + 2)
            .sum::<usize>()
            + self.host.task_count() * self.slots.len()
            + self.inputs.len()
            + self.calls.iter().filter(|c| c.alive).count()
            + 2
    }
}
