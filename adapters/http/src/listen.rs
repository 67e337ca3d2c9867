//! Serving a router on a TCP listener with the connection limits of [`HttpConfig`]: at most
//! `max_connections` served at once (the rest wait, unaccepted, in the listener's backlog),
//! each closed when it takes longer than `header_read_timeout` to send a request's headers
//! (which also ends a keep-alive connection left idle that long), and, when asked to stop,
//! no new connections while those open finish their responses.

use std::future::Future;
use std::io;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;

use crate::config::HttpConfig;

/// How long to wait before accepting again after `accept` failed (e.g. out of file
/// descriptors), so that the failure does not spin.
const ACCEPT_RETRY: Duration = Duration::from_millis(100);

/// Serves `app` (e.g. a [`router`](crate::router) merged into an app of your own) on
/// `listener` over HTTP/1.1 with `config`'s connection limits
/// ([`HttpConfig::max_connections`], [`HttpConfig::header_read_timeout`]) until `stop`
/// completes; then it accepts no more connections, asks those open to close once their
/// response is sent, and returns when they have.
pub async fn serve_router(
    listener: TcpListener,
    app: Router,
    config: &HttpConfig,
    stop: impl Future<Output = ()>,
) -> io::Result<()> {
    let permits = Arc::new(Semaphore::new(config.max_connections.max(1)));
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(config.header_read_timeout);
    let open = GracefulShutdown::new();
    let mut full = false;
    tokio::pin!(stop);
    loop {
        let permit = tokio::select! {
            permit = permits.clone().acquire_owned() => permit.expect("the semaphore is never closed"),
            () = &mut stop => break,
        };
        // Once per time the limit is reached, not per connection that waits.
        match (permits.available_permits() == 0, full) {
            (true, false) => tracing::warn!(
                limit = config.max_connections,
                "HttpConfig::max_connections connections are open; new ones wait until one closes"
            ),
            (false, true) => {
                tracing::info!("connections are below HttpConfig::max_connections again")
            }
            _ => {}
        }
        full = permits.available_permits() == 0;
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    tracing::warn!(error = %e, "accepting a connection failed");
                    tokio::time::sleep(ACCEPT_RETRY).await;
                    continue;
                }
            },
            () = &mut stop => break,
        };
        let service = TowerToHyperService::new(app.clone());
        let connection = open.watch(builder.serve_connection(TokioIo::new(stream), service));
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                // A header timeout, a client gone mid-request, a malformed request.
                tracing::debug!(%peer, error = %e, "a connection ended with an error");
            }
            drop(permit);
        });
    }
    drop(listener);
    open.shutdown().await;
    Ok(())
}
