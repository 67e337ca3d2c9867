//! Per-owner limits: what one authenticated owner has open at once (requests awaiting their
//! answer and `GET` streams), over all their sessions and stateless requests, so that one
//! client cannot take the whole server. Anonymous requests have no owner to count: the
//! per-session limit bounds them.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::body::Body;
use axum::http::StatusCode;
use axum::response::Response;
use futures::StreamExt;

use crate::response::error;

/// The answer to a request over the owner's limit.
pub(crate) fn too_many() -> Response {
    error(
        StatusCode::TOO_MANY_REQUESTS,
        -32600,
        "Too many requests in flight for this owner (HttpConfig::max_requests_per_owner)",
    )
}

/// What each owner has open now.
pub(crate) struct OwnerLoad {
    open: Mutex<HashMap<String, usize>>,
    limit: usize,
}

/// One open request or stream of an owner's; dropping it closes it.
pub(crate) struct Held {
    load: Arc<OwnerLoad>,
    owner: String,
}

impl OwnerLoad {
    /// Counts up to `limit` open requests and streams per owner.
    pub fn new(limit: usize) -> Arc<Self> {
        Arc::new(OwnerLoad {
            open: Mutex::new(HashMap::new()),
            limit,
        })
    }

    /// One more open request or stream of `owner`'s; `None` when the owner is at the limit.
    pub fn hold(self: &Arc<Self>, owner: &str) -> Option<Held> {
        let mut open = self.open.lock().expect("not poisoned");
        let count = open.entry(owner.to_owned()).or_default();
        if *count >= self.limit {
            tracing::warn!(
                owner,
                limit = self.limit,
                "refused a request: the owner is at HttpConfig::max_requests_per_owner"
            );
            return None;
        }
        *count += 1;
        Some(Held {
            load: self.clone(),
            owner: owner.to_owned(),
        })
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        let mut open = self.load.open.lock().expect("not poisoned");
        if let Some(count) = open.get_mut(&self.owner) {
            *count -= 1;
            if *count == 0 {
                open.remove(&self.owner);
            }
        }
    }
}

/// `response`, holding `held` until its body is sent or dropped (an SSE stream counts for
/// as long as it is open).
pub(crate) fn held_until_sent(response: Response, held: Held) -> Response {
    let (parts, body) = response.into_parts();
    let body = body.into_data_stream().map(move |chunk| {
        let _open = &held;
        chunk
    });
    Response::from_parts(parts, Body::from_stream(body))
}
