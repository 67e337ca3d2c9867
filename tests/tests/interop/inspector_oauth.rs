//! The MCP Inspector 2.12 web UI signs in with OAuth: headless Chromium opens the Inspector
//! (`inspector --web`) on a deep link to our `task-server --http` acting as an OAuth resource
//! server in front of a real authorization server (`tests/peers/auth_server.mjs`,
//! oidc-provider). The Inspector meets our 401 by itself: it reads our Protected Resource
//! Metadata, the authorization server's metadata, registers a client (DCR) and sends the page to
//! the authorization endpoint; the browser script (`inspector_web.mjs --oauth-login`) signs in
//! there as `alice` and consents; back on the Inspector's `/oauth/callback` it trades the code
//! for a token for our URL, connects, and the same tasks as `inspector_web.rs` run to their
//! result and to a cancel (alice's own task).
//!
//! What is checked is what the Inspector shows: the authorization request (our URL as the
//! `resource`), its OAuth details and the access token's claims (alice, for our URL), and its
//! Network panel, where our first answer is the 401 and everything after the token succeeds.
//!
//! Our server names a scope (`--auth-scopes mcp`): without one the Inspector registers with
//! `"scope": ""`, which the authorization server refuses ("scope must be a non-empty string if
//! provided"), so it never reaches the login page.

use serde_json::Value;
use taskwire_demo::tools::{DONE_MESSAGE, RESULT_TEXT};
use taskwire_tests::peers::demo::binary;
use taskwire_tests::peers::http::HttpServer;
use taskwire_tests::peers::{self, Argv};

use super::inspector_web::{
    browse, inspector_web, summary_of, text, texts, token, CANCEL_MESSAGE, STEP_MS,
};

/// Who signs in on the authorization server's login page.
const LOGIN: &str = "alice";

/// The scope our server asks for on every request.
const SCOPE: &str = "mcp";

/// One request of the Inspector's Network panel: method, URL, status code.
type Request = (String, String, u64);

/// The Network panel's requests, oldest first.
fn network(summary: &Value) -> Vec<Request> {
    summary["oauth"]["network"]
        .as_array()
        .unwrap_or_else(|| panic!("no /oauth/network in {summary:#}"))
        .iter()
        .map(|r| {
            let field = |name| r[name].as_str().unwrap_or_default().to_string();
            (
                field("method"),
                field("url"),
                r["status"].as_u64().unwrap_or(0),
            )
        })
        .collect()
}

