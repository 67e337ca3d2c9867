//! `--http ADDR` for the demo servers: the same server over Streamable HTTP at
//! `http://ADDR/mcp`, on a multi-threaded tokio runtime, with the driver's and the
//! transport's reports printed on stderr (`RUST_LOG`, default `info`).

use std::io::{self, IsTerminal};

use taskwire_driver::Server;
use taskwire_http::HttpConfig;
use tracing_subscriber::EnvFilter;

/// Serves `server` at `http://{address}/mcp` until Ctrl-C or SIGTERM.
pub fn serve(server: Server, address: &str) -> io::Result<()> {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(io::stderr)
        .with_ansi(io::stderr().is_terminal())
        .try_init();
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?
        .block_on(async {
            let listener = tokio::net::TcpListener::bind(address).await?;
            taskwire_http::serve(listener, server, HttpConfig::default()).await
        })
}
