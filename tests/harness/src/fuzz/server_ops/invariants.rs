//! The invariants `server_ops` checks (listed in the [module docs](super)): the one rule for
//! each command through a call handle, what every `tasks/*` request must get back, task views
//! and status notifications after every step, `tasks/list` pages, quota errors, and the end
//! of a run.

use std::fmt::Debug;

use serde_json::{json, Value};
use taskwire_engine::era::v2025_11_25::{LATEST_VERSION, RELATED_TASK};
use taskwire_engine::{Event, Host, Millis, StopReason, TaskSnapshot, TaskStatus, UsageError};

use crate::fuzz::check::{self, id_key, output_bound, wire_snapshot};
use crate::fuzz::{line, tline, Drained};

use super::count;
use super::model::{Expect, Harness, OWNERS};

impl Harness {
    /// Walks every `tasks/list` page on slot `k`: each of the owner's tasks is listed
    /// exactly once, and no other owner's.
    pub(super) fn list_all(&mut self, k: usize) {
        if !self.slots[k].open
            || self.host.protocol_version(self.slots[k].session) != Some(LATEST_VERSION)
            || !self.fz.tasks_enabled
            || !self.fz.list
        {
            return;
        }
        let mut cursor: Option<String> = None;
        let mut listed: Vec<String> = Vec::new();
        for _ in 0..=self.fz.max_tasks + 1 {
            let id = self.fresh_id(k);
            let key = id_key(&id).expect("fresh ids are keys");
            let params = match &cursor {
                Some(c) => json!({ "cursor": c }),
                None => json!({}),
            };
            let msg = json!({"jsonrpc":"2.0","id":id,"method":"tasks/list","params":params});
            let out = self.feed(
                k,
                line(&msg),
                Some(&msg),
                Expect::List(key.clone(), cursor.is_none()),
            );
            let session = self.slots[k].session;
            let page = out
                .sends()
                .filter(|s| s.session == session)
                .find(|s| s.msg.response_id().and_then(id_key).as_deref() == Some(key.as_str()))
                .and_then(|s| s.msg.result().cloned())
                .expect("tasks/list is answered at once");
            for t in page["tasks"].as_array().expect("a page") {
                listed.push(t["taskId"].as_str().expect("taskId").to_owned());
            }
            match page.get("nextCursor").and_then(Value::as_str) {
                Some(next) => cursor = Some(next.to_owned()),
                None => {
                    let mut unique = listed.clone();
                    unique.sort();
                    unique.dedup();
                    assert_eq!(unique.len(), listed.len(), "invariant: a task listed twice");
                    let owner = self.slots[k].owner;
                    let mine: Vec<String> = self
                        .known
                        .keys()
                        .filter(|id| self.task_owner.get(*id) == Some(&owner))
                        .cloned()
                        .collect();
                    assert_eq!(
                        unique, mine,
                        "invariant: the pages list exactly the owner's tasks"
                    );
                    if self
                        .task_owner
                        .iter()
                        .any(|(id, o)| *o != owner && self.known.contains_key(id))
                    {
                        count(1);
                    }
                    assert_eq!(
                        unique.len(),
                        self.host.owner_task_count(&self.owners[owner]),
                        "invariant: the pages list every task of the owner"
                    );
                    return;
                }
            }
        }
        panic!("invariant: tasks/list pages never end");
    }

    /// What a command on call `c` must give, by the one rule: a gone call is unknown, a
    /// finished task is finished, and (for `needs_task`) a plain call has no task.
    pub(super) fn call_rule(&self, c: usize, needs_task: bool) -> Result<(), UsageError> {
        let call = &self.calls[c];
        if !call.alive {
            return Err(UsageError::UnknownCall(call.call));
        }
        match &call.task {
            Some(task) => match self.host.task(task) {
                Some(s) if s.info.status.is_terminal() => Err(UsageError::TaskFinished {
                    task: s.info.id.clone(),
                    status: s.info.status,
                }),
                Some(_) => Ok(()),
                None => panic!("harness: call {c} alive for gone task {task:?}"),
            },
            None if needs_task => Err(UsageError::UnknownCall(call.call)),
            None => Ok(()),
        }
    }

    /// Runs an application command and checks that a refusal changes nothing (the caller
    /// updates its model, then runs the between-steps checks).
    pub(super) fn command<T: Debug>(
        &mut self,
        name: &str,
        f: impl FnOnce(&mut Host, Millis) -> Result<T, UsageError>,
    ) -> Result<T, UsageError> {
        self.command_out(name, f).0
    }

