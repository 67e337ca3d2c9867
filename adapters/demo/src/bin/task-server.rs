//! `task-server [--runtime smol|tokio | --http ADDR] [--store SPEC] [--role ROLE]
//! [--concurrency N] [--keep-finished N] [--required-tool] [--extra-tools] [--bench-tools] [--step-ms N]` (`--help`): the seed's MCP task server on stdio, or over Streamable
//! HTTP at `http://ADDR/mcp` (both eras; tokio, many threads). `--extra-tools` adds `confirm_task`
//! (asks for a confirmation mid-task) and `progress_task` (reports progress); `--bench-tools`
//! adds the benchmark fixture's `echo` and `instant_task` and room for 200,000 tasks.
//! `--store sqlite:PATH` keeps the tasks in a SQLite file, so that they survive a restart
//! (without it they live in memory); `sqlite:PATH?synchronous=full` makes every commit wait
//! for the disk (durable on power loss), `?synchronous=normal` is the default. With a
//! `postgres://…?replica=NAME` store, `--role front|worker|both` makes it one process of a
//! fleet: fronts queue each task's work, workers run it (`--concurrency N` at once); over
//! HTTP it holds the live tasks and the newest `--keep-finished N` finished ones. The
//! `wasm32-wasip1` build runs on taskwire-wasi and has neither `--runtime` nor `--store`.
//! `--cors-origin ORIGIN` (repeatable, or `*`) lets web pages of that origin call the HTTP
//! server from a browser; `--dashboard` serves a live task dashboard at `http://ADDR/tasks`;
//! `--metrics ADDR` serves its metrics at `http://ADDR/metrics`.

use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
#[cfg(not(target_os = "wasi"))]
use taskwire_demo::http::{Auth, CorsOrigins};
#[cfg(not(target_os = "wasi"))]
use taskwire_demo::options::{RoleChoice, RuntimeChoice, Serving};
use taskwire_demo::tools::ServerOptions;
#[cfg(not(target_os = "wasi"))]
use taskwire_driver::prometheus_client::registry::Registry;

/// The seed's MCP task server (`long_running_task`, three status messages a step apart), on
/// stdio or over Streamable HTTP, in both protocol eras.
#[derive(Debug, Parser)]
#[command(name = "task-server", version)]
struct Args {
    /// Where it serves.
    #[cfg(not(target_os = "wasi"))]
    #[command(flatten)]
    serving: Serving,
    /// With `--http`: OAuth access tokens wanted.
    #[cfg(not(target_os = "wasi"))]
    #[command(flatten)]
    auth: Auth,
    /// With `--http`: web pages of other origins allowed to call it.
    #[cfg(not(target_os = "wasi"))]
    #[command(flatten)]
    cors: CorsOrigins,
    /// With `--http`: serves a live dashboard of the server's tasks at http://ADDR/tasks
    /// (behind the same authentication as /mcp).
    #[cfg(not(target_os = "wasi"))]
    #[arg(long, requires = "http")]
    dashboard: bool,
    /// Keeps the tasks in a store, so that they survive a restart (default: in memory):
    /// `sqlite:PATH` (`?synchronous=full` waits for the disk at every commit, `normal` is the
    /// default) or `postgres://…` (`?replica=NAME&lease=MS` for several servers sharing it).
    #[cfg(not(target_os = "wasi"))]
    #[arg(long, value_name = "SPEC")]
    store: Option<String>,
    /// Adds `long_running_task_required` (taskSupport "required").
    #[arg(long)]
    required_tool: bool,
    /// Adds `confirm_task` (asks for a confirmation mid-task) and `progress_task` (reports
    /// progress with a total).
    #[arg(long)]
    extra_tools: bool,
    /// Adds the benchmark fixture's `echo` and `instant_task`, and room for 200,000 tasks.
    #[arg(long)]
    bench_tools: bool,
    /// The pause between the steps of the tools, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 1000)]
    step_ms: u64,
    /// What this process does among servers sharing a `postgres://` store: `both` takes
    /// requests and runs work, `front` takes requests and queues each task's work for a
    /// worker, `worker` runs queued work and serves neither stdio nor HTTP (it runs until
    /// Ctrl-C or SIGTERM).
    #[cfg(not(target_os = "wasi"))]
    #[arg(long, value_enum, default_value_t)]
    role: RoleChoice,
    /// How many tools a `both` or `worker` process runs at once with work taken from the
    /// store.
    #[cfg(not(target_os = "wasi"))]
    #[arg(long, value_name = "N", default_value_t = 32)]
    concurrency: usize,
    /// With a `postgres://` store over HTTP, how many finished tasks it holds in memory (the
    /// newest; older ones are read from the database when asked for).
    #[cfg(not(target_os = "wasi"))]
    #[arg(long, value_name = "N", default_value_t = 10_000)]
    keep_finished: usize,
    /// Serves its metrics (tasks, requests, the store, HTTP) in the OpenMetrics text format
    /// (Prometheus scrapes it) at http://ADDR/metrics, on a listener of its own.
    #[cfg(not(target_os = "wasi"))]
    #[arg(long, value_name = "ADDR")]
    metrics: Option<String>,
}

