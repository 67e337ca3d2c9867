//! The client side: a [`Client`] whose session runs over Streamable HTTP, in whichever era
//! the engine picks (2026-07-28 stateless requests with their routing headers; 2025-11-25
//! through `initialize`, keeping the `Mcp-Session-Id` and reading the session's `GET`
//! stream). Each request is one POST, its answer JSON or an SSE stream; what the server
//! sends back goes to the engine as it arrives.

mod auth;
mod exchange;
mod failure;
mod param_headers;
mod stream;

use std::sync::{Arc, Mutex};

use axum::http::{HeaderMap, HeaderName, HeaderValue};
use taskwire_driver::engine::MessageKind;
use taskwire_driver::{Client, ClientBuilder, MessageSession};
use taskwire_oauth::client::OAuthClient;

use auth::{with_token, Unsent};
use param_headers::ParamHeaders;

/// Messages of ours waiting for the transport.
const OUTGOING_CAPACITY: usize = 256;

/// Connects clients to one MCP endpoint over Streamable HTTP.
#[derive(Clone, Debug)]
pub struct HttpClient {
    url: String,
    headers: HeaderMap,
    http: reqwest::Client,
    oauth: Option<OAuthClient>,
}

impl HttpClient {
    /// A client of the MCP endpoint at `url` (e.g. `http://127.0.0.1:3000/mcp`). A URL that
    /// is no `http(s)` URL, a refused connection, or a path where no MCP endpoint answers
    /// (`404`, `405`) fails the request (-32000; at the handshake,
    /// [`Error::Negotiation`](taskwire_driver::Error::Negotiation)) with a message saying
    /// which, and what an endpoint's URL looks like.
    pub fn new(url: impl Into<String>) -> Self {
        HttpClient {
            url: url.into(),
            headers: HeaderMap::new(),
            http: reqwest::Client::new(),
            oauth: None,
        }
    }

    /// Sends `name: value` with every request (e.g. `Authorization: Bearer …`). Errors when
    /// either is no valid HTTP header.
    pub fn header(mut self, name: &str, value: &str) -> Result<Self, String> {
        let name = HeaderName::from_bytes(name.as_bytes())
            .map_err(|e| format!("bad header name {name:?}: {e}"))?;
        let value =
            HeaderValue::from_str(value).map_err(|e| format!("bad value for {name}: {e}"))?;
        self.headers.insert(name, value);
        Ok(self)
    }

    /// Signs in with `oauth` when the server asks (MCP authorization): every request, the
    /// session's `GET` stream and its `DELETE` carry the access token; a `401` signs in (one
    /// sign-in for all the requests refused together) and sends the request again; a `403`
    /// with `insufficient_scope` asks for more scopes, at most
    /// [`OAuthClient::step_ups`] times per request; an expired token is refreshed first.
    pub fn oauth(mut self, oauth: OAuthClient) -> Self {
        self.oauth = Some(oauth);
        self
    }

    /// Starts a client over this endpoint on the current tokio runtime (call
    /// [`Client::initialize`] first, as over stdio). When the last handle of the client is
    /// dropped or closed, a 2025-11-25 session is ended with `DELETE`.
    pub fn connect(self, builder: ClientBuilder) -> Client {
        let (client, link) =
            builder.connect_messages(Arc::new(taskwire_tokio::Tokio), OUTGOING_CAPACITY);
        let transport = Arc::new(Transport {
            endpoint: self,
            link,
            session: Mutex::new(None),
            param_headers: ParamHeaders::default(),
        });
        tokio::spawn(transport.run());
        client
    }
}

/// One client's transport: its link to the engine, and its session once it has one.
struct Transport {
    endpoint: HttpClient,
    link: MessageSession,
    /// The 2025-11-25 session: its id and negotiated version.
    session: Mutex<Option<Session>>,
    /// The listed tools' parameters mirrored into headers (2026-07-28).
    param_headers: ParamHeaders,
}

#[derive(Clone, Debug)]
struct Session {
    id: String,
    version: String,
}

impl Transport {
    /// Sends every message of the engine's: requests each in its own task (their answers
    /// may take long), notifications and replies in order.
    async fn run(self: Arc<Self>) {
        while let Some(out) = self.link.recv().await {
            match out.kind {
                MessageKind::Request { .. } => {
                    tokio::spawn(self.clone().exchange(out.message));
                }
                _ => self.clone().exchange(out.message).await,
            }
        }
        // The client is gone: so is its session.
        let session = self.session.lock().expect("not poisoned").take();
        if let Some(session) = session {
            let token = self.current_token().await;
            let request = self
                .endpoint
                .http
                .delete(&self.endpoint.url)
                .headers(self.endpoint.headers.clone())
                .header("mcp-session-id", &session.id);
            let _ = with_token(request, token.as_deref()).send().await;
            tracing::debug!(session = %session.id, "session ended");
        }
    }

    /// A `GET` of `session`'s stream: its own, or with `last_event` the rest of the response
    /// stream that event belonged to.
    async fn get_stream(
        &self,
        session: &Session,
        last_event: Option<&str>,
    ) -> Result<reqwest::Response, Unsent> {
        self.send(|| {
            let request = self
                .endpoint
                .http
                .get(&self.endpoint.url)
                .headers(self.endpoint.headers.clone())
                .header(axum::http::header::ACCEPT, "text/event-stream")
                .header("mcp-session-id", &session.id)
                .header("mcp-protocol-version", &session.version);
            match last_event {
                Some(last) => request.header("last-event-id", last),
                None => request,
            }
        })
        .await
    }

    fn session(&self) -> Option<Session> {
        self.session.lock().expect("not poisoned").clone()
    }

    /// Hands one message from the server to the engine.
    fn deliver(&self, message: &str) {
        let _ = self.link.send(message.as_bytes().to_vec());
    }
}
