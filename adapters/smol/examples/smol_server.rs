//! A task server on smol: one tool that reports its status, sleeps, and answers.

use std::time::Duration;

use serde_json::json;
use taskwire_driver::engine::{Config, TaskSupport, Tool};
use taskwire_driver::Server;

fn main() -> std::io::Result<()> {
    let server = Server::new(Config::new("smol-example", "1.0")).tool(
        Tool::new("slow", TaskSupport::Optional),
        |ctx, _args| async move {
            ctx.set_status("working on it").await;
            ctx.sleep(Duration::from_secs(1)).await;
            Ok(json!({ "content": [{ "type": "text", "text": "done" }] }))
        },
    );
    taskwire_smol::serve_stdio(server)
}
