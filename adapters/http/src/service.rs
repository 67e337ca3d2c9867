//! The endpoint: one path answering `POST`, `GET` and `DELETE`, each request admitted first
//! (hosts, origins, authentication), then served in the era its message asks for.

use std::io;
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, FromRequest, Request, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use taskwire_driver::engine::{era, Envelope, Era};
use taskwire_driver::{Server, ServerHandle};
use taskwire_oauth::resource::ResourceServer;

use crate::config::HttpConfig;
use crate::cors::Cors;
use crate::guard::{admit, header_str};
use crate::listen::serve_router;
use crate::response::{accepts_sse, error};
use crate::sessions::{self, SESSION_HEADER};
use crate::shared::Shared;
use crate::stateless;

/// The MCP endpoint at `path` over the running server `handle`: mount it in your own axum
/// app (`Router::merge`), or let [`serve`] run it. Both protocol eras at once: a POST with
/// `initialize` opens a 2025-11-25 session (`Mcp-Session-Id`), a POST with 2026-07-28
/// per-request `_meta` is served statelessly. The router applies the limits of each request
/// (sizes, body timeout, sessions, requests in flight); the connection limits
/// ([`HttpConfig::max_connections`], [`HttpConfig::header_read_timeout`]) are the server's:
/// serve your app with [`serve_router`] to have them, or set your own server's.
/// With [`HttpConfig::cors`] set, the CORS policy applies to the endpoint and the metadata;
/// with [`HttpConfig::dashboard`], the task dashboard is served too (start the server with
/// `Server::observe`).
pub fn router(path: &str, handle: ServerHandle, config: HttpConfig) -> Router {
    let limit = config.max_body_bytes;
    let metadata = config.oauth.as_deref().map(protected_resource);
    let cors = config.cors.as_ref().map(Cors::layer);
    let counted = config.metrics.clone();
    let dashboard = (config.dashboard.clone())
        .map(|path| crate::dashboard(&path, handle.clone(), config.clone()));
    let shared = Arc::new(Shared::new(handle, config));
    let mcp = Router::new()
        .route(path, post(post_mcp).get(get_mcp).delete(delete_mcp))
        .layer(DefaultBodyLimit::max(limit))
        .with_state(shared);
    let app = match metadata {
        Some(metadata) => mcp.merge(metadata),
        None => mcp,
    };
    let app = match counted {
        Some(metrics) => app.layer(axum::middleware::map_response_with_state(
            metrics,
            crate::counted::response,
        )),
        None => app,
    };
    let app = match cors {
        Some(cors) => app.layer(cors),
        None => app,
    };
    // After the CORS policy, which is the endpoint's: pages of other origins cannot read
    // the dashboard.
    match dashboard {
        Some(dashboard) => app.merge(dashboard),
        None => app,
    }
}

/// The Protected Resource Metadata of `server` (RFC 9728) at its well-known paths, for
/// anyone (clients read it before they have a token).
fn protected_resource(server: &ResourceServer) -> Router {
    let document = axum::Json(server.metadata());
    server
        .metadata_paths()
        .into_iter()
        .fold(Router::new(), |router, path| {
            let document = document.clone();
            router.route(&path, get(move || async move { document }))
        })
}

/// Serves `server` at `/mcp` on `listener` (and its task dashboard with
/// [`HttpConfig::dashboard`]) until the process is asked to stop (Ctrl-C or SIGTERM): then
/// every session closes (running tasks end with the server) and the connections drain.
pub async fn serve(
    listener: tokio::net::TcpListener,
    server: Server,
    config: HttpConfig,
) -> io::Result<()> {
    let server = match &config.dashboard {
        Some(_) => server.observe(),
        None => server,
    };
    let handle = server.start(Arc::new(taskwire_tokio::Tokio));
    if let Some(oauth) = config.oauth.clone() {
        // The issuer's keys, read before the first request needs them.
        tokio::spawn(async move { oauth.prefetch().await });
    }
    let app = router("/mcp", handle.clone(), config.clone());
    let address = listener.local_addr()?;
    tracing::info!(%address, "serving MCP over Streamable HTTP at /mcp");
    if let Some(path) = &config.dashboard {
        tracing::info!(%address, path, "serving the task dashboard");
    }
    let stop = async move {
        stop_requested().await;
        tracing::info!("stopping: closing every session");
        handle.shutdown().await;
    };
    serve_router(listener, app, &config, stop).await
}

