//! What every request passes first: the `Host` and `Origin` headers (DNS-rebinding
//! protection) and, when the server asks for it, authentication, which names the owner.

use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};

use crate::config::{AllowedHosts, HttpConfig};
use crate::response::error;

/// Why a request was not admitted.
pub(crate) enum Refused {
    Host(String),
    Origin(String),
    Unauthorized,
}

impl IntoResponse for Refused {
    fn into_response(self) -> Response {
        let forbidden = |what: &str, value: &str| {
            error(
                StatusCode::FORBIDDEN,
                -32600,
                &format!("Forbidden: {what} {value:?} is not allowed (HttpConfig::allowed_hosts)"),
            )
        };
        match self {
            Refused::Host(host) => forbidden("host", &host),
            Refused::Origin(origin) => forbidden("origin", &origin),
            Refused::Unauthorized => {
                let mut refused = error(
                    StatusCode::UNAUTHORIZED,
                    -32600,
                    "Unauthorized: send a valid bearer token in the Authorization header",
                );
                refused
                    .headers_mut()
                    .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
                refused
            }
        }
    }
}

/// The owner named by authentication (`None` when the server does not authenticate), or
/// why the request is refused.
pub(crate) fn admit(headers: &HeaderMap, config: &HttpConfig) -> Result<Option<String>, Refused> {
    if let Some(host) = header_str(headers, header::HOST.as_str()) {
        if !allowed(host_name(host), &config.allowed_hosts) {
            tracing::warn!(host, "refused a request for a host not allowed");
            return Err(Refused::Host(host.to_owned()));
        }
    }
    if let Some(origin) = header_str(headers, header::ORIGIN.as_str()) {
        let host = origin.split_once("://").map_or(origin, |(_, rest)| rest);
        if !allowed(host_name(host), &config.allowed_hosts) {
            tracing::warn!(origin, "refused a request from an origin not allowed");
            return Err(Refused::Origin(origin.to_owned()));
        }
    }
    match &config.authenticate {
        None => Ok(None),
        Some(authenticate) => match authenticate(headers) {
            Some(owner) => Ok(Some(owner)),
            None => {
                tracing::debug!("refused a request without valid credentials");
                Err(Refused::Unauthorized)
            }
        },
    }
}

pub(crate) fn header_str<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// `localhost:3000` → `localhost`; `[::1]:3000` → `[::1]`; a path after the authority is
/// dropped.
fn host_name(authority: &str) -> &str {
    let authority = authority.split('/').next().unwrap_or(authority);
    if authority.starts_with('[') {
        return authority
            .find(']')
            .map_or(authority, |end| &authority[..=end]);
    }
    authority.split(':').next().unwrap_or(authority)
}

fn allowed(host: &str, hosts: &AllowedHosts) -> bool {
    match hosts {
        AllowedHosts::Any => true,
        AllowedHosts::Localhost => {
            matches!(host, "localhost" | "127.0.0.1" | "[::1]")
        }
        AllowedHosts::Only(names) => names.iter().any(|n| n.eq_ignore_ascii_case(host)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_names_drop_ports_and_paths() {
        assert_eq!(host_name("localhost:3000"), "localhost");
        assert_eq!(host_name("[::1]:3000"), "[::1]");
        assert_eq!(host_name("example.com/path"), "example.com");
        assert!(allowed("127.0.0.1", &AllowedHosts::Localhost));
        assert!(!allowed("evil.example", &AllowedHosts::Localhost));
        assert!(allowed(
            "Example.com",
            &AllowedHosts::Only(vec!["example.com".into()])
        ));
    }
}