    /// [`Harness::command`], also returning what the command produced.
    pub(super) fn command_out<T: Debug>(
        &mut self,
        name: &str,
        f: impl FnOnce(&mut Host, Millis) -> Result<T, UsageError>,
    ) -> (Result<T, UsageError>, Drained) {
        let before = self.deep.then(|| self.snapshot());
        let bound = output_bound(self.state_size());
        let result = f(&mut self.host, Millis(self.now));
        tline!(self.transcript, "app {name} -> {result:?}");
        let out = self.drain(bound);
        let answered_refusal = self.tolerate_reply
            && out.count() == 1
            && out.sends().all(|s| s.msg.code() == Some(-32603));
        if let Err(e) = &result {
            assert!(
                out.count() == 0 || answered_refusal,
                "invariant: refused {name} ({e}) produced output"
            );
            if let Some(before) = before {
                assert_eq!(
                    before,
                    self.snapshot(),
                    "invariant: refused {name} ({e}) changed state"
                );
            }
        }
        assert!(
            !self.shut || result.is_err(),
            "invariant: a shut-down host accepted {name}"
        );
        self.absorb(&out, None);
        (result, out)
    }

    /// Checks that hold between any two operations (in a lean run, only what the model
    /// needs: the tasks that are gone).
    pub(super) fn after_step(&mut self) {
        if !self.deep {
            self.after_step_lean();
            return;
        }
        let now = self.host.now().0;
        let total = self.host.task_count();
        assert!(
            total <= self.fz.max_tasks,
            "invariant: {total} tasks exceed the cap {}",
            self.fz.max_tasks
        );
        // A task created with a ttl of 0 is expired at birth: the host holds it only until
        // the next input, and must report that deadline as due.
        let due = self.shut || self.host.poll_timeout().is_some_and(|at| at.0 <= now);
        let mut per_owner = [0usize; 3];
        let mut changed = Vec::new();
        let mut gone = Vec::new();
        for (id, known) in &mut self.known {
            match self.host.task(id) {
                Some(s) => {
                    assert!(
                        due || !self.watch.is_expired(id, now),
                        "invariant: task {id:?} outlived its ttl"
                    );
                    let owner = self.task_owner[id];
                    assert_eq!(
                        s.owner.as_str(),
                        OWNERS[owner],
                        "invariant: a task's owner never changes"
                    );
                    per_owner[owner] += 1;
                    let shown = check::shown_status(&s);
                    if known
                        .info
                        .as_ref()
                        .is_none_or(|(info, was)| *info != s.info || *was != shown)
                    {
                        // Only a changed task needs its view built and checked again.
                        let view = check::wire_task(&s.info, shown);
                        self.watch
                            .observe(&view, now, false)
                            .unwrap_or_else(|e| panic!("invariant: {e}"));
                        if known.info.is_some() {
                            changed.push(id.clone());
                        }
                        known.info = Some((s.info, shown));
                        known.view = view;
                    }
                }
                None => {
                    assert!(
                        self.watch.is_expired(id, now),
                        "invariant: task {id:?} vanished before its ttl ran out"
                    );
                    let running = known
                        .info
                        .as_ref()
                        .is_some_and(|(i, _)| !i.status.is_terminal());
                    gone.push((id.clone(), running));
                }
            }
        }
        for (id, running) in gone {
            self.known.remove(&id);
            if let Some(c) = self
                .calls
                .iter()
                .position(|c| c.alive && c.task.as_deref() == Some(id.as_str()))
            {
                assert!(
                    !running,
                    "invariant: running task {id:?} expired without Stop"
                );
                self.calls[c].alive = false;
            }
            self.followers.remove(&id);
        }
        for (owner, &n) in per_owner.iter().enumerate() {
            assert!(
                n <= self.fz.per_owner,
                "invariant: {} holds {n} tasks, over max_tasks_per_owner {}",
                OWNERS[owner],
                self.fz.per_owner
            );
        }
        if self.counted != Some(per_owner) {
            // The host's own counts, whenever the harness's change.
            for (owner, &n) in per_owner.iter().enumerate() {
                assert_eq!(
                    self.host.owner_task_count(&self.owners[owner]),
                    n,
                    "invariant: the owner's task count"
                );
            }
            self.counted = Some(per_owner);
        }
        assert_eq!(
            total,
            per_owner.iter().sum::<usize>(),
            "invariant: every task has an owner the harness knows"
        );
        self.check_notifications(&changed);
        for k in 0..self.slots.len() {
            let slot = &mut self.slots[k];
            let parked = std::mem::take(&mut slot.parked);
            for (key, task) in parked {
                if !slot.ledger.is_pending(&key) {
                    if self.creator.get(&task) != Some(&slot.session) {
                        count(4);
                    }
                    continue;
                }
                let live = self
                    .host
                    .task(&task)
                    .is_some_and(|t| !t.info.status.is_terminal());
                assert!(
                    live || !slot.open,
                    "invariant: tasks/result {key} still parked on finished task {task:?}"
                );
                slot.parked.insert(key, task);
            }
            assert_eq!(
                self.host.is_closed(slot.session),
                !slot.open,
                "invariant: the session's open state"
            );
        }
        for c in &self.calls {
            if let (true, Some(task)) = (c.alive, &c.task) {
                assert_eq!(
                    self.host.task_call(task),
                    Some(c.call),
                    "invariant: the call doing {task:?}"
                );
            }
        }
    }

