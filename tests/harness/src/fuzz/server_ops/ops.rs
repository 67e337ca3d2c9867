//! The operations `server_ops` applies to the host: inbound lines on a session (with the
//! handshake), the application's commands through call handles, time, closing, reopening and
//! shutting down; each one drains the host and updates the model.

use std::collections::BTreeSet;

use serde_json::{json, Value};
use taskwire_engine::era::v2025_11_25::LATEST_VERSION;
use taskwire_engine::time::MAX_MILLIS;
use taskwire_engine::{
    CallId, Event, InputId, LogLevel, Millis, Owner, Quota, Role, RpcError, SessionId, StopReason,
    TaskStatus, UsageError,
};

use crate::fuzz::check::{self, id_key, output_bound, wire_snapshot};
use crate::fuzz::{assert_no_busy_loop, checked_input, line, tline, Drained, EPOCH};

use super::count;
use super::model::{declares, AppCall, Expect, Harness, Input, Slot, OWNERS};

impl Harness {
    /// The client of slot `k` initializes with `caps`.
    pub(super) fn handshake(&mut self, k: usize, caps: Value) {
        let init = json!({"jsonrpc":"2.0","id":"init","method":"initialize","params":{
            "protocolVersion": LATEST_VERSION, "capabilities": caps,
            "clientInfo": {"name":"fuzz","version":"1"}}});
        self.feed(k, line(&init), Some(&init), Expect::Nothing);
        let done = json!({"jsonrpc":"2.0","method":"notifications/initialized"});
        self.feed(k, line(&done), Some(&done), Expect::Nothing);
    }

    pub(super) fn respond(&mut self, c: usize, outcome: Result<Value, RpcError>) {
        self.fire_due();
        let want = if matches!(&outcome, Ok(v) if !v.is_object()) {
            Err(UsageError::NotAnObject("a result"))
        } else {
            self.call_rule(c, false)
        };
        let call = self.calls[c].call;
        let task = self.calls[c].task.clone();
        let is_error = match &outcome {
            Ok(v) => v.get("isError") == Some(&Value::Bool(true)),
            Err(_) => true,
        };
        let failed = outcome.is_err();
        let got = self.command("respond", |h, now| h.respond(now, call, outcome));
        assert_eq!(got, want, "invariant: respond on {call}");
        if matches!(got, Ok(()) | Err(UsageError::TaskFinished { .. })) {
            self.calls[c].alive = false;
        }
        if let (Ok(()), Some(task)) = (&got, task) {
            let s = self.host.task(&task).expect("a finished task is kept");
            let status = if failed {
                TaskStatus::Failed
            } else {
                TaskStatus::Completed
            };
            assert_eq!(
                s.info.status, status,
                "invariant: the answer decides the status"
            );
            assert_eq!(
                check::shown_status(&s) == TaskStatus::Failed,
                is_error,
                "invariant: an error result shows as failed"
            );
        }
        self.after_step();
    }

    pub(super) fn set_message(&mut self, c: usize, message: Option<String>) {
        self.fire_due();
        let want = self.call_rule(c, true);
        let call = self.calls[c].call;
        let got = self.command("set_task_message", |h, now| {
            h.set_task_message(now, call, message.clone())
        });
        assert_eq!(got, want, "invariant: set_task_message on {call}");
        if got.is_ok() {
            let task = self.calls[c].task.clone().expect("a task call");
            let s = self.host.task(&task).expect("a live task");
            assert_eq!(
                s.info.status_message, message,
                "invariant: the message is set"
            );
        }
        self.after_step();
    }

    /// The application cancels its own task (`Host::cancel_work`).
    pub(super) fn cancel_work(&mut self, c: usize, message: Option<String>) {
        self.fire_due();
        let want = self.call_rule(c, true);
        let call = self.calls[c].call;
        let before = (self.calls[c].task.as_ref())
            .and_then(|t| self.host.task(t))
            .and_then(|s| s.info.status_message);
        let got = self.command("cancel_work", |h, now| {
            h.cancel_work(now, call, message.clone())
        });
        assert_eq!(got, want, "invariant: cancel_work on {call}");
        if got.is_ok() {
            let task = self.calls[c].task.clone().expect("a task call");
            let s = self.host.task(&task).expect("a cancelled task is kept");
            assert_eq!(
                s.info.status,
                TaskStatus::Cancelled,
                "invariant: the application's cancel cancels"
            );
            assert_eq!(
                s.info.status_message,
                message.or(before),
                "invariant: its message, or the last one kept"
            );
            assert_eq!(
                self.calls[c].stopped,
                Some(StopReason::Cancelled),
                "invariant: its work is told to stop"
            );
            count(6);
        }
        self.after_step();
    }

