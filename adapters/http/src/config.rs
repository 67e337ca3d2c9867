//! What an HTTP server accepts and how much of it: every limit with its default.

use std::sync::Arc;
use std::time::Duration;

use axum::http::HeaderMap;
use taskwire_oauth::resource::ResourceServer;

use crate::cors::Cors;
use crate::counted::HttpMetrics;

/// Who may reach the server, by the `Host` and `Origin` headers (DNS-rebinding protection).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AllowedHosts {
    /// Only `localhost`, `127.0.0.1` and `[::1]`, on any port (the default: right for a
    /// server bound to a loopback address).
    Localhost,
    /// Only these host names (`example.com`, `10.0.0.5`, `[::1]`), on any port.
    Only(Vec<String>),
    /// Any host and origin: for a server behind a proxy that checks them.
    Any,
}

/// Names the owner of a request's tasks from its headers (e.g. a bearer token's subject), or
/// refuses it (`401` with `WWW-Authenticate: Bearer`).
pub type Authenticate = Arc<dyn Fn(&HeaderMap) -> Option<String> + Send + Sync>;

/// How the HTTP server behaves; [`HttpConfig::default`] suits a local server.
#[derive(Clone)]
pub struct HttpConfig {
    /// Which `Host` and `Origin` headers are accepted (others get `403`). Default
    /// [`AllowedHosts::Localhost`].
    pub allowed_hosts: AllowedHosts,
    /// The largest request body, in bytes (larger ones get `413`). Default 4 MiB.
    pub max_body_bytes: usize,
    /// 2025-11-25 sessions open at once. When they are all open, an `initialize` closes the
    /// session unused longest that has no request in flight and no stream open (its client
    /// gets `404` next and initializes again); when every session is busy it gets `503`.
    /// Default 10,000.
    pub max_sessions: usize,
    /// 2025-11-25 sessions one authenticated owner ([`HttpConfig::authenticate`]) has open at
    /// once; one more `initialize` gets `429` (the owner ends sessions with `DELETE`, or
    /// waits for idle ones to close). Anonymous sessions are bounded by
    /// [`HttpConfig::max_sessions`] alone. Default 100.
    pub max_sessions_per_owner: usize,
    /// A session's requests awaiting their answer at once; one more gets `429`. Default 64.
    pub max_requests_per_session: usize,
    /// What one authenticated owner ([`HttpConfig::authenticate`]) has open at once over
    /// all their sessions and stateless requests: requests awaiting their answer and `GET`
    /// streams; one more gets `429`. Anonymous requests are not counted here (there is no
    /// owner to tell them apart). Default 256.
    pub max_requests_per_owner: usize,
    /// A session unused this long (no request, no open stream) is closed; its tasks live
    /// on until their TTL. Default 30 minutes.
    pub session_idle_timeout: Duration,
    /// Messages one response stream (or a session's stream with no `GET` open) holds for a
    /// reader, and keeps for resumption; a reader that falls further behind loses the
    /// stream (and may resume it). Default 256.
    pub stream_capacity: usize,
    /// How long a request's reply may take to be sent alone as `application/json`; after
    /// that (or as soon as something else for the request comes) the response becomes an
    /// SSE stream, which keep-alive comments hold open. Default 1 s.
    pub stream_after: Duration,
    /// SEP-1699 polling (2025-11-25 sessions): a response stream still open this long is
    /// ended by the server, and the client resumes it with `GET` and `Last-Event-ID` (every
    /// event has an id; a priming event with the reconnection delay opens each stream).
    /// `None` (the default) keeps streams open until their reply.
    pub poll_after: Option<Duration>,
    /// How long a request's body may take to arrive, from the end of its headers; a slower
    /// one gets `408` and its connection closes. Default 30 s.
    pub body_read_timeout: Duration,
    /// How long a connection may take to send a request's headers, counted from when the
    /// server waits for them, so this also ends a keep-alive connection idle this long; a
    /// slower one is closed. Applied by [`serve`](crate::serve) and
    /// [`serve_router`](crate::serve_router), not by a server of your own that mounts
    /// [`router`](crate::router). Default 10 s.
    pub header_read_timeout: Duration,
    /// Connections served at once; further ones wait, unaccepted, in the listener's backlog
    /// until one closes. Keep it below the process's open-file limit (`ulimit -n`, often
    /// 1024), leaving room for the store and logs. Applied by [`serve`](crate::serve) and
    /// [`serve_router`](crate::serve_router). Default 1,000.
    pub max_connections: usize,
    /// Names the owner of each request's tasks; `None` (the default) accepts everyone: a
    /// 2025-11-25 session then owns its tasks, and stateless 2026-07-28 requests share one
    /// anonymous owner.
    pub authenticate: Option<Authenticate>,
    /// Serves the endpoint as an OAuth 2.1 resource server (the MCP authorization spec):
    /// every request needs a valid access token for it, whose caller
    /// ([`Caller::owner`](taskwire_oauth::resource::Caller::owner): issuer, subject and
    /// client) owns its tasks; the Protected Resource Metadata is served beside the
    /// endpoint; a method's scopes are checked once its body is read. When set,
    /// [`HttpConfig::authenticate`] is not consulted. Default `None`.
    pub oauth: Option<Arc<ResourceServer>>,
    /// The CORS policy on the endpoint (and the Protected Resource Metadata), for MCP clients
    /// in web pages of other origins; the origins it allows pass the `Origin` check of
    /// [`HttpConfig::allowed_hosts`] too. `None` (the default) sends no CORS headers, so
    /// browsers keep pages of other origins out.
    pub cors: Option<Cors>,
    /// Counts what the endpoint refuses (by status), the SSE streams and the 2025-11-25
    /// sessions open, in metrics registered with [`HttpMetrics::register`]. `None` (the
    /// default) counts nothing.
    pub metrics: Option<HttpMetrics>,
    /// Serves the live task dashboard ([`dashboard`](crate::dashboard())) at this path (e.g.
    /// `/tasks`) beside the endpoint, from [`router`](crate::router) and
    /// [`serve`](crate::serve) (which keeps the server's operator's view for it,
    /// `Server::observe`). `None` (the default) serves none.
    pub dashboard: Option<String>,
}