#[test]
fn inspector_web_signs_in_with_oauth_and_runs_a_task() {
    let test = "inspector_web_signs_in_with_oauth_and_runs_a_task";
    let Some(p) = peers::ready(test) else { return };
    let dir = p.scratch(test);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create the scratch directory");
    let shots = dir.join("screenshots");

    // (HttpServer names every server's URL `…/mcp`; the issuer is the origin.)
    let auth = HttpServer::start(
        |port| p.auth_server(port, "key1", 300),
        Some(&dir.join("auth-server.log")),
    );
    let issuer = auth.url.trim_end_matches("/mcp");
    let server = HttpServer::start(
        |port| {
            let http = format!("127.0.0.1:{port}");
            let audience = format!("http://{http}/mcp");
            Argv::new(binary("task-server"))
                .args(&["--required-tool", "--step-ms", STEP_MS, "--http", &http])
                .args(&["--auth-issuer", issuer, "--auth-audience", &audience])
                .args(&["--auth-scopes", SCOPE])
                // The resource server says at debug why it refuses a token.
                .env("RUST_LOG", "info,taskwire_oauth=debug")
        },
        Some(&dir.join("task-server.log")),
    );
    let origin = server.url.trim_end_matches("/mcp");
    let token = token();
    let inspector = inspector_web(p, &dir, &token, &dir.join("inspector.log"));
    let ui = inspector.url.trim_end_matches("/mcp");

    let out = browse(
        p,
        ui,
        &token,
        &server.url,
        &["--oauth-login", LOGIN],
        &shots,
    );
    let context = || format!("{out}{}{}{}", server.log(), auth.log(), inspector.log());
    let summary = summary_of(&out, context);
    let show = |what: &str| format!("{what}\n{summary:#}\n{}", context());

    assert_eq!(
        text(&summary, "/inspectorVersion"),
        "2.12.0",
        "{}",
        show("version")
    );
    assert_eq!(text(&summary, "/connection/url"), server.url);
    assert_eq!(text(&summary, "/connection/protocol"), "2025-11-25");

    // The authorization request: a code with PKCE, for our URL, the scope we named, coming
    // back to the Inspector's callback, which got the code.
    let callback = format!("{ui}/oauth/callback");
    let authorize = |name: &str| text(&summary, &format!("/oauth/authorize/{name}"));
    assert!(
        authorize("endpoint").starts_with(issuer),
        "{}",
        show("authorization endpoint")
    );
    assert_eq!(authorize("response_type"), "code");
    assert_eq!(authorize("code_challenge_method"), "S256");
    assert_eq!(authorize("resource"), server.url, "{}", show("resource"));
    assert_eq!(authorize("redirect_uri"), callback, "{}", show("redirect"));
    assert!(
        authorize("scope").split(' ').any(|s| s == SCOPE),
        "{}",
        show("scope")
    );
    assert_eq!(text(&summary, "/oauth/callback/url"), callback);
    assert!(
        texts(&summary, "/oauth/callback/params").contains(&"code"),
        "{}",
        show("callback")
    );

    // Signed in through a client it registered; the token is alice's, for our URL.
    let client_id = authorize("client_id");
    assert_eq!(text(&summary, "/oauth/details/status"), "AUTHORIZED");
    assert_eq!(
        text(&summary, "/oauth/details/registration"),
        "Dynamic (DCR)"
    );
    assert_eq!(text(&summary, "/oauth/details/clientId"), client_id);
    assert_eq!(
        text(&summary, "/oauth/claims/iss"),
        issuer,
        "{}",
        show("iss")
    );
    assert_eq!(
        text(&summary, "/oauth/claims/sub"),
        LOGIN,
        "{}",
        show("sub")
    );
    assert_eq!(text(&summary, "/oauth/claims/aud"), server.url);
    assert_eq!(text(&summary, "/oauth/claims/client_id"), client_id);
    assert_eq!(text(&summary, "/oauth/claims/scope"), SCOPE);

    // The Network panel: our 401 first, then the discovery, the registration, the token, and
    // our server answering; nothing of ours refused after the token.
    let requests = network(&summary);
    let expected = [
        ("POST", server.url.clone(), 401),
        (
            "GET",
            format!("{origin}/.well-known/oauth-protected-resource/mcp"),
            200,
        ),
        (
            "GET",
            format!("{issuer}/.well-known/oauth-authorization-server"),
            200,
        ),
        ("POST", format!("{issuer}/reg"), 201),
        ("POST", format!("{issuer}/token"), 200),
        ("POST", server.url.clone(), 200),
    ];
    assert_eq!(
        requests.first(),
        Some(&("POST".to_string(), server.url.clone(), 401)),
        "{}",
        show("the first request")
    );
    let mut rest = requests.iter();
    for (method, url, status) in &expected {
        assert!(
            rest.any(|(m, u, s)| m == method && u == url && s == status),
            "{}",
            show(&format!("no {method} {url} answered {status} in order"))
        );
    }
    let token_at = requests
        .iter()
        .position(|(_, url, _)| *url == format!("{issuer}/token"))
        .expect("the token request (checked above)");
    let refused: Vec<_> = requests[token_at..]
        .iter()
        .filter(|(_, url, status)| *url == server.url && *status >= 400)
        .collect();
    assert!(
        refused.is_empty(),
        "{}",
        show(&format!("refused after the token: {refused:?}"))
    );

    // The tasks, as alice: one to its result, one cancelled by her.
    assert_eq!(
        text(&summary, "/completed/status"),
        "completed",
        "{}",
        show("completed")
    );
    assert_eq!(
        text(&summary, "/completed/result"),
        RESULT_TEXT,
        "{}",
        show("result")
    );
    assert_eq!(text(&summary, "/completed/message"), DONE_MESSAGE);
    assert_eq!(
        text(&summary, "/cancelled/status"),
        "cancelled",
        "{}",
        show("cancelled")
    );
    assert_eq!(text(&summary, "/cancelled/response/status"), "cancelled");
    assert_eq!(
        text(&summary, "/cancelled/response/statusMessage"),
        CANCEL_MESSAGE
    );

    let saved = texts(&summary, "/screenshots");
    for name in [
        "login",
        "consent",
        "connected",
        "connection-info",
        "completed",
    ] {
        let path = shots.join(format!("{name}.png"));
        assert!(
            saved.contains(&path.to_str().unwrap_or_default()) && path.is_file(),
            "{}",
            show(&format!("no screenshot {}", path.display()))
        );
    }
}
