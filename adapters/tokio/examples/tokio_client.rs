//! A client on tokio: starts a stdio server (`tokio_client SERVER [ARGS...]`, e.g. this
//! crate's `tokio_server` example), calls `echo`, then `countdown` as a task, printing each
//! status change, progress report and the result.

use taskwire_driver::serde_json::json;
use taskwire_driver::{ClientBuilder, Config, TaskUpdate};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let program = args.next().ok_or("usage: tokio_client SERVER [ARGS...]")?;
    let mut command = std::process::Command::new(program);
    command.args(args);
    let builder = ClientBuilder::new(Config::new("tokio-client", "1.0"));
    let (client, _child) = taskwire_tokio::spawn_server(command, builder)?;
    let server = client.initialize().await?;
    println!("connected to {}", server.server.name);
    let echoed = client.call_tool("echo", json!({ "text": "hello" })).await?;
    println!("echo: {}", echoed.all_text());
    let call = client
        .call_tool_as_task("countdown", json!({ "from": 3 }), Some(60_000))
        .await?;
    while let Ok(update) = call.updates.recv().await {
        match update {
            TaskUpdate::Status(task) | TaskUpdate::Message(task) => {
                let message = task.status_message.unwrap_or_default();
                println!("status: {} {message}", task.status)
            }
            TaskUpdate::Progress(p) => {
                println!("progress: {}/{}", p.progress, p.total.unwrap_or_default())
            }
            TaskUpdate::Result(outcome) => println!("result: {}", outcome?.all_text()),
            _ => {}
        }
    }
    client.close().await;
    Ok(())
}
