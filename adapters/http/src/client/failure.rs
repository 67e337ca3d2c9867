//! Why a request to the endpoint got no JSON-RPC answer, in words that say what to do: the
//! URL is no HTTP URL, nothing listens there, there is no MCP endpoint at that path, the
//! server wants credentials, signing in failed.

use std::error::Error as _;

use axum::http::StatusCode;

use super::auth::Unsent;

/// What an MCP endpoint's URL looks like, for the hints.
const ENDPOINT: &str = "http://HOST:PORT/mcp";

/// Why a request to `url` could not be sent, got no response, or could not sign in.
pub(super) fn unsent(url: &str, unsent: &Unsent) -> String {
    match unsent {
        Unsent::Http(error) => not_sent(url, error),
        Unsent::SignIn(error) => format!("{url} wants a sign-in, and it failed: {error}"),
    }
}

/// Why a request to `url` could not be sent, or got no response.
fn not_sent(url: &str, error: &reqwest::Error) -> String {
    if error.is_builder() {
        if let Some(why) = not_http(url) {
            return why;
        }
    }
    let cause = causes(error);
    if error.is_connect() {
        if refused(error) {
            return format!(
                "connection refused: nothing accepts connections at {url} \
                 (is the server running, on that port?)"
            );
        }
        return format!("cannot connect to {url}: {cause}");
    }
    format!("HTTP request to {url} failed: {cause}")
}

/// Why a response of `status` from `url` that carries no JSON-RPC answer is one; `session`:
/// whether a 2025-11-25 session was open (a 404 then means the server ended it).
pub(super) fn no_answer(url: &str, status: StatusCode, session: bool) -> String {
    match status {
        StatusCode::NOT_FOUND if session => {
            format!("HTTP {status} without an answer: the server no longer knows the session")
        }
        StatusCode::NOT_FOUND | StatusCode::METHOD_NOT_ALLOWED => format!(
            "HTTP {status} from {url}: no MCP endpoint there (an MCP server's endpoint is \
             usually {ENDPOINT})"
        ),
        StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => format!(
            "HTTP {status} from {url}: the server wants credentials (sign in with \
             HttpClient::oauth and a taskwire_http::oauth::client::OAuthClient, or send a token with \
             HttpClient::header, e.g. \"Authorization: Bearer …\")"
        ),
        _ => format!("HTTP {status} from {url} without an answer"),
    }
}

/// Why `url` is no URL this client can send to, if it is not.
fn not_http(url: &str) -> Option<String> {
    if !url.contains("://") {
        return Some(format!(
            "the URL {url:?} has no scheme: an MCP endpoint is {ENDPOINT} \
             (did you mean http://{url}?)"
        ));
    }
    match reqwest::Url::parse(url) {
        Err(e) => Some(format!(
            "the URL {url:?} is not valid ({e}): an MCP endpoint is {ENDPOINT}"
        )),
        Ok(parsed) if !matches!(parsed.scheme(), "http" | "https") => Some(format!(
            "the URL {url:?} is not http or https: an MCP endpoint is {ENDPOINT}"
        )),
        Ok(_) => None,
    }
}

/// Whether the connection was refused (nothing listens on that port).
fn refused(error: &reqwest::Error) -> bool {
    let mut source = error.source();
    while let Some(cause) = source {
        if let Some(io) = cause.downcast_ref::<std::io::Error>() {
            if io.kind() == std::io::ErrorKind::ConnectionRefused {
                return true;
            }
        }
        source = cause.source();
    }
    false
}

/// The error's causes, innermost last, each said once.
fn causes(error: &reqwest::Error) -> String {
    let mut said: Vec<String> = Vec::new();
    let mut source = error.source();
    while let Some(cause) = source {
        let text = cause.to_string();
        if !said.iter().any(|s| s.contains(&text)) {
            said.push(text);
        }
        source = cause.source();
    }
    match said.is_empty() {
        true => error.to_string(),
        false => said.join(": "),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_url_without_scheme_or_not_http_says_what_an_endpoint_looks_like() {
        let bare = not_http("127.0.0.1:3000/mcp").unwrap();
        assert!(bare.contains("has no scheme"), "{bare}");
        assert!(
            bare.contains("did you mean http://127.0.0.1:3000/mcp?"),
            "{bare}"
        );
        let other = not_http("ftp://example.com/mcp").unwrap();
        assert!(other.contains("not http or https"), "{other}");
        assert!(other.contains(ENDPOINT), "{other}");
        let broken = not_http("http://[::1/mcp").unwrap();
        assert!(broken.contains("is not valid"), "{broken}");
        assert_eq!(not_http("https://example.com/mcp"), None);
    }

    #[test]
    fn a_status_without_an_answer_says_what_it_means() {
        let url = "http://127.0.0.1:3000/";
        for status in [StatusCode::NOT_FOUND, StatusCode::METHOD_NOT_ALLOWED] {
            let why = no_answer(url, status, false);
            assert!(why.contains("no MCP endpoint there"), "{why}");
            assert!(why.contains(url) && why.contains(ENDPOINT), "{why}");
        }
        let ended = no_answer(url, StatusCode::NOT_FOUND, true);
        assert!(ended.contains("no longer knows the session"), "{ended}");
        let denied = no_answer(url, StatusCode::UNAUTHORIZED, false);
        assert!(denied.contains("wants credentials"), "{denied}");
        let other = no_answer(url, StatusCode::BAD_GATEWAY, false);
        assert_eq!(
            other,
            "HTTP 502 Bad Gateway from http://127.0.0.1:3000/ without an answer"
        );
    }
}
