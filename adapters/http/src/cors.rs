//! The CORS policy on the endpoint ([`HttpConfig::cors`](crate::HttpConfig::cors)), so that a
//! web page of another origin can be an MCP client: preflights answered, the response headers
//! MCP clients read exposed.

use std::time::Duration;

use axum::http::{header, HeaderName, HeaderValue, Method};
use tower_http::cors::{AllowHeaders, AllowMethods, AllowOrigin, CorsLayer, ExposeHeaders};

/// Which web origins may call the endpoint from a page.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AllowedOrigins {
    /// Only these origins, each as a browser sends it in `Origin`: scheme, host and port if
    /// not the scheme's default (`https://app.example`, `http://127.0.0.1:5173`); compared
    /// ignoring ASCII case and a trailing `/`.
    Only(Vec<String>),
    /// Any origin (answered with `Access-Control-Allow-Origin: *`).
    Any,
}

/// A CORS policy: which origins may call the endpoint from a web page.
///
/// Preflights (`OPTIONS`) are answered for `POST`, `GET` and `DELETE` with whatever request
/// headers the page asks for (MCP clients send `Mcp-Session-Id`, `Mcp-Protocol-Version`,
/// `Authorization`, `Last-Event-ID` and, in 2026-07-28, `Mcp-Method`, `Mcp-Name` and
/// `Mcp-Param-*`); responses expose `Mcp-Session-Id`, `Mcp-Protocol-Version` and
/// `WWW-Authenticate` (the OAuth challenge) to the page. No credentials mode: cookies are not
/// allowed, a bearer token in `Authorization` is.
///
/// An origin this policy allows also passes the `Origin` check of
/// [`HttpConfig::allowed_hosts`](crate::HttpConfig::allowed_hosts); the `Host` check stays.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cors {
    /// The origins allowed. Default: none ([`AllowedOrigins::Only`] with an empty list).
    pub allowed_origins: AllowedOrigins,
    /// How long a browser may keep a preflight's answer (`Access-Control-Max-Age`; Chromium
    /// keeps it 2 hours at most). Default 1 hour.
    pub max_age: Duration,
}

impl Default for Cors {
    fn default() -> Self {
        Cors {
            allowed_origins: AllowedOrigins::Only(Vec::new()),
            max_age: Duration::from_secs(60 * 60),
        }
    }
}

impl Cors {
    /// A policy allowing `origins` (e.g. `["http://127.0.0.1:5173"]`), with the default
    /// [`Cors::max_age`].
    pub fn origins<I, S>(origins: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Cors {
            allowed_origins: AllowedOrigins::Only(origins.into_iter().map(Into::into).collect()),
            ..Cors::default()
        }
    }

    /// A policy allowing any origin, with the default [`Cors::max_age`].
    pub fn any() -> Self {
        Cors {
            allowed_origins: AllowedOrigins::Any,
            ..Cors::default()
        }
    }

    /// Whether a page of `origin` (an `Origin` header's value) may call the endpoint.
    pub fn allows(&self, origin: &str) -> bool {
        match &self.allowed_origins {
            AllowedOrigins::Any => true,
            AllowedOrigins::Only(origins) => origins
                .iter()
                .any(|allowed| allowed.trim_end_matches('/').eq_ignore_ascii_case(origin)),
        }
    }

    /// The tower layer that applies this policy.
    pub(crate) fn layer(&self) -> CorsLayer {
        let origins = match &self.allowed_origins {
            AllowedOrigins::Any => AllowOrigin::any(),
            AllowedOrigins::Only(_) => {
                let policy = self.clone();
                AllowOrigin::predicate(move |origin: &HeaderValue, _| {
                    origin.to_str().is_ok_and(|origin| policy.allows(origin))
                })
            }
        };
        CorsLayer::new()
            .allow_origin(origins)
            .allow_methods(AllowMethods::list([
                Method::POST,
                Method::GET,
                Method::DELETE,
            ]))
            .allow_headers(AllowHeaders::mirror_request())
            .expose_headers(ExposeHeaders::list([
                HeaderName::from_static("mcp-session-id"),
                HeaderName::from_static("mcp-protocol-version"),
                header::WWW_AUTHENTICATE,
            ]))
            .max_age(self.max_age)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_match_ignoring_case_and_a_trailing_slash() {
        let cors = Cors::origins(["http://127.0.0.1:5173/", "https://App.example"]);
        assert!(cors.allows("http://127.0.0.1:5173"));
        assert!(cors.allows("https://app.example"));
        assert!(!cors.allows("http://127.0.0.1:5174"));
        assert!(!cors.allows("http://app.example"));
        assert!(!Cors::default().allows("https://app.example"));
        assert!(Cors::any().allows("null"));
    }
}
