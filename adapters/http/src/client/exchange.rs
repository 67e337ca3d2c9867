//! One message of ours as one POST, and what comes back: `202`, one JSON message, or an SSE
//! stream of messages. A request that gets no JSON-RPC answer (the connection failed, a
//! status without a body) is answered locally with an error, so its caller never waits in
//! vain.

use std::sync::Arc;
use std::time::Duration;

use axum::http::header::{ACCEPT, CONTENT_TYPE};
use axum::http::StatusCode;
use eventsource_stream::Eventsource;
use futures::StreamExt;
use serde_json::{json, Value};
use taskwire_driver::engine::jsonrpc::RequestId;
use taskwire_driver::engine::Envelope;

use super::{failure, Session, Transport};
use crate::header_value::encode;

/// The code of a request the transport could not deliver or get an answer to (as for a
/// peer gone on stdio: "Connection closed").
const UNDELIVERED: i64 = -32000;
/// Resumptions of one response stream before its request fails.
const RESUMPTIONS: u32 = 10;
/// The wait before resuming when the server named none (`retry`).
const RESUME_AFTER: Duration = Duration::from_millis(200);

/// What reading an SSE response found.
#[derive(Default)]
struct Read {
    answered: bool,
    last_event: Option<String>,
    retry: Option<Duration>,
}

