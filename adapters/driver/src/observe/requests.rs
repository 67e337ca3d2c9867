//! The peer's requests in flight, timed from receipt to answer, by method (one of the
//! protocol's, else `other`: a peer's names never become labels) and era.

use std::collections::HashMap;
use std::time::Instant;

use taskwire_engine::{Envelope, RequestId, SessionId};

use super::metrics;

/// The methods a request's label may name; any other is `other`.
const METHODS: &[&str] = &[
    "initialize",
    "ping",
    "server/discover",
    "tools/list",
    "tools/call",
    "tasks/get",
    "tasks/result",
    "tasks/list",
    "tasks/cancel",
    "tasks/update",
    "subscriptions/listen",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "resources/subscribe",
    "resources/unsubscribe",
    "prompts/list",
    "prompts/get",
    "completion/complete",
    "logging/setLevel",
];

/// The longest line of a byte stream kept whole to read its method; a longer request is
/// not timed.
const MAX_LINE: usize = 1 << 20;

/// A request not answered yet.
struct Waiting {
    method: &'static str,
    era: &'static str,
    since: Instant,
}

/// Requests not answered yet, and the unfinished last line of each byte stream (`None`: one
/// too long to keep, skipped to its end).
#[derive(Default)]
pub(crate) struct Requests {
    waiting: HashMap<(SessionId, RequestId), Waiting>,
    partial: HashMap<SessionId, Option<Vec<u8>>>,
}

impl Requests {
    /// One message from `session`'s peer.
    pub fn received(&mut self, session: SessionId, message: &[u8]) {
        let Some(envelope) = Envelope::read(message) else {
            return;
        };
        let (Some(id), Some(method)) = (envelope.id, envelope.method) else {
            return;
        };
        let method = METHODS
            .iter()
            .find(|m| **m == method)
            .copied()
            .unwrap_or("other");
        // A request of the 2026-07-28 era names it in its `_meta`; the others are of the
        // sessions' era (2025-11-25 and the versions it still speaks).
        let era = match envelope.protocol_version {
            Some(_) => "2026-07-28",
            None => "2025-11-25",
        };
        let since = Instant::now();
        self.waiting
            .insert((session, id), Waiting { method, era, since });
    }

    /// Bytes from a byte stream (newline-delimited messages, cut anywhere).
    pub fn received_bytes(&mut self, session: SessionId, bytes: &[u8]) {
        let mut rest = bytes;
        while let Some(end) = rest.iter().position(|b| *b == b'\n') {
            let (line, after) = rest.split_at(end);
            rest = &after[1..];
            match self.partial.remove(&session) {
                Some(Some(mut start)) => {
                    start.extend_from_slice(line);
                    self.received(session, &start);
                }
                Some(None) => {}
                None => self.received(session, line),
            }
        }
        if !rest.is_empty() {
            let kept = self
                .partial
                .entry(session)
                .or_insert_with(|| Some(Vec::new()));
            if let Some(line) = kept {
                line.extend_from_slice(rest);
                if line.len() > MAX_LINE {
                    *kept = None;
                }
            }
        }
    }

    /// The answer to `session`'s request `to` went out (`error`: its code).
    pub fn answered(&mut self, session: SessionId, to: &RequestId, error: Option<i64>) {
        let Some(request) = self.waiting.remove(&(session, to.clone())) else {
            return;
        };
        let seconds = request.since.elapsed().as_secs_f64();
        metrics::request_answered(request.method, request.era, seconds, error);
    }

    /// The session closed: its requests will not be answered.
    pub fn closed(&mut self, session: SessionId) {
        self.waiting.retain(|(s, _), _| *s != session);
        self.partial.remove(&session);
    }
}
