//! A server on a free local port and an HTTP client that speaks to it: POSTs in either era,
//! replies read as JSON or SSE, and an SSE stream read message by message.

use std::future::Future;
use std::time::Duration;

use futures::StreamExt;
use reqwest::header::{HeaderMap, HeaderValue, CONTENT_TYPE};
use reqwest::{Client, Response, StatusCode};
use serde_json::{json, Value};
use taskwire_demo::tools::{server, ServerOptions};
use taskwire_driver::Server;
use taskwire_http::HttpConfig;

/// The demo server (50 ms steps, the extra tools) over HTTP, on its own runtime.
pub struct TestServer {
    pub url: String,
    pub http: Client,
    runtime: tokio::runtime::Runtime,
}

impl TestServer {
    pub fn start() -> TestServer {
        TestServer::with_config(HttpConfig::default())
    }

    pub fn with_config(config: HttpConfig) -> TestServer {
        TestServer::serve("127.0.0.1:0", config)
    }

    /// A fresh server at `address` (where another one was).
    pub fn at(address: &str) -> TestServer {
        TestServer::serve(address, HttpConfig::default())
    }

    fn serve(address: &str, config: HttpConfig) -> TestServer {
        let server = server(ServerOptions {
            step: Duration::from_millis(50),
            extra_tools: true,
            required_tool: true,
            ..ServerOptions::default()
        })
        .expect("the demo server");
        TestServer::serving(server, address, config)
    }

    /// A client of the server (a process) at `url`, with a runtime of its own.
    pub fn client_of(url: &str) -> TestServer {
        TestServer {
            url: url.to_owned(),
            http: Client::new(),
            runtime: tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("a runtime"),
        }
    }

    /// `server` (instead of the demo's) at `address`.
    pub fn serving(server: Server, address: &str, config: HttpConfig) -> TestServer {
        let (runtime, listener, url) = bound(address);
        runtime.spawn(async move {
            let _ = taskwire_http::serve(listener, server, config).await;
        });
        TestServer {
            url,
            http: Client::new(),
            runtime,
        }
    }

    /// `server` at `/mcp` and its dashboard (`taskwire_http::dashboard`) at `/tasks`, on a
    /// free port.
    pub fn with_dashboard(server: Server, config: HttpConfig) -> TestServer {
        let (runtime, listener, url) = bound("127.0.0.1:0");
        let handle = {
            let _inside = runtime.enter();
            server.start(std::sync::Arc::new(taskwire_tokio::Tokio))
        };
        let app = taskwire_http::router("/mcp", handle.clone(), config.clone())
            .merge(taskwire_http::dashboard("/tasks", handle, config.clone()));
        runtime.spawn(async move {
            let stop = std::future::pending();
            let _ = taskwire_http::serve_router(listener, app, &config, stop).await;
        });
        TestServer {
            url,
            http: Client::new(),
            runtime,
        }
    }

    /// Runs a test body on the server's runtime, failing after 30 s.
    pub fn run<T>(&self, body: impl Future<Output = T>) -> T {
        self.runtime.block_on(async {
            tokio::time::timeout(Duration::from_secs(30), body)
                .await
                .expect("the test body did not finish within 30 s")
        })
    }

    /// A POST as MCP clients send it (JSON, accepting JSON and SSE).
    pub fn post(&self, body: &Value) -> Post<'_> {
        Post {
            server: self,
            body: body.to_string().into_bytes(),
            headers: HeaderMap::new(),
        }
        .set("content-type", "application/json")
        .set("accept", "application/json, text/event-stream")
    }

    /// A 2025-11-25 session: `initialize`, then `notifications/initialized`.
    pub async fn open_session(&self) -> String {
        let response = self
            .post(
                &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {"elicitation": {}},
                "clientInfo": {"name": "http-tests", "version": "1"}}}),
            )
            .send()
            .await;
        assert_eq!(response.status(), StatusCode::OK);
        let session = response
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .expect("an Mcp-Session-Id")
            .to_owned();
        let reply = messages(response).await;
        assert_eq!(reply[0]["result"]["protocolVersion"], "2025-11-25");
        let sent = self
            .in_session(
                &session,
                &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            )
            .send()
            .await;
        assert_eq!(sent.status(), StatusCode::ACCEPTED);
        session
    }

    /// A POST in `session`.
    pub fn in_session(&self, session: &str, body: &Value) -> Post<'_> {
        self.post(body)
            .set("mcp-session-id", session)
            .set("mcp-protocol-version", "2025-11-25")
    }

    /// `tools/call` of `tool` as a task (60 s TTL) in `session`, as request 1.
    pub fn call_as_task(&self, session: &str, tool: &str, arguments: Value) -> Post<'_> {
        self.in_session(
            session,
            &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": {"name": tool, "arguments": arguments, "task": {"ttl": 60000}}}),
        )
    }

    /// `tasks/result` of `task` in `session`, as request `id`.
    pub fn ask_result(&self, session: &str, id: u64, task: &Value) -> Post<'_> {
        self.in_session(
            session,
            &json!({"jsonrpc": "2.0", "id": id, "method": "tasks/result",
                "params": {"taskId": task}}),
        )
    }

    /// A 2026-07-28 request with its routing headers, declaring the tasks extension unless
    /// `params._meta` says otherwise.
    pub fn stateless(&self, id: u64, method: &str, mut params: Value) -> Post<'_> {
        let meta = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "http-tests", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities":
                {"extensions": {"io.modelcontextprotocol/tasks": {}}},
        });
        // The request's own `_meta` keys win.
        let mut merged = meta;
        if let Some(own) = params["_meta"].as_object() {
            merged
                .as_object_mut()
                .expect("an object")
                .extend(own.clone());
        }
        params["_meta"] = merged;
        let name = params
            .get("name")
            .or_else(|| params.get("taskId"))
            .and_then(Value::as_str)
            .map(str::to_owned);
        let mut request = self
            .post(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .set("mcp-protocol-version", "2026-07-28")
            .set("mcp-method", method);
        if let Some(name) = name {
            request = request.set("mcp-name", &name);
        }
        request
    }

    /// The server's `host:port`, for raw TCP connections.
    pub fn address(&self) -> &str {
        self.url
            .trim_start_matches("http://")
            .trim_end_matches("/mcp")
    }

    /// A GET of `session`'s stream.
    pub async fn get_stream(&self, session: &str) -> Response {
        self.http
            .get(&self.url)
            .header("accept", "text/event-stream")
            .header("mcp-session-id", session)
            .send()
            .await
            .expect("GET")
    }

    /// A DELETE of `session`.
    pub async fn delete(&self, session: &str) -> Response {
        self.http
            .delete(&self.url)
            .header("mcp-session-id", session)
            .send()
            .await
            .expect("DELETE")
    }
}

