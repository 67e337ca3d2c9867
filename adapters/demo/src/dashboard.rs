//! `task-server --http ADDR --dashboard`: the server over Streamable HTTP at
//! `http://ADDR/mcp`, keeping an operator's view, with its live task dashboard at
//! `http://ADDR/tasks` behind the same authentication.

use std::io;
use std::sync::Arc;

use taskwire_driver::Server;
use taskwire_http::HttpConfig;

/// Where the dashboard is served.
pub const PATH: &str = "/tasks";

/// Serves `server` (observed) at `/mcp` and its dashboard at [`PATH`] on `address` with
/// `config`, until Ctrl-C or SIGTERM.
pub fn serve(server: Server, address: &str, config: HttpConfig) -> io::Result<()> {
    crate::logs::init("info");
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?
        .block_on(async {
            let listener = tokio::net::TcpListener::bind(address).await?;
            let handle = server.observe().start(Arc::new(taskwire_tokio::Tokio));
            if let Some(oauth) = config.oauth.clone() {
                tokio::spawn(async move { oauth.prefetch().await });
            }
            let app = taskwire_http::router("/mcp", handle.clone(), config.clone()).merge(
                taskwire_http::dashboard(PATH, handle.clone(), config.clone()),
            );
            tracing::info!(
                address = %listener.local_addr()?,
                "serving MCP over Streamable HTTP at /mcp, its task dashboard at {PATH}"
            );
            let stop = async move {
                stopped().await;
                tracing::info!("stopping: closing every session");
                handle.shutdown().await;
            };
            taskwire_http::serve_router(listener, app, &config, stop).await
        })
}

/// Ctrl-C, or SIGTERM where there are signals.
async fn stopped() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let mut term = signal(SignalKind::terminate()).expect("a SIGTERM handler");
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    let _ = tokio::signal::ctrl_c().await;
}
