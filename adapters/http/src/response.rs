//! Turning what a session sends back for one request into an HTTP response: the reply alone
//! as `application/json` when it comes first and soon, otherwise an SSE stream of the
//! related messages that ends with the reply.

use std::convert::Infallible;
use std::time::Duration;

use async_channel::Receiver;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures::stream::BoxStream;
use futures::StreamExt;
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

/// The answer once the server has stopped (or is stopping).
pub(crate) fn stopped() -> Response {
    error(
        StatusCode::SERVICE_UNAVAILABLE,
        -32603,
        "Service unavailable: the server is shutting down",
    )
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

/// Whether `kind` is the reply to `id` (any reply, for a session's one request: `None`).
pub(crate) fn is_reply_to(kind: &MessageKind, id: Option<&RequestId>) -> bool {
    match (kind, id) {
        (MessageKind::Reply { .. }, None) => true,
        (MessageKind::Reply { to: Some(to), .. }, Some(id)) => to == id,
        _ => false,
    }
}

/// One message on its way to an HTTP response, with its SSE event id (a 2025-11-25 session
/// numbers its events so that a dropped stream can be resumed; a stateless request does not).
#[derive(Clone, Debug)]
pub(crate) struct Frame {
    pub id: Option<String>,
    pub out: Outgoing,
}

impl Frame {
    /// A message without an event id.
    pub fn plain(out: Outgoing) -> Frame {
        Frame { id: None, out }
    }

    fn event(self) -> Event {
        let event = Event::default().data(self.out.message);
        match self.id {
            Some(id) => event.id(id),
            None => event,
        }
    }
}

/// How long a client should wait before reconnecting to a stream the server ended.
const RETRY: Duration = Duration::from_millis(500);

/// How the response to one request is made.
pub(crate) struct Answer<F> {
    /// The request; `None` for a session that serves one request (its reply is the first).
    pub id: Option<RequestId>,
    /// The messages for it, the reply last.
    pub frames: BoxStream<'static, Frame>,
    /// Whether an SSE stream may carry them; otherwise only the reply is sent, and what
    /// comes before it goes to `related` instead.
    pub sse: bool,
    /// The status of a JSON reply.
    pub status: F,
    /// How long to wait for the reply alone before streaming.
    pub stream_after: Duration,
    /// A resumable stream's first event: its id, sent with no data and the reconnection
    /// delay (`retry`), so that a client can resume even before any message came.
    pub priming: Option<String>,
    /// A resumable stream ends after this long (SEP-1699 polling); the client resumes it
    /// with `GET` and `Last-Event-ID`.
    pub poll_after: Option<Duration>,
}

impl<F: Fn(&MessageKind) -> StatusCode> Answer<F> {
    /// The reply alone, when it comes first and soon, as JSON; otherwise an SSE stream that
    /// ends after the reply. `keep` lives as long as the response (the one-request session
    /// of a stateless request). `None` when the messages end first (the session closed).
    pub async fn respond(
        mut self,
        keep: impl Send + 'static,
        related: impl Fn(Outgoing),
    ) -> Option<Response> {
        let wait = tokio::time::sleep(self.stream_after);
        tokio::pin!(wait);
        loop {
            tokio::select! {
                frame = self.frames.next() => {
                    let frame = frame?;
                    if is_reply_to(&frame.out.kind, self.id.as_ref()) {
                        return Some(json_message((self.status)(&frame.out.kind), frame.out.message));
                    }
                    if self.sse {
                        return Some(self.stream(Some(frame), keep));
                    }
                    related(frame.out);
                }
                () = &mut wait, if self.sse => return Some(self.stream(None, keep)),
            }
        }
    }

    /// The SSE stream: the priming event, `first`, then the frames up to the reply (or the
    /// polling deadline).
    pub fn stream(self, first: Option<Frame>, keep: impl Send + 'static) -> Response {
        let deadline = self.poll_after.map(|d| tokio::time::Instant::now() + d);
        let mut head = Vec::new();
        let mut done = false;
        if let Some(first) = first {
            done = is_reply_to(&first.out.kind, self.id.as_ref());
            head.push(first.event());
        }
        let head = futures::stream::iter(head);
        let state = (self.frames, self.id, done, deadline, keep);
        let rest =
            futures::stream::unfold(state, |(mut frames, id, done, deadline, keep)| async move {
                if done {
                    return None;
                }
                let next = match deadline {
                    Some(at) => tokio::time::timeout_at(at, frames.next()).await.ok()?,
                    None => frames.next().await,
                }?;
                let done = is_reply_to(&next.out.kind, id.as_ref());
                Some((next.event(), (frames, id, done, deadline, keep)))
            });
        let events = head.chain(rest).map(Ok::<_, Infallible>);
        let response = Sse::new(events)
            .keep_alive(KeepAlive::default())
            .into_response();
        match self.priming {
            Some(id) => with_priming(response, &id),
            None => response,
        }
    }
}

/// `response`'s SSE body, preceded by the priming event `id`: its id, the reconnection delay,
/// and an empty `data` field. (axum's `Event` writes no `data` line for empty data, and an
/// event without one is never dispatched, so its id would not reach the client.)
fn with_priming(response: Response, id: &str) -> Response {
    let priming = format!("id: {id}\nretry: {}\ndata: \n\n", RETRY.as_millis());
    let (parts, body) = response.into_parts();
    let body = futures::stream::once(async move { Ok(axum::body::Bytes::from(priming)) })
        .chain(body.into_data_stream());
    Response::from_parts(parts, axum::body::Body::from_stream(body))
}

/// An SSE stream of every frame of `frames` until it ends (a session's own stream).
pub(crate) fn sse_until_closed(frames: Receiver<Frame>) -> Response {
    let events = frames.map(|frame| Ok::<_, Infallible>(frame.event()));
    Sse::new(events)
        .keep_alive(KeepAlive::default())
        .into_response()
}
