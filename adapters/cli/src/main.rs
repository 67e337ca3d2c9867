//! `taskwire`: run any MCP server's tool as a task from the command line, watch it live,
//! answer its questions, cancel it (`taskwire --help`).

mod answers;
mod args;
mod arguments;
mod call;
mod connect;
mod display;
mod exit;
mod proxy;
mod sign_in;
mod tasks;
mod tools;

use std::io::{self, Write};
use std::process::ExitCode;

use clap::Parser;
use taskwire_driver::Error;

use args::{Cli, Command};
use connect::Unreached;
use display::Display;
use exit::Exit;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let telemetry = taskwire_driver::telemetry::init("error");
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            let _ = writeln!(io::stderr(), "taskwire: cannot start: {e}");
            return Exit::Connection.into();
        }
    };
    // `ID=$(taskwire call … --detach)` takes the id alone.
    let detached = matches!(&cli.command, Command::Call(call) if call.detach);
    let display = Display::new(cli.json, detached);
    let exit = runtime.block_on(async move {
        match cli.command {
            Command::Tools { server } => tools::run(server, display).await,
            Command::Call(args) => call::run(args, display).await,
            Command::Wait(args) => call::wait(args, display).await,
            Command::Proxy(args) => proxy::run(args).await,
            Command::Tasks { command } => tasks::run(command, display).await,
            Command::Logout { url } => logout(&url),
        }
    });
    // The server's process and the client's driver are not waited for.
    runtime.shutdown_background();
    drop(telemetry);
    exit.into()
}

/// `taskwire logout URL`.
fn logout(url: &str) -> Exit {
    let (message, exit) = match sign_in::logout(url) {
        Ok(true) => (format!("signed out of {url}"), Exit::Completed),
        Ok(false) => (format!("no tokens kept for {url}"), Exit::Completed),
        Err(e) => {
            let file = sign_in::token_file();
            (
                format!("cannot change {}: {e}", file.display()),
                Exit::Failed,
            )
        }
    };
    let _ = writeln!(io::stderr(), "taskwire: {message}");
    exit
}

/// A usage error found after parsing: said on stderr, exit 2.
fn usage(message: &str) -> Exit {
    let _ = writeln!(
        io::stderr(),
        "taskwire: {message}\n\nFor more information, try '--help'."
    );
    Exit::Usage
}

/// A server the command could not reach.
fn unreached(unreached: Unreached, display: &Display) -> Exit {
    match unreached {
        Unreached::Usage(message) => usage(&message),
        Unreached::Start(message) => {
            let error = serde_json::json!({ "kind": "start", "message": message });
            display.fatal(error, &message, Exit::Connection as u8);
            Exit::Connection
        }
        Unreached::Failed(e) => failed(&e, display),
    }
}

/// A request that failed: said, and its exit code.
fn failed(error: &Error, display: &Display) -> Exit {
    let exit = Exit::of_error(error);
    display.error(error, exit as u8);
    exit
}

/// A request about the task `task` that failed: said as [`failed`] does, naming the task
/// (quoted, so that stray spaces or lines in it show) when the server does not know it.
fn failed_on(task: &str, error: &Error, display: &Display) -> Exit {
    let exit = Exit::of_error(error);
    if exit != Exit::Lost {
        return failed(error, display);
    }
    let message = format!(
        "the server does not know the task {task:?} (it expired, or the id is not one of \
         its tasks): {}",
        display::say(error)
    );
    let mut json = display::error_json(error);
    json["taskId"] = task.into();
    json["message"] = message.clone().into();
    display.fatal(json, &message, exit as u8);
    exit
}
