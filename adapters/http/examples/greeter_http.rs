//! A greeter served over Streamable HTTP at `http://ADDR/mcp` (default `127.0.0.1:3000`),
//! mounted in an axum app beside a health check at `/health`; both protocol eras. The app is
//! served with `serve_router`, which applies the connection limits of its `HttpConfig`
//! (`max_connections`, `header_read_timeout`); any server of your own would do, with limits
//! of its own.
//!
//! `cargo run -p taskwire-http --example greeter_http [ADDR]`

use std::sync::Arc;

use serde::Deserialize;
use taskwire_driver::{CallToolResult, Config, Server, TaskSupport, Tool};
use taskwire_http::HttpConfig;

#[derive(Deserialize)]
struct Greet {
    name: String,
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let server = Server::new(Config::new("greeter", "1.0")).tool(
        Tool::new("greet", TaskSupport::Optional),
        |ctx, args: Greet| async move {
            ctx.set_status("thinking").await;
            Ok(CallToolResult::text(format!("hello, {}", args.name)))
        },
    );
    let handle = server.start(Arc::new(taskwire_tokio::Tokio));
    let config = HttpConfig::default();
    let app = axum::Router::new()
        .route("/health", axum::routing::get(|| async { "ok" }))
        .merge(taskwire_http::router("/mcp", handle, config.clone()));
    let address = std::env::args().nth(1);
    let listener =
        tokio::net::TcpListener::bind(address.as_deref().unwrap_or("127.0.0.1:3000")).await?;
    let stop = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    taskwire_http::serve_router(listener, app, &config, stop).await
}
