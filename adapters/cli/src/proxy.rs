//! `taskwire proxy`: the server named on the command line, served in front in both task
//! eras (see `taskwire_proxy`), on stdio or Streamable HTTP. Stdout is the front's MCP
//! channel on stdio: everything else goes to stderr, through `tracing`.

use std::sync::{Arc, Mutex};

use taskwire_driver::engine::Config;
use taskwire_driver::{Client, ClientBuilder, Runtime, Stdio};
use taskwire_proxy::{AsTask, Proxy};

use crate::args::{ProxyArgs, ServerArgs};
use crate::connect::{self, Connected, Unreached};
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
    let runtime: Arc<dyn Runtime> = Arc::new(taskwire_tokio::Tokio);
    let mut proxy = Proxy::new(runtime.clone(), as_task, connect::config(&args.server));
    if args.restart {
        let (server, kept) = (args.server.clone(), Arc::default());
        proxy =
            proxy.restart_with(move |builder| restart(server.clone(), Arc::clone(&kept), builder));
    }
    let opened = match (
        &args.http,
        &args.server.url,
        args.server.command.split_first(),
    ) {
        // Stdio on both sides: the relay stands between them (unless the server is to be
        // spoken to in 2026-07-28, whose calls it never carries).
        (None, None, Some((program, rest))) if args.server.era != "2026-07-28" => {
            relayed(&proxy, &runtime, program, rest, store.is_some()).await
        }
        _ => connect::open(&args.server, proxy.client_builder())
            .await
            .map(|connected| (connected, None)),
    };
    let (connected, relayed_front) = match opened {
        Ok(opened) => opened,
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
    let mut config = Config::new("taskwire-proxy", env!("CARGO_PKG_VERSION"));
    config.tasks.max_tasks = args.max_tasks;
    config.tasks.max_tasks_per_owner = args.max_tasks_per_client;
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
    let served = match (&args.http, relayed_front) {
        (None, Some(front)) => {
            server.serve(runtime, front.input, front.output).await;
            Ok(())
        }
        (None, None) => taskwire_tokio::serve_stdio(server).await,
        (Some(address), _) => match tokio::net::TcpListener::bind(address).await {
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

/// Starts the stdio server `program` with `args` behind a relay on this process's stdio, and
/// opens its session: the connection, and the streams the proxy's server serves (`stored`:
/// the front's tasks are kept in a store, so task calls are not relayed).
async fn relayed(
    proxy: &Proxy,
    runtime: &Arc<dyn Runtime>,
    program: &str,
    args: &[String],
    stored: bool,
) -> Result<(Connected, Option<Stdio>), Unreached> {
    let child = connect::start(program, args)?;
    let stdio = runtime
        .stdio()
        .map_err(|e| Unreached::Start(format!("cannot use this process's stdio: {e}")))?;
    let stop = runtime.terminated();
    let relayed = proxy.relay(runtime, stdio, child.stdin, child.stdout, stop, stored);
    let client = proxy.client_builder().connect(
        runtime.clone(),
        relayed.behind_stdout,
        relayed.behind_stdin,
    );
    let connected = connect::handshake(client, Some(child.process)).await?;
    relayed
        .relay
        .behind_speaks(&connected.server.protocol_version);
    Ok((connected, Some(relayed.front)))
}

/// Starts the server `server` names again and connects `builder` to it; the process is
/// kept in `kept` until the next restart (or the proxy's end).
async fn restart(
    server: ServerArgs,
    kept: Arc<Mutex<Option<Connected>>>,
    builder: ClientBuilder,
) -> Result<Client, String> {
    let connected = connect::open(&server, builder).await.map_err(|e| match e {
        Unreached::Usage(why) | Unreached::Start(why) => why,
        Unreached::Failed(e) => e.to_string(),
    })?;
    let client = connected.client.clone();
    *kept.lock().unwrap_or_else(|e| e.into_inner()) = Some(connected);
    Ok(client)
}

/// What stops the proxy, said on stderr.
fn fatal(message: &str, exit: Exit) -> Exit {
    eprintln!("taskwire proxy: {message}");
    exit
}
