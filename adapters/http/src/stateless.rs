//! 2026-07-28 over HTTP: every POST is one request, served by an engine session that lives
//! as long as its response (one short-lived session per request: it carries nothing over;
//! the request reaches the engine with the session's opening, in one message to the driver).
//! The body is read once, by the engine, which shows the request to the routing headers'
//! check before serving it ([`routing::admit`]); a JSON-RPC error maps to the HTTP status
//! the spec gives, and a message that needs no answer gets `202 Accepted`.

use axum::body::Bytes;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use taskwire_driver::engine::{MessageKind, Routed};

use crate::response::{accepts_sse, stopped, Answer, Frame};
use crate::routing;
use crate::shared::{Shared, ANONYMOUS};

/// Serves one stateless POST.
pub(crate) async fn post(
    shared: &Shared,
    owner: Option<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let sse = accepts_sse(&headers);
    let owner = owner.unwrap_or_else(|| ANONYMOUS.to_owned());
    let capacity = shared.config.stream_capacity;
    let check = Box::new(move |routed: &Routed<'_>| routing::admit(&headers, routed));
    let handle = &shared.handle;
    let Ok(session) = handle.request_checked(owner, capacity, body, check).await else {
        return stopped();
    };
    let answer = Answer {
        // The session's one request: its reply is the first.
        id: None,
        frames: session.messages().map(Frame::plain).boxed(),
        sse,
        status,
        stream_after: shared.config.stream_after,
        // 2026-07-28 has no resumption: its streams are whole or lost.
        priming: None,
        poll_after: None,
    };
    // Nothing but the reply belongs to a client that takes JSON only.
    match answer.respond(session, drop).await {
        Some(response) => response,
        None if handle.is_stopping() => stopped(),
        // A notification or a response: taken, nothing to answer.
        None => StatusCode::ACCEPTED.into_response(),
    }
}

/// The HTTP status of a reply: the spec's for its error code, `200` for a result.
fn status(kind: &MessageKind) -> StatusCode {
    match kind {
        MessageKind::Reply {
            error: Some(code), ..
        } => match code {
            -32700 | -32600 | -32602 | -32020 | -32021 | -32022 => StatusCode::BAD_REQUEST,
            -32601 => StatusCode::NOT_FOUND,
            -32603 => StatusCode::INTERNAL_SERVER_ERROR,
            _ => StatusCode::OK,
        },
        _ => StatusCode::OK,
    }
}
