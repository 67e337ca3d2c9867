//! Body 1: framing and parsing.
//!
//! The input is a small header and then a byte stream. The stream goes to a server
//! session of a fresh host three times: in one chunk, in random splits, and (for short
//! streams) byte by byte. Each host also has a second session, of another owner, that
//! hears nothing.
//!
//! Invariants: no panic; every output is valid JSON-RPC 2.0, labelled as what it is, and
//! (as the [oracle](super::check::Oracle) samples it) valid against the schema; the three
//! transcripts are byte-identical; the number of outputs is bounded by the number of lines;
//! no byte of the stream makes the host send to the other owner's session; the transport's
//! reader of each line (`Envelope::read`) never panics and finds a request's id; a transport's
//! check (`Host::handle_checked`) is shown each request line once, saying what the envelope
//! reads, and a request it refuses is answered with its error and starts nothing; the requests
//! the host names (`Host::requests_read`) are the same however the stream is cut, and a
//! request the check was shown is named once, with its method and the id its error answers; EOF closes the
//! session (its tasks live on until `shutdown`, after which nothing is scheduled); a closed
//! session and a shut-down host say nothing more.

use std::sync::{Arc, Mutex};

use taskwire_engine::{
    Envelope, Event, Host, MessageKind, Method, Millis, Output, RequestId, RequestRead, Role,
    Routed, RpcError, SessionId,
};

use super::check::{output_bound, Oracle, Schema};
use super::reader::Reader;
use super::{
    add_tools, assert_no_busy_loop, checked_input, config, drain, task_ids, Record, Rng,
    Transcript, EPOCH,
};

/// A valid handshake, prepended when the header asks for it so that the random stream
/// reaches the post-initialization handlers.
const PRELUDE: &[u8] = b"{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\
\"protocolVersion\":\"2025-11-25\",\"capabilities\":{\"elicitation\":{\"form\":{}}},\
\"clientInfo\":{\"name\":\"fuzz\",\"version\":\"1\"}}}\n\
{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n";

/// Longest stream that is also fed byte by byte.
const BYTEWISE_MAX: usize = 2048;

/// Runs the body on one input, sampling the schema oracle (the libFuzzer target).
pub fn run(data: &[u8]) {
    run_with(data, Schema::Sampled);
}

