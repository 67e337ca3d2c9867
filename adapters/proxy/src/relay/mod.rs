//! The relay: a stdio front before a stdio server behind, carrying the plain calls of a
//! 2025-11-25 front client straight through when the server behind speaks 2025-11-25 too
//! (the common case of a proxy, and its cheapest: no driver on either side sees them).
//!
//! The relay owns the four real streams. What it does not carry (the handshakes, task
//! calls, every other request, and everything of a 2026-07-28 client) goes to the proxy's
//! server and client through in-memory pipes, unchanged, and what they write comes out
//! whole line by whole line between the relayed ones. What it carries is listed in
//! [`table`]: each relayed line is rewritten only in its id (or progress token).

mod split;
mod table;

use std::sync::{Arc, Mutex};

use futures::lock::Mutex as AsyncMutex;
use futures::{AsyncReadExt, AsyncWriteExt, FutureExt};
use taskwire_driver::{BoxFuture, Reader, Runtime, Stdio, Writer};

use crate::routes::Routes;
use crate::{AsTask, Proxy};
use split::Splitter;
use table::Table;

/// Bytes read from a stream at once.
const CHUNK: usize = 16 * 1024;
/// Bytes an in-memory pipe to a driver holds before its writer waits.
const PIPE: usize = 64 * 1024;

/// The streams the proxy's server and client use instead of the real ones, and the switch
/// that turns relaying on.
pub struct Relayed {
    /// The front's connection, for the proxy's server (`Server::serve`).
    pub front: Stdio,
    /// The server behind's stdout, for the proxy's client (`ClientBuilder::connect`).
    pub behind_stdout: Reader,
    /// The server behind's stdin, likewise.
    pub behind_stdin: Writer,
    /// Relays once told the server behind's era.
    pub relay: Relay,
}

/// A running relay (see [`Proxy::relay`]).
pub struct Relay {
    table: Arc<Mutex<Table>>,
}

impl Relay {
    /// The server behind answered the handshake in `protocol`: calls are relayed when it
    /// is 2025-11-25 (a 2026-07-28 server decides per call whether a call is a task, so
    /// each goes through the proxy's client).
    pub fn behind_speaks(&self, protocol: &str) {
        if protocol != "2025-11-25" {
            return;
        }
        self.table.lock().unwrap().behind_ready = true;
        tracing::info!("the calls of 2025-11-25 clients are relayed straight behind");
    }
}

impl Proxy {
    /// Stands between the front's stdio (`front`) and a stdio server behind (its `stdin`
    /// and `stdout`), on `runtime`, until `stop` (SIGTERM) or the front's end of input:
    /// serve the proxy's server on [`Relayed::front`] and connect its client to
    /// [`Relayed::behind_stdout`] and [`Relayed::behind_stdin`], then tell the relay the
    /// server's era ([`Relay::behind_speaks`]). A question the server behind asks while
    /// relayed calls run goes to the front client, unless a call through the proxy's
    /// client also runs without a task behind (the proxy's client then routes it).
    ///
    /// Task calls are relayed too, with `tasks/get`, `tasks/result`, `tasks/cancel`,
    /// `tasks/list`, the task notices and questions of the server behind, unless the front
    /// keeps tasks of its own: `stored` (its tasks are kept in a store, to outlive the
    /// proxy) or tools offered as tasks by [`AsTask`], and unless a tool behind requires a
    /// task (the proxy's client then runs that tool's plain calls as tasks behind, which the
    /// relay leaves to it). Relayed tasks are the server behind's: its ids, its limits, its
    /// `tasks/list`.
    ///
    /// When the server behind's output ends, each relayed call gets -32603 and nothing more
    /// is relayed (calls then take the proxy's client, which may start a new server).
    pub fn relay(
        &self,
        runtime: &Arc<dyn Runtime>,
        front: Stdio,
        stdin: Writer,
        stdout: Reader,
        stop: BoxFuture<()>,
        stored: bool,
    ) -> Relayed {
        let mut table = Table::default();
        table.tasks = !stored && self.as_task == AsTask::None;
        table.required = self.required.clone();
        let table = Arc::new(Mutex::new(table));
        let (front_out, behind_in) = (shared(front.output), shared(stdin));
        let (server_in, to_server) = piper::pipe(PIPE);
        let (from_server, server_out) = piper::pipe(PIPE);
        let (client_in, to_client) = piper::pipe(PIPE);
        let (from_client, client_out) = piper::pipe(PIPE);
        let from_front = FromFront {
            table: table.clone(),
            to_server,
            behind: behind_in.clone(),
            front: front_out.clone(),
        };
        runtime.spawn(Box::pin(from_front.run(front.input, stop)));
        let from_behind = FromBehind {
            table: table.clone(),
            routes: self.routes.clone(),
            to_client,
            front: front_out.clone(),
        };
        runtime.spawn(Box::pin(from_behind.run(stdout)));
        runtime.spawn(Box::pin(copy_lines(from_server, front_out)));
        runtime.spawn(Box::pin(copy_lines(from_client, behind_in)));
        Relayed {
            front: Stdio {
                input: Box::pin(server_in),
                output: Box::pin(server_out),
            },
            behind_stdout: Box::pin(client_in),
            behind_stdin: Box::pin(client_out),
            relay: Relay { table },
        }
    }
}