/// A runtime of two threads, a listener bound to `address` on it, and its `/mcp` URL.
fn bound(address: &str) -> (tokio::runtime::Runtime, tokio::net::TcpListener, String) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    let listener = runtime
        .block_on(tokio::net::TcpListener::bind(address))
        .expect("a free port");
    let url = format!("http://{}/mcp", listener.local_addr().expect("bound"));
    (runtime, listener, url)
}

/// A POST being built: its body and headers (each set once, replacing any before).
pub struct Post<'a> {
    server: &'a TestServer,
    body: Vec<u8>,
    headers: HeaderMap,
}

impl Post<'_> {
    /// Sets header `name` to `value`, replacing it.
    pub fn set(mut self, name: &'static str, value: &str) -> Self {
        self.headers
            .insert(name, HeaderValue::from_str(value).expect("a header value"));
        self
    }

    /// Sends `body` instead, byte for byte (e.g. bytes that are no UTF-8).
    pub fn bytes(mut self, body: &[u8]) -> Self {
        self.body = body.to_vec();
        self
    }

    /// Leaves header `name` out.
    pub fn unset(mut self, name: &'static str) -> Self {
        self.headers.remove(name);
        self
    }

    /// Sends it; panics when no HTTP response comes.
    pub async fn send(self) -> Response {
        self.server
            .http
            .post(&self.server.url)
            .headers(self.headers)
            .body(self.body)
            .send()
            .await
            .expect("an HTTP response")
    }
}

/// The task id of a 2025-11-25 `CreateTaskResult`.
pub async fn task_id(response: Response) -> Value {
    let created = messages(response).await;
    let id = created[0]["result"]["task"]["taskId"].clone();
    assert!(id.is_string(), "no task: {created:?}");
    id
}

/// Whether a response is an SSE stream.
pub fn is_sse(response: &Response) -> bool {
    response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| t.starts_with("text/event-stream"))
}

/// Every message of a response: the one JSON body, or each SSE event until the stream ends.
pub async fn messages(response: Response) -> Vec<Value> {
    if is_sse(&response) {
        let mut stream = SseStream::new(response);
        let mut all = Vec::new();
        while let Some(message) = stream.next().await {
            all.push(message);
        }
        all
    } else {
        let text = response.text().await.expect("a body");
        vec![serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"))]
    }
}

/// An SSE response read one `data:` message at a time.
pub struct SseStream {
    body: futures::stream::BoxStream<'static, reqwest::Result<bytes::Bytes>>,
    buffer: String,
    /// The id of the last event read, priming events included.
    pub last_id: Option<String>,
    /// Whether a `retry:` field came.
    pub retry: bool,
}

impl SseStream {
    pub fn new(response: Response) -> SseStream {
        assert!(is_sse(&response), "not an SSE response: {response:?}");
        SseStream {
            body: response.bytes_stream().boxed(),
            buffer: String::new(),
            last_id: None,
            retry: false,
        }
    }

    /// The next message; `None` when the stream ends.
    pub async fn next(&mut self) -> Option<Value> {
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let event: String = self.buffer.drain(..end + 2).collect();
                for line in event.lines() {
                    if let Some(id) = line.strip_prefix("id:") {
                        self.last_id = Some(id.trim().to_owned());
                    }
                    self.retry |= line.starts_with("retry:");
                }
                let data: Vec<&str> = event
                    .lines()
                    .filter_map(|l| l.strip_prefix("data:"))
                    .map(str::trim_start)
                    .collect();
                let text = data.join("\n");
                if text.is_empty() {
                    continue; // a keep-alive comment, or a priming event
                }
                return Some(serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}")));
            }
            let chunk = self.body.next().await?.ok()?;
            self.buffer.push_str(&String::from_utf8_lossy(&chunk));
        }
    }
}
