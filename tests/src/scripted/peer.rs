//! Plays a [`Scenario`]: stdin lines come from a reader thread; answers, timed status
//! changes and the exit happen on the main thread; every message in and out is logged.

use std::fs::File;
use std::io::{self, BufRead, Write};
use std::process::ExitCode;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::wire::{self, is_terminal, text_result, INVALID_PARAMS, METHOD_NOT_FOUND};
use super::{Exit, Gets, Scenario, Step, DONE_TEXT, ELICIT_ID, PLAIN_TEXT, TASK_ID, TOOL};

/// Something due at a time.
enum Due {
    Step(usize),
    Exit(&'static str),
}

/// The task as the server holds it; times are ms since the server started.
struct Task {
    status: &'static str,
    message: Option<&'static str>,
    created: u64,
    updated: u64,
    ttl: Value,
}

/// The server's state.
pub(super) struct Peer {
    scenario: &'static Scenario,
    start: Instant,
    log: Option<File>,
    task: Option<Task>,
    due: Vec<(Instant, Due)>,
    /// `tasks/result` requests held until the task is terminal.
    held: Vec<Value>,
    asked: bool,
    /// The client's answer to our `elicitation/create`.
    input: Option<Value>,
    polls: u32,
}

impl Peer {
    pub fn new(scenario: &'static Scenario, log: Option<&str>) -> io::Result<Peer> {
        Ok(Peer {
            scenario,
            start: Instant::now(),
            log: log.map(File::create).transpose()?,
            task: None,
            due: Vec::new(),
            held: Vec::new(),
            asked: false,
            input: None,
            polls: 0,
        })
    }

    /// Serves until stdin ends (or the scenario exits).
    pub fn run(mut self) -> ExitCode {
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in io::stdin().lock().lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        loop {
            let next = self.due.iter().map(|(at, _)| *at).min();
            let line = match next {
                Some(at) => lines.recv_timeout(at.saturating_duration_since(Instant::now())),
                None => lines.recv().map_err(|_| RecvTimeoutError::Disconnected),
            };
            match line {
                Ok(line) => self.on_line(&line),
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => {
                    self.record("eof", Value::Null);
                    return ExitCode::SUCCESS;
                }
            }
            self.fire_due();
        }
    }

    fn fire_due(&mut self) {
        let now = Instant::now();
        while let Some(i) = self.due.iter().position(|(at, _)| *at <= now) {
            match self.due.remove(i).1 {
                Due::Step(step) => self.change(self.scenario.timeline[step]),
                Due::Exit(why) => self.exit(why),
            }
        }
    }

    fn on_line(&mut self, line: &str) {
        let Ok(msg) = serde_json::from_str::<Value>(line) else {
            return self.record("in", json!(line));
        };
        self.record("in", msg.clone());
        match (msg["method"].as_str(), msg.get("id")) {
            (Some(method), Some(id)) => self.on_request(method, id.clone(), &msg["params"]),
            (None, Some(id)) if id == ELICIT_ID => {
                let answer = msg.get("result").or(msg.get("error"));
                self.on_input(answer.cloned().unwrap_or(Value::Null));
            }
            _ => {}
        }
    }

    fn on_request(&mut self, method: &str, id: Value, params: &Value) {
        match method {
            "initialize" => {
                self.reply(&id, wire::initialize_result(self.scenario));
                self.exit_at(Exit::AfterInitialize);
            }
            "ping" => self.reply(&id, json!({})),
            "tools/list" => {
                self.reply(&id, wire::tools(self.scenario));
                self.exit_at(Exit::AfterToolsList);
            }
            "tools/call" => self.on_call(&id, params),
            "tasks/get" => self.on_get(&id, params),
            "tasks/result" => self.on_result(id, params),
            _ => self.error(&id, METHOD_NOT_FOUND, "Method not found"),
        }
    }

    fn on_call(&mut self, id: &Value, params: &Value) {
        if params["name"] != TOOL {
            return self.error(id, INVALID_PARAMS, "Unknown tool");
        }
        let Some(meta) = params.get("task") else {
            return self.reply(id, text_result(PLAIN_TEXT, false));
        };
        if !self.scenario.accepts_tasks() || self.task.is_some() {
            let why = "Tool does not support task-augmented execution";
            return self.error(id, METHOD_NOT_FOUND, why);
        }
        let now = self.ms();
        self.task = Some(Task {
            status: "working",
            message: None,
            created: now,
            updated: now,
            ttl: meta.get("ttl").cloned().unwrap_or(Value::Null),
        });
        let created = Instant::now();
        for (i, step) in self.scenario.timeline.iter().enumerate() {
            let at = created + Duration::from_millis(step.at_ms);
            self.due.push((at, Due::Step(i)));
        }
        self.reply(id, json!({ "task": self.view() }));
        self.exit_at(Exit::AfterCreate);
    }

