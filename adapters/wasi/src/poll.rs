//! The raw WASI calls: wait on stdin/stdout and the clock with `poll_oneoff`, and restore fd 0's
//! flags. The only `unsafe` of the crate, and only on WASI; elsewhere a safe stand-in sleeps for
//! clock-only waits and answers `Unsupported` for stdio.
//!
//! Runtime quirks handled here (seen with Node 20's `node:wasi` and wasmtime 50):
//! - Node fails the whole call with EPERM when fd 0 is a regular file or `/dev/null` (libuv cannot
//!   poll those). Reads and writes on such files never block, so the fds count as ready.
//! - Node truncates clock timeouts to whole milliseconds: 0.4 ms becomes 0 and a loop waiting for
//!   a deadline would spin until it passes. Timeouts are rounded up to whole milliseconds.
//! - Node switches the *host* fd 0 to O_NONBLOCK when it polls it and never switches it back; the
//!   open file description may be shared with the parent (a shell's terminal), so
//!   [`restore_blocking_stdin`] clears it before the module exits.

use std::io;
use std::time::Duration;

/// What to wait for. With no fd and no timeout there is nothing to wait for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Interest {
    /// Until fd 0 is readable (data, EOF or hang-up).
    pub stdin: bool,
    /// Until fd 1 is writable.
    pub stdout: bool,
    /// At most this long (`None`: no limit).
    pub timeout: Option<Duration>,
}

/// Which fds are ready; neither means the timeout passed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Ready {
    pub stdin: bool,
    pub stdout: bool,
}

/// The timeout in whole milliseconds, rounded up, as nanoseconds.
fn round_up_to_ms(timeout: Duration) -> u64 {
    let ns = timeout.as_nanos().div_ceil(1_000_000) * 1_000_000;
    u64::try_from(ns).unwrap_or(u64::MAX)
}

#[cfg(target_os = "wasi")]
pub(crate) use wasi::{restore_blocking_stdin, wait};

#[cfg(not(target_os = "wasi"))]
pub(crate) use stand_in::{restore_blocking_stdin, wait};

#[cfg(not(target_os = "wasi"))]
mod stand_in {
    use super::*;

    /// Sleeps for clock-only waits; stdio waits need WASI.
    pub(crate) fn wait(interest: Interest) -> io::Result<Ready> {
        if interest.stdin || interest.stdout {
            return Err(io::Error::new(
                io::ErrorKind::Unsupported,
                "taskwire-wasi waits on stdio only on WASI (wasm32-wasip1)",
            ));
        }
        let timeout = interest.timeout.ok_or(io::ErrorKind::InvalidInput)?;
        std::thread::sleep(Duration::from_nanos(round_up_to_ms(timeout)));
        Ok(Ready::default())
    }

    pub(crate) fn restore_blocking_stdin() {}
}

#[cfg(target_os = "wasi")]
#[allow(unsafe_code)]
mod wasi {
    use super::*;

    const EVENTTYPE_CLOCK: u8 = 0;
    const EVENTTYPE_FD_READ: u8 = 1;
    const EVENTTYPE_FD_WRITE: u8 = 2;
    const CLOCKID_MONOTONIC: u32 = 1;
    const ERRNO_NOTSUP: i32 = 58;
    const ERRNO_PERM: i32 = 63;
    const FDFLAGS_NONBLOCK: u16 = 1 << 2;
    const STDIN: u32 = 0;
    const STDOUT: u32 = 1;
    const USERDATA_STDIN: u64 = 1;
    const USERDATA_STDOUT: u64 = 2;
    const USERDATA_CLOCK: u64 = 3;

    // Layouts from the wasi_snapshot_preview1 witx (wasm32: usize = u32, u64 aligned to 8).

    /// `subscription_clock`: id u32 @0, timeout u64 @8, precision u64 @16, flags u16 @24.
    #[repr(C)]
    #[derive(Clone, Copy)]
    struct SubClock {
        id: u32,
        timeout: u64,
        precision: u64,
        flags: u16,
    }

    /// `subscription_fd_readwrite`: file_descriptor u32 @0.
    #[repr(C)]
    #[derive(Clone, Copy)]
    struct SubFd {
        fd: u32,
    }

    #[repr(C)]
    union SubUnion {
        clock: SubClock,
        fd: SubFd,
    }

    /// `subscription` (48 bytes): userdata u64 @0, tag u8 @8, union @16.
    #[repr(C)]
    struct Subscription {
        userdata: u64,
        tag: u8,
        u: SubUnion,
    }

    /// `event` (32 bytes): userdata u64 @0, error u16 @8, type u8 @10,
    /// fd_readwrite @16 (nbytes u64 @16, flags u16 @24).
    #[repr(C)]
    #[derive(Clone, Copy, Default)]
    struct Event {
        userdata: u64,
        error: u16,
        kind: u8,
        nbytes: u64,
        rwflags: u16,
    }

    /// `fdstat` (24 bytes): filetype u8 @0, flags u16 @2, rights_base u64 @8, rights_inheriting u64 @16.
    #[repr(C)]
    #[derive(Clone, Copy, Default)]
    struct FdStat {
        filetype: u8,
        flags: u16,
        rights_base: u64,
        rights_inheriting: u64,
    }

    const _: () = {
        assert!(size_of::<Subscription>() == 48);
        assert!(size_of::<Event>() == 32);
        assert!(size_of::<FdStat>() == 24);
        assert!(std::mem::offset_of!(Subscription, u) == 16);
        assert!(std::mem::offset_of!(Event, nbytes) == 16);
    };

