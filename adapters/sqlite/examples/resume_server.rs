//! A stdio task server whose tasks live in a SQLite file (`resume_server DATABASE`), with a
//! resume hook: a `backup` task still running when the process died (a crash, `kill -9`)
//! runs again when a server starts on the same file, and its result says so. Without the
//! hook (`Server::resume`) such a task would end `failed`, saying its work was lost.
//!
//! Try it with any MCP client: call `backup` as a task, kill the server mid-task, start it
//! again on the same file, and read the task (`tasks/get`, `tasks/result`):
//! `cargo run -p taskwire-sqlite --example resume_server -- tasks.db`

use std::time::Duration;

use serde::Deserialize;
use taskwire_driver::serde_json::json;
use taskwire_driver::{
    CallToolResult, Config, Server, TaskSupport, Tool, ToolContext, ToolOutcome,
};
use taskwire_sqlite::SqliteStore;

#[derive(Deserialize)]
struct Backup {
    files: u32,
}

/// Copies the files one by one; `resumed` when it runs again after a restart (a hook that
/// kept a checkpoint could start from there instead).
async fn back_up(ctx: ToolContext, args: Backup, resumed: bool) -> ToolOutcome {
    for done in 0..args.files {
        ctx.set_status(format!("{done} of {} files copied", args.files))
            .await;
        ctx.sleep(Duration::from_millis(200)).await;
    }
    let after = if resumed {
        ", resumed after a restart"
    } else {
        ""
    };
    Ok(CallToolResult::text(format!(
        "backed up {} files{after}",
        args.files
    )))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let database = std::env::args()
        .nth(1)
        .ok_or("usage: resume_server DATABASE")?;
    let backup = Tool::new("backup", TaskSupport::Optional).with_input_schema(json!({
        "type": "object",
        "properties": { "files": { "type": "integer", "minimum": 0 } },
        "required": ["files"]
    }));
    let server = Server::new(Config::new("resume-example", "1.0"))
        .tool(backup, |ctx, args| back_up(ctx, args, false))
        // Runs with the stored arguments of each `backup` task found running at start.
        .resume("backup", |ctx, args| back_up(ctx, args, true))
        .with_store(SqliteStore::open(database)?);
    taskwire_smol::serve_stdio(server)?;
    Ok(())
}
