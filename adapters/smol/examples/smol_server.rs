//! A stdio task server on smol with two typed tools: `echo` answers at once, `countdown`
//! runs as a task (when the client asks for one), reporting progress and status each step.
//!
//! Try it: `cargo run -p taskwire-smol --example smol_client -- target/debug/examples/smol_server`.

use std::time::Duration;

use serde::Deserialize;
use taskwire_driver::serde_json::json;
use taskwire_driver::{CallToolResult, Config, Server, TaskSupport, Tool};

#[derive(Deserialize)]
struct Echo {
    text: String,
}

#[derive(Deserialize)]
struct Countdown {
    from: u32,
}

fn main() -> std::io::Result<()> {
    let echo = Tool::new("echo", TaskSupport::Forbidden).with_input_schema(json!({
        "type": "object",
        "properties": { "text": { "type": "string" } },
        "required": ["text"]
    }));
    let countdown = Tool::new("countdown", TaskSupport::Optional).with_input_schema(json!({
        "type": "object",
        "properties": { "from": { "type": "integer", "minimum": 0 } },
        "required": ["from"]
    }));
    let server = Server::new(Config::new("smol-example", "1.0"))
        .tool(echo, |_ctx, args: Echo| async move {
            Ok(CallToolResult::text(args.text))
        })
        .tool(countdown, |ctx, args: Countdown| async move {
            for done in 0..args.from {
                let total = f64::from(args.from);
                ctx.progress(f64::from(done), Some(total), None).await;
                ctx.set_status(format!("{} to go", args.from - done)).await;
                ctx.sleep(Duration::from_millis(50)).await;
            }
            Ok(CallToolResult::text("liftoff"))
        });
    taskwire_smol::serve_stdio(server)
}
