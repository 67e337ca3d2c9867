//! The 2026-07-28 era with the tasks extension, server role (checklist §1 and §2 of
//! `shared/spec/tasks-ext-2026.md`): stateless requests, `server/discover`, the per-request
//! task decision, the flat `CreateTaskResult`, `tasks/get` with the outcome inline, the
//! cancel and update acks, and the error gates in the order the checklist fixes. Every
//! message the engine writes is validated against the 2026 schemas by its definition.
//! A 2025-11-25 session on the same host keeps its own era.
//!
//! One module per part of the checklist: `gates`, `tasks`, `input`, `listen`; the harness
//! ([`V2026`]) is here.

mod gates;
mod input;
mod listen;
mod tasks;

use serde_json::{json, Value};
use taskwire_engine::{
    Config, Event, Host, Millis, Output, Role, SessionId, TaskDecision, TaskSupport, Tool, ToolDef,
};
use taskwire_harness::setup::{counter_ids, T0};

const EXT: &str = "io.modelcontextprotocol/tasks";

/// A server host with `greet` (never a task), `slow` (a task when declared) and `job`
/// (only as a task), and one session that never says `initialize`.
struct V2026 {
    host: Host,
    session: SessionId,
    now: Millis,
    next_id: i64,
    events: Vec<Event>,
}

impl V2026 {
    fn new() -> V2026 {
        let mut config = Config::new("taskwire-test", "1.0.0");
        config.tasks.poll_interval_ms = Some(200);
        let mut host = Host::new(config, counter_ids("task-"), T0);
        host.add_tool(Tool::new("greet", TaskSupport::Forbidden));
        host.add_tool(Tool::new("slow", TaskSupport::Optional));
        host.add_tool(Tool::new("job", TaskSupport::Required));
        host.add_tool(ToolDef {
            tool: Tool::new("ask", TaskSupport::Optional),
            immediate_response: None,
            decision: TaskDecision::App,
        });
        let session = host
            .open(T0, Role::Server, "alice")
            .expect("the host takes sessions");
        V2026 {
            host,
            session,
            now: T0,
            next_id: 0,
            events: Vec::new(),
        }
    }

    /// Sends one request line; returns every message written back (all on our session).
    fn raw(&mut self, line: &str) -> Vec<Value> {
        self.host
            .handle_message(self.now, self.session, line.as_bytes())
            .expect("the host takes input");
        self.drain()
    }

    fn drain(&mut self) -> Vec<Value> {
        let mut out = Vec::new();
        while let Some(o) = self.host.poll_output() {
            match o {
                Output::Send(t) => {
                    assert_eq!(t.session, self.session);
                    assert!(!t.message.contains('\n'), "one line: {}", t.message);
                    out.push(serde_json::from_str(&t.message).expect("JSON"));
                }
                Output::Event(e) => self.events.push(e),
                other => panic!("unexpected {other:?}"),
            }
        }
        out
    }

    /// A request with `_meta` of this era; `caps` are its client capabilities.
    fn request(&mut self, method: &str, mut params: Value, caps: Value) -> Value {
        self.next_id += 1;
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": caps,
        });
        let line =
            json!({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params});
        let out = self.raw(&line.to_string());
        assert_eq!(out.len(), 1, "one answer to {method}: {out:?}");
        let answer = out.into_iter().next().unwrap();
        assert_eq!(answer["id"], self.next_id);
        answer
    }

    /// A request declaring the tasks extension.
    fn declared(&mut self, method: &str, params: Value) -> Value {
        self.request(method, params, json!({ "extensions": { EXT: {} } }))
    }

    /// The last tool call that reached the app.
    fn tool_call(&self) -> Seen {
        let call = self.events.iter().rev().find_map(|e| match e {
            Event::ToolCall(c) => Some(Seen {
                call: c.call,
                task: c.task.as_ref().map(|t| t.to_string()),
                task_offered: c.task_offered,
            }),
            _ => None,
        });
        call.expect("a tool call reached the app")
    }
}

/// What a test needs of a `ToolCall` event.
struct Seen {
    call: taskwire_engine::CallId,
    task: Option<String>,
    task_offered: bool,
}

fn result_of(answer: &Value) -> &Value {
    assert!(answer.get("error").is_none(), "an error: {answer}");
    &answer["result"]
}

fn error_code(answer: &Value) -> i64 {
    answer["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("no error: {answer}"))
}

fn server_info() -> Value {
    json!({ "io.modelcontextprotocol/serverInfo": { "name": "taskwire-test", "version": "1.0.0" } })
}

/// The application asks, within `call`, for an elicitation (the `n`-th question); returns
/// the input's id.
fn ask_name(m: &mut V2026, call: taskwire_engine::CallId, n: u32) -> taskwire_engine::InputId {
    let params = json!({ "mode": "form", "message": format!("question {n}"),
        "requestedSchema": { "type": "object", "properties": { "a": { "type": "string" } } } });
    m.host
        .request_input(m.now, call, "elicitation/create", params)
        .unwrap()
}
