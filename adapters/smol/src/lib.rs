//! # taskwire-smol
//!
//! [`taskwire_driver`] on smol. A complete server:
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
//! fn main() -> std::io::Result<()> {
//!     let server = Server::new(Config::new("echo", "1.0")).tool(
//!         Tool::new("echo", TaskSupport::Optional),
//!         |ctx, args: Echo| async move {
//!             ctx.set_status("echoing").await;
//!             Ok(CallToolResult::text(args.text))
//!         },
//!     );
//!     taskwire_smol::serve_stdio(server)
//! }
//! ```
//!
//! [`serve_stdio`] runs the driver, the stdio streams and the tools on one thread: stdin
//! and stdout wait on smol's reactor when they are pipes or sockets (a file or a terminal
//! goes through a helper thread instead). [`spawn_server`] starts a server as a child
//! process and connects a [`Client`] to it. [`Smol`] is the
//! [`Runtime`] for anything else.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::process::ExitStatus;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use smol::{Async, Executor, Timer as SmolTimer, Unblock};
use taskwire_driver::stdio::UNBLOCKED_CAPACITY;
use taskwire_driver::{
    BoxFuture, Child, ChildProcess, Client, ClientBuilder, Reader, Runtime, Server, Stdio, Timer,
    Writer,
};

/// The smol runtime: tasks on an executor (by default smol's global one), smol's timers
/// and reactor.
#[derive(Clone, Debug, Default)]
pub struct Smol {
    executor: Option<Arc<Executor<'static>>>,
}

impl Smol {
    /// Spawns on `executor` (which the caller runs) instead of smol's global executor.
    pub fn on(executor: Arc<Executor<'static>>) -> Self {
        Smol {
            executor: Some(executor),
        }
    }
}

impl Runtime for Smol {
    fn spawn(&self, future: BoxFuture<()>) {
        match &self.executor {
            Some(executor) => executor.spawn(future).detach(),
            None => smol::spawn(future).detach(),
        }
    }

    fn timer(&self) -> Box<dyn Timer> {
        Box::new(DeadlineTimer(SmolTimer::never()))
    }

    fn sleep(&self, duration: Duration) -> BoxFuture<()> {
        Box::pin(async move {
            SmolTimer::after(duration).await;
        })
    }

    fn stdio(&self) -> io::Result<Stdio> {
        #[cfg(unix)]
        {
            use taskwire_driver::stdio::{pollable_stdin, pollable_stdout, Pollable};
            let input: Reader = match pollable_stdin()? {
                Some(Pollable::Pipe(file)) => Box::pin(Async::new(file)?),
                Some(Pollable::Socket(stream)) => Box::pin(Async::new(stream)?),
                None => Box::pin(Unblock::with_capacity(UNBLOCKED_CAPACITY, io::stdin())),
            };
            let output: Writer = match pollable_stdout()? {
                Some(Pollable::Pipe(file)) => Box::pin(Async::new(file)?),
                Some(Pollable::Socket(stream)) => Box::pin(Async::new(stream)?),
                None => Box::pin(Unblock::with_capacity(UNBLOCKED_CAPACITY, io::stdout())),
            };
            Ok(Stdio { input, output })
        }
        #[cfg(not(unix))]
        Ok(Stdio {
            input: Box::pin(Unblock::with_capacity(UNBLOCKED_CAPACITY, io::stdin())),
            output: Box::pin(Unblock::with_capacity(UNBLOCKED_CAPACITY, io::stdout())),
        })
    }

    fn spawn_child(&self, command: std::process::Command) -> io::Result<Child> {
        let mut child = smol::process::Command::from(command)
            .stdin(smol::process::Stdio::piped())
            .stdout(smol::process::Stdio::piped())
            .stderr(smol::process::Stdio::inherit())
            .spawn()?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(io::Error::other("child stdio was not piped"));
        };
        Ok(Child {
            stdin: Box::pin(stdin),
            stdout: Box::pin(stdout),
            process: Box::new(Process(child)),
        })
    }

    fn terminated(&self) -> BoxFuture<()> {
        #[cfg(unix)]
        return Box::pin(async {
            use futures::StreamExt;
            match async_signal::Signals::new([async_signal::Signal::Term]) {
                Ok(mut signals) => {
                    signals.next().await;
                }
                Err(_) => futures::future::pending().await,
            }
        });
        #[cfg(not(unix))]
        Box::pin(futures::future::pending())
    }
}

/// smol's timer, re-armed in place.
struct DeadlineTimer(SmolTimer);

impl Timer for DeadlineTimer {
    fn reset(&mut self, deadline: Instant) {
        self.0.set_at(deadline);
    }

    fn poll_fired(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        Pin::new(&mut self.0).poll(cx).map(drop)
    }
}

struct Process(smol::process::Child);

impl ChildProcess for Process {
    fn id(&self) -> Option<u32> {
        Some(self.0.id())
    }

    fn kill(&mut self) -> io::Result<()> {
        self.0.kill()
    }

    fn wait(&mut self) -> Pin<Box<dyn Future<Output = io::Result<ExitStatus>> + Send + '_>> {
        Box::pin(self.0.status())
    }
}

/// Serves `server` on stdin/stdout until stdin ends or SIGTERM arrives, all on this thread;
/// running tools are dropped and pending output is flushed before it returns.
pub fn serve_stdio(server: Server) -> io::Result<()> {
    let executor = Arc::new(Executor::new());
    let runtime = Arc::new(Smol::on(executor.clone()));
    smol::block_on(executor.run(taskwire_driver::serve_stdio(server, runtime)))
}

/// Starts `command` as a stdio MCP server (its stderr goes to ours) and connects a client
/// on smol's global executor. If the child exits or closes its stdout, every pending call
/// fails at once.
pub fn spawn_server(
    command: std::process::Command,
    client: ClientBuilder,
) -> io::Result<(Client, Box<dyn ChildProcess>)> {
    taskwire_driver::spawn_server(Arc::new(Smol::default()), command, client)
}
