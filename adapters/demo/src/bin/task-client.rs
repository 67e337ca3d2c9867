//! `task-client [--runtime smol|tokio] [--era auto|2026-07-28|2025-11-25]
//! [--request-timeout-ms N] [--url URL [--client-credentials ID] | -- CMD ARGS...]` (`--help`):
//! the seed's client flow against the
//! `task-server` built beside this binary, against any stdio MCP server, or against a
//! Streamable HTTP endpoint (`--url http://127.0.0.1:3000/mcp`, on tokio; a server that wants
//! OAuth is signed in to, by the printed URL or as a machine). The era is the
//! server's choice by default (`server/discover`, falling back to `initialize`). Input the
//! server asks for (`elicitation/create`, in either era) is answered unattended: accepted
//! with the form's defaults, or declined.

use std::process::ExitCode;

// The client starts servers as child processes: there is no WASI build of it.
#[cfg(not(target_os = "wasi"))]
use {
    clap::Parser,
    std::io::Write,
    std::path::PathBuf,
    std::time::{Duration, Instant},
    taskwire_demo::flow,
    taskwire_demo::options::{EraChoice, RuntimeChoice},
    taskwire_driver::engine::Config,
    taskwire_driver::ClientBuilder,
    taskwire_http::oauth::client::{Loopback, OAuthClient},
};

/// The seed's client flow: initialize, list the tools, call `long_running_task` as a task,
/// follow it to its result. Against the `task-server` beside this binary, any stdio MCP
/// server (`-- CMD ARGS…`), or a Streamable HTTP endpoint (`--url`). Questions the server
/// asks are answered unattended: accepted with the form's defaults, or declined.
#[cfg(not(target_os = "wasi"))]
#[derive(Debug, Parser)]
#[command(name = "task-client", version)]
struct Args {
    /// The async runtime (over HTTP always tokio).
    #[arg(long, value_enum, default_value_t)]
    runtime: RuntimeChoice,
    /// The protocol era: the server's best (auto), or one only.
    #[arg(long, value_enum, default_value_t)]
    era: EraChoice,
    /// How long each request waits for its answer (`tasks/result` of a finished task
    /// included), in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 60_000)]
    request_timeout_ms: u64,
    /// A Streamable HTTP endpoint, e.g. http://127.0.0.1:3000/mcp (instead of a stdio server).
    /// A server that wants OAuth is signed in to: the authorization URL is printed, to open
    /// in a browser on this machine.
    #[arg(long, value_name = "URL", conflicts_with = "command")]
    url: Option<String>,
    /// With --url, signs in as this machine client (client credentials; the secret from
    /// TASKWIRE_CLIENT_SECRET) instead of as a person.
    #[arg(long, value_name = "CLIENT_ID", requires = "url")]
    client_credentials: Option<String>,
    /// The stdio server to start, after `--` (default: the task-server beside this binary).
    #[arg(last = true, value_name = "CMD")]
    command: Vec<String>,
}

#[cfg(target_os = "wasi")]
fn main() -> ExitCode {
    eprintln!("task-client: not available on WASI (it starts the server as a child process); run the native build");
    ExitCode::from(2)
}

#[cfg(not(target_os = "wasi"))]
fn main() -> ExitCode {
    let args = Args::parse();
    let _telemetry = taskwire_demo::logs::init("warn");
    let start = Instant::now();
    let mut config = Config::new("task-client", env!("CARGO_PKG_VERSION"));
    config.client_era = args.era.client_era();
    config.request_timeout_ms = Some(args.request_timeout_ms);
    let builder = ClientBuilder::new(config).on_elicitation(move |request| {
        let answer = flow::elicitation_answer(&request);
        print(flow::stamped(start, &flow::input_line(&request, &answer)));
        async move { Ok(answer) }
    });
    if let Some(url) = args.url {
        let oauth = match sign_in(args.client_credentials) {
            Ok(oauth) => oauth,
            Err(e) => {
                eprintln!("task-client: {e}");
                return ExitCode::from(2);
            }
        };
        return over_http(&url, oauth, builder, start);
    }
    let (program, server_args) = match args.command.split_first() {
        Some((program, rest)) => (PathBuf::from(program), rest.to_vec()),
        None => match beside_me("task-server") {
            Ok(server) => (server, vec!["--runtime".into(), args.runtime.name().into()]),
            Err(e) => {
                eprintln!("task-client: {e}");
                return ExitCode::FAILURE;
            }
        },
    };
    let mut command = std::process::Command::new(&program);
    command.args(&server_args);
    let outcome = match args.runtime {
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

/// How the client signs in when the server asks: as the machine `client_credentials` names,
/// or as a person opening the printed URL (tokens kept for this run only).
#[cfg(not(target_os = "wasi"))]
fn sign_in(client_credentials: Option<String>) -> Result<OAuthClient, String> {
    if let Some(client_id) = client_credentials {
        let secret = std::env::var("TASKWIRE_CLIENT_SECRET").map_err(|_| {
            format!("--client-credentials {client_id}: set TASKWIRE_CLIENT_SECRET to its secret")
        })?;
        return Ok(OAuthClient::client_credentials(client_id, secret));
    }
    let agent = Loopback::bind(|url| {
        eprintln!("task-client: sign in at {url}");
        Ok(())
    })
    .map_err(|e| format!("cannot listen for the sign-in's redirect: {e}"))?;
    Ok(OAuthClient::new(agent).name("task-client"))
}

/// The flow against the Streamable HTTP endpoint `url`.
#[cfg(not(target_os = "wasi"))]
fn over_http(url: &str, oauth: OAuthClient, builder: ClientBuilder, start: Instant) -> ExitCode {
    let outcome = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map(|rt| {
            rt.block_on(async {
                let client = taskwire_http::HttpClient::new(url)
                    .oauth(oauth)
                    .connect(builder);
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