    pub(super) fn progress(
        &mut self,
        c: usize,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    ) {
        self.fire_due();
        let want = if !progress.is_finite() || total.is_some_and(|t| !t.is_finite()) {
            Err(UsageError::NonFiniteProgress)
        } else {
            self.call_rule(c, false)
        };
        let call = self.calls[c].call;
        let session = self.calls[c].session;
        let before = self.transcript_marker();
        let got = self.command_out("notify_progress", |h, now| {
            h.notify_progress(now, call, progress, total, message)
        });
        let (got, out) = got;
        assert_eq!(got, want, "invariant: notify_progress on {call}");
        for sent in out.sends() {
            assert!(
                sent.msg.is_notification("notifications/progress") && Some(sent.session) == session,
                "invariant: progress goes to the call's session only: {}",
                sent.msg.line
            );
        }
        let _ = before;
        self.after_step();
    }

    pub(super) fn log(&mut self, c: usize, level: LogLevel, logger: Option<String>) {
        self.fire_due();
        let want = match self.fz.logging {
            true => self.call_rule(c, false),
            false => Err(UsageError::LoggingOff),
        };
        let call = self.calls[c].call;
        let session = self.calls[c].session;
        let open = session
            .and_then(|s| self.slot_of(s))
            .is_some_and(|k| self.slots[k].open);
        let (got, out) = self.command_out("log", |h, now| {
            h.log(now, call, level, logger.as_deref(), json!("fuzz"))
        });
        assert_eq!(got, want, "invariant: log on {call}");
        let sends: Vec<_> = out.sends().collect();
        for sent in &sends {
            assert!(
                sent.msg.is_notification("notifications/message") && Some(sent.session) == session,
                "invariant: a log message goes to the call's session only: {}",
                sent.msg.line
            );
        }
        // No `logging/setLevel` is sent here, so every level goes to an open session.
        if got.is_ok() && open {
            assert_eq!(sends.len(), 1, "invariant: the log message is sent");
            count(5);
        }
        self.after_step();
    }

    pub(super) fn request_input(&mut self, c: usize, method: &'static str, params: Value) {
        self.fire_due();
        let capability = match method {
            "elicitation/create" => Some("elicitation"),
            "sampling/createMessage" => Some("sampling"),
            "roots/list" => Some("roots"),
            _ => None,
        };
        let call = self.calls[c].call;
        let session = self.calls[c].session;
        let task = self.calls[c].task.clone();
        let here = session
            .and_then(|s| self.slot_of(s))
            .filter(|&k| self.slots[k].open);
        let want = match capability {
            None => Some(Err(UsageError::NotAnInputMethod(method.to_owned()))),
            Some(_) if !params.is_object() => {
                Some(Err(UsageError::NotAnObject("input request params")))
            }
            Some(cap) => match self.call_rule(c, false) {
                Err(e) => Some(Err(e)),
                Ok(()) => match here {
                    Some(k) if declares(&self.slots[k].caps, cap) => Some(Ok(())),
                    Some(_) => Some(Err(UsageError::NotNegotiated(cap))),
                    // Another session following the task carries it, if any declares it.
                    None => None,
                },
            },
        };
        self.new_requests.clear();
        let got = self.command("request_input", |h, now| {
            h.request_input(now, call, method, params)
        });
        match (&want, &got) {
            (Some(Ok(())), Ok(_)) => {}
            (Some(w), g) => assert_eq!(
                w.as_ref().map_err(Clone::clone),
                g.as_ref().map(|_| &()).map_err(Clone::clone),
                "invariant: request_input on {call}"
            ),
            (None, Ok(_) | Err(UsageError::NotNegotiated(_))) => {}
            (None, Err(e)) => {
                panic!("invariant: request_input on {call} (no open session) gave {e}")
            }
        }
        let requests = std::mem::take(&mut self.new_requests);
        let Ok(input) = got else {
            assert!(
                requests.is_empty(),
                "invariant: a refused input request was sent"
            );
            self.after_step();
            return;
        };
        assert_eq!(
            requests.len(),
            1,
            "invariant: one input request, one message"
        );
        let (to, key, related, sent_method) = requests.into_iter().next().expect("one");
        if self.deep {
            // (A lean run does not read what a request asks.)
            assert_eq!(sent_method, method, "invariant: the input request's method");
            assert_eq!(related, task, "invariant: related-task of an input request");
        }
        let k = self.slot_of(to).expect("sent to a slot");
        if let Some(here) = here {
            assert_eq!(
                k, here,
                "invariant: input goes to the call's own session while open"
            );
        }
        let cap = capability.expect("an input method");
        assert!(
            declares(&self.slots[k].caps, cap),
            "invariant: input request to a session that did not declare {cap}"
        );
        if let Some(task) = &task {
            assert_eq!(
                self.slots[k].owner, self.task_owner[task],
                "invariant: input for a task goes to its owner"
            );
            let status = self.host.task(task).map(|t| t.info.status);
            assert_eq!(
                status,
                Some(TaskStatus::InputRequired),
                "invariant: a task asking for input is input_required"
            );
        }
        self.inputs.insert(
            (to, key),
            Input {
                input: Some(input),
                call: Some(call),
                task,
            },
        );
        self.after_step();
    }