/// Runs the body on one input with the given oracle.
pub fn run_with(data: &[u8], schema: Schema) {
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
    // What a transport reads of each line before the engine serves it: never a panic, and
    // a request's id is what the line says.
    for line in stream.split(|&b| b == b'\n') {
        if let Some(envelope) = Envelope::read(line) {
            let id = envelope.request_id().map(|id| id.to_string());
            // Compared where `Value` can hold the line (not a number past f64's range, which
            // the engine and the envelope skip unread).
            if let Ok(v) = serde_json::from_slice::<serde_json::Value>(line) {
                let said = v.get("method").and(v.get("id"));
                let line = String::from_utf8_lossy(line);
                assert_eq!(
                    id.is_some(),
                    said.is_some(),
                    "invariant: the envelope of {line}"
                );
            }
        }
    }
    checked_lines(&stream);
    let mut oracle = Oracle::new(schema, data);
    // The three transcripts are always compared; their text is kept for the seeded loop.
    let record = if matches!(schema, Schema::Full) {
        Record::Text
    } else {
        Record::Digest
    };

    // What one way of cutting the stream gives: the transcript and the requests named.
    type Fed = (Transcript, Vec<(RequestId, Option<Method>)>);
    let mut feed = |chunks: &mut dyn Iterator<Item = &[u8]>| -> Fed {
        let mut cfg = config("framing");
        cfg.limits.max_line_bytes = max_line;
        cfg.tasks.max_tasks = 4;
        cfg.tasks.max_tasks_per_owner = 3;
        let now = Millis(EPOCH);
        let mut host = Host::new(cfg, task_ids(mode >> 5), now);
        add_tools(&mut host);
        host.accept_unknown_tools(accept_unknown);
        host.report_requests(true);
        let s = host
            .open(now, Role::Server, "fuzz")
            .expect("the host takes sessions");
        let other = host
            .open(now, Role::Server, "other")
            .expect("the host takes sessions");
        let mut t = Transcript::new(record);
        let mut named = Vec::new();
        let mut total = 0;
        let pass = |host: &mut Host, t: &mut Transcript, oracle: &mut Oracle| {
            let open = |id: SessionId| id == s || id == other;
            let out = drain(host, "server", usize::MAX, &open, t, true);
            for sent in out.sends() {
                oracle
                    .check(&sent.msg, None)
                    .unwrap_or_else(|e| panic!("invariant: server sent an invalid message: {e}"));
            }
            out
        };
        for chunk in chunks {
            host.handle_bytes(now, s, chunk)
                .expect("the host takes input");
            for read in host.requests_read() {
                assert_eq!(read.session, s, "invariant: a request named on its session");
                named.push((read.id, read.method));
            }
            let out = pass(&mut host, &mut t, &mut oracle);
            assert!(
                out.sends().all(|sent| sent.session == s),
                "invariant: bytes on one session reached another owner's session"
            );
            total += out.count();
        }
        if eof {
            host.handle_eof(now, s).expect("the host takes input");
            total += pass(&mut host, &mut t, &mut oracle).count();
            assert!(host.is_closed(s), "invariant: EOF closes the session");
            // The session's tasks live on (another session of the owner could pick them
            // up) until the host shuts down.
            host.shutdown(now);
            let out = pass(&mut host, &mut t, &mut oracle);
            assert_eq!(
                out.send_count(),
                0,
                "invariant: shutting down sends nothing"
            );
            assert_eq!(
                host.poll_timeout(),
                None,
                "invariant: a shut-down host has no deadline"
            );
            // A shut-down host takes nothing more.
            checked_input(host.handle_bytes(now, s, PRELUDE), true);
            checked_input(host.handle_bytes(now, other, PRELUDE), true);
            checked_input(host.handle_timeout(Millis(EPOCH + 1_000_000_000)), true);
            assert!(
                host.poll_output().is_none(),
                "invariant: a closed session and a shut-down host stay silent"
            );
        } else {
            host.handle_timeout(now).expect("the host takes input");
            assert_no_busy_loop(&host, "server");
            total += pass(&mut host, &mut t, &mut oracle).count();
        }
        assert!(
            total <= output_bound(lines),
            "invariant: {total} outputs for {lines} lines"
        );
        assert!(
            named.len() <= lines,
            "invariant: more requests named than lines"
        );
        (t, named)
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
    same(&whole.0, &split.0, "one chunk and random splits");
    assert_eq!(
        whole.1, split.1,
        "invariant: the requests named, cut or not"
    );

    if stream.len() <= BYTEWISE_MAX {
        let bytewise = feed(&mut stream.chunks(1));
        same(&whole.0, &bytewise.0, "one chunk and byte by byte");
        assert_eq!(
            whole.1, bytewise.1,
            "invariant: the requests named, byte by byte"
        );
    }
}

/// Each line on a session of its own, with a check that refuses whatever it is shown.
fn checked_lines(stream: &[u8]) {
    let now = Millis(EPOCH);
    let mut host = Host::new(config("framing"), task_ids(0), now);
    add_tools(&mut host);
    host.report_requests(true);
    for line in stream.split(|&b| b == b'\n') {
        let shown: Arc<Mutex<Vec<String>>> = Arc::default();
        let seen = shown.clone();
        let envelope = Envelope::read(line);
        let json = serde_json::from_slice::<serde::de::IgnoredAny>(line).is_ok();
        let text = String::from_utf8_lossy(line).into_owned();
        let check = Box::new(move |r: &Routed<'_>| {
            assert!(json, "invariant: a check shown {text}, which is no JSON");
            seen.lock().expect("one thread").push(r.method.to_owned());
            // The envelope reads no params with a member twice (the engine may serve them).
            let Some(e) = envelope.as_ref() else {
                return Err(RpcError::new(-32020, "refused"));
            };
            assert_eq!(
                Some(r.method),
                e.method.as_deref(),
                "invariant: the method of {text}"
            );
            if r.protocol_version.is_some() {
                let version = e.protocol_version.as_deref();
                assert_eq!(
                    r.protocol_version, version,
                    "invariant: the version of {text}"
                );
            }
            if let (Some(name), Some(said)) = (r.name, &e.name) {
                assert_eq!(name, said, "invariant: what {text} names");
            }
            Err(RpcError::new(-32020, "refused"))
        });
        let s = host
            .open(now, Role::Server, "fuzz")
            .expect("the host takes sessions");
        host.handle_checked(now, s, line, check)
            .expect("the host takes input");
        let named: Vec<RequestRead> = host.requests_read().collect();
        let shown = std::mem::take(&mut *shown.lock().expect("one thread"));
        let mut replies = Vec::new();
        while let Some(output) = host.poll_output() {
            match output {
                Output::Send(t) => replies.push(t.kind),
                Output::Event(Event::ToolCall(_) | Event::Request(_)) if !shown.is_empty() => {
                    panic!("invariant: a refused request started work")
                }
                _ => {}
            }
        }
        if !shown.is_empty() {
            let text = String::from_utf8_lossy(line);
            assert_eq!(shown.len(), 1, "invariant: {text} shown once");
            let [read] = &named[..] else {
                panic!("invariant: {text}, shown to the check, named once: {named:?}");
            };
            assert_eq!(
                read.method,
                Method::from_name(&shown[0]),
                "invariant: {text}"
            );
            assert!(
                matches!(&replies[..], [MessageKind::Reply { to: Some(to), .. }] if *to == read.id),
                "invariant: {text} named with the id its error answers: {replies:?}"
            );
            assert!(
                matches!(
                    replies[..],
                    [MessageKind::Reply {
                        error: Some(-32020),
                        ..
                    }]
                ),
                "invariant: {text} refused gets the check's error alone: {replies:?}"
            );
        }
        host.close(now, s);
        while host.poll_output().is_some() {}
    }
}

fn same(a: &Transcript, b: &Transcript, what: &str) {
    if a.digest() != b.digest() {
        let at = a
            .text()
            .lines()
            .zip(b.text().lines())
            .position(|(x, y)| x != y);
        panic!(
            "invariant: {what} give the same outputs (first difference at line {at:?}: {:?} / {:?})",
            at.and_then(|i| a.text().lines().nth(i)),
            at.and_then(|i| b.text().lines().nth(i)),
        );
    }
}