fn main() -> ExitCode {
    let args = Args::parse();
    #[cfg(not(target_os = "wasi"))]
    let store = match args.store.as_deref().map(taskwire_demo::store::open) {
        None => None,
        Some(Ok(store)) => Some(store),
        Some(Err(taskwire_demo::store::OpenError::Spec(e))) => return usage(&e),
        Some(Err(taskwire_demo::store::OpenError::Store(e))) => {
            eprintln!("task-server: {e}");
            return ExitCode::FAILURE;
        }
    };
    let server_options = ServerOptions {
        step: Duration::from_millis(args.step_ms),
        required_tool: args.required_tool,
        bench_tools: args.bench_tools,
        extra_tools: args.extra_tools,
    };
    let server = match taskwire_demo::tools::server(server_options) {
        Ok(server) => server,
        Err(e) => return usage(&e.to_string()),
    };
    #[cfg(not(target_os = "wasi"))]
    let server = match store {
        Some(store) => server
            .with_store(store)
            .concurrency(args.concurrency)
            .keep_finished(args.keep_finished),
        None => server,
    };
    #[cfg(not(target_os = "wasi"))]
    let server = match server.role(args.role.role()) {
        Ok(server) => server,
        Err(e) => return usage(&format!("--role {}: {e}", args.role.name())),
    };
    #[cfg(not(target_os = "wasi"))]
    if args.serving.http.is_none() && args.auth.auth_issuer.is_some() {
        return usage("--auth-issuer needs --http (stdio has no tokens)");
    }
    // Over HTTP, and for a worker, what it does is news (`info`); on stdio, only trouble.
    #[cfg(not(target_os = "wasi"))]
    let _telemetry = taskwire_demo::logs::init(
        match args.serving.http.is_none() && args.role != RoleChoice::Worker {
            true => "warn",
            false => "info",
        },
    );
    // `--metrics`: the server's and the endpoint's metrics, registered before it is served.
    #[cfg(not(target_os = "wasi"))]
    let (server, http_metrics) = match args.metrics.as_deref() {
        None => (server, None),
        Some(address) => {
            let mut registry = Registry::default();
            let server = server.metrics(&mut registry);
            let http = args
                .serving
                .http
                .is_some()
                .then(|| taskwire_http::HttpMetrics::register(&mut registry));
            if let Err(e) = taskwire_demo::metrics::serve(address, registry) {
                return usage(&e);
            }
            (server, http)
        }
    };
    #[cfg(not(target_os = "wasi"))]
    let served = match (args.serving.http, args.serving.runtime) {
        _ if args.role == RoleChoice::Worker => tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .and_then(|rt| rt.block_on(taskwire_tokio::serve_worker(server))),
        (Some(address), _) => {
            let oauth = match args.auth.resource_server() {
                Ok(oauth) => oauth,
                Err(e) => return usage(&e),
            };
            let cors = match args.cors.policy() {
                Ok(cors) => cors,
                Err(e) => return usage(&e),
            };
            let config = taskwire_http::HttpConfig {
                cors,
                metrics: http_metrics,
                dashboard: args.dashboard.then(|| "/tasks".to_owned()),
                ..taskwire_demo::http::config(oauth)
            };
            taskwire_demo::http::serve(server, &address, config)
        }
        (None, RuntimeChoice::Smol) => taskwire_smol::serve_stdio(server),
        // One thread, as on smol: the driver, stdio and the tools share it.
        (None, RuntimeChoice::Tokio) => tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .and_then(|rt| rt.block_on(taskwire_tokio::serve_stdio(server))),
    };
    #[cfg(target_os = "wasi")]
    let served = taskwire_wasi::serve_stdio(server);
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("task-server: {e}");
            ExitCode::FAILURE
        }
    }
}

/// A usage error clap could not see (a store spec): exit 2.
fn usage(error: &str) -> ExitCode {
    eprintln!("task-server: {error}\n\nFor more information, try '--help'.");
    ExitCode::from(2)
}
