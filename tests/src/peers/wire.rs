//! Recorded traffic: `tap.py` logs of live runs and the fixtures in `tests/fixtures/recorded/`,
//! one `{"dir":"c2s"|"s2c","msg":{...}}` per line.

use std::path::{Path, PathBuf};

use serde_json::Value;

use taskwire_harness::conformance::{Conformance, Side};

/// One logged message.
#[derive(Clone, Debug)]
pub struct Line {
    /// Who sent it.
    pub from: Side,
    /// The message.
    pub msg: Value,
}

/// A conversation, in order.
#[derive(Clone, Debug)]
pub struct Log {
    /// Where it was read from.
    pub path: PathBuf,
    /// The messages.
    pub lines: Vec<Line>,
}

/// `tests/fixtures/recorded/<name>.jsonl`.
pub fn fixture(name: &str) -> Log {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/recorded")
        .join(format!("{name}.jsonl"));
    Log::read(&path)
}

impl Log {
    /// Reads a JSONL log; panics on lines that are not `{"dir", "msg"}` records.
    pub fn read(path: &Path) -> Log {
        let text = std::fs::read_to_string(path)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
        let lines = text
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| {
                let record: Value = serde_json::from_str(l)
                    .unwrap_or_else(|e| panic!("{}: not JSON ({e}): {l}", path.display()));
                let from = match record["dir"].as_str() {
                    Some("c2s") => Side::Client,
                    Some("s2c") => Side::Server,
                    _ => panic!("{}: no dir in {l}", path.display()),
                };
                let msg = match record.get("msg") {
                    Some(msg) => msg.clone(),
                    None => panic!("{}: a line that was not JSON-RPC: {l}", path.display()),
                };
                Line { from, msg }
            })
            .collect();
        Log {
            path: path.to_path_buf(),
            lines,
        }
    }

    /// Messages sent by `from`.
    pub fn from(&self, from: Side) -> Vec<&Value> {
        self.lines
            .iter()
            .filter(|l| l.from == from)
            .map(|l| &l.msg)
            .collect()
    }

    /// Requests and notifications with `method`, in order.
    pub fn with_method(&self, method: &str) -> Vec<&Value> {
        self.lines
            .iter()
            .map(|l| &l.msg)
            .filter(|m| m["method"] == method)
            .collect()
    }

    /// The first request with `method` (panics if none).
    pub fn request(&self, method: &str) -> &Value {
        self.with_method(method)
            .into_iter()
            .find(|m| m.get("id").is_some())
            .unwrap_or_else(|| panic!("{}: no {method} request", self.path.display()))
    }

    /// The answer (result or error) to the request `request` (a message of this log).
    pub fn answer(&self, request: &Value) -> &Value {
        let at = self
            .lines
            .iter()
            .position(|l| std::ptr::eq(&l.msg, request))
            .expect("the request is a message of this log");
        let (_, answer) = self
            .answer_at(at)
            .unwrap_or_else(|| panic!("{}: no answer to {request}", self.path.display()));
        answer
    }

    /// The answer to the request at `index`, with its own index: the first later message
    /// from the other side with the same id and no method.
    pub fn answer_at(&self, index: usize) -> Option<(usize, &Value)> {
        let request = self.lines.get(index)?;
        let id = request.msg.get("id")?;
        self.lines
            .iter()
            .enumerate()
            .skip(index + 1)
            .find(|(_, l)| {
                l.from == request.from.peer()
                    && l.msg.get("method").is_none()
                    && l.msg.get("id") == Some(id)
            })
            .map(|(i, l)| (i, &l.msg))
    }

    /// Index of the last request (with an id) `from` sent with `method`.
    pub fn last_request(&self, from: Side, method: &str) -> Option<usize> {
        self.lines
            .iter()
            .rposition(|l| l.from == from && l.msg["method"] == method && l.msg.get("id").is_some())
    }

    /// Index of the first message matching `pred`.
    pub fn position(&self, pred: impl Fn(&Line) -> bool) -> Option<usize> {
        self.lines.iter().position(pred)
    }

    /// `params.status` of every `notifications/tasks/status`, in order.
    pub fn notified_statuses(&self) -> Vec<String> {
        self.with_method("notifications/tasks/status")
            .iter()
            .filter_map(|m| m["params"]["status"].as_str().map(str::to_owned))
            .collect()
    }

    /// Checks every message `ours` sent against the MCP 2025-11-25 schema, typed by the
    /// request it answers (the peer's messages are tracked, not judged). Panics on the first
    /// invalid one.
    pub fn check_conformance(&self, ours: Side) {
        let mut conformance = Conformance::default();
        for line in &self.lines {
            conformance.observe(line.from, &line.msg.to_string(), line.from == ours);
        }
    }
}
