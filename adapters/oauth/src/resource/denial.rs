//! Why a request is refused, as the `401`/`403` answer and `WWW-Authenticate` challenge
//! RFC 6750 and the MCP authorization spec describe.

use std::fmt;

/// Why a request's credentials do not admit it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Denial {
    /// No bearer token: the client should sign in (`401`, no error code).
    Missing,
    /// The `Authorization` header is no bearer token one can read (`401`,
    /// `error="invalid_request"`).
    Malformed(String),
    /// The token is not valid here: bad signature, expired, another issuer or audience,
    /// unknown key, inactive (`401`, `error="invalid_token"`).
    Invalid(String),
    /// The token is valid but lacks these scopes for the method (`403`,
    /// `error="insufficient_scope"`).
    InsufficientScope(Vec<String>),
}

impl Denial {
    /// The HTTP status of the answer: `403` for a missing scope, else `401`.
    pub fn status(&self) -> u16 {
        match self {
            Denial::InsufficientScope(_) => 403,
            _ => 401,
        }
    }

    /// The RFC 6750 error code, if any.
    pub fn error_code(&self) -> Option<&'static str> {
        match self {
            Denial::Missing => None,
            Denial::Malformed(_) => Some("invalid_request"),
            Denial::Invalid(_) => Some("invalid_token"),
            Denial::InsufficientScope(_) => Some("insufficient_scope"),
        }
    }
}

impl fmt::Display for Denial {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Denial::Missing => write!(
                f,
                "Unauthorized: this server wants an OAuth access token (Authorization: Bearer …); \
                 its Protected Resource Metadata names the authorization server"
            ),
            Denial::Malformed(why) => write!(f, "Unauthorized: {why}"),
            Denial::Invalid(why) => write!(f, "Unauthorized: the access token is not valid: {why}"),
            Denial::InsufficientScope(scopes) => write!(
                f,
                "Forbidden: this needs a token with the scopes {:?}, and the access token lacks \
                 some (ask for one with them)",
                scopes.join(" ")
            ),
        }
    }
}

/// `text` as the content of a quoted-string of a challenge: printable ASCII without `"` and
/// `\` (RFC 6750 §3 allows no more in `error_description`).
pub(crate) fn quotable(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            '"' | '\\' => '\'',
            ' '..='~' => c,
            _ => '?',
        })
        .collect()
}
