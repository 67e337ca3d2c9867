//! Turning what a session sends back for one request into an HTTP response: the reply alone
//! as `application/json` when nothing comes before it, otherwise an SSE stream of the
//! related messages that ends with the reply.

use std::convert::Infallible;

use async_channel::Receiver;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use serde_json::json;
use taskwire_driver::engine::jsonrpc::RequestId;
use taskwire_driver::engine::MessageKind;
use taskwire_driver::Outgoing;

/// An error of the transport's own (no message reached the engine), as a JSON-RPC error.
pub(crate) fn error(status: StatusCode, code: i64, message: &str) -> Response {
    error_for(status, None, code, message)
}

/// [`error`] about the request `id`.
pub(crate) fn error_for(
    status: StatusCode,
    id: Option<&RequestId>,
    code: i64,
    message: &str,
) -> Response {
    let body = json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": { "code": code, "message": message },
    });
    (status, axum::Json(body)).into_response()
}

/// A JSON response with one message.
pub(crate) fn json_message(status: StatusCode, message: String) -> Response {
    let mut response = (status, message).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

/// Whether the client takes an SSE stream (no `Accept` header counts as yes).
pub(crate) fn accepts_sse(headers: &HeaderMap) -> bool {
    accepts(headers, "text/event-stream")
}

/// Whether the `Accept` header admits `kind` (or there is none).
pub(crate) fn accepts(headers: &HeaderMap, kind: &str) -> bool {
    let Some(accept) = headers.get(header::ACCEPT).and_then(|v| v.to_str().ok()) else {
        return true;
    };
    accept.split(',').any(|item| {
        let item = item.split(';').next().unwrap_or("").trim();
        item == kind
            || item == "*/*"
            || item.strip_suffix("/*").is_some_and(|t| kind.starts_with(t))
    })
}

/// Whether `kind` is the reply to `id`.
pub(crate) fn is_reply_to(kind: &MessageKind, id: &RequestId) -> bool {
    matches!(kind, MessageKind::Reply { to: Some(to), .. } if to == id)
}

/// How a response to one request is made.
pub(crate) struct Answer<F: Fn(&MessageKind) -> StatusCode> {
    /// The request.
    pub id: RequestId,
    /// The messages for it, the reply last.
    pub messages: Receiver<Outgoing>,
    /// Whether an SSE stream may carry them; otherwise only the reply is sent, and what
    /// comes before it goes to `related` instead.
    pub sse: bool,
    /// The status of a JSON reply.
    pub status: F,
}

impl<F: Fn(&MessageKind) -> StatusCode> Answer<F> {
    /// Waits for the first message: the reply becomes a JSON response; anything else starts
    /// an SSE stream that ends after the reply. `keep` lives as long as the response (the
    /// one-request session of a stateless request). `None` when the messages end first (the
    /// session closed).
    pub async fn respond(
        self,
        keep: impl Send + 'static,
        related: impl Fn(Outgoing),
    ) -> Option<Response> {
        loop {
            let first = self.messages.recv().await.ok()?;
            if is_reply_to(&first.kind, &self.id) {
                return Some(json_message((self.status)(&first.kind), first.message));
            }
            if self.sse {
                return Some(sse(first, self.messages, self.id, keep));
            }
            related(first);
        }
    }
}

/// An SSE stream of `first`, then of `rest` up to and including the reply to `id`.
fn sse(
    first: Outgoing,
    rest: Receiver<Outgoing>,
    id: RequestId,
    keep: impl Send + 'static,
) -> Response {
    struct Stream<K> {
        first: Option<Outgoing>,
        rest: Receiver<Outgoing>,
        id: RequestId,
        done: bool,
        _keep: K,
    }
    let state = Stream {
        first: Some(first),
        rest,
        id,
        done: false,
        _keep: keep,
    };
    let events = futures::stream::unfold(state, |mut s| async move {
        if s.done {
            return None;
        }
        let out = match s.first.take() {
            Some(out) => out,
            None => s.rest.recv().await.ok()?,
        };
        s.done = is_reply_to(&out.kind, &s.id);
        Some((Ok::<_, Infallible>(Event::default().data(out.message)), s))
    });
    Sse::new(events)
        .keep_alive(KeepAlive::default())
        .into_response()
}

/// An SSE stream of every message of `messages` until it ends (a session's own stream).
pub(crate) fn sse_until_closed(messages: Receiver<Outgoing>) -> Response {
    let events = futures::stream::unfold(messages, |rx| async move {
        let out = rx.recv().await.ok()?;
        Some((Ok::<_, Infallible>(Event::default().data(out.message)), rx))
    });
    Sse::new(events)
        .keep_alive(KeepAlive::default())
        .into_response()
}
