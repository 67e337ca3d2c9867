//! An OTLP/HTTP collector of the test's own (`POST /v1/traces`, on axum): the spans of JSON
//! bodies, read as the OTLP JSON encoding writes them, and how many protobuf bodies came.

use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{header, HeaderMap};
use axum::routing::post;
use axum::{Json, Router};
use serde_json::Value;

use crate::peers::http::serve_in_background;
use crate::peers::Argv;

/// The collector, serving until the test ends.
pub struct Collector {
    /// Its base URL (`OTEL_EXPORTER_OTLP_ENDPOINT`).
    pub url: String,
    received: Arc<Mutex<Received>>,
}

/// What the collector got.
#[derive(Default)]
struct Received {
    spans: Vec<Span>,
    /// Bodies sent as `application/x-protobuf` (not read).
    protobuf: usize,
}

/// One span as received, with the name of the service that sent it.
#[derive(Clone, Debug)]
pub struct Span {
    pub service: String,
    pub name: String,
    pub trace: String,
    pub id: String,
    /// Empty for a root span.
    pub parent: String,
    /// 1 internal, 2 server, 3 client.
    pub kind: u64,
    pub attributes: Value,
    /// Each event's name and attributes (`{key: value}`).
    pub events: Vec<(String, Value)>,
}

impl Span {
    /// The attribute `key`, as a string.
    pub fn attribute(&self, key: &str) -> Option<String> {
        attribute_of(&self.attributes, key)
    }
}

impl Collector {
    /// Starts one on a free port, on a thread of its own.
    pub fn start() -> Collector {
        let listener = TcpListener::bind("127.0.0.1:0").expect("a port");
        listener.set_nonblocking(true).expect("non-blocking");
        let url = format!("http://{}", listener.local_addr().expect("an address"));
        let received = Arc::new(Mutex::new(Received::default()));
        let app = Router::new()
            .route("/v1/traces", post(take))
            .with_state(received.clone());
        serve_in_background(listener, app, std::future::pending());
        Collector { url, received }
    }

    /// `argv` exporting its spans here as `service`, every 50 ms.
    pub fn traced(&self, argv: Argv, service: &str) -> Argv {
        argv.env("OTEL_EXPORTER_OTLP_ENDPOINT", &self.url)
            .env("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json")
            .env("OTEL_SERVICE_NAME", service)
            .env("OTEL_BSP_SCHEDULE_DELAY", "50")
    }

    /// The spans received so far.
    pub fn spans(&self) -> Vec<Span> {
        self.received.lock().expect("not poisoned").spans.clone()
    }

    /// How many protobuf bodies came so far.
    pub fn protobuf_bodies(&self) -> usize {
        self.received.lock().expect("not poisoned").protobuf
    }

    /// Waits (15 s at most) until the spans received satisfy `done`; returns them.
    pub fn until(&self, what: &str, done: impl Fn(&[Span]) -> bool) -> Vec<Span> {
        let deadline = Instant::now() + Duration::from_secs(15);
        loop {
            let spans = self.spans();
            if done(&spans) {
                return spans;
            }
            assert!(
                Instant::now() < deadline,
                "the collector did not get {what} within 15 s; it got:\n{}",
                spans
                    .iter()
                    .map(|s| format!(
                        "{} {} {}<-{} {}",
                        s.service, s.name, s.id, s.parent, s.trace
                    ))
                    .collect::<Vec<_>>()
                    .join("\n")
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// `POST /v1/traces`: an `ExportTraceServiceRequest`, kept span by span.
async fn take(
    State(received): State<Arc<Mutex<Received>>>,
    headers: HeaderMap,
    body: Bytes,
) -> Json<Value> {
    let kind = headers.get(header::CONTENT_TYPE);
    if kind.is_some_and(|k| k == "application/x-protobuf") {
        received.lock().expect("not poisoned").protobuf += 1;
        return Json(serde_json::json!({}));
    }
    let body: Value = serde_json::from_slice(&body).unwrap_or_default();
    let mut spans = Vec::new();
    for resource in body["resourceSpans"].as_array().into_iter().flatten() {
        let service =
            attribute_of(&resource["resource"]["attributes"], "service.name").unwrap_or_default();
        for scope in resource["scopeSpans"].as_array().into_iter().flatten() {
            for span in scope["spans"].as_array().into_iter().flatten() {
                let text = |key: &str| span[key].as_str().unwrap_or_default().to_owned();
                let events = span["events"].as_array().into_iter().flatten();
                spans.push(Span {
                    service: service.clone(),
                    name: text("name"),
                    trace: text("traceId"),
                    id: text("spanId"),
                    parent: text("parentSpanId"),
                    kind: span["kind"].as_u64().unwrap_or_default(),
                    attributes: span["attributes"].clone(),
                    events: events
                        .map(|e| {
                            (
                                e["name"].as_str().unwrap_or_default().to_owned(),
                                e["attributes"].clone(),
                            )
                        })
                        .collect(),
                });
            }
        }
    }
    received.lock().expect("not poisoned").spans.extend(spans);
    Json(serde_json::json!({}))
}

/// The value of `key` in an OTLP attribute list, as a string (of any scalar type).
pub fn attribute_of(attributes: &Value, key: &str) -> Option<String> {
    let found = attributes.as_array()?.iter().find(|a| a["key"] == key)?;
    let value = found["value"].as_object()?.values().next()?;
    Some(match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    })
}
