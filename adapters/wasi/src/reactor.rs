//! The reactor: a thread-local registry of timers and of the tasks waiting on stdin or stdout.
//! [`turn`] folds them into one `poll_oneoff` (the nearest deadline is the timeout) and wakes
//! whoever became ready.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use crate::poll::{self, Interest};

/// A timer's key: its deadline, then a sequence number for equal deadlines.
type Key = (Instant, u64);

/// One of the two stdio fds the reactor watches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Fd {
    Stdin,
    Stdout,
}

#[derive(Default)]
struct Watch {
    waiter: Option<Waker>,
    ready: bool,
}

#[derive(Default)]
struct Reactor {
    timers: BTreeMap<Key, Waker>,
    next_id: u64,
    stdin: Watch,
    stdout: Watch,
}

impl Reactor {
    fn watch(&mut self, fd: Fd) -> &mut Watch {
        match fd {
            Fd::Stdin => &mut self.stdin,
            Fd::Stdout => &mut self.stdout,
        }
    }

    /// Unregisters and returns the wakers of the timers due at `now`.
    fn take_expired(&mut self, now: Instant) -> Vec<Waker> {
        let later = self.timers.split_off(&(now, u64::MAX));
        std::mem::replace(&mut self.timers, later)
            .into_values()
            .collect()
    }
}

thread_local! {
    static REACTOR: RefCell<Reactor> = RefCell::default();
}

fn with<T>(f: impl FnOnce(&mut Reactor) -> T) -> T {
    REACTOR.with(|r| f(&mut r.borrow_mut()))
}

/// Completes `duration` from now.
pub fn sleep(duration: Duration) -> Sleep {
    let now = Instant::now();
    // Durations too long for `Instant` (e.g. `Duration::MAX`) wait a year instead.
    sleep_until(
        now.checked_add(duration)
            .unwrap_or(now + Duration::from_secs(365 * 86_400)),
    )
}

/// Completes at `deadline`.
pub fn sleep_until(deadline: Instant) -> Sleep {
    Sleep {
        deadline,
        key: None,
    }
}

/// A timer of the WASI reactor, made by [`sleep`]. It is `Send` (the driver wants that) but
/// must be polled on the thread that runs [`block_on`](crate::block_on).
#[derive(Debug)]
#[must_use = "a timer does nothing unless awaited"]
pub struct Sleep {
    deadline: Instant,
    key: Option<Key>,
}

impl Future for Sleep {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = &mut *self;
        with(|r| {
            if Instant::now() >= this.deadline {
                if let Some(key) = this.key.take() {
                    r.timers.remove(&key);
                }
                return Poll::Ready(());
            }
            match this.key.and_then(|key| r.timers.get_mut(&key)) {
                Some(waker) => waker.clone_from(cx.waker()),
                None => {
                    r.next_id += 1;
                    let key = (this.deadline, r.next_id);
                    r.timers.insert(key, cx.waker().clone());
                    this.key = Some(key);
                }
            }
            Poll::Pending
        })
    }
}

impl Drop for Sleep {
    fn drop(&mut self) {
        if let Some(key) = self.key.take() {
            // `try_with`: a timer dropped while the thread's locals are torn down has no registry.
            let _ = REACTOR.try_with(|r| r.borrow_mut().timers.remove(&key));
        }
    }
}

/// Takes `fd`'s readiness if the reactor saw it since the last call; otherwise registers the
/// task to be woken when it does.
pub(crate) fn poll_ready(fd: Fd, cx: &mut Context<'_>) -> Poll<()> {
    with(|r| {
        let watch = r.watch(fd);
        if std::mem::take(&mut watch.ready) {
            watch.waiter = None;
            Poll::Ready(())
        } else {
            match &mut watch.waiter {
                Some(waker) => waker.clone_from(cx.waker()),
                None => watch.waiter = Some(cx.waker().clone()),
            }
            Poll::Pending
        }
    })
}

/// Waits once for whatever is registered: the nearest timer, stdin, stdout. Wakes what became
/// ready. `Ok(false)` when nothing is registered, so nothing could ever wake a task.
pub(crate) fn turn() -> io::Result<bool> {
    let now = Instant::now();
    let (expired, interest) = with(|r| {
        let expired = r.take_expired(now);
        let interest = Interest {
            stdin: r.stdin.waiter.is_some(),
            stdout: r.stdout.waiter.is_some(),
            timeout: r.timers.keys().next().map(|k| k.0 - now),
        };
        (expired, interest)
    });
    if !expired.is_empty() {
        expired.into_iter().for_each(Waker::wake);
        return Ok(true);
    }
    if interest == Interest::default() {
        return Ok(false);
    }
    let ready = poll::wait(interest)?;
    let mut wake = with(|r| {
        let mut wake = r.take_expired(Instant::now());
        for (fd, is_ready) in [(Fd::Stdin, ready.stdin), (Fd::Stdout, ready.stdout)] {
            let watch = r.watch(fd);
            if is_ready {
                watch.ready = true;
                wake.extend(watch.waiter.take());
            }
        }
        wake
    });
    wake.drain(..).for_each(Waker::wake);
    Ok(true)
}

/// Drops the stdio waiters (their tasks are gone when `block_on` ends) and their readiness.
pub(crate) fn forget_stdio_waiters() {
    let _ = REACTOR.try_with(|r| {
        let mut r = r.borrow_mut();
        r.stdin = Watch::default();
        r.stdout = Watch::default();
    });
}

/// How many timers are registered (for tests).
#[cfg(test)]
pub(crate) fn timers() -> usize {
    with(|r| r.timers.len())
}
