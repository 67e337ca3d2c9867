//! The peer's requests in flight, timed from receipt to answer, by method (one of the
//! protocol's, else `other`) and era (the session's: a 2025-11-25 session's negotiated
//! version, else a 2026-07-28 request's own). The host says which requests each input held
//! ([`Host::requests_read`](taskwire_engine::Host::requests_read)): nothing is read twice.

use std::collections::VecDeque;

use std::time::Instant;

use taskwire_engine::{RequestId, RequestRead, SessionId};

use super::metrics::RequestMetrics;
use super::recent::Recent;

/// Requests timed at once per session at most (the engine bounds a session's requests in
/// progress; this bounds what answers that never go out could leave).
const MAX_WAITING: usize = 4096;

/// Requests not answered yet, by session (the last to send apart: stdio has one) in the
/// order they came (answers mostly come in that order: the first is checked first).
pub(crate) struct Requests {
    waiting: Recent<SessionId, Queue>,
    metrics: RequestMetrics,
    /// When timing began ([`Requests::now`] counts from it).
    start: Instant,
}

/// A moment as [`Requests::now`] gives it: nanoseconds since timing began (a request's
/// time is then one subtraction).
pub(crate) type Stamp = u64;

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
    since: Stamp,
}

impl Requests {
    /// Timing requests into `metrics`.
    pub fn new(metrics: RequestMetrics) -> Self {
        Requests {
            waiting: Recent::default(),
            metrics,
            start: Instant::now(),
        }
    }

    /// Now, for [`Requests::received`] and [`Requests::answered`] (one reading serves
    /// what happens together).
    pub fn now(&self) -> Stamp {
        u64::try_from(self.start.elapsed().as_nanos()).unwrap_or(u64::MAX)
    }

    /// The requests one input held, received at `since` (read together, they arrived
    /// together).
    pub fn received(&mut self, reads: impl Iterator<Item = RequestRead>, since: Stamp) {
        for read in reads {
            let waiting = self.waiting.get_or_default(read.session);
            if waiting.len() < MAX_WAITING {
                let method = RequestMetrics::method(read.method);
                let id = read.id;
                waiting.push(Waiting { id, method, since });
            }
        }
    }

    /// The answer to `session`'s request `to` went out at `at` (`error`: its code;
    /// `version`: the session's negotiated protocol version, if it has one).
    pub fn answered(
        &mut self,
        session: SessionId,
        to: &RequestId,
        error: Option<i64>,
        version: Option<&str>,
        at: Stamp,
    ) {
        let Some(waiting) = self.waiting.get_mut(session) else {
            return;
        };
        let Some(request) = waiting.take(to) else {
            return;
        };
        let seconds = at.saturating_sub(request.since) as f64 * 1e-9;
        // A session with no negotiated version serves 2026-07-28 requests (each names it).
        let v2026 = version.is_none_or(|v| v == "2026-07-28");
        self.metrics.answered(request.method, v2026, seconds, error);
    }

    /// The session closed: its requests will not be answered.
    pub fn closed(&mut self, session: SessionId) {
        self.waiting.remove(session);
    }
}
