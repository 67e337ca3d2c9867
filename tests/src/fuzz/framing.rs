//! Body 1: framing and parsing.
//!
//! The input is a small header and then a byte stream. The stream goes to three server
//! sessions: in one chunk, in random splits, and (for short streams) byte by byte.
//!
//! Invariants: no panic; every output is valid JSON-RPC 2.0 and validates against the
//! schema; the three transcripts are byte-identical; the number of outputs is bounded by
//! the number of lines; a closed session says nothing more.

use taskwire_engine::{Millis, Session};

use super::check::{output_bound, Schema};
use super::reader::Reader;
use super::{add_tools, assert_no_busy_loop, config, drain, task_ids, Rng, EPOCH};

/// A valid handshake, prepended when the header asks for it so that the random stream
/// reaches the post-initialization handlers.
const PRELUDE: &[u8] = b"{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\
\"protocolVersion\":\"2025-11-25\",\"capabilities\":{\"elicitation\":{\"form\":{}}},\
\"clientInfo\":{\"name\":\"fuzz\",\"version\":\"1\"}}}\n\
{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n";

/// Longest stream that is also fed byte by byte.
const BYTEWISE_MAX: usize = 2048;

/// Runs the body on one input.
pub fn run(data: &[u8]) {
    let mut r = Reader::new(data);
    let (Some(mode), Some(seed)) = (r.u8(), r.u32()) else {
        return;
    };
    let max_line = [48, 300, 4096, 1 << 20][usize::from(mode & 3)];
    let prelude = mode & 4 != 0;
    let eof = mode & 8 != 0;
    let accept_unknown = mode & 16 != 0;
    let rest = r.rest();
    let mut stream = Vec::with_capacity(rest.len() + PRELUDE.len());
    if prelude {
        stream.extend_from_slice(PRELUDE);
    }
    stream.extend_from_slice(rest);
    let lines = stream.iter().filter(|&&b| b == b'\n').count() + 1;

    let feed = |chunks: &mut dyn Iterator<Item = &[u8]>| -> String {
        let mut cfg = config("framing");
        cfg.max_line_bytes = max_line;
        cfg.tasks.max_tasks = 4;
        let mut s = Session::server(cfg, task_ids(mode >> 5), Millis(EPOCH));
        add_tools(&mut s);
        s.accept_unknown_tools(accept_unknown);
        let mut transcript = String::new();
        let mut total = 0;
        for chunk in chunks {
            s.handle_bytes(Millis(EPOCH), chunk);
            let out = drain(&mut s, "server", Schema::Full, usize::MAX, &mut transcript);
            total += out.count;
        }
        if eof {
            s.handle_eof(Millis(EPOCH));
            let out = drain(&mut s, "server", Schema::Full, usize::MAX, &mut transcript);
            total += out.count;
            assert!(s.is_closed(), "invariant: EOF closes the session");
            assert_eq!(
                s.poll_timeout(),
                None,
                "invariant: a closed session has no deadline"
            );
            s.handle_bytes(Millis(EPOCH), PRELUDE);
            s.handle_timeout(Millis(EPOCH + 1));
            assert!(
                s.poll_output().is_none(),
                "invariant: a closed session stays silent"
            );
        } else {
            s.handle_timeout(Millis(EPOCH));
            assert_no_busy_loop(&s, "server");
            total += drain(&mut s, "server", Schema::Full, usize::MAX, &mut transcript).count;
        }
        assert!(
            total <= output_bound(lines),
            "invariant: {total} outputs for {lines} lines"
        );
        transcript
    };

    let whole = feed(&mut std::iter::once(&stream[..]));

    let mut rng = Rng::new(u64::from(seed));
    let mut splits = Vec::new();
    let mut at = 0;
    while at < stream.len() {
        let len = match rng.below(4) {
            0 => 1,
            1 => 1 + rng.below(8) as usize,
            _ => 1 + rng.below(128) as usize,
        };
        let end = (at + len).min(stream.len());
        splits.push(&stream[at..end]);
        at = end;
    }
    let split = feed(&mut splits.into_iter());
    assert_eq!(
        whole, split,
        "invariant: one chunk and random splits give the same outputs"
    );

    if stream.len() <= BYTEWISE_MAX {
        let bytewise = feed(&mut stream.chunks(1));
        assert_eq!(
            whole, bytewise,
            "invariant: one chunk and byte by byte give the same outputs"
        );
    }
}
