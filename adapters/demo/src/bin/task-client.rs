//! `task-client [--runtime smol|tokio] [--era auto|2026-07-28|2025-11-25]
//! [--request-timeout-ms N] [--url URL | -- CMD ARGS...]`: the seed's client flow against the
//! `task-server` built beside this binary, against any stdio MCP server, or against a
//! Streamable HTTP endpoint (`--url http://127.0.0.1:3000/mcp`, on tokio). The era is the
//! server's choice by default (`server/discover`, falling back to `initialize`). Input the
//! server asks for (`elicitation/create`, in either era) is answered unattended: accepted
//! with the form's defaults, or declined.

use std::process::ExitCode;

// The client starts servers as child processes: there is no WASI build of it.
#[cfg(not(target_os = "wasi"))]
use {
    std::io::Write,
    std::path::PathBuf,
    std::time::{Duration, Instant},
    taskwire_demo::flow,
    taskwire_demo::options::{take_value, Options, RuntimeChoice},
    taskwire_driver::engine::{ClientEra, Config},
    taskwire_driver::ClientBuilder,
};

#[cfg(target_os = "wasi")]
fn main() -> ExitCode {
    eprintln!("task-client: not available on WASI (it starts the server as a child process); run the native build");
    ExitCode::from(2)
}

#[cfg(not(target_os = "wasi"))]
fn main() -> ExitCode {
    let parsed = era_option(std::env::args().skip(1).collect()).and_then(|(era, mut args)| {
        let end = args.iter().position(|a| a == "--").unwrap_or(args.len());
        let mut before: Vec<String> = args.drain(..end).collect();
        let url = take_value(&mut before, "--url")?;
        before.extend(args);
        Options::parse_with(before, &[], &[TIMEOUT]).map(|options| (era, url, options))
    });
    let (era, url, options) = match parsed {
        Ok(parsed) => parsed,
        Err(e) => {
            eprintln!(
                "task-client: {e}\nusage: task-client [--runtime smol|tokio] \
                 [--era auto|2026-07-28|2025-11-25] [{TIMEOUT} N] [--url URL | -- CMD ARGS...]"
            );
            return ExitCode::from(2);
        }
    };
    taskwire_demo::logs::init("warn");
    let start = Instant::now();
    let mut config = Config::new("task-client", env!("CARGO_PKG_VERSION"));
    config.client_era = era;
    if let Some(ms) = options.number(TIMEOUT) {
        config.request_timeout_ms = Some(ms);
    }
    let builder = ClientBuilder::new(config).on_elicitation(move |request| {
        let answer = flow::elicitation_answer(&request);
        print(flow::stamped(start, &flow::input_line(&request, &answer)));
        async move { Ok(answer) }
    });
    if let Some(url) = url {
        return over_http(&url, builder, start);
    }
    let (program, args) = match options.rest.split_first() {
        Some((program, args)) => (PathBuf::from(program), args.to_vec()),
        None => match beside_me("task-server") {
            Ok(server) => (
                server,
                vec!["--runtime".into(), options.runtime.name().into()],
            ),
            Err(e) => {
                eprintln!("task-client: {e}");
                return ExitCode::FAILURE;
            }
        },
    };
    let mut command = std::process::Command::new(&program);
    command.args(&args);
    let outcome = match options.runtime {
        RuntimeChoice::Smol => smol::block_on(async {
            let (client, child) = taskwire_smol::spawn_server(command, builder)?;
            let completed = flow::run_since(&client, start, print).await;
            finish(client, child, smol::Timer::after(Duration::from_secs(2))).await;
            Ok::<_, std::io::Error>(completed)
        }),
        RuntimeChoice::Tokio => tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .and_then(|rt| {
                rt.block_on(async {
                    let (client, child) = taskwire_tokio::spawn_server(command, builder)?;
                    let completed = flow::run_since(&client, start, print).await;
                    finish(client, child, tokio::time::sleep(Duration::from_secs(2))).await;
                    Ok(completed)
                })
            }),
    };
    match outcome {
        Ok(Ok(true)) => ExitCode::SUCCESS,
        Ok(Ok(false)) => ExitCode::FAILURE,
        Ok(Err(e)) => {
            eprintln!("task-client: {e}");
            ExitCode::FAILURE
        }
        Err(e) => {
            eprintln!("task-client: cannot start {}: {e}", program.display());
            ExitCode::FAILURE
        }
    }
}

