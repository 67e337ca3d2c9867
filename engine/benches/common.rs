//! What the engine benchmarks share: a server host with one session after the handshake,
//! fed complete messages and drained as an adapter would.

#![allow(dead_code)] // each benchmark uses its own part

use serde_json::{json, Value};
use taskwire_engine::{
    CallId, Config, Event, Host, Millis, Output, Role, SessionId, TaskSupport, Tool,
};

/// 2026-01-15T09:00:00Z: the benchmarks' clock never moves unless they move it.
pub const T0: Millis = Millis(1_768_467_600_000);

/// A host with `echo` (plain) and `job` (task) tools and one initialized session.
pub struct Server {
    pub host: Host,
    pub session: SessionId,
}

impl Server {
    /// `max_tasks` bounds the host and the one owner; retention defaults to 10 minutes.
    pub fn ready(max_tasks: usize) -> Server {
        let mut config = Config::new("bench", "1");
        config.tasks.max_tasks = max_tasks;
        config.tasks.max_tasks_per_owner = max_tasks;
        config.tasks.default_ttl_ms = Some(600_000);
        let mut next = 0u64;
        // Ids as long as the adapters' UUIDs.
        let ids = Box::new(move || {
            next += 1;
            format!("{next:036}")
        });
        let mut host = Host::new(config, ids, T0);
        host.add_tool(Tool::new("echo", TaskSupport::Forbidden));
        host.add_tool(Tool::new("job", TaskSupport::Optional));
        let session = host
            .open(T0, Role::Server, "bench")
            .expect("the host takes sessions");
        let mut server = Server { host, session };
        server.feed(br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"b","version":"1"}}}"#);
        server.feed(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        server.drain();
        server
    }

    pub fn feed(&mut self, line: &[u8]) {
        self.host
            .handle_message(T0, self.session, line)
            .expect("the host takes input");
    }

    /// Drains every output; returns the bytes sent (so nothing is optimized away).
    pub fn drain(&mut self) -> usize {
        let mut sent = 0;
        while let Some(out) = self.host.poll_output() {
            if let Output::Send(t) = out {
                sent += t.message.len();
            }
        }
        sent
    }

    /// Drains; returns the call of the one tool call among the outputs.
    pub fn tool_call(&mut self) -> CallId {
        let mut call = None;
        while let Some(out) = self.host.poll_output() {
            if let Output::Event(Event::ToolCall(c)) = out {
                call = Some(c.call);
            }
        }
        call.expect("a tool call")
    }

    /// `tools/call` of `job` as a task, answered by the app; returns the task id.
    pub fn completed_task(&mut self, n: u64) -> String {
        let line = format!(
            r#"{{"jsonrpc":"2.0","id":{n},"method":"tools/call","params":{{"name":"job","arguments":{{}},"task":{{}}}}}}"#
        );
        self.feed(line.as_bytes());
        let call = self.tool_call();
        let task = self.host.call_task(call).expect("a task").to_string();
        self.host
            .respond(T0, call, Ok(text_result()))
            .expect("completes");
        self.drain();
        task
    }

    /// A whole lifecycle: the task call, its answer, `tasks/get`, `tasks/result`.
    pub fn lifecycle(&mut self, n: u64) -> usize {
        let task = self.completed_task(n);
        for method in ["tasks/get", "tasks/result"] {
            let line = format!(
                r#"{{"jsonrpc":"2.0","id":"{method}","method":"{method}","params":{{"taskId":"{task}"}}}}"#
            );
            self.feed(line.as_bytes());
        }
        self.drain()
    }

    /// A plain `tools/call` of `echo`, answered by the app.
    pub fn plain_call(&mut self) -> usize {
        self.feed(br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"}}}"#);
        let call = self.tool_call();
        self.host
            .respond(T0, call, Ok(text_result()))
            .expect("answered");
        self.drain()
    }
}

pub fn text_result() -> Value {
    json!({ "content": [{ "type": "text", "text": "done" }] })
}
