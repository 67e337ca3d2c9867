//! Protocol eras behind one seam.
//!
//! The host and its task table are era-neutral: task records, outcomes (stored raw), the
//! transition table, owners, quotas, calls, expiry and the journal. An era module owns the
//! rest: decoding its requests, its rules (error codes, capability JSON, how an `isError`
//! result reads, cancel semantics, related-task `_meta`), and encoding tasks and outcomes
//! in its shapes.
//!
//! The seam is the handful of functions below: every request, notification and follower
//! update is routed by era. An era plugs in as a sibling module ([`v2025_11_25`],
//! [`v2026_07_28`]) with its own handlers, one [`Era`](crate::Era) variant, and its arms here. The
//! host stays era-neutral: it tags each call and task with the era of its request, and
//! the era's module reads that tag.

pub mod v2025_11_25;
pub mod v2026_07_28;

use serde_json::value::RawValue;
use serde_json::Value;

use crate::host::Host;
use crate::ids::{SessionId, TaskId};
use crate::jsonrpc::{Reject, RequestId, RpcError};
use crate::session::{Purpose, Role, Session};

impl Host {
    /// Routes a request (not `ping`, which every era answers alike) to its era: on a server
    /// session 2026-07-28 takes `server/discover` and every request carrying its
    /// per-request protocol version; 2025-11-25 takes the rest.
    pub(crate) fn route_request(
        &mut self,
        session: SessionId,
        id: &RequestId,
        method: &str,
        params: Option<&RawValue>,
    ) -> Result<(), Reject> {
        let server = self
            .session(session)
            .is_some_and(|s| s.role == Role::Server);
        if server {
            if let Some(served) = self.modern_request(session, id, method, params) {
                return served;
            }
        }
        self.legacy_request(session, id, method, params)
    }

    /// Routes a notification to its era.
    pub(crate) fn route_notification(
        &mut self,
        session: SessionId,
        method: &str,
        params: Option<&RawValue>,
    ) {
        let modern = self.session(session).is_some_and(Session::is_modern);
        if modern && self.modern_notification(session, method, params) {
            return;
        }
        // Both eras read the notifications a client sends (`notifications/cancelled`) alike.
        self.legacy_notification(session, method, params)
    }

    /// Routes the peer's answer to a request of ours: on a 2026-07-28 client session, and
    /// for requests only that era sends, to its requestor.
    pub(crate) fn route_answer(
        &mut self,
        session: SessionId,
        id: RequestId,
        purpose: Purpose,
        outcome: Result<Value, RpcError>,
    ) {
        let modern = self.session(session).is_some_and(Session::is_modern);
        if modern || purpose.is_modern() {
            self.modern_answer(session, id, purpose, outcome)
        } else {
            self.on_answer(session, id, purpose, outcome)
        }
    }

    /// Tells one follower session about a task's change: on its 2026-07-28 listen streams
    /// that follow the task, or else as 2025-11-25 status notifications.
    pub(crate) fn tell_follower(&mut self, session: SessionId, task: &TaskId) {
        if !self.tell_listeners(session, task) {
            self.legacy_status_notification(session, task)
        }
    }
}