    /// [`Harness::after_step`] in a lean run: the tasks the host no longer holds are
    /// forgotten, and a call still working one is over (as a deep run concludes). The
    /// host holds exactly the tasks the harness knows (a deep run checks it), so it is
    /// asked about each only when the counts differ.
    pub(super) fn after_step_lean(&mut self) {
        if self.host.task_count() == self.known.len() {
            return;
        }
        let gone: Vec<String> = self
            .known
            .keys()
            .filter(|id| self.host.task(id).is_none())
            .cloned()
            .collect();
        for id in gone {
            self.known.remove(&id);
            if let Some(c) = self
                .calls
                .iter()
                .position(|c| c.alive && c.task.as_deref() == Some(id.as_str()))
            {
                self.calls[c].alive = false;
            }
            self.followers.remove(&id);
        }
    }

    /// Every session following a changed task heard of the change, with the new view;
    /// no session heard of a task it does not follow, or of a task that did not change.
    pub(super) fn check_notifications(&mut self, changed: &[String]) {
        let seen = std::mem::take(&mut self.status_seen);
        if !self.fz.notifications {
            assert!(
                seen.is_empty(),
                "invariant: status notifications are off: {seen:?}"
            );
            return;
        }
        for (session, task, _) in &seen {
            assert!(
                changed.contains(task),
                "invariant: {session} was told about {task:?}, which did not change"
            );
            let k = self.slot_of(*session).expect("a slot");
            let follows = self
                .followers
                .get(task)
                .is_some_and(|f| f.contains(session));
            assert!(
                follows || self.slots[k].loose,
                "invariant: {session} was told about {task:?}, which it does not follow"
            );
        }
        for task in changed {
            for session in self.followers.get(task).into_iter().flatten() {
                let last = seen
                    .iter()
                    .rev()
                    .find(|(s, t, _)| s == session && t == task)
                    .map(|(_, _, v)| v);
                assert_eq!(
                    last,
                    self.known.get(task).map(|k| &k.view),
                    "invariant: {session} follows {task:?} and must hear its change"
                );
                if self.creator.get(task) != Some(session) {
                    count(3);
                }
            }
        }
    }

    /// Ends the run: the application answers everything, every task finishes, every
    /// trusted request must then have had exactly one answer, and the host shuts down.
    pub(super) fn finish(&mut self) {
        if self.shut {
            return;
        }
        for c in 0..self.calls.len() {
            if self.calls[c].alive && self.calls[c].task.is_none() {
                let reply = json!({"content":[{"type":"text","text":"done"}]});
                let call = self.calls[c].call;
                self.fire_due();
                if !self.calls[c].alive {
                    continue;
                }
                self.command("respond", |h, now| h.respond(now, call, Ok(reply)))
                    .expect("invariant: a pending call can be answered");
                self.calls[c].alive = false;
                self.after_step();
            }
        }
        self.timeout();
        for c in 0..self.calls.len() {
            let running = self.calls[c].alive
                && self.calls[c]
                    .task
                    .as_ref()
                    .and_then(|t| self.host.task(t))
                    .is_some_and(|t| !t.info.status.is_terminal());
            if running {
                let call = self.calls[c].call;
                let result = json!({"content":[]});
                self.command("respond", |h, now| h.respond(now, call, Ok(result)))
                    .expect("invariant: a live task can be completed");
                self.calls[c].alive = false;
                self.after_step();
            }
        }
        for slot in &self.slots {
            if slot.open {
                slot.ledger.assert_all_answered("server at the end");
                assert!(
                    slot.parked.is_empty(),
                    "invariant: parked requests left: {:?}",
                    slot.parked
                );
            }
        }
        self.shutdown();
        let answered: usize = self.slots.iter().map(|s| s.ledger.answered()).sum();
        tline!(self.transcript, "answered {answered}");
    }

