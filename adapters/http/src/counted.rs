//! What this crate records through the `metrics` facade: responses refused by a limit or a
//! credential check, SSE streams open, 2025-11-25 sessions open.

use axum::body::Body;
use axum::http::{header, StatusCode};
use axum::response::Response;
use futures::StreamExt;
use metrics::{counter, describe_counter, describe_gauge, gauge};

/// Requests refused, by HTTP status (401, 403, 413, 429).
const REFUSALS: &str = "taskwire_http_refusals_total";
/// SSE response streams open.
const STREAMS: &str = "taskwire_http_streams";
/// 2025-11-25 sessions open.
const SESSIONS: &str = "taskwire_http_sessions";

/// Says what each metric means (the `# HELP` lines).
pub(crate) fn describe() {
    describe_counter!(
        REFUSALS,
        "HTTP requests refused, by status: 401 (no valid credentials), 403 (host, origin or scope not allowed), 413 (body too large), 429 (a session or request limit)."
    );
    describe_gauge!(STREAMS, "SSE response streams open.");
    describe_gauge!(SESSIONS, "2025-11-25 sessions open.");
}

/// Counts a refusal; an SSE response's stream is counted open until its body is dropped.
pub(crate) async fn response(response: Response) -> Response {
    let status = response.status();
    if matches!(
        status,
        StatusCode::UNAUTHORIZED
            | StatusCode::FORBIDDEN
            | StatusCode::PAYLOAD_TOO_LARGE
            | StatusCode::TOO_MANY_REQUESTS
    ) {
        counter!(REFUSALS, "status" => status.as_str().to_owned()).increment(1);
    }
    let sse = response
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|value| value.as_bytes().starts_with(b"text/event-stream"));
    if !sse {
        return response;
    }
    let (parts, body) = response.into_parts();
    let open = StreamOpen::new();
    let body = body.into_data_stream().map(move |frame| {
        let _ = &open;
        frame
    });
    Response::from_parts(parts, Body::from_stream(body))
}

/// The number of sessions open is now `open`.
pub(crate) fn sessions(open: usize) {
    gauge!(SESSIONS).set(open as f64);
}

/// One SSE stream open, until dropped.
struct StreamOpen;

impl StreamOpen {
    fn new() -> Self {
        gauge!(STREAMS).increment(1.0);
        StreamOpen
    }
}

impl Drop for StreamOpen {
    fn drop(&mut self) {
        gauge!(STREAMS).decrement(1.0);
    }
}
