//! What can go wrong while signing in, each saying what to do about it.

use std::fmt;

/// Why the client could not get an access token for a server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OAuthError {
    /// No Protected Resource Metadata or authorization server metadata could be read.
    Discovery(String),
    /// The metadata names another resource or issuer than the one asked for: signing in
    /// there could hand a token to the wrong party, so the client stops.
    Mismatch(String),
    /// The client has no registration at the authorization server and cannot get one.
    Registration(String),
    /// The interactive step (the user agent) failed, or its redirect was refused.
    Authorization(String),
    /// The token endpoint refused a request, or answered something unreadable.
    Token(String),
}

impl fmt::Display for OAuthError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (what, why) = match self {
            OAuthError::Discovery(why) => ("OAuth discovery failed", why),
            OAuthError::Mismatch(why) => ("OAuth metadata does not match", why),
            OAuthError::Registration(why) => ("OAuth client registration failed", why),
            OAuthError::Authorization(why) => ("OAuth authorization failed", why),
            OAuthError::Token(why) => ("OAuth token request failed", why),
        };
        write!(f, "{what}: {why}")
    }
}

impl std::error::Error for OAuthError {}
