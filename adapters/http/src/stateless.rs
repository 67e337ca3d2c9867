//! 2026-07-28 over HTTP: every POST is one request, served by an engine session that lives
//! as long as its response (one short-lived session per request: it carries nothing over,
//! and opening and closing one costs only its own work). The routing headers are checked
//! against the body first, and a JSON-RPC error maps to the HTTP status the spec gives.

use axum::body::Bytes;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use taskwire_driver::engine::MessageKind;

use crate::envelope::{version_key, Envelope};
use crate::guard::header_str;
use crate::response::{accepts_sse, error_for, stopped, Answer, Frame};
use crate::service::{unreadable, Shared};
use futures::StreamExt;

/// The owner of stateless requests' tasks when the server does not authenticate: everyone
/// who can reach the server shares it (there is no session to tell them apart).
pub(crate) const ANONYMOUS: &str = "anonymous";

/// `HeaderMismatch` (HTTP only).
const HEADER_MISMATCH: i64 = -32020;

/// Serves one stateless POST.
pub(crate) async fn post(
    shared: &Shared,
    owner: Option<String>,
    headers: &HeaderMap,
    body: Bytes,
    envelope: Option<Envelope>,
) -> Response {
    let Some(envelope) = envelope else {
        // The engine's precise error about a body the transport could not read.
        return unreadable(shared, body).await;
    };
    if let Err(why) = check_headers(headers, &envelope) {
        tracing::debug!(%why, "refused a request whose routing headers do not match");
        return error_for(
            StatusCode::BAD_REQUEST,
            envelope.id.as_ref(),
            HEADER_MISMATCH,
            &format!("Header mismatch: {why}"),
        );
    }
    let owner = owner.unwrap_or_else(|| ANONYMOUS.to_owned());
    let Ok(session) = shared
        .handle
        .open(owner, shared.config.stream_capacity)
        .await
    else {
        return stopped();
    };
    if session.send(body.to_vec()).is_err() {
        return stopped();
    }
    let Some(id) = envelope.request_id().cloned() else {
        // A notification or a response: taken, nothing to answer.
        return StatusCode::ACCEPTED.into_response();
    };
    let answer = Answer {
        id,
        frames: session.messages().map(Frame::plain).boxed(),
        sse: accepts_sse(headers),
        status,
        stream_after: shared.config.stream_after,
        // 2026-07-28 has no resumption: its streams are whole or lost.
        priming: None,
        poll_after: None,
    };
    // Nothing but the reply belongs to a client that takes JSON only.
    answer.respond(session, drop).await.unwrap_or_else(stopped)
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

/// `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name` against the body of a request.
fn check_headers(headers: &HeaderMap, envelope: &Envelope) -> Result<(), String> {
    let (Some(method), Some(_)) = (envelope.method.as_deref(), envelope.request_id()) else {
        return Ok(());
    };
    match (
        header_str(headers, "mcp-protocol-version"),
        envelope.protocol_version.as_deref(),
    ) {
        (Some(header), Some(body)) if header != body => {
            return Err(format!(
                "MCP-Protocol-Version is {header:?} but _meta[{:?}] is {body:?}",
                version_key()
            ))
        }
        (None, _) => return Err("the MCP-Protocol-Version header is missing".into()),
        _ => {}
    }
    match header_str(headers, "mcp-method") {
        None => return Err("the Mcp-Method header is missing".into()),
        Some(header) if header != method => {
            return Err(format!(
                "Mcp-Method is {header:?} but the method is {method:?}"
            ))
        }
        Some(_) => {}
    }
    if envelope.names_something() {
        match (header_str(headers, "mcp-name"), envelope.name.as_deref()) {
            (None, _) => return Err(format!("the Mcp-Name header is missing for {method}")),
            (Some(header), Some(name)) if header != name => {
                return Err(format!(
                    "Mcp-Name is {header:?} but the body names {name:?}"
                ))
            }
            _ => {}
        }
    }
    Ok(())
}