impl Transport {
    pub(super) async fn exchange(self: Arc<Self>, message: String) {
        let envelope = Envelope::read(message.as_bytes()).unwrap_or_default();
        let id = envelope.request_id().cloned();
        // Built again for each attempt (a sign-in sends the request again).
        let build = || {
            let mut request = self
                .endpoint
                .http
                .post(&self.endpoint.url)
                .headers(self.endpoint.headers.clone())
                .header(CONTENT_TYPE, "application/json")
                .header(ACCEPT, "application/json, text/event-stream");
            if let Some(version) = &envelope.protocol_version {
                // 2026-07-28: the routing headers repeat the body.
                request = request.header("mcp-protocol-version", version);
                if let Some(method) = &envelope.method {
                    request = request.header("mcp-method", method);
                }
                if let Some(name) = &envelope.name {
                    // A task id, tool name or URI that is no plain header text goes as Base64.
                    request = request.header("mcp-name", encode(name));
                }
                let call_of = match (envelope.method.as_deref(), &envelope.name) {
                    (Some("tools/call"), Some(name)) => Some(name),
                    _ => None,
                };
                // Only a tool with marked parameters needs its arguments read.
                if let Some(name) = call_of.filter(|name| self.param_headers.marks(name)) {
                    let arguments: Value = (envelope.arguments.as_deref())
                        .and_then(|raw| serde_json::from_str(raw.get()).ok())
                        .unwrap_or_default();
                    for (header, value) in self.param_headers.for_call(name, &arguments) {
                        request = request.header(header, value);
                    }
                }
            } else if let Some(session) = self.session() {
                request = request
                    .header("mcp-session-id", &session.id)
                    .header("mcp-protocol-version", &session.version);
            }
            request.body(message.clone())
        };
        let initialize = envelope.method.as_deref() == Some("initialize");
        let initialized = envelope.method.as_deref() == Some("notifications/initialized");
        // A 2026-07-28 listing loses the tools whose parameter headers are invalid.
        let lists_tools =
            envelope.protocol_version.is_some() && envelope.method.as_deref() == Some("tools/list");
        let response = match self.send(build).await {
            Ok(response) => response,
            Err(unsent) => {
                let why = failure::unsent(&self.endpoint.url, &unsent);
                tracing::warn!(error = %why, "an HTTP request failed");
                return self.fail(id, &why);
            }
        };
        let status = response.status();
        let session_id = response
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let is_sse = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|t| t.starts_with("text/event-stream"));
        // What the answer teaches the transport before the engine sees it: an `initialize`
        // answer names the session (the engine sends `notifications/initialized` at once, in
        // the session), a `tools/list` answer the parameter headers; `Some`: the answer as
        // the engine gets it.
        let on_answer = |answer: &str| {
            if initialize {
                self.adopt_session(session_id.as_deref(), answer);
            }
            lists_tools
                .then(|| self.param_headers.learn(answer))
                .flatten()
        };
        if is_sse {
            let mut read = self.read_events(response, id.as_ref(), &on_answer).await;
            // A stream that ends before the answer is resumed from its last event
            // (2025-11-25; the server may end streams on purpose, SEP-1699).
            let mut attempts = 0;
            while !read.answered && id.is_some() && attempts < RESUMPTIONS {
                let (Some(last), Some(session)) = (read.last_event.clone(), self.session()) else {
                    break;
                };
                attempts += 1;
                tokio::time::sleep(read.retry.unwrap_or(RESUME_AFTER)).await;
                let resumed = self.get_stream(&session, Some(&last)).await;
                match resumed {
                    Ok(response) if response.status().is_success() => {
                        tracing::debug!(last, "resuming a response stream");
                        let more = self.read_events(response, id.as_ref(), &on_answer).await;
                        read.answered = more.answered;
                        read.retry = more.retry.or(read.retry);
                        read.last_event = more.last_event.or(Some(last));
                    }
                    _ => break,
                }
            }
            if !read.answered && id.is_some() {
                self.fail(id, "the server's SSE stream ended before the answer");
            }
            return;
        }
        let body = response.text().await.unwrap_or_default();
        if initialized && status.is_success() {
            tokio::spawn(self.clone().listen());
        }
        let refused = matches!(status, StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN);
        match serde_json::from_str::<Value>(&body) {
            // Credentials refused: the body is OAuth's, no JSON-RPC answer.
            _ if refused && id.is_some() => {
                let session = self.session().is_some();
                let why = failure::no_answer(&self.endpoint.url, status, session);
                let said = serde_json::from_str::<Value>(&body).ok();
                let said = said.as_ref().and_then(|b| b["error_description"].as_str());
                let why = match said {
                    Some(said) => format!("{why} (the server says: {said})"),
                    None => why,
                };
                self.fail(id, &why);
            }
            // An error that does not name our request (a server refusing the POST before
            // reading it, e.g. "no valid session", with id null or one of its own): the POST
            // carried that one request, so the error is its answer.
            Ok(mut error)
                if error.get("error").is_some() && id.is_some() && error["id"] != json!(id) =>
            {
                error["id"] = json!(id);
                self.deliver(&error.to_string());
            }
            Ok(Value::Object(_)) => self.deliver(&on_answer(&body).unwrap_or(body)),
            _ if id.is_some() => {
                let session = self.session().is_some();
                self.fail(id, &failure::no_answer(&self.endpoint.url, status, session));
            }
            _ if !status.is_success() => {
                tracing::warn!(%status, "the server refused a message of ours")
            }
            _ => {}
        }
    }

    /// Hands every message of an SSE response to the engine (the answer to `id` as
    /// `on_answer` makes it), noting the last event id, the reconnection delay, and whether
    /// the answer came.
    async fn read_events(
        &self,
        response: reqwest::Response,
        id: Option<&RequestId>,
        on_answer: &impl Fn(&str) -> Option<String>,
    ) -> Read {
        let mut read = Read::default();
        let mut events = response.bytes_stream().eventsource();
        while let Some(Ok(event)) = events.next().await {
            if !event.id.is_empty() {
                read.last_event = Some(event.id);
            }
            if event.retry.is_some() {
                read.retry = event.retry;
            }
            if event.data.is_empty() {
                continue;
            }
            if id.is_some_and(|id| replies_to(&event.data, id)) {
                read.answered = true;
                if let Some(answer) = on_answer(&event.data) {
                    self.deliver(&answer);
                    continue;
                }
            }
            self.deliver(&event.data);
        }
        read
    }

    /// Keeps the session an `initialize` answer opened: the `Mcp-Session-Id` that came with
    /// it and the version it names.
    fn adopt_session(&self, session_id: Option<&str>, answer: &str) {
        if let (Some(session), Some(version)) = (session_id, negotiated(answer)) {
            tracing::debug!(session, "session opened");
            *self.session.lock().expect("not poisoned") = Some(Session {
                id: session.to_owned(),
                version,
            });
        }
    }

    /// Answers our request `id` locally with an error (nothing to do for a notification).
    fn fail(&self, id: Option<RequestId>, why: &str) {
        if let Some(id) = id {
            let error = json!({"jsonrpc": "2.0", "id": id,
                "error": {"code": UNDELIVERED, "message": why}});
            self.deliver(&error.to_string());
        }
    }
}

/// The protocol version an `initialize` answer names.
fn negotiated(body: &str) -> Option<String> {
    let reply: Value = serde_json::from_str(body).ok()?;
    Some(reply["result"]["protocolVersion"].as_str()?.to_owned())
}

/// Whether `message` is the answer to `id`.
fn replies_to(message: &str, id: &RequestId) -> bool {
    Envelope::read(message.as_bytes())
        .is_some_and(|e| e.method.is_none() && e.id.as_ref() == Some(id))
}