    pub(super) fn start_task(&mut self, c: usize) {
        self.fire_due();
        let call = self.calls[c].call;
        let rule = if !self.calls[c].alive {
            Err(UsageError::UnknownCall(call))
        } else if !self.calls[c].offered {
            Err(UsageError::NotATaskOffer(call))
        } else {
            Ok(())
        };
        self.tolerate_reply = rule.is_ok();
        let got = self.command("start_task", |h, now| h.start_task(now, call));
        self.tolerate_reply = false;
        match (&rule, &got) {
            (Ok(()), Ok(task)) => {
                let c = &mut self.calls[c];
                c.task = Some(task.to_string());
                c.offered = false;
                assert_eq!(
                    self.host.task_call(task),
                    Some(call),
                    "invariant: the call works the task"
                );
            }
            // The task could not be created (a quota, the id source repeating): the engine
            // answered the request with the error and the call is over.
            (Ok(()), Err(UsageError::TaskRefused { call: refused, .. })) => {
                assert_eq!(*refused, call, "invariant: the refusal names the call");
                self.calls[c].alive = false;
                assert_eq!(
                    self.host
                        .respond(Millis(self.now), call, Ok(json!({"content": []}))),
                    Err(UsageError::UnknownCall(call)),
                    "invariant: a refused call takes no second answer"
                );
            }
            (w, g) => assert_eq!(
                w.clone(),
                g.clone().map(|_| ()),
                "invariant: start_task on {call}"
            ),
        }
        self.after_step();
    }

    pub(super) fn create_task(&mut self, owner: usize, task: String, ttl: Option<u64>) {
        self.fire_due();
        let want = self.deep.then(|| {
            let (total, mine) = self.live_counts(owner, self.at());
            if self.host.task(&task).is_some() {
                Err(UsageError::DuplicateTask(task.as_str().into()))
            } else if total >= self.fz.max_tasks {
                Err(UsageError::QuotaExceeded(Quota::Host(self.fz.max_tasks)))
            } else if mine >= self.fz.per_owner {
                Err(UsageError::QuotaExceeded(Quota::Owner(self.fz.per_owner)))
            } else {
                Ok(())
            }
        });
        let name = Owner::from(OWNERS[owner]);
        let got = self.command("create_task", |h, now| {
            h.create_task(now, &name, &task, ttl)
        });
        if let Some(want) = want {
            assert_eq!(
                got.clone().map(|_| ()),
                want,
                "invariant: create_task of {task:?}"
            );
        }
        if let Ok(call) = got {
            let s = self.host.task(&task).expect("created");
            assert_eq!(
                s.owner, name,
                "invariant: the task belongs to the owner named"
            );
            self.fresh_task(&task, owner, None);
            if self.deep {
                self.watch
                    .observe(&wire_snapshot(&s), self.host.now().0, true)
                    .unwrap_or_else(|e| panic!("invariant: {e}"));
            } else {
                self.watch.admit(&wire_snapshot(&s));
            }
            self.calls.push(AppCall {
                call,
                session: None,
                task: Some(task),
                offered: false,
                alive: true,
                stopped: None,
            });
        }
        self.after_step();
    }

