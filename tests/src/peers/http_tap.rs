//! A recording HTTP proxy for interop over Streamable HTTP: a reverse proxy on a free local
//! port that forwards every request to an MCP endpoint (body and headers as sent, answers
//! streamed back as they come) and records both sides: each request body and each message
//! of its answer (JSON or SSE), with the HTTP headers and status, as a [`Log`] for the schema
//! checks and as [`Exchange`]s for the HTTP-level ones.

use std::convert::Infallible;
use std::sync::{Arc, Mutex};

use futures::channel::mpsc;
use futures::SinkExt;
use http_body_util::{BodyExt, StreamBody};
use hyper::body::{Bytes, Frame, Incoming};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use serde_json::Value;
use taskwire_harness::Side;

use super::wire::{Line, Log};

/// One HTTP exchange the proxy forwarded.
#[derive(Clone, Debug)]
pub struct Exchange {
    /// `POST`, `GET` or `DELETE`.
    pub method: String,
    /// The request's headers (names in lower case).
    pub headers: Vec<(String, String)>,
    /// The request body, when it was JSON.
    pub body: Option<Value>,
    /// The answer's HTTP status (`502` when the server could not be reached).
    pub status: u16,
    /// The answer's `Content-Type` (empty when none).
    pub content_type: String,
    /// The answer's `Mcp-Session-Id`, if any.
    pub session: Option<String>,
    /// The JSON-RPC messages of the answer: its JSON body, or each SSE event's data.
    pub answers: Vec<Value>,
}

impl Exchange {
    /// The request header `name` (lower case), if sent.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The JSON-RPC method of the body, if it is one request or notification.
    pub fn rpc_method(&self) -> Option<&str> {
        self.body.as_ref()?.get("method")?.as_str()
    }
}

/// The exchanges whose request has JSON-RPC method `method`, in order.
pub fn with_method<'a>(exchanges: &'a [Exchange], method: &str) -> Vec<&'a Exchange> {
    exchanges
        .iter()
        .filter(|x| x.rpc_method() == Some(method))
        .collect()
}

/// Asserts that every exchange after `initialize` named the session `initialize` opened (a
/// 2025-11-25 client keeps one session throughout).
pub fn assert_one_session(exchanges: &[Exchange]) {
    let session = with_method(exchanges, "initialize")[0]
        .session
        .clone()
        .expect("an Mcp-Session-Id");
    for x in exchanges
        .iter()
        .filter(|x| x.rpc_method() != Some("initialize"))
    {
        assert_eq!(x.header("mcp-session-id"), Some(session.as_str()), "{x:#?}");
    }
}

/// What the proxy saw, in order: the messages as a [`Log`] (a request when it arrived, its
/// answer's messages when the answer ended), and the exchanges as they ended.
#[derive(Default)]
struct Seen {
    lines: Vec<Line>,
    exchanges: Vec<Exchange>,
}

/// A reverse proxy on a free local port, forwarding every request to `upstream` (body and
/// headers as sent, answers streamed back as they come) and recording both sides. Its
/// runtime stops when it is dropped.
pub struct Recorder {
    /// `http://127.0.0.1:PORT/mcp`, the URL to give the client.
    pub url: String,
    seen: Arc<Mutex<Seen>>,
    _runtime: tokio::runtime::Runtime,
}

