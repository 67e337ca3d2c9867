//! A client on tokio that answers the server's questions: starts a stdio server
//! (`tokio_client SERVER [ARGS...]`, e.g. this crate's `tokio_server` example), calls its
//! `release` tool as a task, and when the tool asks (elicitation), prints the question and
//! approves as `ada`; prints each status change and the result.

use serde::Serialize;
use taskwire_driver::serde_json::json;
use taskwire_driver::{ClientBuilder, Config, TaskUpdate};

/// The answer: the fields of the form the server asks to fill.
#[derive(Serialize)]
struct Approval {
    confirm: bool,
    approver: &'static str,
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let program = args.next().ok_or("usage: tokio_client SERVER [ARGS...]")?;
    let mut command = std::process::Command::new(program);
    command.args(args);
    let builder = ClientBuilder::new(Config::new("tokio-client", "1.0")).on_elicitation(
        |request| async move {
            println!("asked: {}", request.message);
            // Checked against the requested form before it is sent.
            request.accept(&Approval {
                confirm: true,
                approver: "ada",
            })
        },
    );
    let (client, _child) = taskwire_tokio::spawn_server(command, builder)?;
    let server = client.initialize().await?;
    println!("connected to {}", server.server.name);
    let call = client
        .call_tool_as_task("release", json!({ "version": "1.2.0" }), Some(60_000))
        .await?;
    while let Ok(update) = call.updates.recv().await {
        match update {
            TaskUpdate::Status(task) | TaskUpdate::Message(task) => {
                let message = task.status_message.unwrap_or_default();
                println!("status: {} {message}", task.status)
            }
            TaskUpdate::Result(outcome) => println!("result: {}", outcome?.all_text()),
            _ => {}
        }
    }
    client.close().await;
    Ok(())
}