    pub(super) fn remove_task(&mut self, task: String) {
        self.fire_due();
        let existed = self.host.task(&task);
        let want = match &existed {
            Some(_) => Ok(()),
            None => Err(UsageError::UnknownTask(task.as_str().into())),
        };
        let call = self
            .calls
            .iter()
            .position(|c| c.alive && c.task.as_deref() == Some(task.as_str()));
        let (got, out) = self.command_out("remove_task", |h, now| h.remove_task(now, &task));
        assert_eq!(got, want, "invariant: remove_task of {task:?}");
        let Some(before) = existed else {
            self.after_step();
            return;
        };
        assert!(
            self.host.task(&task).is_none(),
            "invariant: a removed task is gone"
        );
        let running = !before.info.status.is_terminal();
        let stops = out
            .events()
            .filter(|e| {
                matches!(
                    e,
                    Event::Stop {
                        reason: StopReason::Removed,
                        ..
                    }
                )
            })
            .count();
        assert_eq!(
            stops,
            usize::from(running && call.is_some()),
            "invariant: removing a running task stops its work, once"
        );
        if let Some(c) = call {
            self.calls[c].alive = false;
        }
        self.watch.forget(&task);
        self.known.remove(&task);
        self.followers.remove(&task);
        self.after_step();
    }

    /// An adapter fires due deadlines before anything else: then a refused command must
    /// leave everything as it was.
    pub(super) fn fire_due(&mut self) {
        if self.host.poll_timeout().is_some_and(|at| at.0 <= self.at()) {
            self.timeout();
        }
    }

    /// Closes slot `k` (`eof`: the byte stream ended): exactly its plain calls stop, exactly
    /// its input requests fail, nothing is sent, and its tasks live on.
    pub(super) fn close(&mut self, k: usize, eof: bool) {
        if !self.slots[k].open {
            return;
        }
        self.fire_due();
        let session = self.slots[k].session;
        let plain: BTreeSet<CallId> = self
            .calls
            .iter()
            .filter(|c| c.alive && c.task.is_none() && c.session == Some(session))
            .map(|c| c.call)
            .collect();
        let inputs: BTreeSet<InputId> = self
            .inputs
            .iter()
            .filter(|((s, _), _)| *s == session)
            .filter_map(|(_, i)| i.input)
            .collect();
        let tasks = self.host.task_count();
        if eof {
            checked_input(self.host.handle_eof(Millis(self.now), session), self.shut);
        } else {
            self.host.close(Millis(self.now), session);
        }
        tline!(self.transcript, "close {k} eof={eof}");
        self.slots[k].open = false;
        self.closed.push(session);
        let bound = output_bound(self.state_size());
        let out = self.drain(bound);
        assert_eq!(out.send_count(), 0, "invariant: closing sends nothing");
        let mut stopped = BTreeSet::new();
        let mut failed = BTreeSet::new();
        let mut closed = 0;
        for e in out.events() {
            match e {
                Event::Stop {
                    call,
                    reason: StopReason::Closed,
                    message,
                } => {
                    assert_eq!(message.as_deref(), Some("Connection closed"));
                    assert!(stopped.insert(*call), "invariant: {call} stopped twice");
                }
                Event::InputResponse {
                    input,
                    outcome: Err(e),
                    ..
                } if e.code == -32000 => {
                    assert!(failed.insert(*input), "invariant: {input} failed twice");
                }
                Event::Closed { session: s } => {
                    assert_eq!(*s, session, "invariant: Closed names the session");
                    closed += 1;
                }
                other => panic!("invariant: closing a session raised {other:?}"),
            }
        }
        assert_eq!(closed, 1, "invariant: one Closed per close");
        assert_eq!(
            stopped, plain,
            "invariant: closing stops exactly the session's plain calls"
        );
        assert_eq!(
            failed, inputs,
            "invariant: closing fails exactly the session's input requests"
        );
        assert_eq!(
            self.host.task_count(),
            tasks,
            "invariant: closing a session keeps its tasks"
        );
        self.absorb(&out, None);
        let slot = &mut self.slots[k];
        slot.ledger.connection_closed();
        slot.parked.clear();
        for f in self.followers.values_mut() {
            f.retain(|s| *s != session);
        }
        self.after_step();
    }

