//! `--http ADDR` for the demo servers: the same server over Streamable HTTP at
//! `http://ADDR/mcp`, on a multi-threaded tokio runtime, reporting sessions on stderr
//! (`RUST_LOG`, default `info`).

use std::io;

use taskwire_driver::Server;
use taskwire_http::HttpConfig;

/// Serves `server` at `http://{address}/mcp` with `config` until Ctrl-C or SIGTERM.
pub fn serve(server: Server, address: &str, config: HttpConfig) -> io::Result<()> {
    crate::logs::init("info");
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?
        .block_on(async {
            let listener = tokio::net::TcpListener::bind(address).await?;
            taskwire_http::serve(listener, server, config).await
        })
}
