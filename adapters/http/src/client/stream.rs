//! The 2025-11-25 session's own stream (`GET`): the server's status notifications and the
//! requests of tasks no `tasks/result` waits for. Opened once the session is initialized;
//! opened again when it drops while the session lives; never for a server without one (`405`).

use std::sync::Arc;
use std::time::Duration;

use axum::http::StatusCode;
use eventsource_stream::Eventsource;
use futures::StreamExt;

use super::Transport;

/// How long to wait before opening a dropped stream again.
const REOPEN_AFTER: Duration = Duration::from_millis(500);
/// Failed openings in a row after which the stream is given up.
const ATTEMPTS: u32 = 5;

impl Transport {
    pub(super) async fn listen(self: Arc<Self>) {
        let mut failures = 0;
        while failures < ATTEMPTS && !self.link.is_closed() {
            let Some(session) = self.session() else {
                return;
            };
            let opened = self.get_stream(&session, None).await;
            match opened {
                Ok(response) if response.status() == StatusCode::OK => {
                    failures = 0;
                    let mut events = response.bytes_stream().eventsource();
                    while let Some(Ok(event)) = events.next().await {
                        if !event.data.is_empty() {
                            self.deliver(&event.data);
                        }
                    }
                    tracing::debug!(session = %session.id, "the session's stream dropped");
                }
                Ok(response)
                    if matches!(
                        response.status(),
                        StatusCode::METHOD_NOT_ALLOWED | StatusCode::NOT_FOUND
                    ) =>
                {
                    tracing::debug!(status = %response.status(), "no session stream");
                    return;
                }
                Ok(response) => {
                    failures += 1;
                    tracing::debug!(status = %response.status(), "the session's stream was refused");
                }
                Err(e) => {
                    failures += 1;
                    tracing::debug!(error = %e, "the session's stream could not be opened");
                }
            }
            tokio::time::sleep(REOPEN_AFTER).await;
        }
    }
}
