//! A tokio client: starts a stdio server (`tokio_client CMD ARGS...`), calls a tool as a task
//! and prints each status, then the result.

use serde_json::json;
use taskwire_driver::engine::Config;
use taskwire_driver::{ClientBuilder, TaskUpdate};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let program = args
        .next()
        .ok_or("usage: tokio_client CMD ARGS... (tool name in TOOL, default long_running_task)")?;
    let tool = std::env::var("TOOL").unwrap_or_else(|_| "long_running_task".into());
    let mut command = tokio::process::Command::new(program);
    command.args(args);
    let builder = ClientBuilder::new(Config::new("tokio-example", "1.0"));
    let (client, _child) = taskwire_tokio::spawn_server(&mut command, builder)?;
    client.initialize().await?;
    let call = client
        .call_tool_as_task(&tool, json!({}), Some(60_000))
        .await?;
    while let Ok(update) = call.updates.recv().await {
        match update {
            TaskUpdate::Status(task) => println!("{}: {:?}", task.status, task.status_message),
            TaskUpdate::Result(outcome) => println!("result: {outcome:?}"),
        }
    }
    Ok(())
}
