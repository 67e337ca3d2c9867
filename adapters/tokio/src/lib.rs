//! # taskwire-tokio
//!
//! [`taskwire_driver`] on tokio: serve MCP over this process's stdio, or drive a server
//! started as a child process. Call these from inside a tokio runtime.

use std::io;
use std::sync::Arc;
use std::time::Duration;

use async_channel::{Receiver, Sender};
use taskwire_driver::{BoxFuture, Client, ClientBuilder, Input, Runtime, Server};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::process::{Child, Command};

/// The tokio runtime the caller runs in.
#[derive(Clone, Copy, Debug, Default)]
pub struct Tokio;

impl Runtime for Tokio {
    fn spawn(&self, future: BoxFuture<()>) {
        tokio::spawn(future);
    }

    fn sleep(&self, duration: Duration) -> BoxFuture<()> {
        Box::pin(tokio::time::sleep(duration))
    }
}

/// Serves `server` on stdin/stdout until stdin ends or SIGTERM arrives; running tools are
/// dropped and pending output is flushed before it returns.
pub async fn serve_stdio(server: Server) -> io::Result<()> {
    let (input_tx, input) = async_channel::bounded(16);
    let (output, output_rx) = async_channel::bounded(64);
    read_stdin_on_thread(input_tx.clone())?;
    #[cfg(unix)]
    tokio::spawn(eof_on_sigterm(input_tx.clone()));
    let writer = tokio::spawn(async move {
        let written = write_from(output_rx, tokio::io::stdout()).await;
        if written.is_err() {
            // Nobody reads our output any more (broken pipe): stop as on EOF.
            let _ = input_tx.send(Input::Eof).await;
        }
        written
    });
    server.run(Arc::new(Tokio), input, output).await;
    writer.await.map_err(io::Error::other)?
}

/// Starts `command` as a stdio MCP server (its stderr goes to ours) and connects a client.
/// If the child exits or closes its stdout, every pending call fails at once.
pub fn spawn_server(command: &mut Command, client: ClientBuilder) -> io::Result<(Client, Child)> {
    use std::process::Stdio;
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
    tokio::spawn(read_into(stdout, input_tx));
    tokio::spawn(write_from(output_rx, stdin));
    Ok((client.start(Arc::new(Tokio), input, output), child))
}

/// Reads until EOF or an error, forwarding each chunk; then sends `Input::Eof`.
async fn read_into(mut reader: impl AsyncRead + Unpin, input: Sender<Input>) {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match reader.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                if input.send(Input::Bytes(buf[..n].to_vec())).await.is_err() {
                    return;
                }
            }
        }
    }
    let _ = input.send(Input::Eof).await;
}

/// Reads stdin on a thread of its own rather than with `tokio::io::stdin()`: a read blocked
/// on a stdin that stays open (after SIGTERM, or once stdout broke) would otherwise keep the
/// runtime from shutting down. The thread ends with the process.
fn read_stdin_on_thread(input: Sender<Input>) -> io::Result<()> {
    use std::io::Read;
    let reader = move || {
        let mut stdin = io::stdin().lock();
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            match stdin.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => {
                    if input
                        .send_blocking(Input::Bytes(buf[..n].to_vec()))
                        .is_err()
                    {
                        return;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => break,
            }
        }
        let _ = input.send_blocking(Input::Eof);
    };
    std::thread::Builder::new()
        .name("taskwire-stdin".into())
        .spawn(reader)
        .map(drop)
}

/// Writes each message as a line; a burst of queued messages goes out in one write
/// (the same contract as `taskwire_driver::pump::write_from`, over tokio's IO traits).
async fn write_from(
    lines: Receiver<String>,
    mut writer: impl AsyncWrite + Unpin,
) -> io::Result<()> {
    let mut batch = Vec::new();
    while let Ok(line) = lines.recv().await {
        batch.extend_from_slice(line.as_bytes());
        batch.push(b'\n');
        while let Ok(line) = lines.try_recv() {
            batch.extend_from_slice(line.as_bytes());
            batch.push(b'\n');
        }
        writer.write_all(&batch).await?;
        writer.flush().await?;
        batch.clear();
    }
    writer.flush().await
}

#[cfg(unix)]
async fn eof_on_sigterm(input: Sender<Input>) {
    use tokio::signal::unix::{signal, SignalKind};
    if let Ok(mut term) = signal(SignalKind::terminate()) {
        if term.recv().await.is_some() {
            let _ = input.send(Input::Eof).await;
        }
    }
}
