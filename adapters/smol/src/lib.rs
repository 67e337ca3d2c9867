//! # taskwire-smol
//!
//! [`taskwire_driver`] on smol: serve MCP over this process's stdio, or drive a server
//! started as a child process.

use std::io;
use std::sync::Arc;
use std::time::Duration;

use smol::process::{Child, Command, Stdio};
use taskwire_driver::pump::{read_into, write_from};
use taskwire_driver::{BoxFuture, Client, ClientBuilder, Input, Runtime, Server};

/// The smol runtime: its global executor and timers.
#[derive(Clone, Copy, Debug, Default)]
pub struct Smol;

impl Runtime for Smol {
    fn spawn(&self, future: BoxFuture<()>) {
        smol::spawn(future).detach();
    }

    fn sleep(&self, duration: Duration) -> BoxFuture<()> {
        Box::pin(async move {
            smol::Timer::after(duration).await;
        })
    }
}

/// Serves `server` on stdin/stdout until stdin ends or SIGTERM arrives; running tools are
/// dropped and pending output is flushed before it returns.
pub fn serve_stdio(server: Server) -> io::Result<()> {
    smol::block_on(async {
        let (input_tx, input) = async_channel::bounded(16);
        let (output, output_rx) = async_channel::bounded(64);
        smol::spawn(read_into(smol::Unblock::new(io::stdin()), input_tx.clone())).detach();
        #[cfg(unix)]
        smol::spawn(eof_on_sigterm(input_tx.clone())).detach();
        let writer = smol::spawn(async move {
            let written = write_from(output_rx, smol::Unblock::new(io::stdout())).await;
            if written.is_err() {
                // Nobody reads our output any more (broken pipe): stop as on EOF.
                let _ = input_tx.send(Input::Eof).await;
            }
            written
        });
        server.run(Arc::new(Smol), input, output).await;
        writer.await
    })
}

/// Starts `command` as a stdio MCP server (its stderr goes to ours) and connects a client.
/// If the child exits or closes its stdout, every pending call fails at once.
pub fn spawn_server(command: &mut Command, client: ClientBuilder) -> io::Result<(Client, Child)> {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()?;
    let (stdin, stdout) = (child.stdin.take(), child.stdout.take());
    let (Some(stdin), Some(stdout)) = (stdin, stdout) else {
        return Err(io::Error::other("child stdio was not piped"));
    };
    let (input_tx, input) = async_channel::bounded(16);
    let (output, output_rx) = async_channel::bounded(64);
    smol::spawn(read_into(stdout, input_tx)).detach();
    smol::spawn(async move {
        let _ = write_from(output_rx, stdin).await;
    })
    .detach();
    Ok((client.start(Arc::new(Smol), input, output), child))
}

#[cfg(unix)]
async fn eof_on_sigterm(input: async_channel::Sender<Input>) {
    use futures::StreamExt;
    if let Ok(mut signals) = async_signal::Signals::new([async_signal::Signal::Term]) {
        if signals.next().await.is_some() {
            let _ = input.send(Input::Eof).await;
        }
    }
}
