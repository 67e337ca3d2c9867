//! `task-client [--runtime smol|tokio] [-- CMD ARGS...]`: the seed's client flow against the
//! `task-server` built beside this binary, or against any stdio MCP server.

use std::process::ExitCode;

// The client starts servers as child processes: there is no WASI build of it.
#[cfg(not(target_os = "wasi"))]
use {
    std::io::Write,
    std::path::PathBuf,
    std::time::Duration,
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
    let options = match Options::parse(std::env::args().skip(1), &[]) {
        Ok(o) => o,
        Err(e) => {
            eprintln!(
                "task-client: {e}\nusage: task-client [--runtime smol|tokio] [-- CMD ARGS...]"
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
    let print = |line: String| {
        let _ = writeln!(std::io::stdout(), "{line}");
    };
    let builder = ClientBuilder::new(Config::new("task-client", env!("CARGO_PKG_VERSION")));
    let outcome = match options.runtime {
        RuntimeChoice::Smol => smol::block_on(async {
            let mut command = smol::process::Command::new(&program);
            let (client, mut child) = taskwire_smol::spawn_server(command.args(&args), builder)?;
            let completed = taskwire_demo::flow::run(&client, print).await;
            client.close().await;
            let exited = futures::future::select(
                Box::pin(child.status()),
                Box::pin(smol::Timer::after(Duration::from_secs(2))),
            );
            if let futures::future::Either::Right(_) = exited.await {
                let _ = child.kill();
            }
            Ok::<_, std::io::Error>(completed)
        }),
        RuntimeChoice::Tokio => tokio::runtime::Runtime::new().and_then(|rt| {
            rt.block_on(async {
                let mut command = tokio::process::Command::new(&program);
                let (client, mut child) =
                    taskwire_tokio::spawn_server(command.args(&args), builder)?;
                let completed = taskwire_demo::flow::run(&client, print).await;
                client.close().await;
                if tokio::time::timeout(Duration::from_secs(2), child.wait())
                    .await
                    .is_err()
                {
                    let _ = child.kill().await;
                }
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
