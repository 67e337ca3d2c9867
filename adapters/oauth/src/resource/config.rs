//! What a resource server checks, and how much it spends on checking: every limit with its
//! default.

use std::collections::BTreeMap;
use std::time::Duration;

/// How a resource server validates access tokens.
#[derive(Clone, PartialEq, Eq)]
pub enum TokenCheck {
    /// Tokens are JWTs signed by the authorization server: verified here against the keys
    /// of its JWKS (`jwks_uri` of its metadata). No request leaves the server for a token
    /// whose key is known.
    Jwt,
    /// Opaque tokens, asked about at the authorization server's `introspection_endpoint`
    /// (RFC 7662) with this server's own client credentials (HTTP Basic); each answer is
    /// kept for [`ResourceConfig::introspection_cache`].
    Introspection {
        /// This resource server's client id at the authorization server.
        client_id: String,
        /// Its client secret.
        client_secret: String,
    },
}

impl std::fmt::Debug for TokenCheck {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TokenCheck::Jwt => f.write_str("Jwt"),
            // The secret is never printed.
            TokenCheck::Introspection { client_id, .. } => f
                .debug_struct("Introspection")
                .field("client_id", client_id)
                .finish_non_exhaustive(),
        }
    }
}

/// A resource server's settings; [`ResourceConfig::new`] gives the defaults.
#[derive(Clone, Debug)]
pub struct ResourceConfig {
    /// This MCP server's canonical URI (RFC 8707), e.g. `https://mcp.example.com/mcp`:
    /// tokens must name it in `aud`, and the Protected Resource Metadata names it as
    /// `resource`. Clients send it as the `resource` parameter when they ask for tokens.
    pub resource: String,
    /// The authorization server's issuer identifier (e.g. `https://auth.example.com`):
    /// tokens must carry it as `iss`, and its metadata (RFC 8414, or OpenID discovery) is
    /// read from it for the JWKS or introspection endpoint.
    pub issuer: String,
    /// How tokens are validated. Default [`TokenCheck::Jwt`].
    pub tokens: TokenCheck,
    /// Scopes every request needs (the `401` challenge names them, so clients ask for them
    /// at once). Default none: a valid token for this resource is enough.
    pub scopes_required: Vec<String>,
    /// Scopes a JSON-RPC method needs besides [`ResourceConfig::scopes_required`], by method
    /// name (e.g. `"tasks/cancel"` → `["tasks:write"]`); a token without them gets `403`
    /// with `error="insufficient_scope"` naming them. Default none.
    pub method_scopes: BTreeMap<String, Vec<String>>,
    /// How far the server's clock and the issuer's may disagree when `exp` and `nbf` are
    /// checked. Default 60 s.
    pub clock_skew: Duration,
    /// The longest token taken, in bytes; a longer one is refused unread (`401`). Default
    /// 8 KiB.
    pub max_token_bytes: usize,
    /// How long one request to the authorization server (its metadata, JWKS, or an
    /// introspection) may take; a slower one fails, and the tokens that needed it are
    /// refused (`401`) while the others are served. Default 5 s.
    pub fetch_timeout: Duration,
    /// The largest document taken from the authorization server, in bytes. Default 256 KiB.
    pub max_document_bytes: usize,
    /// The shortest time between two fetches of the JWKS caused by tokens naming a key it
    /// does not know (a rotated key is picked up by the first token signed with it; a flood
    /// of made-up key ids costs one fetch per interval). After a fetch that failed (an
    /// issuer not up yet), 1 s when that is shorter. Default 30 s.
    pub jwks_refetch_interval: Duration,
    /// How long the keys read from the JWKS are used before it is read again: older, they
    /// still verify tokens while a fresh read runs in the background, so a key the issuer
    /// withdrew stops being accepted within about this time. Default 10 minutes.
    pub jwks_max_age: Duration,
    /// How long an introspection's answer is kept for its token (never past the token's
    /// `exp`). Default 30 s.
    pub introspection_cache: Duration,
    /// Introspected tokens kept at once; when full, the oldest answers are dropped first.
    /// Default 10,000.
    pub max_cached_tokens: usize,
}

impl ResourceConfig {
    /// The settings of a server at `resource` whose tokens `issuer` signs, validated as JWTs,
    /// with every other field at its default.
    pub fn new(resource: impl Into<String>, issuer: impl Into<String>) -> Self {
        ResourceConfig {
            resource: resource.into(),
            issuer: issuer.into(),
            tokens: TokenCheck::Jwt,
            scopes_required: Vec::new(),
            method_scopes: BTreeMap::new(),
            clock_skew: Duration::from_secs(60),
            max_token_bytes: 8 * 1024,
            fetch_timeout: Duration::from_secs(5),
            max_document_bytes: 256 * 1024,
            jwks_refetch_interval: Duration::from_secs(30),
            jwks_max_age: Duration::from_secs(600),
            introspection_cache: Duration::from_secs(30),
            max_cached_tokens: 10_000,
        }
    }

    /// Every scope this server asks for: those every request needs, then each method's.
    pub fn scopes_supported(&self) -> Vec<String> {
        let mut scopes = self.scopes_required.clone();
        for scope in self.method_scopes.values().flatten() {
            if !scopes.contains(scope) {
                scopes.push(scope.clone());
            }
        }
        scopes
    }
}
