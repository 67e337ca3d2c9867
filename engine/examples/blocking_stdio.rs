//! A complete MCP server on stdin/stdout with no async runtime: the engine alone, driven by a
//! blocking loop. Its one tool, `echo`, finishes at once, as a task or as a plain call.
//!
//! A blocking read cannot wake up for deadlines (task expiry); a real server would read with a
//! timeout of `poll_timeout() - now` and call `handle_timeout`, as the WASI adapter does.

use std::io::{BufRead, Write};
use std::time::{SystemTime, UNIX_EPOCH};

use taskwire_engine::{Config, Event, Host, Millis, Output, Role, TaskSupport, Tool};

// The engine never reads a clock; its caller (this example) does.
#[allow(clippy::disallowed_methods)]
fn now() -> Millis {
    let since = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    Millis(since.as_millis() as u64)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut n = 0u64;
    // Task ids must be unguessable in production: use a CSPRNG there.
    let ids = Box::new(move || {
        n += 1;
        format!("task-{n}")
    });
    let mut host = Host::new(Config::new("blocking-echo", "1.0"), ids, now());
    host.add_tool(Tool::new("echo", TaskSupport::Optional));
    // One connection: this process's stdio, acting for one owner.
    let session = host.open(now(), Role::Server, "stdio")?;
    let mut lines = std::io::stdin().lock().lines();
    loop {
        while let Some(out) = host.poll_output() {
            match out {
                Output::Send(transmit) => {
                    let mut stdout = std::io::stdout().lock();
                    writeln!(stdout, "{}", transmit.message)?;
                    stdout.flush()?;
                }
                // One answer, through the call's handle, whether or not it became a task.
                Output::Event(Event::ToolCall(call)) => {
                    let text = call
                        .arguments
                        .map_or("{}".to_owned(), |a| a.get().to_owned());
                    let result =
                        serde_json::json!({ "content": [{ "type": "text", "text": text }] });
                    host.respond(now(), call.call, Ok(result))?;
                }
                _ => {}
            }
        }
        if host.is_closed(session) {
            return Ok(());
        }
        match lines.next() {
            Some(line) => host.handle_message(now(), session, line?.as_bytes())?,
            None => host.handle_eof(now(), session)?,
        }
    }
}
