//! The peer's requests in flight, timed from receipt to answer, by method (one of the
//! protocol's, else `other`) and era (the session's: a 2025-11-25 session's negotiated
//! version, else a 2026-07-28 request's own).

use std::collections::{HashMap, VecDeque};

use std::time::Instant;

use taskwire_engine::{RequestId, SessionId};

use super::metrics::RequestMetrics;
use super::peek;

/// The longest line of a byte stream kept whole to read its method; a longer request is
/// not timed.
const MAX_LINE: usize = 1 << 20;
/// Requests timed at once per session at most (the engine bounds each session's; a peer
/// whose requests the engine could not read, and so never answers by id, cannot make this
/// grow).
const MAX_WAITING: usize = 4096;

/// Requests not answered yet, by session in the order they came (answers mostly come in
/// that order: the first is checked first), and the unfinished last line of each byte
/// stream (`None`: one too long to keep, skipped to its end).
pub(crate) struct Requests {
    waiting: foldhash::HashMap<SessionId, Queue>,
    partial: HashMap<SessionId, Option<Vec<u8>>>,
    metrics: RequestMetrics,
}

/// A session's requests not answered yet, in the order they came: the first apart, so that
/// a session of one request (stateless HTTP) allocates nothing.
#[derive(Default)]
struct Queue {
    first: Option<Waiting>,
    more: VecDeque<Waiting>,
}

impl Queue {
    fn len(&self) -> usize {
        usize::from(self.first.is_some()) + self.more.len()
    }

    fn push(&mut self, waiting: Waiting) {
        match self.first.is_none() && self.more.is_empty() {
            true => self.first = Some(waiting),
            false => self.more.push_back(waiting),
        }
    }

    /// Takes the request `to` (mostly the oldest: answers come in order).
    fn take(&mut self, to: &RequestId) -> Option<Waiting> {
        if self.first.as_ref().is_some_and(|w| w.id == *to) {
            return self.first.take();
        }
        if self.more.front().is_some_and(|w| w.id == *to) {
            return self.more.pop_front();
        }
        let at = self.more.iter().position(|w| w.id == *to)?;
        self.more.remove(at)
    }
}

/// A request not answered yet.
struct Waiting {
    id: RequestId,
    /// Its method ([`RequestMetrics::method`]).
    method: usize,
    since: Instant,
}

impl Requests {
    /// Timing requests into `metrics`.
    pub fn new(metrics: RequestMetrics) -> Self {
        Requests {
            waiting: foldhash::HashMap::default(),
            partial: HashMap::new(),
            metrics,
        }
    }

    /// One message from `session`'s peer, received at `since`.
    pub fn received(&mut self, session: SessionId, message: &[u8], since: Instant) {
        wait_for(self.waiting.entry(session).or_default(), message, since);
    }

    /// Bytes from a byte stream (newline-delimited messages, cut anywhere), received at
    /// `since` (read together, they arrived together).
    pub fn received_bytes(&mut self, session: SessionId, bytes: &[u8], since: Instant) {
        let mut rest = bytes;
        let mut carried = match self.partial.is_empty() {
            true => None,
            false => self.partial.remove(&session),
        };
        let waiting = self.waiting.entry(session).or_default();
        while let Some(end) = memchr::memchr(b'\n', rest) {
            let (line, after) = rest.split_at(end);
            rest = &after[1..];
            match carried.take() {
                Some(Some(mut start)) => {
                    start.extend_from_slice(line);
                    wait_for(waiting, &start, since);
                }
                Some(None) => {}
                None => wait_for(waiting, line, since),
            }
        }
        if rest.is_empty() {
            return;
        }
        let mut kept = carried.unwrap_or_else(|| Some(Vec::new()));
        if let Some(line) = kept.as_mut() {
            line.extend_from_slice(rest);
            if line.len() > MAX_LINE {
                kept = None;
            }
        }
        self.partial.insert(session, kept);
    }

    /// The answer to `session`'s request `to` went out at `at` (`error`: its code;
    /// `version`: the session's negotiated protocol version, if it has one).
    pub fn answered(
        &mut self,
        session: SessionId,
        to: &RequestId,
        error: Option<i64>,
        version: Option<&str>,
        at: Instant,
    ) {
        let Some(waiting) = self.waiting.get_mut(&session) else {
            return;
        };
        let Some(request) = waiting.take(to) else {
            return;
        };
        let seconds = at.saturating_duration_since(request.since).as_secs_f64();
        // A session with no negotiated version serves 2026-07-28 requests (each names it).
        let v2026 = version.is_none_or(|v| v == "2026-07-28");
        self.metrics.answered(request.method, v2026, seconds, error);
    }

    /// The session closed: its requests will not be answered.
    pub fn closed(&mut self, session: SessionId) {
        self.waiting.remove(&session);
        self.partial.remove(&session);
    }
}

/// Times `message` from `since` among `waiting`, if it is a request (and not too many wait).
fn wait_for(waiting: &mut Queue, message: &[u8], since: Instant) {
    let Some(request) = peek::request(message) else {
        return;
    };
    if waiting.len() < MAX_WAITING {
        let method = RequestMetrics::method(request.method);
        let id = request.id;
        waiting.push(Waiting { id, method, since });
    }
}
