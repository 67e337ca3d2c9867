//! Our requests to the peer: id allocation, what each was for, local timeouts, close.

use std::collections::{HashMap, VecDeque};

use serde::Serialize;

use super::{Session, Timer};
use crate::event::Event;
use crate::jsonrpc::{self, code, RequestId, RpcError};
use crate::wire::v2025_11_25::CancelledParams;

/// What an outbound request was for: decides how its answer is handled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Purpose {
    Initialize,
    /// Asked by the application; answered with `Event::Response`.
    App,
    /// A task-augmented request; answered with `Event::TaskCreated` (or `Response`).
    TaskRequest,
    /// `tasks/get`; `auto` when the engine polls on its own.
    TaskGet {
        task: String,
        auto: bool,
    },
    /// `tasks/cancel` asked by the application.
    TaskCancel {
        task: String,
    },
    /// `tasks/result`; `auto` when the engine fetches on its own.
    TaskResult {
        task: String,
        auto: bool,
    },
    /// An input request for one of our hosted tasks.
    Input {
        task: String,
    },
}

impl Purpose {
    /// Parked and user-facing requests wait as long as they must.
    fn times_out(&self) -> bool {
        !matches!(self, Purpose::TaskResult { .. } | Purpose::Input { .. })
    }
}

/// How many abandoned request ids are remembered so that their late answers pass quietly.
const ABANDONED_MEMORY: usize = 256;

#[derive(Debug, Default)]
pub(super) struct Outbound {
    next_id: i64,
    pending: HashMap<RequestId, Purpose>,
    /// Requests we gave up on (timed out or withdrawn), oldest first.
    abandoned: VecDeque<RequestId>,
}

impl Outbound {
    pub fn take(&mut self, id: &RequestId) -> Option<Purpose> {
        self.pending.remove(id)
    }

    /// Whether `id` is a request we gave up on (its late answer is no error); forgets it.
    pub fn was_abandoned(&mut self, id: &RequestId) -> bool {
        let found = self.abandoned.iter().position(|a| a == id);
        found.map(|i| self.abandoned.remove(i)).is_some()
    }

    fn remember_abandoned(&mut self, id: RequestId) {
        if self.abandoned.len() == ABANDONED_MEMORY {
            self.abandoned.pop_front();
        }
        self.abandoned.push_back(id);
    }
}

impl Session {
    /// Queues a request and remembers why it was sent.
    pub(super) fn send_request<P: Serialize>(
        &mut self,
        method: &str,
        params: Option<P>,
        purpose: Purpose,
    ) -> RequestId {
        let id = RequestId::Number(self.outbound.next_id);
        self.outbound.next_id += 1;
        self.send(jsonrpc::request_line(&id, method, params));
        if let (true, Some(ms)) = (purpose.times_out(), self.config.request_timeout_ms) {
            self.timers
                .set(Timer::Request(id.clone()), self.now.plus(ms));
        }
        self.outbound.pending.insert(id.clone(), purpose);
        id
    }

    /// Forgets an outbound request and tells the peer to stop working on it.
    pub(super) fn abandon_request(&mut self, id: &RequestId, reason: &str) {
        self.timers.clear(&Timer::Request(id.clone()));
        if self.outbound.take(id).is_some() {
            self.outbound.remember_abandoned(id.clone());
            let params = CancelledParams {
                request_id: Some(id.clone()),
                reason: Some(reason.to_owned()),
            };
            self.notify("notifications/cancelled", params);
        }
    }

    /// A request's local timeout fired.
    pub(super) fn time_out(&mut self, id: RequestId) {
        let Some(purpose) = self.outbound.pending.get(&id).cloned() else {
            return;
        };
        if purpose == Purpose::Initialize {
            // A client MUST NOT cancel initialize: without a handshake the session is over.
            self.outbound.take(&id);
            let error = RpcError::new(code::REQUEST_TIMEOUT, "initialize timed out");
            self.event(Event::InitializeFailed { error });
            return self.close(self.now);
        }
        self.abandon_request(&id, "Request timed out");
        // The engine's own polls are not the application's business.
        if !matches!(purpose, Purpose::TaskGet { auto: true, .. }) {
            self.event(Event::TimedOut { request: id });
        }
        if let Purpose::TaskGet { task, .. } = purpose {
            self.after_poll(&task);
        }
    }

    /// Closes the session: every pending request fails, hosted work is told to stop.
    pub fn close(&mut self, now: crate::Millis) {
        if self.phase == super::Phase::Closed {
            return;
        }
        self.advance(now);
        self.phase = super::Phase::Closed;
        let closed = || RpcError::new(code::CONNECTION_CLOSED, "Connection closed");
        let mut pending: Vec<_> = self.outbound.pending.drain().collect();
        pending.sort_by(|a, b| a.0.cmp(&b.0));
        for (request, purpose) in pending {
            match purpose {
                Purpose::Initialize => self.event(Event::InitializeFailed { error: closed() }),
                Purpose::App | Purpose::TaskRequest | Purpose::TaskCancel { .. } => {
                    self.event(Event::Response {
                        request,
                        outcome: Err(closed()),
                    })
                }
                Purpose::TaskGet { auto, .. } | Purpose::TaskResult { auto, .. } if !auto => self
                    .event(Event::Response {
                        request,
                        outcome: Err(closed()),
                    }),
                Purpose::TaskGet { .. } | Purpose::TaskResult { .. } => {}
                Purpose::Input { task } => self.event(Event::InputResponse {
                    task,
                    request,
                    outcome: Err(closed()),
                }),
            }
        }
        let mut remote: Vec<_> = self
            .remote
            .drain()
            .filter(|(_, t)| t.ours && !t.result_reported)
            .map(|(id, _)| id)
            .collect();
        remote.sort();
        for task in remote {
            self.event(Event::TaskResult {
                task,
                outcome: Err(closed()),
            });
        }
        let mut inbound: Vec<_> = self.inbound.drain().collect();
        inbound.sort_by(|a, b| a.0.cmp(&b.0));
        for (request, kind) in inbound {
            if let super::InboundRequest::App { .. } = kind {
                let reason = Some("Connection closed".to_owned());
                self.event(Event::RequestCancelled { request, reason });
            }
        }
        let mut hosted: Vec<_> = self.hosted.drain().map(|(id, _)| id).collect();
        hosted.sort();
        for task in hosted {
            self.event(Event::StopTask {
                task,
                reason: crate::StopReason::Closed,
            });
        }
        self.timers = crate::deadlines::Deadlines::new();
    }
}