    /// A "Task limit reached" answer names a limit that was really reached.
    pub(super) fn check_quota_errors(
        &self,
        k: usize,
        out: &Drained,
        (total, mine): (usize, usize),
    ) {
        let session = self.slots[k].session;
        for sent in out.sends().filter(|s| s.session == session) {
            let Some(error) = sent.msg.error() else {
                continue;
            };
            let message = error["message"].as_str().unwrap_or("");
            if !message.starts_with("Task limit reached") {
                continue;
            }
            assert_eq!(
                sent.msg.code(),
                Some(-32603),
                "invariant: a quota error is -32603"
            );
            if message.contains("(max_tasks)") {
                assert!(
                    total >= self.fz.max_tasks,
                    "invariant: {message} with {total} tasks"
                );
            } else {
                assert!(
                    message.contains("(max_tasks_per_owner)")
                        && total < self.fz.max_tasks
                        && mine >= self.fz.per_owner,
                    "invariant: {message} with {total} tasks, {mine} of the owner"
                );
            }
        }
    }

    /// What a lean run takes from the answer to a trusted `tasks/*` request: the cursor of
    /// a `tasks/list` page (exactly where [`Harness::expect`] keeps it).
    pub(super) fn expect_lean(
        &mut self,
        k: usize,
        expect: &Expect,
        out: &Drained,
        hosts: bool,
        dup: bool,
    ) {
        let Expect::List(key, _) = expect else {
            return;
        };
        if dup || !hosts || !self.fz.list {
            return;
        }
        let session = self.slots[k].session;
        let mut answers = out
            .sends()
            .filter(|s| s.session == session)
            .map(|s| &s.msg)
            .filter(|m| m.response_id().and_then(id_key).as_ref() == Some(key));
        let (Some(m), None) = (answers.next(), answers.next()) else {
            return;
        };
        if let Some(c) = m
            .result()
            .and_then(|r| r.get("nextCursor"))
            .and_then(Value::as_str)
        {
            self.cursors.push(c.to_owned());
        }
    }

