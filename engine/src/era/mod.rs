//! Protocol eras behind one seam.
//!
//! The host and its task table are era-neutral: task records, outcomes (stored raw), the
//! transition table, owners, quotas, calls, expiry and the journal. An era module owns the
//! rest: decoding its requests, its rules (error codes, capability JSON, how an `isError`
//! result reads, cancel semantics, related-task `_meta`), and encoding tasks and outcomes
//! in its shapes.
//!
//! The seam is the handful of functions below: every request, notification and follower
//! update is routed by era. A new era plugs in as a sibling module of [`v2025_11_25`] with
//! its own handlers, one [`Era`] variant, and one arm in each function here; the host does
//! not change.

pub mod v2025_11_25;

use serde_json::value::RawValue;

use crate::host::Host;
use crate::ids::{SessionId, TaskId};
use crate::jsonrpc::{Reject, RequestId};
use crate::task::Era;

impl Host {
    /// The era that reads a request on this session.
    fn request_era(&self, _session: SessionId, _params: Option<&RawValue>) -> Era {
        Era::V2025_11_25
    }

    /// Routes a request (not `ping`, which every era answers alike) to its era.
    pub(crate) fn route_request(
        &mut self,
        session: SessionId,
        id: &RequestId,
        method: &str,
        params: Option<&RawValue>,
    ) -> Result<(), Reject> {
        match self.request_era(session, params) {
            Era::V2025_11_25 => self.legacy_request(session, id, method, params),
        }
    }

    /// Routes a notification to its era.
    pub(crate) fn route_notification(
        &mut self,
        session: SessionId,
        method: &str,
        params: Option<&RawValue>,
    ) {
        match self.request_era(session, params) {
            Era::V2025_11_25 => self.legacy_notification(session, method, params),
        }
    }

    /// Tells one follower session about a task's change, in that session's era.
    pub(crate) fn tell_follower(&mut self, session: SessionId, task: &TaskId) {
        match self.request_era(session, None) {
            Era::V2025_11_25 => self.legacy_status_notification(session, task),
        }
    }
}