impl Default for HttpConfig {
    fn default() -> Self {
        HttpConfig {
            allowed_hosts: AllowedHosts::Localhost,
            max_body_bytes: 4 * 1024 * 1024,
            max_sessions: 10_000,
            max_sessions_per_owner: 100,
            max_requests_per_session: 64,
            max_requests_per_owner: 256,
            session_idle_timeout: Duration::from_secs(30 * 60),
            stream_capacity: 256,
            stream_after: Duration::from_secs(1),
            poll_after: None,
            body_read_timeout: Duration::from_secs(30),
            header_read_timeout: Duration::from_secs(10),
            max_connections: 1_000,
            authenticate: None,
            oauth: None,
            cors: None,
            metrics: None,
            dashboard: None,
        }
    }
}

impl std::fmt::Debug for HttpConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpConfig")
            .field("allowed_hosts", &self.allowed_hosts)
            .field("max_body_bytes", &self.max_body_bytes)
            .field("max_sessions", &self.max_sessions)
            .field("max_sessions_per_owner", &self.max_sessions_per_owner)
            .field("max_requests_per_session", &self.max_requests_per_session)
            .field("max_requests_per_owner", &self.max_requests_per_owner)
            .field("session_idle_timeout", &self.session_idle_timeout)
            .field("stream_capacity", &self.stream_capacity)
            .field("stream_after", &self.stream_after)
            .field("poll_after", &self.poll_after)
            .field("body_read_timeout", &self.body_read_timeout)
            .field("header_read_timeout", &self.header_read_timeout)
            .field("max_connections", &self.max_connections)
            .field("authenticate", &self.authenticate.is_some())
            .field("oauth", &self.oauth)
            .field("cors", &self.cors)
            .field("metrics", &self.metrics.is_some())
            .field("dashboard", &self.dashboard)
            .finish()
    }
}
