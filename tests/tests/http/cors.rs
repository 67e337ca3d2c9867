//! The CORS policy (`HttpConfig::cors`): off by default; when on, preflights answered for the
//! methods and headers MCP clients use, the headers they read exposed on every response (errors
//! too), origins it does not allow refused, and the Protected Resource Metadata covered.

use std::sync::Arc;

use reqwest::header::HeaderMap;
use reqwest::{Method, Response, StatusCode};
use serde_json::json;
use taskwire_http::oauth::resource::{ResourceConfig, ResourceServer};
use taskwire_http::{Cors, HttpConfig};
use taskwire_tests::oauth::MockIssuer;

use crate::common::TestServer;

/// The web page's origin the tests allow.
const PAGE: &str = "http://app.example:8080";

/// The request headers an MCP client in a page asks a preflight for, both eras.
const REQUESTED: &str = "accept,authorization,content-type,last-event-id,mcp-method,mcp-name,\
    mcp-param-region,mcp-protocol-version,mcp-session-id";

fn with_cors(cors: Cors) -> TestServer {
    TestServer::with_config(HttpConfig {
        cors: Some(cors),
        ..HttpConfig::default()
    })
}

fn header<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// The names in a comma-separated header, lower case.
fn names(headers: &HeaderMap, name: &str) -> Vec<String> {
    header(headers, name)
        .unwrap_or_else(|| panic!("no {name} in {headers:?}"))
        .split(',')
        .map(|n| n.trim().to_ascii_lowercase())
        .collect()
}

/// A 2026-07-28 `tools/list` from a page of `origin`.
async fn list_from(server: &TestServer, origin: &str) -> Response {
    server
        .stateless(1, "tools/list", json!({}))
        .set("origin", origin)
        .send()
        .await
}

/// A preflight of `method` from `origin`, asking for [`REQUESTED`].
async fn preflight(server: &TestServer, url: &str, origin: &str, method: &str) -> Response {
    server
        .http
        .request(Method::OPTIONS, url)
        .header("origin", origin)
        .header("access-control-request-method", method)
        .header("access-control-request-headers", REQUESTED)
        .send()
        .await
        .expect("an answer to the preflight")
}

#[test]
fn cors_is_off_by_default() {
    let server = TestServer::start();
    server.run(async {
        let answer = preflight(&server, &server.url, "http://localhost:6274", "POST").await;
        assert_eq!(answer.status(), StatusCode::METHOD_NOT_ALLOWED);
        let posted = list_from(&server, "http://localhost:6274").await;
        assert_eq!(posted.status(), StatusCode::OK);
        for response in [&answer, &posted] {
            let cors: Vec<_> = response
                .headers()
                .keys()
                .filter(|name| name.as_str().starts_with("access-control-"))
                .collect();
            assert!(cors.is_empty(), "CORS headers while off: {cors:?}");
        }
    });
}

#[test]
fn cors_preflights_allow_the_methods_and_headers_mcp_clients_send() {
    let server = with_cors(Cors::origins([PAGE]));
    server.run(async {
        for method in ["POST", "GET", "DELETE"] {
            let answer = preflight(&server, &server.url, PAGE, method).await;
            assert_eq!(answer.status(), StatusCode::OK, "{method}");
            let headers = answer.headers();
            assert_eq!(
                header(headers, "access-control-allow-origin"),
                Some(PAGE),
                "{method}"
            );
            assert!(names(headers, "access-control-allow-methods").contains(&method.to_lowercase()));
            // The headers asked for, each one allowed (mirrored back).
            let allowed = names(headers, "access-control-allow-headers");
            for name in REQUESTED.split(',') {
                assert!(allowed.contains(&name.to_owned()), "{name} not in {allowed:?}");
            }
            assert_eq!(header(headers, "access-control-max-age"), Some("3600"));
            assert!(header(headers, "access-control-allow-credentials").is_none());
            assert!(names(headers, "vary").contains(&"origin".to_owned()));
        }
    });
}

#[test]
fn cors_responses_expose_the_headers_mcp_clients_read() {
    let server = with_cors(Cors::origins([PAGE]));
    server.run(async {
        // The page's origin passes the Origin check though `allowed_hosts` is the default
        // (loopback names only): the CORS policy admits it.
        let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "cors-test", "version": "1"}}});
        let opened = server.post(&initialize).set("origin", PAGE).send().await;
        assert_eq!(opened.status(), StatusCode::OK);
        let headers = opened.headers();
        assert_eq!(header(headers, "access-control-allow-origin"), Some(PAGE));
        let exposed = names(headers, "access-control-expose-headers");
        for name in ["mcp-session-id", "mcp-protocol-version", "www-authenticate"] {
            assert!(
                exposed.contains(&name.to_owned()),
                "{name} not in {exposed:?}"
            );
        }
        let session = header(headers, "mcp-session-id")
            .expect("an Mcp-Session-Id")
            .to_owned();
        // A 2026-07-28 request, the session's stream and its end: the same headers.
        let stateless = list_from(&server, PAGE).await;
        assert_eq!(stateless.status(), StatusCode::OK);
        let stream = server
            .http
            .get(&server.url)
            .header("origin", PAGE)
            .header("accept", "text/event-stream")
            .header("mcp-session-id", &session)
            .send()
            .await
            .expect("GET");
        let ended = server
            .http
            .delete(&server.url)
            .header("origin", PAGE)
            .header("mcp-session-id", &session)
            .send()
            .await
            .expect("DELETE");
        for (what, response) in [("POST", &stateless), ("GET", &stream), ("DELETE", &ended)] {
            assert!(response.status().is_success(), "{what}: {response:?}");
            assert_eq!(
                header(response.headers(), "access-control-allow-origin"),
                Some(PAGE),
                "{what}"
            );
            assert!(header(response.headers(), "access-control-expose-headers").is_some());
        }
    });
}

