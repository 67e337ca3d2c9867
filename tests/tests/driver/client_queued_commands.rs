//! A client call made just as its driver ends (the server exited: end of input) fails with
//! "Connection closed" instead of waiting forever: the driver is polled by hand, so the call
//! lands in the command queue after the driver's last turn, every time. (Found by
//! `client_scripted`'s `server_exits_after_initialize_library`, which hung about 1 run in 5.)

use std::future::Future;
use std::io;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use futures::task::noop_waker_ref;
use taskwire_driver::engine::Config;
use taskwire_driver::{code, BoxFuture, Child, ClientBuilder, RpcError, Runtime, Stdio, Timer};

/// A runtime that runs nothing itself: spawned futures are kept for the test to poll.
#[derive(Default)]
struct ByHand(Mutex<Vec<BoxFuture<()>>>);

/// A timer that never fires.
struct Never;

impl Timer for Never {
    fn reset(&mut self, _deadline: Instant) {}
    fn poll_fired(&mut self, _cx: &mut Context<'_>) -> Poll<()> {
        Poll::Pending
    }
}

impl Runtime for ByHand {
    fn spawn(&self, future: BoxFuture<()>) {
        self.0.lock().expect("spawned").push(future);
    }
    fn timer(&self) -> Box<dyn Timer> {
        Box::new(Never)
    }
    fn sleep(&self, _duration: Duration) -> BoxFuture<()> {
        Box::pin(futures::future::pending())
    }
    fn stdio(&self) -> io::Result<Stdio> {
        Err(io::ErrorKind::Unsupported.into())
    }
    fn spawn_child(&self, _command: std::process::Command) -> io::Result<Child> {
        Err(io::ErrorKind::Unsupported.into())
    }
    fn terminated(&self) -> BoxFuture<()> {
        Box::pin(futures::future::pending())
    }
}

#[test]
fn a_call_queued_as_the_driver_ends_fails_at_once() {
    let runtime = Arc::new(ByHand::default());
    let client = ClientBuilder::new(Config::new("queued", "0")).connect(
        runtime.clone(),
        Box::pin(futures::io::empty()),
        Box::pin(futures::io::sink()),
    );
    let mut driver = runtime
        .0
        .lock()
        .expect("spawned")
        .pop()
        .expect("the driver");
    let mut cx = Context::from_waker(noop_waker_ref());
    let ended = (0..10).any(|_| driver.as_mut().poll(&mut cx).is_ready());
    assert!(ended, "end of input ends the driver");

    // The driver has ended but is not dropped yet: the call is queued, unanswered.
    let mut call = Box::pin(client.list_tools());
    assert!(call.as_mut().poll(&mut cx).is_pending());
    drop(driver);
    match call.as_mut().poll(&mut cx) {
        Poll::Ready(Err(e)) => {
            let e = RpcError::from(e);
            assert_eq!(e.code, code::CONNECTION_CLOSED, "{e}")
        }
        other => panic!("the queued call must fail at once, not {other:?}"),
    }
    // Later calls fail at once too.
    let later = futures::executor::block_on(client.initialize());
    assert_eq!(
        later.map_err(RpcError::from).expect_err("no driver").code,
        code::CONNECTION_CLOSED
    );
}
