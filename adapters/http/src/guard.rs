//! What every request passes first: the `Host` and `Origin` headers (DNS-rebinding
//! protection) and, when the server asks for it, authentication (an OAuth access token, or
//! the server's own hook), which names the owner; then, once its method is known, the
//! scopes that method needs.

use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use taskwire_driver::engine::Envelope;
use taskwire_oauth::resource::{Caller, Denial, ResourceServer};

use crate::config::{AllowedHosts, HttpConfig};
use crate::response::error;

/// Why a request was not admitted.
pub(crate) enum Refused {
    Host(String),
    Origin(String),
    Unauthorized,
    /// The OAuth resource server's refusal, with its `WWW-Authenticate` challenge.
    Token {
        denial: Denial,
        challenge: String,
    },
}

/// Who an admitted request comes from.
pub(crate) struct Admitted {
    /// The owner of its tasks (`None` when the server does not authenticate).
    pub owner: Option<String>,
    /// The token's caller, when OAuth admitted it: its scopes decide which methods it may
    /// call.
    caller: Option<Caller>,
}

impl Admitted {
    /// Whether the request whose `body` this is may call its method (a 2026-07-28 request
    /// names it in `Mcp-Method`, which the engine holds to the body).
    pub fn permits(
        &self,
        headers: &HeaderMap,
        body: &[u8],
        config: &HttpConfig,
    ) -> Result<(), Refused> {
        let (Some(caller), Some(server)) = (&self.caller, &config.oauth) else {
            return Ok(());
        };
        if server.config().method_scopes.is_empty() {
            return Ok(());
        }
        let method = match header_str(headers, "mcp-method") {
            Some(method) => Some(method.to_owned()),
            None => Envelope::read(body).and_then(|envelope| envelope.method),
        };
        let Some(method) = method else {
            return Ok(());
        };
        server
            .permits(caller, &method)
            .map_err(|denial| token_refused(server, denial))
    }

    /// Whether the caller may use `method` (a pseudo-method such as `taskwire/dashboard`
    /// too): under OAuth, the scopes [`ResourceConfig::method_scopes`] names for it.
    ///
    /// [`ResourceConfig::method_scopes`]: taskwire_oauth::resource::ResourceConfig::method_scopes
    pub fn permits_method(&self, method: &str, config: &HttpConfig) -> Result<(), Refused> {
        let (Some(caller), Some(server)) = (&self.caller, &config.oauth) else {
            return Ok(());
        };
        server
            .permits(caller, method)
            .map_err(|denial| token_refused(server, denial))
    }
}

fn token_refused(server: &ResourceServer, denial: Denial) -> Refused {
    let challenge = server.challenge(&denial);
    Refused::Token { denial, challenge }
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
            Refused::Token { denial, challenge } => {
                let status =
                    StatusCode::from_u16(denial.status()).unwrap_or(StatusCode::UNAUTHORIZED);
                let mut refused = error(status, -32600, &denial.to_string());
                if let Ok(value) = HeaderValue::from_str(&challenge) {
                    refused
                        .headers_mut()
                        .insert(header::WWW_AUTHENTICATE, value);
                }
                refused
            }
        }
    }
}

/// Who the request comes from, or why it is refused.
pub(crate) async fn admit(headers: &HeaderMap, config: &HttpConfig) -> Result<Admitted, Refused> {
    if let Some(host) = header_str(headers, header::HOST.as_str()) {
        if !allowed(host_name(host), &config.allowed_hosts) {
            tracing::warn!(host, "refused a request for a host not allowed");
            return Err(Refused::Host(host.to_owned()));
        }
    }
    if let Some(origin) = header_str(headers, header::ORIGIN.as_str()) {
        let host = origin.split_once("://").map_or(origin, |(_, rest)| rest);
        let cors = config.cors.as_ref().is_some_and(|cors| cors.allows(origin));
        if !cors && !allowed(host_name(host), &config.allowed_hosts) {
            tracing::warn!(origin, "refused a request from an origin not allowed");
            return Err(Refused::Origin(origin.to_owned()));
        }
    }
    if let Some(server) = &config.oauth {
        let authorization = headers.get_all(header::AUTHORIZATION);
        return match server
            .authorize(authorization.iter().map(HeaderValue::as_bytes))
            .await
        {
            Ok(caller) => Ok(Admitted {
                owner: Some(caller.owner()),
                caller: Some(caller),
            }),
            Err(denial) => Err(token_refused(server, denial)),
        };
    }
    let owner = match &config.authenticate {
        None => None,
        Some(authenticate) => match authenticate(headers) {
            Some(owner) => Some(owner),
            None => {
                tracing::debug!("refused a request without valid credentials");
                return Err(Refused::Unauthorized);
            }
        },
    };
    Ok(Admitted {
        owner,
        caller: None,
    })
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
