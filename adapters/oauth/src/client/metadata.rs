//! The metadata documents the client reads: a resource's Protected Resource Metadata (RFC
//! 9728) and its authorization server's metadata (RFC 8414, or OpenID Connect Discovery).
//! Fields the client does not use are ignored.

use serde::{Deserialize, Serialize};

/// A protected resource's metadata (RFC 9728 §2).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResourceMetadata {
    /// The resource's identifier: the value of the `resource` parameter, exactly.
    pub resource: String,
    /// The issuers of the authorization servers that give tokens for it.
    #[serde(default)]
    pub authorization_servers: Vec<String>,
    /// The scopes the resource knows.
    #[serde(default)]
    pub scopes_supported: Option<Vec<String>>,
}

/// An authorization server's metadata (RFC 8414 §2).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerMetadata {
    /// The issuer identifier.
    pub issuer: String,
    /// Where the user agent is sent to authorize.
    #[serde(default)]
    pub authorization_endpoint: Option<String>,
    /// Where codes, refresh tokens and client credentials become access tokens.
    pub token_endpoint: String,
    /// Where a client registers itself (RFC 7591).
    #[serde(default)]
    pub registration_endpoint: Option<String>,
    /// The scopes the server knows.
    #[serde(default)]
    pub scopes_supported: Option<Vec<String>>,
    /// The client authentications the token endpoint takes (absent: `client_secret_basic`).
    #[serde(default)]
    pub token_endpoint_auth_methods_supported: Option<Vec<String>>,
    /// The PKCE methods the server takes (absent: no PKCE, and an MCP client stops).
    #[serde(default)]
    pub code_challenge_methods_supported: Option<Vec<String>>,
    /// Whether a URL may be a `client_id` (Client ID Metadata Documents).
    #[serde(default)]
    pub client_id_metadata_document_supported: bool,
    /// Whether the redirect carries `iss` (RFC 9207).
    #[serde(default)]
    pub authorization_response_iss_parameter_supported: bool,
}

impl ServerMetadata {
    /// The endpoints a 2025-03-26 server without metadata has at its origin: `/authorize`,
    /// `/token` and `/register`.
    pub fn defaults(origin: &str) -> ServerMetadata {
        let origin = origin.trim_end_matches('/');
        ServerMetadata {
            issuer: origin.to_owned(),
            authorization_endpoint: Some(format!("{origin}/authorize")),
            token_endpoint: format!("{origin}/token"),
            registration_endpoint: Some(format!("{origin}/register")),
            code_challenge_methods_supported: Some(vec!["S256".to_owned()]),
            ..ServerMetadata::default()
        }
    }
}
