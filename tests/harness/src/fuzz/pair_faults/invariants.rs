//! The invariants `pair_faults` checks (listed in the [module docs](super)): after each step
//! (each host's views, bob's probes, results only for created tasks, the polling interval)
//! and at the end of a run (converged views once the wires are quiet, exactly one outcome per
//! task without drops and duplicates).

use serde_json::json;
use taskwire_engine::{CallId, Config, Host, Millis, RpcError, SessionId, TaskInfo};

use crate::fuzz::check::{self, wire_info, wire_snapshot};

use super::grammar::with_meta;
use super::model::{Outcome, Probe, Who, World, ALICE, BOB, BOB_HOSTS, CLIENT_HOSTS, SERVER_HOSTS};

impl World {
    /// After its connection closed, the requestor of `dir` reported exactly one
    /// `TaskResult` for each task it created.
    pub(super) fn assert_closed_results(&self, dir: usize) {
        for (task, c) in &self.hosting[dir].created {
            assert_eq!(
                c.results, 1,
                "invariant: on close, task {task:?} gets exactly one TaskResult"
            );
        }
    }

    /// Bob's probe got an answer: another owner's task is "not found", and a listing
    /// shows only his own tasks.
    pub(super) fn check_probe(&self, probe: &Probe, listed: &[TaskInfo], error: Option<&RpcError>) {
        if probe.method == "tasks/list" {
            for task in listed {
                assert_ne!(
                    self.owner_of.get(task.id.as_str()),
                    Some(&ALICE),
                    "invariant: bob's tasks/list shows alice's task {:?}",
                    task.id
                );
            }
            return;
        }
        if probe.foreign {
            // (-32000: the connection closed before the answer came.)
            assert!(
                matches!(error, Some(e) if e.code == -32602 || e.code == -32000),
                "invariant: bob's {} of alice's task gave {error:?} (no error: an answer)",
                probe.method
            );
        }
    }

    /// Between-steps checks of one host: its hosted tasks and the tasks it follows (in a
    /// lean run, only the counts).
    pub(super) fn check(&mut self, who: Who) {
        if !self.deep {
            self.check_counts(who);
            return;
        }
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

    /// [`World::check`] in a lean run: the caps on the tasks a host holds.
    pub(super) fn check_counts(&self, who: Who) {
        match who {
            Who::Server => {
                assert!(
                    self.server.task_count() <= self.scfg.tasks.max_tasks,
                    "invariant: tasks exceed the cap"
                );
                for owner in [ALICE, BOB] {
                    assert!(
                        self.server.owner_task_count(&owner.into())
                            <= self.scfg.tasks.max_tasks_per_owner,
                        "invariant: {owner}'s tasks exceed max_tasks_per_owner"
                    );
                }
            }
            Who::Client => assert!(
                self.client.task_count() <= self.ccfg.tasks.max_tasks,
                "invariant: tasks exceed the cap"
            ),
            Who::Other => {}
        }
    }

    pub(super) fn check_hosted(&mut self, who: Who, dir: usize, now: u64) {
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

    pub(super) fn check_followed(&mut self, who: Who, now: u64) {
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

    /// How long until every followed task has been polled at least once: the longest
    /// poll interval a requestor uses for a task it follows (the task's `pollInterval`
    /// clamped by the requestor's limits), plus a request timeout when a request may
    /// have been lost.
    pub(super) fn window(&self) -> u64 {
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

    /// The requestor's view of each followed task equals the host's, or has expired.
    pub(super) fn assert_converged(&mut self, dir: usize) {
        let now = self.now;
        let (requestor, session, host) = self.ends(dir);
        let ids: Vec<String> = requestor
            .remote_task_ids(session)
            .into_iter()
            .map(ToString::to_string)
            .collect();
        for id in ids.iter().filter(|_| self.deep) {
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
    pub(super) fn assert_outcomes(&mut self, dir: usize) {
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

    pub(super) fn finish(&mut self) {
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
