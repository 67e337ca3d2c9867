//! `conformance-server [--runtime smol|tokio | --http ADDR]`: the conformance suite's
//! fixtures, core and tasks (`taskwire_demo::conformance`), on stdio or over Streamable HTTP
//! at `http://ADDR/mcp` (ending response streams after 500 ms for the client to resume,
//! SEP-1699), speaking 2026-07-28 and 2025-11-25 alike. The
//! `wasm32-wasip1` build runs on taskwire-wasi and has no `--runtime`.

use std::process::ExitCode;

use clap::Parser;
#[cfg(not(target_os = "wasi"))]
use taskwire_demo::options::{RuntimeChoice, Serving};

/// The MCP conformance suite's fixtures (core and tasks scenarios), on stdio or over
/// Streamable HTTP, speaking 2026-07-28 and 2025-11-25 alike.
#[derive(Debug, Parser)]
#[command(name = "conformance-server", version)]
struct Args {
    /// Where it serves (over HTTP, response streams end after 500 ms for the client to
    /// resume them, SEP-1699).
    #[cfg(not(target_os = "wasi"))]
    #[command(flatten)]
    serving: Serving,
}

/// Over HTTP the server polls (SEP-1699): a response stream open half a second is ended and
/// the client resumes it (`test_reconnection` takes longer); replies that take longer than
/// 100 ms stream.
#[cfg(not(target_os = "wasi"))]
fn polling() -> taskwire_http::HttpConfig {
    taskwire_http::HttpConfig {
        stream_after: std::time::Duration::from_millis(100),
        poll_after: Some(std::time::Duration::from_millis(500)),
        ..taskwire_http::HttpConfig::default()
    }
}

fn main() -> ExitCode {
    #[cfg_attr(target_os = "wasi", allow(unused_variables))]
    let args = Args::parse();
    let server = taskwire_demo::conformance::server();
    #[cfg(not(target_os = "wasi"))]
    let _telemetry = taskwire_demo::logs::init(match args.serving.http {
        Some(_) => "info",
        None => "warn",
    });
    #[cfg(not(target_os = "wasi"))]
    let served = match (args.serving.http, args.serving.runtime) {
        (Some(address), _) => taskwire_demo::http::serve(server, &address, polling()),
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
            eprintln!("conformance-server: {e}");
            ExitCode::FAILURE
        }
    }
}