/// A real stream written by two: whole lines, under the lock.
type Shared = Arc<AsyncMutex<Writer>>;

fn shared(writer: Writer) -> Shared {
    Arc::new(AsyncMutex::new(writer))
}

async fn write(to: &Shared, bytes: &[u8]) -> std::io::Result<()> {
    let mut to = to.lock().await;
    to.write_all(bytes).await?;
    to.flush().await
}

/// The front client's input: relayed behind, or handed to the proxy's server.
struct FromFront {
    table: Arc<Mutex<Table>>,
    to_server: piper::Writer,
    behind: Shared,
    front: Shared,
}

impl FromFront {
    async fn run(mut self, mut input: Reader, stop: BoxFuture<()>) {
        let (mut buf, mut split) = (vec![0; CHUNK], Splitter::default());
        let mut stop = stop.fuse();
        let (mut server, mut relayed) = (Vec::new(), Vec::new());
        loop {
            let read = futures::select_biased! {
                read = input.read(&mut buf).fuse() => read,
                () = stop => break,
            };
            let Some(n) = bytes_read(read, "the front client") else {
                break;
            };
            {
                let mut table = self.table.lock().unwrap();
                split.push(&buf[..n], &mut server, |line| {
                    table.front_line(line, &mut relayed)
                });
            }
            if !relayed.is_empty() {
                if let Err(e) = write(&self.behind, &relayed).await {
                    tracing::warn!(error = %e, "writing to the server behind failed");
                    let mut errors = Vec::new();
                    self.table.lock().unwrap().behind_gone(&mut errors);
                    let _ = write(&self.front, &errors).await;
                }
                relayed.clear();
            }
            if !server.is_empty() && self.to_server.write_all(&server).await.is_err() {
                break;
            }
            server.clear();
        }
        split.finish(&mut server);
        let _ = self.to_server.write_all(&server).await;
        // Dropping the pipe is the server's end of input.
    }
}

/// The server behind's output: relayed to the front, or handed to the proxy's client.
struct FromBehind {
    table: Arc<Mutex<Table>>,
    routes: Routes,
    to_client: piper::Writer,
    front: Shared,
}

impl FromBehind {
    async fn run(mut self, mut stdout: Reader) {
        let (mut buf, mut split) = (vec![0; CHUNK], Splitter::default());
        let (mut client, mut relayed) = (Vec::new(), Vec::new());
        loop {
            let read = stdout.read(&mut buf).await;
            let Some(n) = bytes_read(read, "the server behind") else {
                break;
            };
            {
                let mut table = self.table.lock().unwrap();
                let routes = &self.routes;
                split.push(&buf[..n], &mut client, |line| {
                    table.behind_line(line, &mut relayed, || routes.has_plain())
                });
            }
            if !relayed.is_empty() {
                // The front gone, the proxy ends with its input.
                let _ = write(&self.front, &relayed).await;
                relayed.clear();
            }
            // The proxy's client gone, relayed calls still go on.
            let _ = self.to_client.write_all(&client).await;
            client.clear();
        }
        split.finish(&mut client);
        let _ = self.to_client.write_all(&client).await;
        self.table.lock().unwrap().behind_gone(&mut relayed);
        let _ = write(&self.front, &relayed).await;
    }
}

/// How many bytes a read of `what` gave; `None` at its end, or when it failed (logged).
fn bytes_read(read: std::io::Result<usize>, what: &str) -> Option<usize> {
    match read {
        Ok(0) => None,
        Ok(n) => Some(n),
        Err(e) => {
            tracing::warn!(error = %e, "reading {what} failed");
            None
        }
    }
}

/// Copies a driver's output to the real stream `to`, whole lines at a time (so that no
/// relayed line lands inside one of the driver's); closes `to` at the end.
async fn copy_lines(mut from: piper::Reader, to: Shared) {
    let (mut buf, mut pending) = (vec![0; CHUNK], Vec::new());
    while let Ok(n @ 1..) = from.read(&mut buf).await {
        // Mostly whole lines come: written as read.
        if pending.is_empty() && buf[..n].ends_with(b"\n") {
            if write(&to, &buf[..n]).await.is_err() {
                return;
            }
            continue;
        }
        pending.extend_from_slice(&buf[..n]);
        let Some(end) = pending.iter().rposition(|&b| b == b'\n') else {
            continue;
        };
        if write(&to, &pending[..=end]).await.is_err() {
            return;
        }
        pending.drain(..=end);
    }
    let _ = write(&to, &pending).await;
    let _ = to.lock().await.close().await;
}
