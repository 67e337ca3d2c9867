//! Our requests to a session's peer: ids, what each was for, local timeouts, and ids given
//! up on (whose late answers pass quietly).

use std::collections::{HashMap, VecDeque};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{Kept, Sent, State, Timer};
use crate::event::{Event, MessageKind};
use crate::ids::{SessionId, TaskId};
use crate::jsonrpc::{self, RequestId};

/// `params` of `notifications/cancelled` (the same in every era).
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CancelledParams {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<RequestId>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// The reason `notifications/cancelled` gives for a request the application gave up.
const GIVEN_UP: &str = "Request cancelled by the client";

/// How many abandoned request ids are remembered so that their late answers pass quietly.
const ABANDONED_MEMORY: usize = 256;

/// A session's requests awaiting the peer's answer.
#[derive(Debug)]
pub(crate) struct Outbound<K: Kept> {
    next_id: i64,
    pending: HashMap<RequestId, Sent<K>>,
    /// Requests we gave up on (timed out or withdrawn), oldest first.
    abandoned: VecDeque<RequestId>,
}

impl<K: Kept> Default for Outbound<K> {
    fn default() -> Self {
        Outbound {
            next_id: 0,
            pending: HashMap::new(),
            abandoned: VecDeque::new(),
        }
    }
}

impl<K: Kept> Outbound<K> {
    /// A fresh id for a request sent for `sent`.
    fn start(&mut self, sent: Sent<K>) -> RequestId {
        let id = RequestId::Number(self.next_id);
        self.next_id += 1;
        self.pending.insert(id.clone(), sent);
        id
    }

    /// The id the next request will get.
    pub fn next_id(&self) -> RequestId {
        RequestId::Number(self.next_id)
    }

    /// The request's purpose, no longer pending.
    pub fn take(&mut self, id: &RequestId) -> Option<Sent<K>> {
        self.pending.remove(id)
    }

    /// The purpose of pending request `id`.
    pub fn get(&self, id: &RequestId) -> Option<&Sent<K>> {
        self.pending.get(id)
    }

    /// The id of a pending request `sent` for what `pick` looks for.
    pub fn find(&self, pick: impl Fn(&Sent<K>) -> bool) -> Option<RequestId> {
        let found = self.pending.iter().find(|(_, sent)| pick(sent));
        found.map(|(id, _)| id.clone())
    }

    /// Every pending request, in id order.
    pub fn drain_sorted(&mut self) -> Vec<(RequestId, Sent<K>)> {
        let mut pending: Vec<_> = self.pending.drain().collect();
        pending.sort_by(|a, b| a.0.cmp(&b.0));
        pending
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

/// `_meta` asking for progress on the request `id`, with `id` as its token (so that a
/// requestor's `Event::Progress` names the request the application knows).
pub(crate) fn progress_meta(id: &RequestId) -> serde_json::Value {
    serde_json::json!({ "progressToken": id })
}

/// `params` with `added` in its `_meta` (which holds none of the engine's own keys; the
/// engine's values would win).
fn with_meta<P: Serialize>(params: Option<P>, added: &Map<String, Value>) -> Value {
    let mut params = match params.map(serde_json::to_value) {
        Some(Ok(Value::Object(params))) => params,
        _ => Map::new(),
    };
    let meta = params
        .entry("_meta")
        .and_modify(|meta| {
            if !meta.is_object() {
                *meta = Value::Object(Map::new());
            }
        })
        .or_insert_with(|| Value::Object(Map::new()));
    if let Value::Object(meta) = meta {
        for (key, value) in added {
            meta.entry(key.as_str()).or_insert_with(|| value.clone());
        }
    }
    Value::Object(params)
}

impl<K: Kept> State<K> {
    /// The id the next request on `session` will get.
    pub(crate) fn next_request_id(&self, session: SessionId) -> Option<RequestId> {
        self.session(session).map(|s| s.outbound.next_id())
    }

    /// Sends a request of ours on `session` (on `stream`) and remembers why; with
    /// `times_out`, the request gets the configured local timeout. `None` when the session
    /// is closed.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn send_request<P: Serialize>(
        &mut self,
        session: SessionId,
        stream: Option<RequestId>,
        method: &str,
        params: Option<P>,
        sent: Sent<K>,
        times_out: bool,
        about: Option<&TaskId>,
    ) -> Option<RequestId> {
        let s = self.session_mut(session)?;
        let id = s.outbound.start(sent);
        let line = match &self.request_meta {
            Some(added) => jsonrpc::request_line(&id, method, Some(with_meta(params, added))),
            None => jsonrpc::request_line(&id, method, params),
        };
        if let (true, Some(ms)) = (times_out, self.config.request_timeout_ms) {
            self.set_timer(Timer::Request(session, id.clone()), self.now.plus(ms));
        }
        let kind = MessageKind::Request {
            id: id.clone(),
            stream,
        };
        self.send(session, kind, about, line);
        Some(id)
    }

    /// Keeps request `id` pending for `sent` from now on, with no local timeout: its answer,
    /// whenever it comes, goes to that purpose (e.g. a task request given up, whose task
    /// must be cancelled once it exists).
    pub(crate) fn repurpose_request(&mut self, session: SessionId, id: RequestId, sent: Sent<K>) {
        self.clear_timer(&Timer::Request(session, id.clone()));
        if let Some(s) = self.session_mut(session) {
            s.outbound.pending.insert(id, sent);
        }
    }

    /// The purpose of our request `id` on `session`, while it is pending.
    pub(crate) fn pending_request(&self, session: SessionId, id: &RequestId) -> Option<&Sent<K>> {
        self.session(session)?.outbound.get(id)
    }

    /// Forgets a pending request and tells the peer to stop working on it (on `stream`,
    /// the one the request went on).
    /// Returns whether it was pending.
    pub(crate) fn abandon_request(
        &mut self,
        session: SessionId,
        stream: Option<RequestId>,
        id: &RequestId,
        reason: &str,
    ) -> bool {
        let pending = self
            .session_mut(session)
            .and_then(|s| s.outbound.take(id))
            .is_some();
        if pending {
            self.abandoned(session, stream, id, reason);
        }
        pending
    }

    /// Gives up the application's request `key` (reason [`GIVEN_UP`]), or, when it went out
    /// again under another id, the pending request an era sent for a reason `resends` says
    /// continues it. Returns whether it was pending.
    pub(crate) fn give_up_request(
        &mut self,
        session: SessionId,
        key: &RequestId,
        resends: impl Fn(&K::Purpose) -> bool,
    ) -> bool {
        let again = |sent: &Sent<K>| match sent {
            Sent::Era(purpose) => resends(purpose),
            Sent::App => false,
        };
        let on_wire = self
            .session(session)
            .and_then(|s| s.outbound.find(again))
            .unwrap_or_else(|| key.clone());
        self.abandon_request(session, None, &on_wire, GIVEN_UP)
    }

    /// A request no longer pending is given up: its timer goes, the peer is told to stop
    /// (`notifications/cancelled`), and its late answer will pass quietly.
    pub(crate) fn abandoned(
        &mut self,
        session: SessionId,
        stream: Option<RequestId>,
        id: &RequestId,
        reason: &str,
    ) {
        self.clear_timer(&Timer::Request(session, id.clone()));
        let Some(s) = self.session_mut(session) else {
            return;
        };
        s.outbound.remember_abandoned(id.clone());
        let params = CancelledParams {
            request_id: Some(id.clone()),
            reason: Some(reason.to_owned()),
        };
        let line = jsonrpc::notification_line("notifications/cancelled", Some(params));
        let kind = MessageKind::Notification {
            method: "notifications/cancelled",
            task: None,
            stream,
        };
        self.send(session, kind, None, line);
    }

    /// A request's local timeout fired: the application's own request is given up and
    /// reported; an era's goes to that era.
    pub(crate) fn time_out(&mut self, session: SessionId, id: RequestId) {
        let Some(sent) = self.session_mut(session).and_then(|s| s.outbound.take(&id)) else {
            return;
        };
        match sent {
            Sent::App => {
                self.abandoned(session, None, &id, "Request timed out");
                self.event(Event::TimedOut {
                    session,
                    request: id,
                });
            }
            Sent::Era(purpose) => {
                K::protocol(K::era_of(&purpose)).timed_out(self, session, id, purpose)
            }
        }
    }
}
