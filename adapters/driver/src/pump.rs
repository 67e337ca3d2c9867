//! Moving bytes between a transport and the driver's channels, for runtimes whose IO types
//! implement the `futures` IO traits (smol, the WASI adapter).

use std::io;

use async_channel::{Receiver, Sender};
use futures::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use crate::driver::Input;

/// Reads until EOF or an error, forwarding each chunk; then sends [`Input::Eof`].
pub async fn read_into(mut reader: impl AsyncRead + Unpin, input: Sender<Input>) {
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

/// Writes each message as a line; a burst of queued messages goes out in one write.
/// Returns when the driver drops its sender (after a final flush) or on a write error.
pub async fn write_from(
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