    /// Checks the answer to a trusted `tasks/*` request against the spec, and isolation.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn expect(
        &mut self,
        k: usize,
        expect: &Expect,
        out: &Drained,
        hosts: bool,
        ready: bool,
        dup: bool,
        before: Option<TaskSnapshot>,
    ) {
        let Some(key) = expect.key() else {
            return;
        };
        let session = self.slots[k].session;
        let owner = self.slots[k].owner;
        let answers: Vec<&check::Msg> = out
            .sends()
            .filter(|s| s.session == session)
            .map(|s| &s.msg)
            .filter(|m| m.response_id().and_then(id_key).as_ref() == Some(key))
            .collect();
        let single = || {
            assert_eq!(answers.len(), 1, "invariant: {expect:?} got {answers:?}");
            answers[0]
        };
        if dup {
            assert_eq!(
                single().code(),
                Some(-32600),
                "invariant: a duplicate id is refused"
            );
            return;
        }
        if !hosts {
            // Before initialize, a request without the 2026-07-28 `_meta` is a malformed
            // v2026 one.
            let want = if ready { -32601 } else { -32602 };
            assert_eq!(
                single().code(),
                Some(want),
                "invariant: tasks/* without tasks: {expect:?}"
            );
            return;
        }
        if matches!(expect, Expect::Cancel(..)) && !self.fz.cancel
            || matches!(expect, Expect::List(..)) && !self.fz.list
        {
            assert_eq!(
                single().code(),
                Some(-32601),
                "invariant: {expect:?} not declared"
            );
            return;
        }
        // `before`: the task as stored and not expired; visible only to its owner.
        let visible = before
            .as_ref()
            .filter(|s| s.owner.as_str() == OWNERS[owner]);
        let foreign = before.is_some() && visible.is_none();
        if let (Some(task), None) = (expect.task(), visible) {
            // Unknown, expired, or another owner's: one and the same "not found".
            let m = single();
            assert_eq!(
                m.code(),
                Some(-32602),
                "invariant: {expect:?} of a task not ours"
            );
            let mut error = m.error().expect("an error").clone();
            if let Some(e) = error.as_object_mut() {
                e.remove("id");
                // Its owner may be told that one of its tasks expired lately; another owner
                // (foreign) must get the very answer an unknown id gets.
                if let (false, Some(Value::String(message))) = (foreign, e.get_mut("message")) {
                    *message = message.replace("Task has expired", "Task not found");
                }
            }
            let first = self
                .not_found
                .entry(expect.method())
                .or_insert_with(|| error.clone());
            assert_eq!(
                *first,
                error,
                "invariant: {} of {task:?} (foreign: {foreign}) answers unlike an unknown id",
                expect.method()
            );
            if foreign {
                count(0);
                let now = self.host.task(task).map(|s| wire_snapshot(&s));
                let was = before.as_ref().map(wire_snapshot);
                assert_eq!(
                    now, was,
                    "invariant: another owner's request changed {task:?}"
                );
            }
            return;
        }
        let now = self.host.now().0;
        match expect {
            Expect::Nothing => {}
            Expect::Get(_, task) => match single().result() {
                Some(result) => {
                    let stored = self.host.task(task).map(|s| wire_snapshot(&s));
                    assert_eq!(
                        Some(result),
                        stored.as_ref(),
                        "invariant: tasks/get shows the stored task"
                    );
                }
                None => panic!("invariant: tasks/get of live {task:?} failed: {answers:?}"),
            },
            Expect::Result(k2, task) => {
                let view = visible.expect("checked");
                if view.info.status.is_terminal() {
                    let m = single();
                    if let Some(result) = m.result() {
                        assert_eq!(
                            result["_meta"][RELATED_TASK]["taskId"],
                            json!(task),
                            "invariant: tasks/result carries the related-task meta"
                        );
                    }
                } else {
                    assert!(
                        answers.is_empty(),
                        "invariant: tasks/result of a live task parks"
                    );
                    self.slots[k].parked.insert(k2.clone(), task.clone());
                }
            }
            Expect::Cancel(_, task) => {
                let view = visible.expect("checked");
                let m = single();
                if check::shown_status(view).is_terminal() {
                    assert_eq!(
                        m.code(),
                        Some(-32602),
                        "invariant: cancel terminal {task:?}"
                    );
                } else {
                    let Some(result) = m.result() else {
                        panic!("invariant: cancelling live {task:?} failed: {answers:?}");
                    };
                    assert_eq!(result["status"], "cancelled", "invariant: cancel result");
                    let after = self.host.task(task).map(|t| t.info.status);
                    assert_eq!(
                        after,
                        Some(TaskStatus::Cancelled),
                        "invariant: cancel stored"
                    );
                    let work = self.host.task_call(task);
                    let stops = out
                        .events()
                        .filter(|e| matches!(e, Event::Stop { call, reason: StopReason::Cancelled, .. } if Some(*call) == work))
                        .count();
                    assert_eq!(
                        stops, 1,
                        "invariant: cancelling a running task stops its work once"
                    );
                }
            }
            Expect::List(_, first) => {
                let m = single();
                let Some(result) = m.result() else {
                    assert_eq!(m.code(), Some(-32602), "invariant: bad cursor is -32602");
                    return;
                };
                let listed = result["tasks"].as_array().expect("schema-checked");
                for t in listed {
                    let id = t["taskId"].as_str().expect("schema-checked");
                    let stored = self.host.task(id);
                    assert_eq!(
                        stored.as_ref().map(|s| s.owner.as_str()),
                        Some(OWNERS[owner]),
                        "invariant: tasks/list lists only the caller's tasks"
                    );
                    assert_eq!(
                        stored.as_ref().map(wire_snapshot).as_ref(),
                        Some(t),
                        "invariant: listed tasks exist as listed"
                    );
                    assert!(
                        !self.watch.is_expired(id, now),
                        "invariant: expired task listed"
                    );
                }
                if *first {
                    let total = self.host.owner_task_count(&self.owners[owner]);
                    assert_eq!(
                        listed.len(),
                        total.min(self.fz.page_size),
                        "invariant: page size"
                    );
                    assert_eq!(
                        result.get("nextCursor").is_some(),
                        total > self.fz.page_size,
                        "invariant: nextCursor iff more tasks remain"
                    );
                }
                if let Some(c) = result.get("nextCursor").and_then(Value::as_str) {
                    self.cursors.push(c.to_owned());
                }
            }
        }
    }
}