/// Ctrl-C, or SIGTERM where there are signals.
async fn stop_requested() {
    #[cfg(unix)]
    {
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
            .expect("a SIGTERM handler");
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    let _ = tokio::signal::ctrl_c().await;
}

async fn post_mcp(State(shared): State<Arc<Shared>>, mut request: Request) -> Response {
    let headers = std::mem::take(request.headers_mut());
    let admitted = match admit(&headers, &shared.config).await {
        Ok(admitted) => admitted,
        Err(refused) => return refused.into_response(),
    };
    let body = match read_body(request, shared.config.body_read_timeout).await {
        Ok(body) => body,
        Err(refused) => return refused,
    };
    if let Err(refused) = admitted.permits(&headers, &body, &shared.config) {
        return refused.into_response();
    }
    let owner = admitted.owner;
    shared.sweep();
    let counted = owner.clone();
    shared
        .counted(&counted, serve_post(&shared, owner, headers, body))
        .await
}

/// The body of `request` (its size limited by [`DefaultBodyLimit`]), or `408` when it does not
/// arrive within `timeout`.
async fn read_body(request: Request, timeout: Duration) -> Result<Bytes, Response> {
    let mut body = std::pin::pin!(Bytes::from_request(request, &()));
    // A body that came with its headers is read at once, with no timer to arm (arming one
    // wakes the thread that waits for the runtime's timers).
    let read = match futures::poll!(body.as_mut()) {
        Poll::Ready(read) => Ok(read),
        Poll::Pending => tokio::time::timeout(timeout, body).await,
    };
    match read {
        Ok(Ok(body)) => Ok(body),
        Ok(Err(rejected)) => Err(rejected.into_response()),
        Err(_) => {
            tracing::warn!(
                ?timeout,
                "refused a request whose body did not arrive within HttpConfig::body_read_timeout"
            );
            Err(error(
                StatusCode::REQUEST_TIMEOUT,
                -32600,
                "Request Timeout: the body did not arrive within HttpConfig::body_read_timeout",
            ))
        }
    }
}

/// A POST, admitted: in the session it names, a new session for `initialize`, or stateless.
/// A 2026-07-28 request is served statelessly even when it carries an `Mcp-Session-Id`: the
/// transport says to ignore one. One whose `MCP-Protocol-Version` header names 2026-07-28
/// goes to the engine unread (it reads the body once, checking the headers against it);
/// any other body is read here first, to tell its era.
async fn serve_post(
    shared: &Arc<Shared>,
    owner: Option<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    if per_request_header(&headers) {
        if let Some(id) = header_str(&headers, SESSION_HEADER) {
            tracing::debug!(session = %id, "ignored the Mcp-Session-Id of a 2026-07-28 request");
        }
        return stateless::post(shared, owner, headers, body).await;
    }
    let envelope = Envelope::read(&body);
    let per_request = envelope
        .as_ref()
        .is_some_and(|e| e.protocol_version.is_some());
    let headers = &headers;
    match header_str(headers, SESSION_HEADER) {
        Some(id) if per_request => {
            tracing::debug!(session = %id, "ignored the Mcp-Session-Id of a 2026-07-28 request");
            stateless::post(shared, owner, headers.clone(), body).await
        }
        Some(id) => {
            let Some(session) = shared.sessions.get(id).filter(|s| s.admits(&owner)) else {
                return session_not_found();
            };
            if let Some(version) = header_str(headers, "mcp-protocol-version") {
                if era::serving_version(version) != Some(Era::V2025_11_25) {
                    return error(
                        StatusCode::BAD_REQUEST,
                        -32600,
                        &format!("Bad Request: unsupported MCP-Protocol-Version {version:?}"),
                    );
                }
            }
            sessions::post(shared, owner, headers, body, envelope, Some(session)).await
        }
        None => {
            // A 2026-07-28 `initialize` is no handshake: the engine answers it (-32601).
            let initialize = envelope
                .as_ref()
                .is_some_and(|e| e.method.as_deref() == Some("initialize"));
            if initialize && !per_request {
                sessions::post(shared, owner, headers, body, envelope, None).await
            } else {
                stateless::post(shared, owner, headers.clone(), body).await
            }
        }
    }
}

/// Whether a POST's `MCP-Protocol-Version` header names a version of the per-request era.
fn per_request_header(headers: &HeaderMap) -> bool {
    header_str(headers, "mcp-protocol-version")
        .and_then(era::serving_version)
        .is_some_and(|era| era != Era::V2025_11_25)
}

async fn get_mcp(State(shared): State<Arc<Shared>>, headers: HeaderMap) -> Response {
    let owner = match admit(&headers, &shared.config).await {
        Ok(admitted) => admitted.owner,
        Err(refused) => return refused.into_response(),
    };
    shared.sweep();
    if !accepts_sse(&headers) {
        return error(
            StatusCode::NOT_ACCEPTABLE,
            -32600,
            "Not Acceptable: the GET stream is text/event-stream",
        );
    }
    let Some(id) = header_str(&headers, SESSION_HEADER) else {
        return error(
            StatusCode::METHOD_NOT_ALLOWED,
            -32600,
            "Method Not Allowed: GET needs an Mcp-Session-Id (2026-07-28 requests are POSTs)",
        );
    };
    match shared.sessions.get(id).filter(|s| s.admits(&owner)) {
        Some(session) => {
            let stream = async { sessions::get(&shared, &session, &headers) };
            shared.counted(&owner, stream).await
        }
        None => session_not_found(),
    }
}

async fn delete_mcp(State(shared): State<Arc<Shared>>, headers: HeaderMap) -> Response {
    let owner = match admit(&headers, &shared.config).await {
        Ok(admitted) => admitted.owner,
        Err(refused) => return refused.into_response(),
    };
    let Some(id) = header_str(&headers, SESSION_HEADER) else {
        return error(
            StatusCode::BAD_REQUEST,
            -32600,
            "Bad Request: DELETE needs an Mcp-Session-Id header",
        );
    };
    let admitted = shared.sessions.get(id).is_some_and(|s| s.admits(&owner));
    if admitted && shared.sessions.close(id) {
        tracing::info!(session = %id, "session deleted by the client");
        StatusCode::OK.into_response()
    } else {
        session_not_found()
    }
}

fn session_not_found() -> Response {
    error(
        StatusCode::NOT_FOUND,
        -32600,
        "Session not found: it expired, was deleted or never existed (send initialize again)",
    )
}
