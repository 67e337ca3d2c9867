//! [`HttpMetrics`]: what the HTTP endpoint counts (requests refused by a limit or a
//! credential check, SSE streams open, 2025-11-25 sessions open) when
//! [`HttpConfig::metrics`](crate::HttpConfig::metrics) is set.

use axum::body::Body;
use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::Response;
use futures::StreamExt;
use taskwire_driver::prometheus_client::metrics::counter::Counter;
use taskwire_driver::prometheus_client::metrics::family::Family;
use taskwire_driver::prometheus_client::metrics::gauge::Gauge;
use taskwire_driver::prometheus_client::registry::Registry;

/// The HTTP endpoint's metrics, registered in a `prometheus-client` registry; cheap to clone
/// (the metrics are shared). Give it to [`HttpConfig::metrics`](crate::HttpConfig::metrics).
#[derive(Clone, Debug)]
pub struct HttpMetrics {
    refusals: Family<[(&'static str, String); 1], Counter>,
    streams: Gauge,
    sessions: Gauge,
}

impl HttpMetrics {
    /// Registers the endpoint's metrics in `registry` (under `taskwire_http_`):
    /// `refusals_total` by `status` (401 no valid credentials, 403 a host, origin or scope
    /// not allowed, 413 a body too large, 429 a session or request limit), `streams` (SSE
    /// response streams open) and `sessions` (2025-11-25 sessions open).
    pub fn register(registry: &mut Registry) -> HttpMetrics {
        let metrics = HttpMetrics {
            refusals: Family::default(),
            streams: Gauge::default(),
            sessions: Gauge::default(),
        };
        let r = registry.sub_registry_with_prefix("taskwire_http");
        r.register(
            "refusals",
            "HTTP requests refused, by status: 401 (no valid credentials), 403 (a host, origin \
             or scope not allowed), 413 (a body too large), 429 (a session or request limit)",
            metrics.refusals.clone(),
        );
        r.register(
            "streams",
            "SSE response streams open",
            metrics.streams.clone(),
        );
        r.register(
            "sessions",
            "2025-11-25 sessions open",
            metrics.sessions.clone(),
        );
        metrics
    }

    /// The number of sessions open is now `open`.
    pub(crate) fn sessions_open(&self, open: usize) {
        self.sessions.set(i64::try_from(open).unwrap_or(i64::MAX));
    }
}

/// Counts a refusal; an SSE response's stream is counted open until its body is dropped.
pub(crate) async fn response(State(metrics): State<HttpMetrics>, response: Response) -> Response {
    let status = response.status();
    if matches!(
        status,
        StatusCode::UNAUTHORIZED
            | StatusCode::FORBIDDEN
            | StatusCode::PAYLOAD_TOO_LARGE
            | StatusCode::TOO_MANY_REQUESTS
    ) {
        let label = [("status", status.as_str().to_owned())];
        metrics.refusals.get_or_create(&label).inc();
    }
    let sse = response
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|value| value.as_bytes().starts_with(b"text/event-stream"));
    if !sse {
        return response;
    }
    let (parts, body) = response.into_parts();
    let open = StreamOpen::new(metrics.streams);
    let body = body.into_data_stream().map(move |frame| {
        let _ = &open;
        frame
    });
    Response::from_parts(parts, Body::from_stream(body))
}

/// One SSE stream open, until dropped.
struct StreamOpen(Gauge);

impl StreamOpen {
    fn new(streams: Gauge) -> Self {
        streams.inc();
        StreamOpen(streams)
    }
}

impl Drop for StreamOpen {
    fn drop(&mut self) {
        self.0.dec();
    }
}