    #[link(wasm_import_module = "wasi_snapshot_preview1")]
    unsafe extern "C" {
        /// Returns a WASI errno (0 = success).
        fn poll_oneoff(
            subscriptions: *const Subscription,
            events: *mut Event,
            nsubscriptions: usize,
            nevents: *mut usize,
        ) -> u16;
        /// Fills a 24-byte `fdstat`. Returns a WASI errno.
        fn fd_fdstat_get(fd: u32, out: *mut FdStat) -> u16;
        /// Replaces the fd's `fdflags`. Returns a WASI errno.
        fn fd_fdstat_set_flags(fd: u32, flags: u16) -> u16;
    }

    fn fd_sub(userdata: u64, tag: u8, fd: u32) -> Subscription {
        Subscription {
            userdata,
            tag,
            u: SubUnion { fd: SubFd { fd } },
        }
    }

    fn clock_sub(timeout: Duration) -> Subscription {
        Subscription {
            userdata: USERDATA_CLOCK,
            tag: EVENTTYPE_CLOCK,
            u: SubUnion {
                clock: SubClock {
                    id: CLOCKID_MONOTONIC,
                    timeout: round_up_to_ms(timeout),
                    precision: 0,
                    flags: 0, // relative
                },
            },
        }
    }

    fn errno(e: u16) -> io::Result<()> {
        match e {
            0 => Ok(()),
            e => Err(io::Error::from_raw_os_error(i32::from(e))),
        }
    }

    /// Blocks until one of the fds in `interest` is ready or its timeout passes.
    pub(crate) fn wait(interest: Interest) -> io::Result<Ready> {
        let mut subs = Vec::with_capacity(3);
        if interest.stdin {
            subs.push(fd_sub(USERDATA_STDIN, EVENTTYPE_FD_READ, STDIN));
        }
        if interest.stdout {
            subs.push(fd_sub(USERDATA_STDOUT, EVENTTYPE_FD_WRITE, STDOUT));
        }
        if let Some(timeout) = interest.timeout {
            subs.push(clock_sub(timeout));
        }
        if subs.is_empty() {
            return Err(io::ErrorKind::InvalidInput.into());
        }
        let mut events = vec![Event::default(); subs.len()];
        loop {
            let mut n: usize = 0;
            // SAFETY: `subs` and `events` hold `subs.len()` elements with the witx layouts
            // checked above; the runtime writes at most that many events, and `n`.
            let result = errno(unsafe {
                poll_oneoff(subs.as_ptr(), events.as_mut_ptr(), subs.len(), &mut n)
            });
            match result {
                Ok(()) => {}
                // Node: fd 0 is a regular file or /dev/null. Those never block.
                Err(e) if matches!(e.raw_os_error(), Some(ERRNO_PERM | ERRNO_NOTSUP)) => {
                    return Ok(Ready {
                        stdin: interest.stdin,
                        stdout: interest.stdout,
                    });
                }
                Err(e) => return Err(e),
            }
            // An fd event counts even when it carries an error: the read or write reports it.
            let mut ready = Ready::default();
            for event in &events[..n.min(subs.len())] {
                match (event.userdata, event.kind) {
                    (USERDATA_STDIN, EVENTTYPE_FD_READ) => ready.stdin = true,
                    (USERDATA_STDOUT, EVENTTYPE_FD_WRITE) => ready.stdout = true,
                    _ => {}
                }
            }
            // Without a timeout, an empty answer is spurious: wait again.
            if ready.stdin || ready.stdout || interest.timeout.is_some() {
                return Ok(ready);
            }
        }
    }

    /// Clears NONBLOCK on fd 0 (Node leaves it set on the host fd). Wasmtime answers EBADF: it
    /// keeps no flags on stdio; that and any other error are ignored.
    pub(crate) fn restore_blocking_stdin() {
        let mut stat = FdStat::default();
        // SAFETY: `stat` is a writable 24-byte fdstat with the witx layout checked above.
        if errno(unsafe { fd_fdstat_get(STDIN, &mut stat) }).is_ok() {
            // Set even when the flag looks clear: Node reports flags from its own table.
            // SAFETY: plain integer arguments.
            let _ = unsafe { fd_fdstat_set_flags(STDIN, stat.flags & !FDFLAGS_NONBLOCK) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeouts_round_up_to_whole_milliseconds() {
        assert_eq!(round_up_to_ms(Duration::ZERO), 0);
        assert_eq!(round_up_to_ms(Duration::from_nanos(1)), 1_000_000);
        assert_eq!(round_up_to_ms(Duration::from_micros(400)), 1_000_000);
        assert_eq!(round_up_to_ms(Duration::from_millis(7)), 7_000_000);
        assert_eq!(round_up_to_ms(Duration::MAX), u64::MAX);
    }

    #[cfg(not(target_os = "wasi"))]
    #[test]
    fn the_stand_in_sleeps_and_refuses_stdio() {
        let start = std::time::Instant::now();
        let timeout = Some(Duration::from_micros(300));
        let ready = wait(Interest {
            timeout,
            ..Interest::default()
        })
        .unwrap();
        assert_eq!(ready, Ready::default());
        assert!(start.elapsed() >= Duration::from_millis(1));
        let stdio = Interest {
            stdin: true,
            timeout,
            ..Interest::default()
        };
        assert_eq!(wait(stdio).unwrap_err().kind(), io::ErrorKind::Unsupported);
    }
}
