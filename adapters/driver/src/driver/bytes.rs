//! A byte-stream connection (stdio, a child process): newline-delimited messages in and out.
//! Reading and writing happen in the driver's own task (no thread or channel hop);
//! everything sent in one turn goes out in one write.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures::AsyncWrite;
use taskwire_engine::SessionId;

use crate::runtime::{Reader, Writer};

/// Bytes read per call: enough for a burst of pipelined messages.
const READ_CHUNK: usize = 16 * 1024;

/// What one read brought.
pub(crate) enum Read<'a> {
    Bytes(&'a [u8]),
    Eof,
}

pub(crate) struct ByteLink {
    pub session: SessionId,
    reader: Option<Reader>,
    writer: Option<Writer>,
    read_buf: Vec<u8>,
    /// Queued lines not yet written, from `written` on.
    out: Vec<u8>,
    written: usize,
    /// Written but not flushed.
    unflushed: bool,
    /// Tells whoever attached the link that it is done.
    pub done: Option<futures::channel::oneshot::Sender<()>>,
}

impl ByteLink {
    pub fn new(session: SessionId, reader: Reader, writer: Writer) -> Self {
        ByteLink {
            session,
            reader: Some(reader),
            writer: Some(writer),
            read_buf: Vec::new(),
            out: Vec::new(),
            written: 0,
            unflushed: false,
            done: None,
        }
    }

    /// Whether the peer's input has ended (or failed).
    pub fn input_ended(&self) -> bool {
        self.reader.is_none()
    }

    /// Whether our output is gone (a write failed, e.g. a broken pipe).
    pub fn output_gone(&self) -> bool {
        self.writer.is_none()
    }

    /// Reads what is there; `Pending` registers `cx`. An error counts as the end of input.
    pub fn poll_read(&mut self, cx: &mut Context<'_>) -> Poll<Read<'_>> {
        let Some(reader) = self.reader.as_mut() else {
            return Poll::Ready(Read::Eof);
        };
        if self.read_buf.is_empty() {
            self.read_buf = vec![0; READ_CHUNK];
        }
        match reader.as_mut().poll_read(cx, &mut self.read_buf) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(Ok(n)) if n > 0 => Poll::Ready(Read::Bytes(&self.read_buf[..n])),
            Poll::Ready(Err(e)) if e.kind() == io::ErrorKind::Interrupted => {
                cx.waker().wake_by_ref();
                Poll::Pending
            }
            Poll::Ready(_) => {
                self.reader = None;
                self.read_buf = Vec::new();
                Poll::Ready(Read::Eof)
            }
        }
    }

    /// Queues one message as a line.
    pub fn queue(&mut self, message: &str) {
        if self.writer.is_some() {
            self.out.extend_from_slice(message.as_bytes());
            self.out.push(b'\n');
        }
    }

    /// Whether lines wait to be written or flushed.
    pub fn has_output(&self) -> bool {
        self.writer.is_some() && (self.written < self.out.len() || self.unflushed)
    }

    /// Writes what is queued, then flushes. `Ready` when all of it went out (or the output
    /// is gone: then the link's output ends and later lines are dropped).
    pub fn poll_write(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        let Some(writer) = self.writer.as_mut() else {
            return Poll::Ready(());
        };
        while self.written < self.out.len() {
            match writer.as_mut().poll_write(cx, &self.out[self.written..]) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Ok(0)) | Poll::Ready(Err(_)) => return self.lose_output(),
                Poll::Ready(Ok(n)) => {
                    self.written += n;
                    self.unflushed = true;
                }
            }
        }
        self.out.clear();
        self.written = 0;
        if self.unflushed {
            match writer.as_mut().poll_flush(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Ok(())) => self.unflushed = false,
                Poll::Ready(Err(_)) => return self.lose_output(),
            }
        }
        Poll::Ready(())
    }

    /// Closes our output (after a final flush of what is queued).
    pub fn poll_close(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        if self.poll_write(cx).is_pending() {
            return Poll::Pending;
        }
        if let Some(writer) = self.writer.as_mut() {
            if Pin::new(writer).poll_close(cx).is_pending() {
                return Poll::Pending;
            }
        }
        self.writer = None;
        Poll::Ready(())
    }

    fn lose_output(&mut self) -> Poll<()> {
        self.writer = None;
        self.out = Vec::new();
        self.written = 0;
        Poll::Ready(())
    }
}

impl Drop for ByteLink {
    fn drop(&mut self) {
        if let Some(done) = self.done.take() {
            let _ = done.send(());
        }
    }
}