    /// Opens a new session in slot `k` for the same owner (a client reconnecting), and
    /// completes its handshake with `caps` when given.
    pub(super) fn reopen(&mut self, k: usize, caps: Option<Value>) {
        if self.slots[k].open || self.shut {
            return;
        }
        let owner = self.slots[k].owner;
        let session = self
            .host
            .open(Millis(self.now), Role::Server, OWNERS[owner])
            .expect("the host takes sessions");
        tline!(self.transcript, "open {k} as {session}");
        assert!(
            !self.closed.contains(&session),
            "invariant: a session id was reused"
        );
        self.slots[k] = Slot::new(owner, session);
        count(2);
        let bound = output_bound(self.state_size());
        let out = self.drain(bound);
        self.absorb(&out, None);
        self.after_step();
        if let Some(caps) = caps {
            self.handshake(k, caps);
        }
    }

    /// Shuts the host down: every session closes, every running task and plain call stops
    /// once, nothing is sent, nothing stays scheduled, and everything is silent after.
    pub(super) fn shutdown(&mut self) {
        self.fire_due();
        let running: BTreeSet<CallId> = self
            .calls
            .iter()
            .filter(|c| c.alive)
            .filter(|c| match &c.task {
                None => true,
                Some(t) => self
                    .host
                    .task(t)
                    .is_some_and(|s| !s.info.status.is_terminal()),
            })
            .map(|c| c.call)
            .collect();
        let open: BTreeSet<SessionId> = self
            .slots
            .iter()
            .filter(|s| s.open)
            .map(|s| s.session)
            .collect();
        let tasks = self.host.task_count();
        self.host.shutdown(Millis(self.now));
        tline!(self.transcript, "shutdown");
        self.shut = true;
        for slot in &mut self.slots {
            slot.open = false;
            self.closed.push(slot.session);
        }
        let bound = output_bound(self.state_size());
        let out = self.drain(bound);
        assert_eq!(
            out.send_count(),
            0,
            "invariant: shutting down sends nothing"
        );
        let mut stopped = BTreeSet::new();
        let mut closed = BTreeSet::new();
        for e in out.events() {
            match e {
                Event::Stop {
                    call,
                    reason: StopReason::Closed,
                    ..
                } => assert!(stopped.insert(*call), "invariant: {call} stopped twice"),
                Event::Closed { session } => {
                    assert!(closed.insert(*session), "invariant: {session} closed twice")
                }
                Event::InputResponse {
                    outcome: Err(e), ..
                } if e.code == -32000 => {}
                other => panic!("invariant: shutting down raised {other:?}"),
            }
        }
        assert_eq!(
            stopped, running,
            "invariant: shutdown stops every running task and plain call"
        );
        assert_eq!(closed, open, "invariant: shutdown closes every session");
        assert_eq!(
            self.host.poll_timeout(),
            None,
            "invariant: a shut-down host schedules nothing"
        );
        assert_eq!(
            self.host.task_count(),
            tasks,
            "invariant: shutdown keeps the tasks"
        );
        self.absorb(&out, None);
        // Every call is over (a cancelled task's kept work goes quietly).
        for c in &mut self.calls {
            c.alive = false;
        }
        for slot in &mut self.slots {
            slot.ledger.connection_closed();
            slot.parked.clear();
        }
        self.followers.clear();
        self.after_step();
        // Silence afterwards: input on any session, time far ahead.
        let ping = br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
        for s in self.closed.clone() {
            checked_input(
                self.host.handle_message(Millis(self.now), s, ping),
                self.shut,
            );
        }
        checked_input(self.host.handle_timeout(Millis(MAX_MILLIS.0)), self.shut);
        assert!(
            self.host.poll_output().is_none(),
            "invariant: a shut-down host stays silent"
        );
    }

    pub(super) fn timeout(&mut self) {
        checked_input(self.host.handle_timeout(Millis(self.now)), self.shut);
        if !self.shut {
            assert_no_busy_loop(&self.host, "server");
        }
        let bound = output_bound(self.state_size());
        let out = self.drain(bound);
        if self.shut {
            assert_eq!(out.count(), 0, "invariant: a shut-down host stays silent");
        }
        tline!(self.transcript, "time {}", self.now.saturating_sub(EPOCH));
        self.absorb(&out, None);
        self.after_step();
    }

