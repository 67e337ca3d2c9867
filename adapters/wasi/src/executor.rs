//! The executor: `futures`' `LocalPool`, driven by [`block_on`], which turns the reactor
//! whenever every task is waiting. Spawning goes through a thread-local handle so that the
//! `Send + Sync` [`Runtime`](taskwire_driver::Runtime) can reach the (non-`Send`) pool.

use std::cell::RefCell;
use std::future::Future;
use std::io;
use std::pin::pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};

use futures::executor::{LocalPool, LocalSpawner};
use futures::task::{waker, ArcWake, LocalSpawnExt};

use crate::reactor;

thread_local! {
    static SPAWNER: RefCell<Option<LocalSpawner>> = const { RefCell::new(None) };
}

/// Runs `future` in the background on the executor of the enclosing [`block_on`].
///
/// # Panics
///
/// Outside [`block_on`].
pub fn spawn(future: impl Future<Output = ()> + 'static) {
    SPAWNER.with(|s| {
        let spawner = s.borrow();
        let spawner = spawner
            .as_ref()
            .expect("taskwire_wasi::spawn called outside taskwire_wasi::block_on");
        spawner
            .spawn_local(future)
            .expect("the executor of block_on is running");
    });
}

/// Runs `future` to completion on this thread, with the tasks it [`spawn`]s and the reactor's
/// timers and stdio waits. Tasks still pending when it completes are dropped.
///
/// Fails if the reactor's wait fails, or when every task waits and nothing (a timer, stdin,
/// stdout) could ever wake one.
///
/// # Panics
///
/// When called inside another `block_on`.
pub fn block_on<F: Future>(future: F) -> io::Result<F::Output> {
    let mut pool = LocalPool::new();
    SPAWNER.with(|s| {
        let mut s = s.borrow_mut();
        assert!(s.is_none(), "taskwire_wasi::block_on is not reentrant");
        *s = Some(pool.spawner());
    });
    let _installed = Installed;
    let woken = Arc::new(Woken(AtomicBool::new(true)));
    let main_waker = waker(woken.clone());
    let mut cx = Context::from_waker(&main_waker);
    let mut future = pin!(future);
    loop {
        if woken.0.swap(false, Ordering::AcqRel) {
            if let Poll::Ready(output) = future.as_mut().poll(&mut cx) {
                return Ok(output);
            }
        }
        pool.run_until_stalled();
        if woken.0.load(Ordering::Acquire) {
            continue;
        }
        if !reactor::turn()? {
            return Err(io::Error::other(
                "taskwire_wasi::block_on: every task is waiting and no timer or stdio wait can wake one",
            ));
        }
    }
}

/// The main future's wake flag.
struct Woken(AtomicBool);

impl ArcWake for Woken {
    fn wake_by_ref(arc_self: &Arc<Self>) {
        arc_self.0.store(true, Ordering::Release);
    }
}

/// Uninstalls the spawner and forgets stdio waiters when `block_on` ends (or unwinds).
struct Installed;

impl Drop for Installed {
    fn drop(&mut self) {
        let _ = SPAWNER.try_with(|s| s.borrow_mut().take());
        reactor::forget_stdio_waiters();
    }
}
