//! A complete MCP server on stdin/stdout with no async runtime: the engine alone, driven by a
//! blocking loop. Its one tool, `echo`, finishes at once, as a task or as a plain call.
//!
//! A blocking read cannot wake up for deadlines (task expiry); a real server would read with a
//! timeout of `poll_timeout() - now` and call `handle_timeout`, as the WASI adapter does.

use std::io::{BufRead, Write};
use std::time::{SystemTime, UNIX_EPOCH};

use taskwire_engine::{Config, Event, Millis, Output, Session, TaskSupport, Tool};

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
    let mut session = Session::server(Config::new("blocking-echo", "1.0"), ids, now());
    session.add_tool(Tool::new("echo", TaskSupport::Optional));
    let mut lines = std::io::stdin().lock().lines();
    loop {
        while let Some(out) = session.poll_output() {
            match out {
                Output::Send(line) => {
                    let mut stdout = std::io::stdout().lock();
                    writeln!(stdout, "{line}")?;
                    stdout.flush()?;
                }
                Output::Event(Event::ToolCall {
                    request,
                    arguments,
                    task,
                    ..
                }) => {
                    let text = arguments.map_or("{}".to_owned(), |a| a.get().to_owned());
                    let result =
                        serde_json::json!({ "content": [{ "type": "text", "text": text }] });
                    match task {
                        Some(task) => session.complete_task(now(), &task, result)?,
                        None => session.respond(now(), &request, Ok(result))?,
                    }
                }
                Output::Event(_) => {}
            }
        }
        if session.is_closed() {
            return Ok(());
        }
        match lines.next() {
            Some(line) => session.handle_message(now(), line?.as_bytes()),
            None => session.handle_eof(now()),
        }
    }
}
