//! # taskwire-tokio
//!
//! [`taskwire_driver`] on tokio. A complete server:
//!
//! ```no_run
//! use serde::Deserialize;
//! use taskwire_driver::{CallToolResult, Config, Server, TaskSupport, Tool};
//!
//! #[derive(Deserialize)]
//! struct Echo {
//!     text: String,
//! }
//!
//! #[tokio::main(flavor = "current_thread")]
//! async fn main() -> std::io::Result<()> {
//!     let server = Server::new(Config::new("echo", "1.0")).tool(
//!         Tool::new("echo", TaskSupport::Optional),
//!         |ctx, args: Echo| async move {
//!             ctx.set_status("echoing").await;
//!             Ok(CallToolResult::text(args.text))
//!         },
//!     );
//!     taskwire_tokio::serve_stdio(server).await
//! }
//! ```
//!
//! [`serve_stdio`] runs the driver in the calling task with stdin and stdout on tokio's
//! reactor when they are pipes or sockets (a file or a terminal goes through a helper
//! thread instead); tools that wait are spawned with `tokio::spawn`. On a current-thread
//! runtime everything shares one thread. [`spawn_server`] starts a server as a child process
//! and connects a [`Client`]. [`Tokio`] is the [`Runtime`]. Call
//! these from inside a tokio runtime.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::process::ExitStatus;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use taskwire_driver::stdio::UNBLOCKED_CAPACITY;
use taskwire_driver::{
    BoxFuture, Child, ChildProcess, Client, ClientBuilder, Reader, Runtime, Server, Stdio, Timer,
    Writer,
};
use tokio_util::compat::{TokioAsyncReadCompatExt, TokioAsyncWriteCompatExt};

/// The tokio runtime the caller runs in.
#[derive(Clone, Copy, Debug, Default)]
pub struct Tokio;

impl Runtime for Tokio {
    fn spawn(&self, future: BoxFuture<()>) {
        tokio::spawn(future);
    }

    fn timer(&self) -> Box<dyn Timer> {
        let far = tokio::time::Instant::now() + Duration::from_secs(86_400 * 365);
        Box::new(DeadlineTimer(Box::pin(tokio::time::sleep_until(far))))
    }

    fn sleep(&self, duration: Duration) -> BoxFuture<()> {
        Box::pin(tokio::time::sleep(duration))
    }

    fn stdio(&self) -> io::Result<Stdio> {
        #[cfg(unix)]
        {
            use taskwire_driver::stdio::{pollable_stdin, pollable_stdout, Pollable};
            use tokio::net::unix::pipe;
            let input: Reader = match pollable_stdin()? {
                Some(Pollable::Pipe(file)) => Box::pin(pipe::Receiver::from_file(file)?.compat()),
                Some(Pollable::Socket(stream)) => Box::pin(unix_stream(stream)?.compat()),
                None => Box::pin(blocking::Unblock::with_capacity(
                    UNBLOCKED_CAPACITY,
                    io::stdin(),
                )),
            };
            let output: Writer = match pollable_stdout()? {
                Some(Pollable::Pipe(file)) => {
                    Box::pin(pipe::Sender::from_file(file)?.compat_write())
                }
                Some(Pollable::Socket(stream)) => Box::pin(unix_stream(stream)?.compat_write()),
                None => Box::pin(blocking::Unblock::with_capacity(
                    UNBLOCKED_CAPACITY,
                    io::stdout(),
                )),
            };
            Ok(Stdio { input, output })
        }
        #[cfg(not(unix))]
        Ok(Stdio {
            input: Box::pin(blocking::Unblock::with_capacity(
                UNBLOCKED_CAPACITY,
                io::stdin(),
            )),
            output: Box::pin(blocking::Unblock::with_capacity(
                UNBLOCKED_CAPACITY,
                io::stdout(),
            )),
        })
    }

    fn spawn_child(&self, command: std::process::Command) -> io::Result<Child> {
        use std::process::Stdio as Pipe;
        let mut child = tokio::process::Command::from(command)
            .stdin(Pipe::piped())
            .stdout(Pipe::piped())
            .stderr(Pipe::inherit())
            .spawn()?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(io::Error::other("child stdio was not piped"));
        };
        Ok(Child {
            stdin: Box::pin(stdin.compat_write()),
            stdout: Box::pin(stdout.compat()),
            process: Box::new(Process(child)),
        })
    }

    fn terminated(&self) -> BoxFuture<()> {
        #[cfg(unix)]
        return Box::pin(async {
            use tokio::signal::unix::{signal, SignalKind};
            match signal(SignalKind::terminate()) {
                Ok(mut term) => {
                    term.recv().await;
                }
                Err(_) => futures::future::pending().await,
            }
        });
        #[cfg(not(unix))]
        Box::pin(futures::future::pending())
    }
}

#[cfg(unix)]
fn unix_stream(stream: std::os::unix::net::UnixStream) -> io::Result<tokio::net::UnixStream> {
    stream.set_nonblocking(true)?;
    tokio::net::UnixStream::from_std(stream)
}

/// tokio's sleep, re-armed in place.
struct DeadlineTimer(Pin<Box<tokio::time::Sleep>>);

impl Timer for DeadlineTimer {
    fn reset(&mut self, deadline: Instant) {
        self.0
            .as_mut()
            .reset(tokio::time::Instant::from_std(deadline));
    }

    fn poll_fired(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        self.0.as_mut().poll(cx)
    }
}

struct Process(tokio::process::Child);

impl ChildProcess for Process {
    fn id(&self) -> Option<u32> {
        self.0.id()
    }

    fn kill(&mut self) -> io::Result<()> {
        self.0.start_kill()
    }

    fn wait(&mut self) -> Pin<Box<dyn Future<Output = io::Result<ExitStatus>> + Send + '_>> {
        Box::pin(self.0.wait())
    }
}

/// Serves `server` on stdin/stdout until stdin ends or SIGTERM arrives; running tools are
/// dropped and pending output is flushed before it returns.
pub async fn serve_stdio(server: Server) -> io::Result<()> {
    taskwire_driver::serve_stdio(server, Arc::new(Tokio)).await
}

/// Runs `server` as a worker ([`ServerRole::Worker`](taskwire_driver::ServerRole)): no
/// connections, only the work it claims from its shared store, until Ctrl-C or SIGTERM;
/// then its running tools stop, and it returns once their tasks are given back to the store
/// for other workers to take at once ([`TaskStore::hand_back`](taskwire_driver::TaskStore::hand_back);
/// a worker killed instead has its tasks taken over once its lease runs out).
pub async fn serve_worker(server: Server) -> io::Result<()> {
    let handle = server.start(Arc::new(Tokio));
    #[cfg(unix)]
    {
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    tokio::signal::ctrl_c().await?;
    handle.shutdown().await;
    Ok(())
}

/// Starts `command` as a stdio MCP server (its stderr goes to ours) and connects a client.
/// If the child exits or closes its stdout, every pending call fails at once.
pub fn spawn_server(
    command: std::process::Command,
    client: ClientBuilder,
) -> io::Result<(Client, Box<dyn ChildProcess>)> {
    taskwire_driver::spawn_server(Arc::new(Tokio), command, client)
}
