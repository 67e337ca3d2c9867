//! `task-client [--runtime smol|tokio] [--request-timeout-ms N] [-- CMD ARGS...]`: the seed's
//! client flow against the `task-server` built beside this binary, or against any stdio MCP
//! server. Input the server asks for (`elicitation/create`) is answered unattended: accepted
//! with the form's defaults, or declined.

use std::process::ExitCode;

// The client starts servers as child processes: there is no WASI build of it.
#[cfg(not(target_os = "wasi"))]
use {
    std::io::Write,
    std::path::PathBuf,
    std::time::{Duration, Instant},
    taskwire_demo::flow,
    taskwire_demo::options::{Options, RuntimeChoice},
    taskwire_driver::engine::Config,
    taskwire_driver::ClientBuilder,
};

#[cfg(target_os = "wasi")]
fn main() -> ExitCode {
    eprintln!("task-client: not available on WASI (it starts the server as a child process); run the native build");
    ExitCode::from(2)
}

#[cfg(not(target_os = "wasi"))]
fn main() -> ExitCode {
    let options = match Options::parse_with(std::env::args().skip(1), &[], &[TIMEOUT]) {
        Ok(o) => o,
        Err(e) => {
            eprintln!(
                "task-client: {e}\nusage: task-client [--runtime smol|tokio] \
                 [{TIMEOUT} N] [-- CMD ARGS...]"
            );
            return ExitCode::from(2);
        }
    };
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
    let start = Instant::now();
    let mut config = Config::new("task-client", env!("CARGO_PKG_VERSION"));
    if let Some(ms) = options.number(TIMEOUT) {
        config.request_timeout_ms = Some(ms);
    }
    let builder = ClientBuilder::new(config).on_elicitation(move |params| {
        let answer = flow::elicitation_answer(&params);
        print(flow::stamped(start, &flow::input_line(&params, &answer)));
        async move { Ok(answer) }
    });
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