    pub(super) fn drain(&mut self, bound: usize) -> Drained {
        let slots = &self.slots;
        let open = |s: SessionId| slots.iter().any(|slot| slot.open && slot.session == s);
        crate::fuzz::drain(
            &mut self.host,
            "server",
            bound,
            &open,
            &mut self.transcript,
            self.deep,
        )
    }

    /// Feeds one inbound line on slot `k` (`value`: the trusted message it encodes; `None`
    /// for untrusted bytes) and checks what came back. Returns what the host produced.
    pub(super) fn feed(
        &mut self,
        k: usize,
        bytes: Vec<u8>,
        value: Option<&Value>,
        mut expect: Expect,
    ) -> Drained {
        let session = self.slots[k].session;
        if !self.slots[k].open {
            // A closed session stays silent (deadlines fire first, as an adapter would).
            self.fire_due();
            checked_input(
                self.host.handle_message(Millis(self.now), session, &bytes),
                self.shut,
            );
            tline!(
                self.transcript,
                "client {k} (closed) > {}",
                String::from_utf8_lossy(&bytes)
            );
            let out = self.drain(1);
            assert_eq!(out.count(), 0, "invariant: a closed session stays silent");
            return out;
        }
        let trusted = value.is_some();
        if expect
            .key()
            .is_some_and(|k2| self.slots[k].ledger.is_exempt(k2))
        {
            // Garbage used this id; whether it is still in flight is unknown.
            expect = Expect::Nothing;
        }
        let version = self.host.protocol_version(session).map(str::to_owned);
        let hosts = version.as_deref() == Some(LATEST_VERSION) && self.fz.tasks_enabled;
        let ready = version.is_some();
        let dup = expect
            .key()
            .is_some_and(|key| self.slots[k].ledger.is_pending(key));
        let at = self.at();
        let owner = self.slots[k].owner;
        let deep = self.deep;
        let task_before = expect
            .task()
            .filter(|_| deep)
            .and_then(|t| self.live(t, at));
        let quota_before = if deep {
            self.live_counts(owner, at)
        } else {
            (0, 0)
        };
        let bound = output_bound(self.state_size());
        let result_ask = value
            .filter(|v| deep && v["method"] == "tasks/result")
            .and_then(|v| {
                Some((
                    id_key(v.get("id")?)?,
                    v["params"]["taskId"].as_str()?.to_owned(),
                ))
            })
            .filter(|(key, _)| !self.slots[k].ledger.is_pending(key));
        let input_answer = value
            .filter(|v| v.get("method").is_none())
            .and_then(|v| id_key(v.get("id")?))
            .map(|key| (session, key))
            .filter(|key| self.inputs.contains_key(key));
        match value {
            Some(v) => self.slots[k].ledger.inbound_value(v, true),
            None => {
                self.slots[k].loose = true;
                self.slots[k].ledger.inbound(&bytes, false)
            }
        };
        tline!(
            self.transcript,
            "client {k} > {}",
            String::from_utf8_lossy(&bytes)
        );
        checked_input(
            self.host.handle_message(Millis(self.now), session, &bytes),
            self.shut,
        );
        let out = self.drain(bound);
        let idless = out
            .sends()
            .filter(|s| s.msg.response_id().is_none() && s.msg.code().is_some())
            .count();
        if trusted {
            assert_eq!(
                idless, 0,
                "invariant: a well-formed message drew an id-less error"
            );
        } else {
            assert!(idless <= 1, "invariant: one bad line, at most one error");
        }
        if deep {
            self.check_quota_errors(k, &out, quota_before);
            self.expect(k, &expect, &out, hosts, ready, dup, task_before);
        } else {
            self.expect_lean(k, &expect, &out, hosts, dup);
        }
        self.absorb(&out, Some(session));
        if let Some(key) = input_answer {
            if let Some(input) = self.inputs.remove(&key) {
                // No InputResponse: only right when the call had already ended.
                let alive = self
                    .calls
                    .iter()
                    .any(|c| Some(c.call) == input.call && c.alive);
                assert!(
                    !alive,
                    "invariant: the answer to {key:?} never reached its live call"
                );
            }
        }
        if let Some((key, task)) = result_ask {
            if self.slots[k].ledger.is_pending(&key) {
                // Parked: the session follows the task until it ends.
                self.slots[k].parked.insert(key, task.clone());
                self.follow(&task, session);
            }
        }
        self.after_step();
        out
    }
}
