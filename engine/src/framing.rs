//! Newline framing for stdio byte streams (pure: bytes in, frames out).
//!
//! Feeding a stream in one chunk or byte by byte yields the same frames in the same order.

/// Default maximum length of one line: 4 MiB.
pub const DEFAULT_MAX_LINE: usize = 4 * 1024 * 1024;

/// One unit cut from the byte stream.
#[derive(Debug, PartialEq, Eq)]
pub enum Frame<'a> {
    /// A complete line without its `\n` or `\r\n`; blank lines are skipped.
    Line(&'a [u8]),
    /// A line longer than the maximum; its bytes are discarded up to the next `\n`.
    TooLong,
}

/// Splits a byte stream into newline-delimited frames.
#[derive(Debug)]
pub struct LineFramer {
    buf: Vec<u8>,
    max_line: usize,
    discarding: bool,
}

impl Default for LineFramer {
    fn default() -> Self {
        LineFramer::new(DEFAULT_MAX_LINE)
    }
}

impl LineFramer {
    /// A framer that rejects lines longer than `max_line` bytes (excluding the newline).
    pub fn new(max_line: usize) -> Self {
        LineFramer {
            buf: Vec::new(),
            max_line,
            discarding: false,
        }
    }

    /// Consumes `bytes`, calling `on_frame` for every frame they complete.
    pub fn push(&mut self, mut bytes: &[u8], mut on_frame: impl FnMut(Frame<'_>)) {
        while let Some(nl) = crate::scan::find(bytes, b'\n') {
            let (head, rest) = (&bytes[..nl], &bytes[nl + 1..]);
            bytes = rest;
            if std::mem::take(&mut self.discarding) {
                continue;
            }
            if self.buf.len() + head.len() > self.max_line {
                self.buf.clear();
                on_frame(Frame::TooLong);
            } else if self.buf.is_empty() {
                emit_line(head, &mut on_frame);
            } else {
                self.buf.extend_from_slice(head);
                emit_line(&self.buf, &mut on_frame);
                self.buf.clear();
            }
        }
        if self.discarding {
            return;
        }
        if self.buf.len() + bytes.len() > self.max_line {
            self.buf.clear();
            self.discarding = true;
            on_frame(Frame::TooLong);
        } else {
            self.buf.extend_from_slice(bytes);
        }
    }

    /// End of stream: a final line without a newline is still a frame.
    pub fn finish(&mut self, mut on_frame: impl FnMut(Frame<'_>)) {
        let rest = std::mem::take(&mut self.buf);
        self.discarding = false;
        emit_line(&rest, &mut on_frame);
    }
}

fn emit_line(line: &[u8], on_frame: &mut impl FnMut(Frame<'_>)) {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    if !line.iter().all(u8::is_ascii_whitespace) {
        on_frame(Frame::Line(line));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frames(framer: &mut LineFramer, chunks: &[&[u8]]) -> Vec<String> {
        let mut out = Vec::new();
        let mut record = |f: Frame<'_>| {
            out.push(match f {
                Frame::Line(l) => String::from_utf8_lossy(l).into_owned(),
                Frame::TooLong => "<too long>".to_owned(),
            })
        };
        for c in chunks {
            framer.push(c, &mut record);
        }
        framer.finish(&mut record);
        out
    }

    #[test]
    fn splits_lines_crlf_partial_reads_and_blank_lines() {
        let mut f = LineFramer::new(64);
        let got = frames(&mut f, &[b"{\"a\":1}\r\n\n{\"b\"", b":2}\n  \n{\"c\":3}"]);
        assert_eq!(got, ["{\"a\":1}", "{\"b\":2}", "{\"c\":3}"]);
    }

    #[test]
    fn over_long_line_is_reported_once_and_stream_resumes() {
        let stream =
            b"short\nthis line is far too long for the limit\nok\nanother very long line at eof";
        let mut one = LineFramer::new(10);
        let whole = frames(&mut one, &[stream]);
        assert_eq!(whole, ["short", "<too long>", "ok", "<too long>"]);
        let mut bytewise = LineFramer::new(10);
        let singles: Vec<&[u8]> = stream.chunks(1).collect();
        assert_eq!(frames(&mut bytewise, &singles), whole);
    }

    #[test]
    fn line_of_exactly_the_maximum_passes() {
        let mut f = LineFramer::new(5);
        assert_eq!(
            frames(&mut f, &[b"12345\n123456\n"]),
            ["12345", "<too long>"]
        );
    }
}
