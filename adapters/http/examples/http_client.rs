//! A client over Streamable HTTP: connects to the MCP endpoint at URL (sending
//! `Authorization: Bearer $MCP_TOKEN` when that is set), lists its tools, calls TOOL as a
//! task with ARGUMENTS (a JSON object, `{}` by default), and prints each status change and
//! the result.
//!
//! `cargo run -p taskwire-http --example http_client -- URL TOOL [ARGUMENTS]`, e.g. against
//! the `tasks_http` example (same `MCP_TOKEN`):
//! `MCP_TOKEN=s3cret cargo run -p taskwire-http --example http_client -- http://127.0.0.1:3000/mcp brew '{"drink": "tea"}'`

use taskwire_driver::{ClientBuilder, Config, TaskUpdate};
use taskwire_http::HttpClient;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let (Some(url), Some(tool)) = (args.next(), args.next()) else {
        return Err("usage: http_client URL TOOL [ARGUMENTS]".into());
    };
    let arguments = serde_json::from_str(&args.next().unwrap_or_else(|| "{}".to_owned()))?;
    let mut endpoint = HttpClient::new(url);
    if let Ok(token) = std::env::var("MCP_TOKEN") {
        endpoint = endpoint.header("Authorization", &format!("Bearer {token}"))?;
    }
    let client = endpoint.connect(ClientBuilder::new(Config::new("http-client", "1.0")));
    let server = client.initialize().await?;
    println!(
        "connected to {} ({})",
        server.server.name, server.protocol_version
    );
    let tools: Vec<String> = client
        .list_tools()
        .await?
        .into_iter()
        .map(|t| t.name)
        .collect();
    println!("tools: {}", tools.join(", "));
    let call = client
        .call_tool_as_task(&tool, arguments, Some(60_000))
        .await?;
    match (&call.task, &call.plain) {
        (Some(task), _) => println!("task: {}", task.id),
        (None, reason) => println!("no task: {reason:?}"),
    }
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