impl Recorder {
    /// Starts a proxy to `upstream` (an MCP endpoint URL).
    pub fn start(upstream: &str) -> Recorder {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("a runtime for the proxy");
        let listener = runtime
            .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
            .expect("a free port for the proxy");
        let url = format!("http://{}/mcp", listener.local_addr().expect("bound"));
        let seen = Arc::new(Mutex::new(Seen::default()));
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .expect("a reqwest client");
        let (upstream, recorded) = (upstream.to_owned(), seen.clone());
        runtime.spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let (http, upstream, seen) = (http.clone(), upstream.clone(), recorded.clone());
                tokio::spawn(async move {
                    let service = service_fn(move |request| {
                        forward(http.clone(), upstream.clone(), seen.clone(), request)
                    });
                    let _ = http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        Recorder {
            url,
            seen,
            _runtime: runtime,
        }
    }

    /// The messages both sides sent, as a log (named after `test` in messages).
    pub fn log(&self, test: &str) -> Log {
        Log {
            path: format!("<{test}: recorded by the HTTP proxy>").into(),
            lines: self.seen.lock().expect("the proxy's record").lines.clone(),
        }
    }

    /// The exchanges, in the order they ended.
    pub fn exchanges(&self) -> Vec<Exchange> {
        self.seen
            .lock()
            .expect("the proxy's record")
            .exchanges
            .clone()
    }
}

type ProxyBody = StreamBody<mpsc::Receiver<Result<Frame<Bytes>, Infallible>>>;

/// Forwards one request and streams its answer back, recording both.
async fn forward(
    http: reqwest::Client,
    upstream: String,
    seen: Arc<Mutex<Seen>>,
    request: Request<Incoming>,
) -> Result<Response<ProxyBody>, Infallible> {
    let (parts, body) = request.into_parts();
    let bytes = body
        .collect()
        .await
        .map(|b| b.to_bytes())
        .unwrap_or_default();
    let parsed: Option<Value> = serde_json::from_slice(&bytes).ok();
    let mut headers = parts.headers.clone();
    for hop in ["host", "content-length", "connection", "transfer-encoding"] {
        headers.remove(hop);
    }
    let mut exchange = Exchange {
        method: parts.method.to_string(),
        headers: parts
            .headers
            .iter()
            .map(|(n, v)| {
                let value = String::from_utf8_lossy(v.as_bytes()).into_owned();
                (n.as_str().to_owned(), value)
            })
            .collect(),
        body: parsed.clone(),
        status: 502,
        content_type: String::new(),
        session: None,
        answers: Vec::new(),
    };
    if let Some(message) = parsed {
        let mut seen = seen.lock().expect("the proxy's record");
        seen.lines.push(Line {
            from: Side::Client,
            msg: message,
        });
    }
    let (mut tx, rx) = mpsc::channel(16);
    let sent = http
        .request(parts.method.clone(), &upstream)
        .headers(headers)
        .body(bytes.to_vec())
        .send()
        .await;
    let mut upstream_response = match sent {
        Ok(response) => response,
        Err(e) => {
            let text = format!("the proxy could not reach {upstream}: {e}");
            let _ = tx.send(Ok(Frame::data(Bytes::from(text)))).await;
            seen.lock()
                .expect("the proxy's record")
                .exchanges
                .push(exchange);
            let mut response = Response::new(StreamBody::new(rx));
            *response.status_mut() = hyper::StatusCode::BAD_GATEWAY;
            return Ok(response);
        }
    };
    exchange.status = upstream_response.status().as_u16();
    let header = |name: &str| {
        upstream_response
            .headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    };
    exchange.content_type = header("content-type").unwrap_or_default();
    exchange.session = header("mcp-session-id");
    let mut response = Response::builder().status(upstream_response.status());
    for (name, value) in upstream_response.headers() {
        if !["content-length", "connection", "transfer-encoding"].contains(&name.as_str()) {
            response = response.header(name, value);
        }
    }
    tokio::spawn(async move {
        let mut whole = Vec::new();
        while let Ok(Some(chunk)) = upstream_response.chunk().await {
            whole.extend_from_slice(&chunk);
            // A client that went away still gets its answer recorded.
            let _ = tx.send(Ok(Frame::data(chunk))).await;
        }
        exchange.answers = messages(&exchange.content_type, &whole);
        if let Ok(mut seen) = seen.lock() {
            for message in &exchange.answers {
                seen.lines.push(Line {
                    from: Side::Server,
                    msg: message.clone(),
                });
            }
            seen.exchanges.push(exchange);
        }
        // Recorded before the body ends (`tx` is dropped here), so a client that has read
        // its answer finds it in the record.
        drop(tx);
    });
    Ok(response
        .body(StreamBody::new(rx))
        .expect("a response of valid parts"))
}

/// The JSON-RPC messages of an answer body: the JSON value itself, or each SSE event's data
/// (events without data, such as a priming event, carry none). Data that is not JSON is kept
/// as a string, which no schema check passes (a panic here would only stop the proxy).
fn messages(content_type: &str, body: &[u8]) -> Vec<Value> {
    let text = String::from_utf8_lossy(body);
    if !content_type.starts_with("text/event-stream") {
        if text.trim().is_empty() || !content_type.starts_with("application/json") {
            // A `202` or an HTTP-level refusal in plain text: no message.
            return Vec::new();
        }
        return vec![serde_json::from_str(&text).unwrap_or(Value::String(text.into_owned()))];
    }
    let normalized = text.replace("\r\n", "\n");
    normalized
        .split("\n\n")
        .filter_map(|event| {
            let data: Vec<&str> = event
                .lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .map(|d| d.strip_prefix(' ').unwrap_or(d))
                .collect();
            (!data.is_empty()).then(|| data.join("\n"))
        })
        .filter(|data| !data.trim().is_empty())
        .map(|data| serde_json::from_str(&data).unwrap_or(Value::String(data)))
        .collect()
}
