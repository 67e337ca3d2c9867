//! Which of this process's stdio streams an async runtime can poll: pipes and sockets can
//! wait on the reactor, so reads and writes happen in the driver's own thread; files and
//! terminals cannot (and a terminal must not be switched to non-blocking mode under the
//! shell), so the runtime adapters put those on a thread.

/// The buffer between the thread that reads or writes a stdio file or terminal and the
/// runtime (`blocking::Unblock::with_capacity`): 64 KiB, a pipe's size. Unblock's default
/// (8 MiB) zero-fills up to that much before each read of stdin.
pub const UNBLOCKED_CAPACITY: usize = 64 * 1024;

#[cfg(unix)]
use std::fs::File;
#[cfg(unix)]
use std::io;
#[cfg(unix)]
use std::os::fd::{AsFd, OwnedFd};
#[cfg(unix)]
use std::os::unix::fs::{FileTypeExt, MetadataExt};
#[cfg(unix)]
use std::os::unix::net::UnixStream;

/// A stdio stream a reactor can wait on (a duplicate of the process's descriptor).
#[derive(Debug)]
#[cfg(unix)]
pub enum Pollable {
    /// A pipe (FIFO).
    Pipe(File),
    /// A socket.
    Socket(UnixStream),
}

/// stdin, when it is a pipe or a socket.
#[cfg(unix)]
pub fn pollable_stdin() -> io::Result<Option<Pollable>> {
    pollable(io::stdin().as_fd().try_clone_to_owned()?)
}

/// stdout, when it is a pipe or a socket that stderr does not share (the runtime makes the
/// stream non-blocking, which would make stderr writes fail under load).
#[cfg(unix)]
pub fn pollable_stdout() -> io::Result<Option<Pollable>> {
    let out = io::stdout().as_fd().try_clone_to_owned()?;
    let (a, b) = (
        File::from(out.try_clone()?).metadata()?,
        File::from(io::stderr().as_fd().try_clone_to_owned()?).metadata()?,
    );
    if (a.dev(), a.ino()) == (b.dev(), b.ino()) {
        return Ok(None);
    }
    pollable(out)
}

#[cfg(unix)]
fn pollable(fd: OwnedFd) -> io::Result<Option<Pollable>> {
    let file = File::from(fd);
    let kind = file.metadata()?.file_type();
    Ok(if kind.is_fifo() {
        Some(Pollable::Pipe(file))
    } else if kind.is_socket() {
        Some(Pollable::Socket(UnixStream::from(OwnedFd::from(file))))
    } else {
        None
    })
}
