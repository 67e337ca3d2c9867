//! # taskwire-wasi
//!
//! [`taskwire_driver`] on `wasm32-wasip1`, which has no threads: one thread runs everything.
//! A complete server (build it with `cargo build --target wasm32-wasip1`, run it under any
//! WASI runtime with stdin and stdout as the connection):
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
//!     taskwire_wasi::serve_stdio(server)
//! }
//! ```
//!
//! - [`block_on`] runs the driver (which reads stdin and writes stdout itself) and the tool
//!   work it [`spawn`]s on `futures`' `LocalPool`.
//! - When every task waits, the reactor makes one `poll_oneoff` call: an `fd_read`
//!   subscription on stdin (while the driver waits for input), an `fd_write` one on stdout
//!   (only after a write would block), and a relative monotonic clock subscription whose
//!   timeout is the nearest timer. The driver's timer is the engine's next deadline
//!   (`Host::poll_timeout`), so the module sleeps until input arrives or the engine has
//!   something to do, and uses no CPU idle.
//! - [`Wasi`] is the driver's [`Runtime`]: `spawn` goes to the running `LocalPool`, timers
//!   are the reactor's, stdio is fd 0 and 1 on the reactor.
//!
//! The raw WASI calls are the crate's only `unsafe`, in its `poll` module. WASI preview 1 has no
//! signals: the server stops at stdin EOF. Panics abort on `wasm32-wasip1` (no unwinding), so a
//! panicking tool ends the module instead of failing its task.
#![deny(unsafe_code)]
#![warn(missing_docs)]

mod executor;
mod poll;
mod reactor;
mod stdio;

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use taskwire_driver::{BoxFuture, Child, Runtime, Server, Stdio, Timer};

pub use executor::{block_on, spawn};
pub use reactor::{sleep, Sleep};

/// The WASI runtime: the [`block_on`] executor and the reactor's timers. Use it inside
/// [`block_on`] only.
#[derive(Clone, Copy, Debug, Default)]
pub struct Wasi;

impl Runtime for Wasi {
    fn spawn(&self, future: BoxFuture<()>) {
        spawn(future);
    }

    fn timer(&self) -> Box<dyn Timer> {
        Box::new(DeadlineTimer(None))
    }

    fn sleep(&self, duration: Duration) -> BoxFuture<()> {
        Box::pin(sleep(duration))
    }

    fn stdio(&self) -> io::Result<Stdio> {
        Ok(Stdio {
            input: Box::pin(stdio::Stdin),
            output: Box::pin(stdio::Stdout),
        })
    }

    fn spawn_child(&self, _: std::process::Command) -> io::Result<Child> {
        Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "WASI preview 1 cannot start processes",
        ))
    }

    fn terminated(&self) -> BoxFuture<()> {
        // No signals in WASI preview 1: the server stops at the end of stdin.
        Box::pin(futures::future::pending())
    }
}

/// A reactor timer, replaced on each reset.
struct DeadlineTimer(Option<Sleep>);

impl Timer for DeadlineTimer {
    fn reset(&mut self, deadline: Instant) {
        self.0 = Some(reactor::sleep_until(deadline));
    }

    fn poll_fired(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        match self.0.as_mut() {
            Some(sleep) => Pin::new(sleep).poll(cx),
            None => Poll::Pending,
        }
    }
}

/// Serves `server` on stdin/stdout until stdin ends; running tools are dropped and pending
/// output is flushed before it returns.
pub fn serve_stdio(server: Server) -> io::Result<()> {
    let served = block_on(taskwire_driver::serve_stdio(server, Arc::new(Wasi)));
    poll::restore_blocking_stdin();
    served?
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;
    use std::rc::Rc;
    use std::time::Instant;

    use super::*;

    #[test]
    fn spawned_timers_fire_in_deadline_order_and_unregister() {
        let order = Rc::new(RefCell::new(Vec::new()));
        let start = Instant::now();
        let o = order.clone();
        block_on(async move {
            let (done_tx, done) = async_channel::unbounded::<()>();
            for (id, ms) in [(2u32, 20u64), (1, 10), (3, 30)] {
                let (o, done_tx) = (o.clone(), done_tx.clone());
                spawn(async move {
                    sleep(Duration::from_millis(ms)).await;
                    o.borrow_mut().push(id);
                    drop(done_tx);
                });
            }
            drop(done_tx);
            let _ = done.recv().await; // closed once all three finished
        })
        .unwrap();
        assert_eq!(*order.borrow(), [1, 2, 3]);
        assert!(start.elapsed() >= Duration::from_millis(30));
        assert_eq!(reactor::timers(), 0);
    }

    #[test]
    fn a_dropped_timer_unregisters() {
        block_on(async {
            let long = sleep(Duration::from_secs(60));
            let short = sleep(Duration::from_millis(5));
            futures::pin_mut!(long, short);
            futures::future::select(long, short).await;
            // `long` is still alive here and registered.
            assert_eq!(reactor::timers(), 1);
        })
        .unwrap();
        assert_eq!(reactor::timers(), 0, "the 60 s timer was dropped");
    }

    #[test]
    fn the_runtime_trait_spawns_and_sleeps() {
        let rt: Arc<dyn Runtime> = Arc::new(Wasi);
        let got = block_on(async move {
            let (tx, rx) = futures::channel::oneshot::channel();
            let sleep = rt.sleep(Duration::from_millis(2));
            rt.spawn(Box::pin(async move {
                sleep.await;
                let _ = tx.send(42);
            }));
            rx.await
        })
        .unwrap();
        assert_eq!(got, Ok(42));
    }

    #[test]
    fn waiting_on_nothing_is_an_error_not_a_hang() {
        let err = block_on(futures::future::pending::<()>()).unwrap_err();
        assert!(err.to_string().contains("no timer or stdio wait"), "{err}");
    }

    #[test]
    fn nested_block_on_panics() {
        let result = std::panic::catch_unwind(|| block_on(async { block_on(async {}) }));
        assert!(result.is_err());
        // The outer one cleaned up: a new block_on works.
        assert_eq!(block_on(async { 7 }).unwrap(), 7);
    }
}
