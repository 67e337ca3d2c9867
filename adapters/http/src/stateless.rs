//! 2026-07-28 over HTTP: every POST is one request, served by an engine session that lives
//! as long as its response (one short-lived session per request: it carries nothing over;
//! the request reaches the engine with the session's opening, in one message to the driver). The routing headers are checked
//! against the body first (a tool's call also its `Mcp-Param-*` headers, against the marks
//! of the tool's input schema), and a JSON-RPC error maps to the HTTP status the spec gives.

use std::sync::Arc;

use axum::body::Bytes;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use taskwire_driver::engine::{Envelope, MessageKind};

use crate::response::{accepts_sse, error_for, stopped, Answer, Frame};
use crate::routing::{self, HEADER_MISMATCH};
use crate::shared::{Shared, ANONYMOUS};
use crate::tool_params;

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
        return shared.unreadable(body).await;
    };
    let mismatch = |why: String| {
        tracing::debug!(%why, "refused a request whose routing headers do not match");
        error_for(
            StatusCode::BAD_REQUEST,
            envelope.id.as_ref(),
            HEADER_MISMATCH,
            &format!("Header mismatch: {why}"),
        )
    };
    if let Err(why) = routing::check(headers, &envelope) {
        return mismatch(why);
    }
    if let Some(tool) = called_tool(shared, &envelope) {
        // A tool with invalid marks is left out by clients: none of its headers is checked.
        let marks = tool_params::marks(&tool.input_schema).unwrap_or_default();
        if !marks.is_empty() {
            let arguments = (envelope.arguments.as_deref())
                .and_then(|raw| serde_json::from_str(raw.get()).ok())
                .unwrap_or_default();
            if let Err(why) = tool_params::check(headers, &marks, &arguments) {
                return mismatch(why);
            }
        }
    }
    let owner = owner.unwrap_or_else(|| ANONYMOUS.to_owned());
    let capacity = shared.config.stream_capacity;
    let Ok(session) = shared.handle.request(owner, capacity, body.to_vec()).await else {
        return stopped();
    };
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

/// The tool a `tools/call` request names, as listed now (for its `x-mcp-header` marks).
fn called_tool(shared: &Shared, envelope: &Envelope) -> Option<Arc<taskwire_driver::Tool>> {
    match (envelope.method.as_deref(), &envelope.name) {
        (Some("tools/call"), Some(name)) if envelope.request_id().is_some() => {
            shared.handle.tool(name)
        }
        _ => None,
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