#[test]
fn cors_lets_a_page_read_the_authentication_challenge() {
    let server = TestServer::with_config(HttpConfig {
        cors: Some(Cors::origins([PAGE])),
        authenticate: Some(Arc::new(|_: &HeaderMap| None)),
        ..HttpConfig::default()
    });
    server.run(async {
        let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
        let refused = server.post(&ping).set("origin", PAGE).send().await;
        assert_eq!(refused.status(), StatusCode::UNAUTHORIZED);
        let headers = refused.headers();
        assert_eq!(header(headers, "access-control-allow-origin"), Some(PAGE));
        assert_eq!(header(headers, "www-authenticate"), Some("Bearer"));
        assert!(names(headers, "access-control-expose-headers")
            .contains(&"www-authenticate".to_owned()));
    });
}

#[test]
fn cors_refuses_origins_it_does_not_allow() {
    let server = with_cors(Cors::origins([PAGE]));
    server.run(async {
        let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
        for origin in ["http://evil.example", "http://app.example:8081", "null"] {
            let answer = preflight(&server, &server.url, origin, "POST").await;
            assert!(
                header(answer.headers(), "access-control-allow-origin").is_none(),
                "{origin}: {answer:?}"
            );
            let posted = server.post(&ping).set("origin", origin).send().await;
            assert_eq!(posted.status(), StatusCode::FORBIDDEN, "{origin}");
            assert!(header(posted.headers(), "access-control-allow-origin").is_none());
        }
        // A loopback page not in the policy still passes the Origin check (as without CORS)
        // but gets no CORS headers: its browser keeps the answer from it.
        let local = list_from(&server, "http://localhost:6274").await;
        assert_eq!(local.status(), StatusCode::OK);
        assert!(header(local.headers(), "access-control-allow-origin").is_none());
    });
}

#[test]
fn cors_for_any_origin_answers_with_a_wildcard_and_still_checks_the_host() {
    let server = with_cors(Cors::any());
    server.run(async {
        let posted = list_from(&server, "https://anywhere.example").await;
        assert_eq!(posted.status(), StatusCode::OK);
        assert_eq!(
            header(posted.headers(), "access-control-allow-origin"),
            Some("*")
        );
        let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
        let rebound = server
            .post(&ping)
            .set("origin", "https://anywhere.example")
            .set("host", "anywhere.example")
            .send()
            .await;
        assert_eq!(rebound.status(), StatusCode::FORBIDDEN);
    });
}

#[test]
fn cors_covers_the_protected_resource_metadata() {
    let issuer = MockIssuer::start();
    let oauth = ResourceServer::new(ResourceConfig::new("https://mcp.example/mcp", &issuer.url))
        .expect("a valid config");
    let server = TestServer::with_config(HttpConfig {
        oauth: Some(Arc::new(oauth)),
        cors: Some(Cors::origins([PAGE])),
        ..HttpConfig::default()
    });
    server.run(async {
        let url = server
            .url
            .replace("/mcp", "/.well-known/oauth-protected-resource/mcp");
        let answer = preflight(&server, &url, PAGE, "GET").await;
        assert_eq!(answer.status(), StatusCode::OK);
        assert_eq!(
            header(answer.headers(), "access-control-allow-origin"),
            Some(PAGE)
        );
        let document = server
            .http
            .get(&url)
            .header("origin", PAGE)
            .send()
            .await
            .expect("GET");
        assert_eq!(document.status(), StatusCode::OK);
        assert_eq!(
            header(document.headers(), "access-control-allow-origin"),
            Some(PAGE)
        );
        // The endpoint's challenge, readable by the page, points at that document.
        let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
        let refused = server.post(&ping).set("origin", PAGE).send().await;
        assert_eq!(refused.status(), StatusCode::UNAUTHORIZED);
        assert_eq!(
            header(refused.headers(), "access-control-allow-origin"),
            Some(PAGE)
        );
        assert!(header(refused.headers(), "www-authenticate")
            .is_some_and(|c| c.contains("oauth-protected-resource")));
    });
}
