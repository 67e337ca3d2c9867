//! stdin and stdout as `AsyncRead`/`AsyncWrite` on the reactor.
//!
//! A read happens only after the reactor saw fd 0 readable, and only one per readiness: it
//! returns what is there (or 0 at EOF) without blocking, in every runtime. Writes are tried
//! directly (stdout is normally blocking); if the host fd is non-blocking and full, the write
//! waits for the reactor to see fd 1 writable.

use std::io::{self, Read, Write};
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use futures::{AsyncRead, AsyncWrite};

use crate::reactor::{self, Fd};

/// fd 0. Give it buffers of at least 8 KiB: std's stdin buffer is then bypassed, so a read is
/// exactly one `fd_read`.
pub(crate) struct Stdin;

impl AsyncRead for Stdin {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        loop {
            ready!(reactor::poll_ready(Fd::Stdin, cx));
            match io::stdin().read(buf) {
                // Readiness was spurious (or consumed): wait for the next one.
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                result => return Poll::Ready(result),
            }
        }
    }
}

/// fd 1.
pub(crate) struct Stdout;

/// Runs a stdout operation; on `WouldBlock` waits for fd 1 to become writable and retries.
fn retry<T>(cx: &mut Context<'_>, mut op: impl FnMut() -> io::Result<T>) -> Poll<io::Result<T>> {
    loop {
        match op() {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                ready!(reactor::poll_ready(Fd::Stdout, cx));
            }
            result => return Poll::Ready(result),
        }
    }
}

impl AsyncWrite for Stdout {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        retry(cx, || io::stdout().write(buf))
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        retry(cx, || io::stdout().flush())
    }

    fn poll_close(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.poll_flush(cx)
    }
}
