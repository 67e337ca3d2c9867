//! `null-relay`: a process between a stdio client and a stdio server that only copies bytes
//! both ways, the floor of any stdio proxy in the end-to-end benchmark (`bench`): what the
//! extra process and its two pipes cost before a proxy reads a single message.
//!
//! Two threads, each a blocking read of whatever one side has and one write of it to the
//! other side. It stops when the server's stdout ends (its exit code is the server's).

use std::ffi::OsString;
use std::io::{self, Read, Write};
use std::process::{Command, ExitCode, Stdio};
use std::thread;

use clap::Parser;

/// A process between a stdio client and a stdio server that only copies bytes both ways: the
/// floor of any stdio proxy in `bench`.
#[derive(Debug, Parser)]
#[command(name = "null-relay", version)]
struct Args {
    /// The server's command line.
    #[arg(last = true, required = true)]
    server: Vec<OsString>,
}

fn main() -> ExitCode {
    let Args { server } = Args::parse();
    let mut child = match Command::new(&server[0])
        .args(&server[1..])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
    {
        Ok(child) => child,
        Err(e) => {
            eprintln!("null-relay: cannot start {:?}: {e}", server[0]);
            return ExitCode::FAILURE;
        }
    };
    let (Some(mut to_server), Some(mut from_server)) = (child.stdin.take(), child.stdout.take())
    else {
        unreachable!("both pipes were asked for");
    };
    // Ends with the client's stdin (the server then sees its own end of input).
    thread::spawn(move || copy(&mut io::stdin().lock(), &mut to_server));
    let copied = copy(&mut from_server, &mut io::stdout().lock());
    let status = child.wait();
    match (copied, status) {
        (Ok(()), Ok(status)) if status.success() => ExitCode::SUCCESS,
        (Ok(()), Ok(status)) => {
            eprintln!("null-relay: the server ended with {status}");
            ExitCode::FAILURE
        }
        (Err(e), _) | (_, Err(e)) => {
            eprintln!("null-relay: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Copies each read from `from` to `to` at once, until `from` ends or `to` closes.
fn copy(from: &mut impl Read, to: &mut impl Write) -> io::Result<()> {
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let read = match from.read(&mut buf) {
            Ok(0) => return Ok(()),
            Ok(read) => read,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        match to.write_all(&buf[..read]).and_then(|()| to.flush()) {
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => return Ok(()),
            other => other?,
        }
    }
}
