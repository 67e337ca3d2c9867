//! What the driver needs from an async runtime: spawning, a timer it re-arms, stdio, child
//! processes and the termination signal. Plus the wall clock and task ids.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::process::ExitStatus;
use std::task::{Context, Poll};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use futures::{AsyncRead, AsyncWrite};
use taskwire_engine::Millis;

/// A boxed future the runtime runs to completion.
pub type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;
/// A byte stream from the peer.
pub type Reader = Pin<Box<dyn AsyncRead + Send + 'static>>;
/// A byte stream to the peer.
pub type Writer = Pin<Box<dyn AsyncWrite + Send + 'static>>;

/// A timer the driver re-arms in place (one per driver, following the engine's deadline).
pub trait Timer: Send {
    /// Fires at `deadline` from now on (replacing any earlier deadline).
    fn reset(&mut self, deadline: Instant);
    /// Ready once the deadline has passed; registers `cx` otherwise.
    fn poll_fired(&mut self, cx: &mut Context<'_>) -> Poll<()>;
}

/// This process's stdin and stdout.
pub struct Stdio {
    /// stdin.
    pub input: Reader,
    /// stdout.
    pub output: Writer,
}

/// A started child process: its stdin, its stdout, and a handle on the process.
pub struct Child {
    /// The child's stdin.
    pub stdin: Writer,
    /// The child's stdout.
    pub stdout: Reader,
    /// The process.
    pub process: Box<dyn ChildProcess>,
}

/// A running child process.
pub trait ChildProcess: Send {
    /// Its process id.
    fn id(&self) -> Option<u32>;
    /// Kills it.
    fn kill(&mut self) -> io::Result<()>;
    /// Waits for it to exit.
    fn wait(&mut self) -> Pin<Box<dyn Future<Output = io::Result<ExitStatus>> + Send + '_>>;
}

/// Everything the driver asks of an async runtime; the smol, tokio and WASI adapters are
/// implementations of this and little else.
pub trait Runtime: Send + Sync + 'static {
    /// Runs `future` in the background.
    fn spawn(&self, future: BoxFuture<()>);
    /// A new timer, not yet armed.
    fn timer(&self) -> Box<dyn Timer>;
    /// Completes after `duration` (for tools that wait).
    fn sleep(&self, duration: Duration) -> BoxFuture<()>;
    /// This process's stdin and stdout, on the runtime's reactor where the platform can poll
    /// them (pipes and sockets), on a thread where it cannot (files, terminals).
    fn stdio(&self) -> io::Result<Stdio>;
    /// Starts `command` with piped stdin and stdout (stderr is inherited).
    fn spawn_child(&self, command: std::process::Command) -> io::Result<Child>;
    /// Completes when the process is asked to terminate (SIGTERM); never where there are no
    /// signals.
    fn terminated(&self) -> BoxFuture<()>;
}

/// The wall clock in milliseconds since the Unix epoch: the time fed to the engine.
pub fn now() -> Millis {
    let since = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    Millis(u64::try_from(since.as_millis()).unwrap_or(u64::MAX))
}

/// The monotonic instant of an engine deadline (wall-clock milliseconds).
pub(crate) fn instant_of(deadline: Millis) -> Instant {
    Instant::now() + Duration::from_millis(deadline.0.saturating_sub(now().0))
}
