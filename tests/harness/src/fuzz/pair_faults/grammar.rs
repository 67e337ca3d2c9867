//! How `pair_faults` decodes its input: the hosts' configurations and the faults the run may
//! use, then one operation per step (a delivery, a drop, time, a restart, an application's
//! command in either direction of task hosting, a probe by bob), each decision read from the
//! bytes with a [`Reader`].

use std::collections::BTreeMap;

use serde_json::{json, Value};
use taskwire_engine::era::v2025_11_25::RELATED_TASK;
use taskwire_engine::{CallId, Millis, Role, RpcError};

use crate::fuzz::check::{request_id_key, Ledger, Oracle};
use crate::fuzz::reader::Reader;
use crate::fuzz::{config, Record, Transcript, EPOCH};

use super::model::{
    client_host, server_host, Faults, Hosting, Outcome, Probe, Who, Wire, World, ALICE, BOB,
    BOB_HOSTS, CLIENT_HOSTS, SERVER_HOSTS,
};

pub(super) fn sampling_params() -> Value {
    json!({"messages":[{"role":"user","content":{"type":"text","text":"hi"}}],"maxTokens": 5})
}

/// What a client application answers to a server's plain request.
pub(super) fn client_reply(method: &str) -> Value {
    match method {
        "sampling/createMessage" => {
            json!({"role":"assistant","content":{"type":"text","text":"ok"},"model":"fuzz"})
        }
        _ => json!({"action":"accept","content":{"a":"b"}}),
    }
}

/// The result as `tasks/result` returns it: the app's object plus the related-task meta.
pub(super) fn with_meta(mut result: Value, task: &str) -> Value {
    if let Value::Object(obj) = &mut result {
        let meta = obj.entry("_meta").or_insert_with(|| json!({}));
        if !meta.is_object() {
            *meta = json!({});
        }
        meta[RELATED_TASK] = json!({ "taskId": task });
    }
    result
}

impl World {
    pub(super) fn new(r: &mut Reader, oracle: Oracle, deep: bool, record: Record) -> Option<Self> {
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
        let ss = server
            .open(now, Role::Server, ALICE)
            .expect("the host takes sessions");
        let ss2 = server
            .open(now, Role::Server, BOB)
            .expect("the host takes sessions");
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
            deep,
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

    pub(super) fn step(&mut self, r: &mut Reader) -> Option<()> {
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

    /// One fault among those the run allows, on alice's wire: reorder, duplicate, drop.
    pub(super) fn fault(&mut self, r: &mut Reader) -> Option<()> {
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
    pub(super) fn task_command(&mut self, client: bool, r: &mut Reader) -> Option<()> {
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
    pub(super) fn bob(&mut self, r: &mut Reader) -> Option<()> {
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
    pub(super) fn finish_task(&mut self, client_hosts: bool, r: &mut Reader) -> Option<()> {
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

    /// A server task's work: (call, task), or `None` when there is none.
    pub(super) fn pick_server_work(&mut self, r: &mut Reader) -> Option<Option<(CallId, String)>> {
        let tasks: Vec<String> = self.server_work.keys().cloned().collect();
        if tasks.is_empty() {
            return Some(None);
        }
        let task = r.pick(&tasks)?.clone();
        Some(Some((self.server_work[&task], task)))
    }

    pub(super) fn client_answers(&mut self, r: &mut Reader) -> Option<()> {
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
    pub(super) fn pick_created(&mut self, dir: usize, r: &mut Reader) -> Option<String> {
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
}
