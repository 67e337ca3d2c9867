//! What every request of one endpoint shares: the server, the settings, the sessions
//! open, each owner's load.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::http::StatusCode;
use axum::response::Response;
use taskwire_driver::ServerHandle;

use crate::config::HttpConfig;
use crate::owners::{held_until_sent, too_many, OwnerLoad};
use crate::response::{json_message, stopped};
use crate::sessions::table::Sessions;

/// The owner of requests made without authentication (and of the transport's own
/// throwaway sessions).
pub(crate) const ANONYMOUS: &str = "anonymous";

/// What every request of one endpoint shares.
pub(crate) struct Shared {
    pub handle: ServerHandle,
    pub config: HttpConfig,
    pub sessions: Sessions,
    owners: Arc<OwnerLoad>,
    last_sweep: Mutex<Instant>,
}

impl Shared {
    pub fn new(handle: ServerHandle, config: HttpConfig) -> Self {
        Shared {
            handle,
            owners: OwnerLoad::new(config.max_requests_per_owner),
            sessions: Sessions::new(config.metrics.clone()),
            config,
            last_sweep: Mutex::new(Instant::now()),
        }
    }

    /// Closes idle sessions, at most every quarter of the idle timeout (and every minute).
    pub fn sweep(&self) {
        let idle = self.config.session_idle_timeout;
        let every = (idle / 4).min(Duration::from_secs(60));
        {
            let mut last = self.last_sweep.lock().expect("not poisoned");
            if last.elapsed() < every {
                return;
            }
            *last = Instant::now();
        }
        self.sessions.close_idle(idle);
    }

    /// Serves `serve` counted as one open request or stream of `owner`'s (when there is
    /// one) until its response is sent: `429` when the owner is at the limit.
    pub async fn counted(
        &self,
        owner: &Option<String>,
        serve: impl std::future::Future<Output = Response>,
    ) -> Response {
        let Some(owner) = owner else {
            return serve.await;
        };
        match self.owners.hold(owner) {
            Some(held) => held_until_sent(serve.await, held),
            None => too_many(),
        }
    }

    /// The engine's error about a body the transport could not read, from a session of its
    /// own (the error does not depend on any session).
    pub async fn unreadable(&self, body: Bytes) -> Response {
        let Ok(session) = self.handle.request(ANONYMOUS, 1, body.to_vec()).await else {
            return stopped();
        };
        match session.recv().await {
            Some(out) => json_message(StatusCode::BAD_REQUEST, out.message),
            None => stopped(),
        }
    }
}
