//! 2025-11-25 over HTTP: a session per `Mcp-Session-Id`, issued at `initialize`. A router
//! per session takes everything the engine sends and hands each message to the stream it
//! names ([`routes`]): the response of the request it belongs to (resumable with
//! `Last-Event-ID`), or the session's own stream (`GET`).

mod routes;
pub(crate) mod table;

use std::sync::{Arc, Mutex};
use std::time::Instant;

use axum::body::Bytes;
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use taskwire_driver::engine::{Envelope, MessageKind};
use taskwire_driver::{random_uuid, Outgoing};

use crate::guard::header_str;
use crate::response::{accepts_sse, error, error_for, sse_until_closed, Answer};
use crate::shared::Shared;
use routes::{Refusal, Routes};
use table::{NoRoom, Session};

/// The session header.
pub(crate) const SESSION_HEADER: &str = "mcp-session-id";

/// Serves a POST of a session (or `initialize`, which makes one).
pub(crate) async fn post(
    shared: &Arc<Shared>,
    owner: Option<String>,
    headers: &HeaderMap,
    body: Bytes,
    envelope: Option<Envelope>,
    session: Option<Arc<Session>>,
) -> Response {
    let (session, created) = match session {
        Some(session) => (session, false),
        None => match open(shared, owner).await {
            Ok(session) => (session, true),
            Err(refused) => return refused,
        },
    };
    session.touch();
    let Some(envelope) = envelope else {
        return shared.unreadable(body).await;
    };
    let Some(id) = envelope.request_id().cloned() else {
        return match session.link.send(body.to_vec()) {
            Ok(()) => StatusCode::ACCEPTED.into_response(),
            Err(_) => gone(),
        };
    };
    let registered = session.routes().register(&id);
    let (frames, priming) = match registered {
        Ok(registered) => registered,
        Err(Refusal::TooMany) => return error_for(
            StatusCode::TOO_MANY_REQUESTS,
            Some(&id),
            -32600,
            "Too many requests in flight on this session (HttpConfig::max_requests_per_session)",
        ),
        Err(Refusal::Duplicate) => {
            return error_for(
                StatusCode::BAD_REQUEST,
                Some(&id),
                -32600,
                &format!("Invalid Request: request id {id} is already in flight on this session"),
            )
        }
    };
    if session.link.send(body.to_vec()).is_err() {
        return gone();
    }
    let answer = Answer {
        id: Some(id),
        frames: frames.boxed(),
        sse: accepts_sse(headers),
        status: |_: &MessageKind| StatusCode::OK,
        stream_after: shared.config.stream_after,
        priming: Some(priming),
        poll_after: shared.config.poll_after,
    };
    let related = {
        let session = session.clone();
        move |out: Outgoing| session.routes().hold_or_send(out, &session.id)
    };
    let Some(mut response) = answer.respond((), related).await else {
        return gone();
    };
    if created {
        let value = HeaderValue::from_str(&session.id).expect("a UUID is a header value");
        response.headers_mut().insert(SESSION_HEADER, value);
    }
    response
}

/// Opens a session for an `initialize`.
async fn open(shared: &Arc<Shared>, owner: Option<String>) -> Result<Arc<Session>, Response> {
    let config = &shared.config;
    let place =
        match shared
            .sessions
            .admit(&owner, config.max_sessions, config.max_sessions_per_owner)
        {
            Ok(place) => place,
            Err(NoRoom::OwnerFull) => {
                tracing::warn!(
                    owner = owner.as_deref(),
                    "refused a session: the owner has HttpConfig::max_sessions_per_owner open"
                );
                return Err(error(
                    StatusCode::TOO_MANY_REQUESTS,
                    -32600,
                    "Too many sessions for this owner (HttpConfig::max_sessions_per_owner): end \
                 the ones no longer used with DELETE",
                ));
            }
            Err(NoRoom::AllBusy) => {
                tracing::warn!(
                    "refused a session: HttpConfig::max_sessions are open, each busy with a \
                 request or a stream"
                );
                return Err(error(
                    StatusCode::SERVICE_UNAVAILABLE,
                    -32603,
                    "Service unavailable: every session is busy (HttpConfig::max_sessions); retry \
                 later",
                ));
            }
        };
    let id = random_uuid();
    let capacity = shared.config.stream_capacity.max(1);
    let max_requests = shared.config.max_requests_per_session;
    // The router below hands each message on at once (a stream whose reader fell behind is
    // ended, not waited for), so the link only holds a burst that comes before the router
    // runs: as much as all the session's streams may hold.
    let link_capacity = capacity.saturating_mul(max_requests.saturating_add(1));
    // Without authentication the session is the owner: its tasks are its own.
    let link = shared
        .handle
        .open(
            owner.clone().unwrap_or_else(|| format!("session:{id}")),
            link_capacity,
        )
        .await
        .map_err(|_| gone())?;
    let session = Arc::new(Session {
        id: id.clone(),
        principal: owner.clone(),
        link,
        routes: Mutex::new(Routes::new(capacity, max_requests)),
        last_used: Mutex::new(Instant::now()),
    });
    place.fill(session.clone());
    tracing::info!(session = %id, "session opened");
    let router = session.clone();
    let shared = shared.clone();
    tokio::spawn(async move {
        while let Some(out) = router.link.recv().await {
            router.routes().route(out, &router.id);
        }
        // Every stream of the session ends with it.
        router.routes().clear();
        // Closed: by DELETE, idle expiry, a reader too slow, or the server's shutdown.
        shared.sessions.remove(&router.id);
        tracing::info!(session = %router.id, "session closed");
    });
    Ok(session)
}

/// Serves a `GET`: with `Last-Event-ID`, the rest of the stream that event belonged to;
/// otherwise the session's own stream, starting with what waited for it.
pub(crate) fn get(shared: &Shared, session: &Session, headers: &HeaderMap) -> Response {
    session.touch();
    if let Some(last) = header_str(headers, "last-event-id") {
        let resumed = session.routes().resume(last);
        if let Some((id, frames)) = resumed {
            tracing::debug!(session = %session.id, last, "a response stream resumed");
            let answer = Answer {
                id: Some(id),
                frames: frames.boxed(),
                sse: true,
                status: |_: &MessageKind| StatusCode::OK,
                stream_after: std::time::Duration::ZERO,
                priming: None,
                poll_after: shared.config.poll_after,
            };
            return answer.stream(None, ());
        }
    }
    match session.routes().open_standalone() {
        Some(frames) => sse_until_closed(frames),
        None => error(
            StatusCode::CONFLICT,
            -32600,
            "Conflict: this session's GET stream is already open",
        ),
    }
}

/// The answer for a session that ended while the request was served.
fn gone() -> Response {
    error(
        StatusCode::NOT_FOUND,
        -32600,
        "Session not found: it was closed (send initialize again)",
    )
}