/// The option that sets the local timeout of each request (`tasks/result` of a finished
/// task included), in ms; the default is 60 000.
#[cfg(not(target_os = "wasi"))]
const TIMEOUT: &str = "--request-timeout-ms";

/// Takes `--era E` (before any `--`) out of `args`.
#[cfg(not(target_os = "wasi"))]
fn era_option(mut args: Vec<String>) -> Result<(ClientEra, Vec<String>), String> {
    let end = args.iter().position(|a| a == "--").unwrap_or(args.len());
    let Some(at) = args[..end].iter().position(|a| a == "--era") else {
        return Ok((ClientEra::Auto, args));
    };
    let era = match args.get(at + 1).map(String::as_str) {
        Some("auto") => ClientEra::Auto,
        Some("2026-07-28") => ClientEra::Only(taskwire_driver::engine::Era::V2026_07_28),
        Some("2025-11-25") => ClientEra::Only(taskwire_driver::engine::Era::V2025_11_25),
        other => {
            return Err(format!(
                "--era takes auto, 2026-07-28 or 2025-11-25, not {other:?}"
            ))
        }
    };
    args.drain(at..at + 2);
    Ok((era, args))
}

/// The flow against the Streamable HTTP endpoint `url`.
#[cfg(not(target_os = "wasi"))]
fn over_http(url: &str, builder: ClientBuilder, start: Instant) -> ExitCode {
    let outcome = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map(|rt| {
            rt.block_on(async {
                let client = taskwire_http::HttpClient::new(url).connect(builder);
                let completed = flow::run_since(&client, start, print).await;
                client.close().await;
                drop(client);
                // Lets the transport end the session (DELETE) before the runtime stops.
                tokio::time::sleep(Duration::from_millis(100)).await;
                completed
            })
        });
    match outcome {
        Ok(Ok(true)) => ExitCode::SUCCESS,
        Ok(Ok(false)) => ExitCode::FAILURE,
        Ok(Err(e)) => {
            eprintln!("task-client: {url}: {e}");
            ExitCode::FAILURE
        }
        Err(e) => {
            eprintln!("task-client: cannot start a runtime: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Prints one line on stdout.
#[cfg(not(target_os = "wasi"))]
fn print(line: String) {
    let _ = writeln!(std::io::stdout(), "{line}");
}

/// Closes the connection and waits for the server to exit; kills it after `grace`.
#[cfg(not(target_os = "wasi"))]
async fn finish(
    client: taskwire_driver::Client,
    mut child: Box<dyn taskwire_driver::ChildProcess>,
    grace: impl std::future::Future<Output = impl Sized>,
) {
    client.close().await;
    drop(client);
    let exited = futures::future::select(child.wait(), Box::pin(grace)).await;
    if let futures::future::Either::Right(_) = exited {
        drop(exited);
        let _ = child.kill();
    }
}

/// A binary in the same directory as this one.
#[cfg(not(target_os = "wasi"))]
fn beside_me(name: &str) -> Result<PathBuf, String> {
    let me = std::env::current_exe().map_err(|e| format!("cannot locate myself: {e}"))?;
    let path = me.with_file_name(format!("{name}{}", std::env::consts::EXE_SUFFIX));
    if path.exists() {
        Ok(path)
    } else {
        Err(format!(
            "{} not found; build it first: cargo build --release -p taskwire-demo",
            path.display()
        ))
    }
}