    fn on_get(&mut self, id: &Value, params: &Value) {
        self.polls += 1;
        if self.scenario.exit == Some(Exit::AtPoll(self.polls)) {
            self.exit("at a poll");
        }
        if !self.is_ours(params) {
            return self.error(id, INVALID_PARAMS, "Unknown task");
        }
        match self.scenario.gets {
            Gets::Answer => self.reply(id, self.view()),
            Gets::Ignore => {}
            Gets::Malformed(text) => {
                self.reply(id, serde_json::from_str(text).expect("rows hold JSON"))
            }
        }
    }

    fn on_result(&mut self, id: Value, params: &Value) {
        if !self.is_ours(params) {
            return self.error(&id, INVALID_PARAMS, "Unknown task");
        }
        self.held.push(id);
        let needs_input = self.task.as_ref().map(|t| t.status) == Some("input_required");
        if self.scenario.elicit && needs_input && !self.asked {
            self.asked = true;
            self.write("out", wire::elicitation());
        }
        if self.scenario.exit == Some(Exit::WhileResultHeld) {
            let at = Instant::now() + Duration::from_millis(200);
            self.due.push((at, Due::Exit("while tasks/result is held")));
        }
        self.settle();
    }

    /// The client answered our `elicitation/create`: the task goes on, and completes.
    fn on_input(&mut self, answer: Value) {
        self.input = Some(answer);
        let message = Some("input received");
        self.change(Step {
            at_ms: 0,
            status: "working",
            message,
        });
        self.change(Step {
            at_ms: 0,
            status: "completed",
            message,
        });
    }

    /// A status change: held results are answered first when it is terminal, then it is
    /// notified if the scenario does that.
    fn change(&mut self, step: Step) {
        let now = self.ms();
        let Some(task) = self.task.as_mut().filter(|t| !is_terminal(t.status)) else {
            return;
        };
        task.status = step.status;
        task.message = step.message;
        task.updated = now.max(task.updated + 1);
        self.settle();
        if self.scenario.notify {
            let note = json!({"jsonrpc": "2.0", "method": "notifications/tasks/status",
                              "params": self.view()});
            self.write("out", note);
        }
    }

    /// Answers the held `tasks/result` requests once the task is terminal.
    fn settle(&mut self) {
        let done = self.task.as_ref().is_some_and(|t| is_terminal(t.status));
        if !done || !self.scenario.results {
            return;
        }
        let text = match &self.input {
            Some(answer) => {
                let action = answer["action"].as_str().unwrap_or("?");
                format!("input: {action} {}", answer["content"])
            }
            None => DONE_TEXT.to_owned(),
        };
        for id in std::mem::take(&mut self.held) {
            self.reply(&id, text_result(&text, true));
        }
    }

    fn is_ours(&self, params: &Value) -> bool {
        self.task.is_some() && params["taskId"] == TASK_ID
    }

    fn view(&self) -> Value {
        let task = self.task.as_ref().expect("the task exists");
        let mut view = json!({
            "taskId": TASK_ID, "status": task.status, "ttl": task.ttl,
            "createdAt": wire::rfc3339(task.created), "lastUpdatedAt": wire::rfc3339(task.updated),
        });
        if let Some(message) = task.message {
            view["statusMessage"] = json!(message);
        }
        if let Some(ms) = self.scenario.poll_interval {
            view["pollInterval"] = json!(ms);
        }
        view
    }

    fn exit_at(&mut self, point: Exit) {
        if self.scenario.exit == Some(point) {
            self.exit("at its exit point");
        }
    }

    fn exit(&mut self, why: &str) -> ! {
        self.record("exit", json!(why));
        std::process::exit(0);
    }

    fn ms(&self) -> u64 {
        self.start.elapsed().as_millis() as u64
    }

    fn reply(&mut self, id: &Value, result: Value) {
        self.write(
            "out",
            json!({ "jsonrpc": "2.0", "id": id, "result": result }),
        );
    }

    fn error(&mut self, id: &Value, code: i64, message: &str) {
        let error = json!({ "code": code, "message": message });
        self.write("out", json!({ "jsonrpc": "2.0", "id": id, "error": error }));
    }

    /// Logs and writes one message; a client that stopped reading ends the server.
    fn write(&mut self, dir: &str, msg: Value) {
        self.record(dir, msg.clone());
        let mut out = io::stdout().lock();
        if writeln!(out, "{msg}").and_then(|()| out.flush()).is_err() {
            drop(out);
            self.exit("stdout closed");
        }
    }

    /// One log line: `{"t": MS, "dir": "in"|"out"|"exit"|"eof", "msg": ...}`.
    fn record(&mut self, dir: &str, msg: Value) {
        let line = json!({ "t": self.ms(), "dir": dir, "msg": msg });
        if let Some(log) = self.log.as_mut() {
            let _ = writeln!(log, "{line}");
        }
    }
}
