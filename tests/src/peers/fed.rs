//! Our engine fed with recorded peer traffic (the quirk suites, `tests/tests/interop/quirks_*.rs`):
//! a client or server [`Probe`] set up from a fixture, recorded messages with the peer's task
//! ids swapped for ours, and the task events our client raised, summarised.

use std::collections::HashMap;

use serde_json::Value;
use taskwire_engine::{Event, RpcError, TaskInfo, TaskStatus, TaskSupport, Tool};

use super::replay::ServerReplay;
use super::wire::Log;
use taskwire_harness::setup::{client_config, server_config};
use taskwire_harness::Probe;

/// The demo's tool (taskSupport "optional").
pub const TOOL: &str = "long_running_task";
/// The demo's `--required-tool` (taskSupport "required").
pub const REQUIRED_TOOL: &str = "long_running_task_required";
/// The related-task `_meta` key.
pub const RELATED: &str = "io.modelcontextprotocol/related-task";

/// Our client, after the recorded server's `initialize` answer.
pub fn client_for(log: &Log) -> Probe {
    let init = log.answer(log.request("initialize"))["result"].clone();
    Probe::ready_client(client_config(), init)
}

/// Our server with the demo's two tools, not yet initialized.
pub fn demo_server() -> Probe {
    let mut d = Probe::server(server_config());
    d.host.add_tool(Tool::new(TOOL, TaskSupport::Optional));
    d.host
        .add_tool(Tool::new(REQUIRED_TOOL, TaskSupport::Required));
    d
}

/// Our server after the recorded client's own `initialize` and `notifications/initialized`.
pub fn demo_server_for(log: &Log) -> Probe {
    let mut d = demo_server();
    d.feed_json(log.request("initialize").clone());
    d.feed_json(serde_json::json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }));
    d
}

/// Feeds a recorded message with the recorded task ids replaced by ours.
pub fn feed_mapped(d: &mut Probe, msg: &Value, ids: &HashMap<String, String>) -> Vec<Value> {
    let mut text = msg.to_string();
    for (theirs, ours) in ids {
        text = text.replace(&format!("\"{theirs}\""), &format!("\"{ours}\""));
    }
    d.feed(&text)
}

/// The answer to `request` among `out` (panics if absent).
pub fn answer_to<'a>(out: &'a [Value], request: &Value) -> &'a Value {
    out.iter()
        .find(|m| m.get("method").is_none() && m["id"] == request["id"])
        .unwrap_or_else(|| panic!("no answer to {request} in {out:?}"))
}

/// `result.task.taskId` of an answer, or `result.taskId`.
pub fn task_id(answer: &Value) -> String {
    let result = &answer["result"];
    result["task"]["taskId"]
        .as_str()
        .or(result["taskId"].as_str())
        .unwrap_or_else(|| panic!("no task id in {answer}"))
        .to_owned()
}

/// What our client reported about peer-hosted tasks.
#[derive(Debug, Default)]
pub struct TaskEvents {
    /// Each `TaskCreated` and `TaskStatus`, in order.
    pub tasks: Vec<TaskInfo>,
    /// Each `TaskResult` (errors as their message).
    pub results: Vec<Result<Value, String>>,
    /// Each `PeerError` message.
    pub errors: Vec<String>,
}

impl TaskEvents {
    /// Takes the client's events so far.
    pub fn take(d: &mut Probe) -> TaskEvents {
        let mut seen = TaskEvents::default();
        for event in d.take_events() {
            match event {
                Event::TaskCreated { task, .. } | Event::TaskStatus { task, .. } => {
                    seen.tasks.push(task)
                }
                Event::TaskResult { outcome, .. } => {
                    seen.results.push(outcome.map_err(|e| e.message))
                }
                Event::PeerError { message, .. } => seen.errors.push(message),
                _ => {}
            }
        }
        seen
    }

    /// (status, message) of each reported task view.
    pub fn seen(&self) -> Vec<(TaskStatus, String)> {
        self.tasks
            .iter()
            .map(|t| (t.status, t.status_message.clone().unwrap_or_default()))
            .collect()
    }

    /// The only result, which must be a success.
    pub fn result(&self) -> &Value {
        match self.results.as_slice() {
            [Ok(result)] => result,
            other => panic!("expected one successful result, got {other:?}"),
        }
    }
}

/// Runs our client against a replayed server: the clock moves `step` ms at a time (firing
/// polls, answered from the recording) until a task result arrives, at most `steps` times.
pub fn run_to_result(d: &mut Probe, replay: &mut ServerReplay, step: u64, steps: usize) {
    for _ in 0..steps {
        if d.events
            .iter()
            .any(|e| matches!(e, Event::TaskResult { .. }))
        {
            return;
        }
        let out = d.advance(step);
        replay.serve(d, out);
    }
}

/// Our client calls `tool` as a task and the replayed server answers (`ttl_ms` as asked).
pub fn call_as_task(
    d: &mut Probe,
    replay: &mut ServerReplay,
    tool: &str,
    arguments: Value,
    ttl_ms: Option<u64>,
) -> Vec<Value> {
    d.host
        .call_tool_as_task(d.now, d.session, tool, arguments, ttl_ms)
        .expect("a ready client");
    let out = d.drain();
    replay.serve(d, out)
}

/// Asks a recorded server about a task it never had, through `tasks/get`, `tasks/result` and
/// `tasks/cancel` in turn, and returns the error our client application got for each.
pub fn unknown_task_errors(fixture_name: &str, unknown: &str) -> Vec<(&'static str, RpcError)> {
    let log = super::wire::fixture(fixture_name);
    let mut d = client_for(&log);
    let mut replay = ServerReplay::new(log);
    let mut errors = Vec::new();
    for method in ["tasks/get", "tasks/result", "tasks/cancel"] {
        let (now, session) = (d.now, d.session);
        let id = match method {
            "tasks/get" => d.host.get_task(now, session, unknown),
            "tasks/result" => d.host.task_result(now, session, unknown),
            _ => d.host.cancel_task(now, session, unknown),
        }
        .expect("a task request");
        let out = d.drain();
        replay.serve(&mut d, out);
        // `tasks/result` answers raw, `tasks/get` and `tasks/cancel` typed.
        let error = d.take_events().into_iter().find_map(|e| match e {
            Event::Response {
                request, outcome, ..
            } if request == id => Some(outcome.map(drop)),
            Event::TaskAnswer {
                request, outcome, ..
            } if request == id => Some(outcome.map(drop)),
            _ => None,
        });
        errors.push((method, error.expect(method).expect_err(method)));
    }
    errors
}
