//! `taskwire proxy`: the server named on the command line, served in front in both task
//! eras (see `taskwire_proxy`), on stdio or Streamable HTTP. Stdout is the front's MCP
//! channel on stdio: everything else goes to stderr, through `tracing`.

use std::sync::Arc;

use taskwire_driver::engine::Config;
use taskwire_proxy::{AsTask, Proxy};

use crate::args::ProxyArgs;
use crate::connect::{self, Unreached};
use crate::exit::Exit;

/// Runs `taskwire proxy` until the front closes (stdin ends; Ctrl-C or SIGTERM over HTTP).
pub async fn run(args: ProxyArgs) -> Exit {
    let as_task = match args.as_task.as_slice() {
        [] => AsTask::None,
        tools if tools.iter().any(|t| t == "*") => AsTask::All,
        tools => AsTask::Tools(tools.to_vec()),
    };
    let store = match args.store.as_deref().map(taskwire_sqlite::parse_spec) {
        None => None,
        Some(Err(e)) => return crate::usage(&format!("--store: {e}")),
        Some(Ok((path, sync))) => match taskwire_sqlite::SqliteStore::open_with(path, sync) {
            Ok(store) => Some(store),
            Err(e) => return fatal(&format!("cannot open the store: {e}"), Exit::Connection),
        },
    };
    let runtime = Arc::new(taskwire_tokio::Tokio);
    let proxy = Proxy::new(runtime, as_task);
    let builder = proxy.client_builder(connect::config(&args.server));
    let connected = match connect::open(&args.server, builder).await {
        Ok(connected) => connected,
        Err(Unreached::Usage(message)) => return crate::usage(&message),
        Err(Unreached::Start(message)) => return fatal(&message, Exit::Connection),
        Err(Unreached::Failed(e)) => return fatal(&e.to_string(), Exit::of_error(&e)),
    };
    let opened = &connected.server;
    tracing::info!(
        server = %opened.server.name,
        version = %opened.server.version,
        protocol = %opened.protocol_version,
        "connected to the server behind"
    );
    let config = Config::new("taskwire-proxy", env!("CARGO_PKG_VERSION"));
    let server = match proxy.server(connected.client.clone(), opened, config).await {
        Ok(server) => match store {
            Some(store) => server.with_store(store),
            None => server,
        },
        Err(e) => {
            return fatal(
                &format!("listing the server's tools: {e}"),
                Exit::of_error(&e),
            )
        }
    };
    let served = match &args.http {
        None => taskwire_tokio::serve_stdio(server).await,
        Some(address) => match tokio::net::TcpListener::bind(address).await {
            Ok(listener) => {
                taskwire_http::serve(listener, server, taskwire_http::HttpConfig::default()).await
            }
            Err(e) => {
                return fatal(
                    &format!("cannot listen on {address}: {e}"),
                    Exit::Connection,
                )
            }
        },
    };
    match served {
        Ok(()) => Exit::Completed,
        Err(e) => fatal(&format!("serving: {e}"), Exit::Connection),
    }
}

/// What stops the proxy, said on stderr.
fn fatal(message: &str, exit: Exit) -> Exit {
    eprintln!("taskwire proxy: {message}");
    exit
}
