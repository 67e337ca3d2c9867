//! The servers' `--http ADDR [--json-response]` mode: rmcp 3.11's Streamable HTTP server
//! (`StreamableHttpService`) mounted at `/mcp` on axum, serving `http://ADDR/mcp`.
//!
//! rmcp's configuration is its default except for `json_response` (off unless
//! `--json-response`): legacy sessions on (`initialize` opens a 2025-11-25 session with an
//! `Mcp-Session-Id`, held by a `LocalSessionManager`), and every request whose `_meta` carries
//! the complete 2026-07-28 per-request metadata served statelessly, whatever the session mode.
//! rmcp builds one handler per session and one per stateless request from `handler`; state
//! that must outlive a request (a `TaskManager`) is shared by the clones.
//!
//! Accepted connections get `TCP_NODELAY` (as node's HTTP server sets by default): rmcp writes
//! an SSE answer in several pieces (a priming event, then the message), and without it the
//! second waits for the client's delayed ACK, about 40 ms a request.
//!
//! Once bound it prints `listening on http://ADDR/mcp` on stderr; it runs until killed.

use std::sync::Arc;

use axum::serve::ListenerExt;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::ServerHandler;

/// What `--http ADDR [--json-response]` asked for.
pub struct HttpOptions {
    /// The address to bind, `HOST:PORT`.
    pub address: String,
    /// Answer a request that produces nothing but its reply with `application/json` instead
    /// of an SSE stream (rmcp's `json_response`; it applies to stateless requests only: rmcp
    /// answers every request of a legacy session on an SSE stream).
    pub json_response: bool,
}

/// Serves `handler` (cloned per session and per stateless request) at `http://ADDR/mcp`
/// until the process is killed.
pub async fn serve<S>(handler: S, options: HttpOptions) -> std::io::Result<()>
where
    S: ServerHandler + Clone + Send + Sync + 'static,
{
    let config = StreamableHttpServerConfig::default().with_json_response(options.json_response);
    let service = StreamableHttpService::new(
        move || Ok(handler.clone()),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let router = axum::Router::new().route_service("/mcp", service);
    let listener = tokio::net::TcpListener::bind(&options.address).await?;
    eprintln!("listening on http://{}/mcp", listener.local_addr()?);
    let listener = listener.tap_io(|stream| {
        if let Err(e) = stream.set_nodelay(true) {
            eprintln!("cannot set TCP_NODELAY: {e}");
        }
    });
    axum::serve(listener, router).await
}
