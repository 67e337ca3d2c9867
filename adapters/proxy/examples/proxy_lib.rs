//! The proxy as a library: starts a stdio MCP server as a child process
//! (`proxy_lib SERVER [ARGS...]`) and serves it in front, on this process's stdio, in both
//! task eras, with every one of its tools offered as a task (`AsTask::All`): a tool the
//! server runs only plainly runs as a task in front, the plain call behind being its work.
//!
//! Put a client in front of it, e.g. the smol crate's examples (`echo`, which `smol_server`
//! runs only plainly, becomes a task here):
//! `cargo build -p taskwire-smol -p taskwire-proxy --examples &&
//! target/debug/examples/smol_client target/debug/examples/proxy_lib target/debug/examples/smol_server`

use std::sync::Arc;

use taskwire_driver::{Config, Runtime};
use taskwire_proxy::{AsTask, Proxy};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let program = args.next().ok_or("usage: proxy_lib SERVER [ARGS...]")?;
    let mut behind = std::process::Command::new(program);
    behind.args(args);
    let runtime: Arc<dyn Runtime> = Arc::new(taskwire_tokio::Tokio);
    let config = Config::new("proxy-example", "1.0");
    let proxy = Proxy::new(runtime, AsTask::All, config.clone());
    // The proxy's client of the server behind answers that server's questions by putting
    // them to the client in front whose call asked.
    let (client, _child) = taskwire_tokio::spawn_server(behind, proxy.client_builder())?;
    let opened = client.initialize().await?;
    let front = proxy.server(client, &opened, config).await?;
    taskwire_tokio::serve_stdio(front).await?;
    Ok(())
}
