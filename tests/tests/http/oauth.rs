//! The endpoint as an OAuth resource server (`HttpConfig::oauth`), against an authorization
//! server of our own (`taskwire_tests::oauth::MockIssuer`): the metadata and challenges
//! clients act on, tokens validated as JWTs (rotated keys picked up; an issuer whose JWKS
//! hangs or breaks costs only the tokens it would have verified) or by introspection, tasks
//! bound to the caller, scopes per method, and every malformed or forged token refused.

use std::sync::Arc;
use std::time::{Duration, Instant};

use reqwest::{Response, StatusCode};
use serde_json::{json, Value};
use taskwire_http::oauth::resource::{ResourceConfig, ResourceServer, TokenCheck};
use taskwire_http::HttpConfig;
use taskwire_tests::oauth::{now, Jwks, MockIssuer, TestKey};

use crate::common::{messages, TestServer};

/// The resource the tokens are for.
const RESOURCE: &str = "https://mcp.example/mcp";

/// The demo server as a resource server of `issuer`'s, `adjust`ed.
fn protected(issuer: &MockIssuer, adjust: impl FnOnce(&mut ResourceConfig)) -> TestServer {
    let mut config = ResourceConfig::new(RESOURCE, &issuer.url);
    config.jwks_refetch_interval = Duration::ZERO;
    config.fetch_timeout = Duration::from_secs(1);
    adjust(&mut config);
    let oauth = ResourceServer::new(config).expect("a valid config");
    TestServer::with_config(HttpConfig {
        oauth: Some(Arc::new(oauth)),
        ..HttpConfig::default()
    })
}

fn ping() -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "ping"})
}

fn challenge(response: &Response) -> String {
    response
        .headers()
        .get("www-authenticate")
        .and_then(|v| v.to_str().ok())
        .expect("a WWW-Authenticate challenge")
        .to_owned()
}

/// A 2026-07-28 `tools/list` with `authorization`.
async fn list_with(server: &TestServer, authorization: &str) -> Response {
    server
        .stateless(1, "tools/list", json!({}))
        .set("authorization", authorization)
        .send()
        .await
}

#[test]
fn the_metadata_is_public_and_every_refusal_points_to_it() {
    let issuer = MockIssuer::start();
    let server = protected(&issuer, |c| c.scopes_required = vec!["mcp".into()]);
    server.run(async {
        let origin = server.url.trim_end_matches("/mcp");
        for path in [
            "/.well-known/oauth-protected-resource/mcp",
            "/.well-known/oauth-protected-resource",
        ] {
            let document: Value = server
                .http
                .get(format!("{origin}{path}"))
                .send()
                .await
                .expect("GET")
                .json()
                .await
                .expect("JSON");
            assert_eq!(
                document,
                json!({"resource": RESOURCE, "authorization_servers": [issuer.url],
                    "bearer_methods_supported": ["header"], "scopes_supported": ["mcp"]}),
                "{path}"
            );
        }
        let missing = server.post(&ping()).send().await;
        assert_eq!(missing.status(), StatusCode::UNAUTHORIZED);
        assert_eq!(
            challenge(&missing),
            "Bearer resource_metadata=\"https://mcp.example/.well-known/oauth-protected-resource/mcp\", scope=\"mcp\""
        );
        let body: Value = missing.json().await.expect("a JSON-RPC error");
        assert_eq!(body["error"]["code"], -32600);
        // The GET stream and DELETE are refused alike.
        let get = server
            .http
            .get(&server.url)
            .header("accept", "text/event-stream")
            .send()
            .await
            .expect("GET");
        assert_eq!(get.status(), StatusCode::UNAUTHORIZED);
        let delete = server.http.delete(&server.url).send().await.expect("DELETE");
        assert_eq!(delete.status(), StatusCode::UNAUTHORIZED);
    });
}

#[test]
fn malformed_forged_and_misdirected_tokens_are_refused_and_the_server_goes_on() {
    let issuer = MockIssuer::start();
    let server = protected(&issuer, |_| {});
    let good = issuer.claims("alice", "cli", RESOURCE, "");
    let with = |change: Value| {
        let mut claims = good.clone();
        for (k, v) in change.as_object().expect("an object") {
            claims[k] = v.clone();
        }
        issuer.token(TestKey::Key1, &claims)
    };
    let none_alg = {
        let b64 = |v: &Value| {
            use base64::Engine as _;
            base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string())
        };
        format!(
            "{}.{}.",
            b64(&json!({"alg": "none", "typ": "JWT"})),
            b64(&good)
        )
    };
    let hmac_with_public_key = {
        // Key confusion: HS256 keyed with the issuer's public JWK.
        let secret = TestKey::Key1.jwk().to_string();
        let mut header = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256);
        header.kid = Some("key1".into());
        let key = jsonwebtoken::EncodingKey::from_secret(secret.as_bytes()).expect("a key");
        jsonwebtoken::encode(&header, &good, &key).expect("a token")
    };
    let cases: Vec<(&str, String, &str, &str)> = vec![
        (
            "two headers",
            String::new(),
            "invalid_request",
            "more than one",
        ),
        (
            "no token",
            "Bearer".into(),
            "invalid_request",
            "carries no token",
        ),
        (
            "bad characters",
            "Bearer a\"b".into(),
            "invalid_request",
            "characters",
        ),
        (
            "not a JWT",
            "Bearer abc.def".into(),
            "invalid_token",
            "no JWT",
        ),
        (
            "alg none",
            format!("Bearer {none_alg}"),
            "invalid_token",
            "'none'",
        ),
        (
            "HS256",
            format!("Bearer {hmac_with_public_key}"),
            "invalid_token",
            "HS256",
        ),
        (
            "forged",
            format!("Bearer {}", issuer.token(TestKey::Forger, &good)),
            "invalid_token",
            "signature",
        ),
        (
            "wrong iss",
            format!("Bearer {}", with(json!({"iss": "https://evil.example"}))),
            "invalid_token",
            "not issued by",
        ),
        (
            "other audience",
            format!(
                "Bearer {}",
                with(json!({"aud": "https://other.example/mcp"}))
            ),
            "invalid_token",
            "not for this resource",
        ),
        (
            "expired",
            format!("Bearer {}", with(json!({"exp": now() - 120}))),
            "invalid_token",
            "expired",
        ),
        (
            "not yet",
            format!("Bearer {}", with(json!({"nbf": now() + 600}))),
            "invalid_token",
            "not valid yet",
        ),
        (
            "no subject",
            format!("Bearer {}", with(json!({"sub": null}))),
            "invalid_token",
            "sub",
        ),
        (
            "huge",
            format!("Bearer {}", "a".repeat(9000)),
            "invalid_token",
            "longer than 8192",
        ),
    ];
    server.run(async {
        for (case, authorization, code, says) in &cases {
            let response = if *case == "two headers" {
                let mut headers = reqwest::header::HeaderMap::new();
                for token in ["Bearer a", "Bearer b"] {
                    headers.append("authorization", token.parse().expect("a value"));
                }
                server
                    .http
                    .post(&server.url)
                    .headers(headers)
                    .header("content-type", "application/json")
                    .header("accept", "application/json, text/event-stream")
                    .body(ping().to_string())
                    .send()
                    .await
                    .expect("POST")
            } else {
                list_with(&server, authorization).await
            };
            assert_eq!(response.status(), StatusCode::UNAUTHORIZED, "{case}");
            let challenge = challenge(&response);
            assert!(
                challenge.contains(&format!("error=\"{code}\"")),
                "{case}: {challenge}"
            );
            assert!(challenge.contains(says), "{case}: {challenge}");
            let body: Value = response.json().await.expect("a JSON-RPC error");
            assert!(
                body["error"]["message"]
                    .as_str()
                    .is_some_and(|m| m.starts_with("Unauthorized")),
                "{case}: {body}"
            );
        }
        let served = list_with(&server, &format!("Bearer {}", with(json!({})))).await;
        assert_eq!(served.status(), StatusCode::OK);
        // Within the clock skew, an expired token still passes.
        let lately = with(json!({"exp": now() - 10}));
        let served = list_with(&server, &format!("Bearer {lately}")).await;
        assert_eq!(served.status(), StatusCode::OK);
    });
}

#[test]
fn a_rotated_key_is_picked_up_by_the_first_token_signed_with_it() {
    let issuer = MockIssuer::start();
    let server = protected(&issuer, |_| {});
    let claims = issuer.claims("alice", "cli", RESOURCE, "");
    server.run(async {
        let old = format!("Bearer {}", issuer.token(TestKey::Key1, &claims));
        assert_eq!(list_with(&server, &old).await.status(), StatusCode::OK);
        let fetched = issuer.jwks_fetches();
        // Known keys cost no fetch.
        assert_eq!(list_with(&server, &old).await.status(), StatusCode::OK);
        assert_eq!(issuer.jwks_fetches(), fetched);
        let rotated = format!("Bearer {}", issuer.token(TestKey::Rsa, &claims));
        let refused = list_with(&server, &rotated).await;
        assert_eq!(refused.status(), StatusCode::UNAUTHORIZED);
        assert!(challenge(&refused).contains("does not publish"));
        issuer.set_jwks(Jwks::Keys(vec![TestKey::Key1, TestKey::Rsa]));
        assert_eq!(list_with(&server, &rotated).await.status(), StatusCode::OK);
    });
}

#[test]
fn a_jwks_that_hangs_or_breaks_costs_only_the_tokens_it_would_have_verified() {
    let issuer = MockIssuer::start();
    let server = protected(&issuer, |_| {});
    let claims = issuer.claims("alice", "cli", RESOURCE, "");
    let known = format!("Bearer {}", issuer.token(TestKey::Key1, &claims));
    let unknown = format!("Bearer {}", issuer.token(TestKey::Rsa, &claims));
    server.run(async {
        assert_eq!(list_with(&server, &known).await.status(), StatusCode::OK);
        for jwks in [Jwks::Hang, Jwks::Garbage] {
            issuer.set_jwks(jwks.clone());
            let started = Instant::now();
            let waiting = list_with(&server, &unknown);
            let served = async {
                // While the fetch for the unknown key is pending, known keys serve.
                tokio::time::sleep(Duration::from_millis(100)).await;
                let response = list_with(&server, &known).await;
                (response.status(), started.elapsed())
            };
            let (refused, (status, served_after)) = tokio::join!(waiting, served);
            let refused_after = started.elapsed();
            assert_eq!(status, StatusCode::OK, "{jwks:?}");
            assert_eq!(refused.status(), StatusCode::UNAUTHORIZED, "{jwks:?}");
            if matches!(jwks, Jwks::Hang) {
                assert!(
                    served_after < refused_after,
                    "the known key waited for the hanging fetch"
                );
            }
            // ResourceConfig::fetch_timeout is 1 s here.
            assert!(
                refused_after < Duration::from_secs(5),
                "{jwks:?}: refused after {refused_after:?}"
            );
        }
    });
}

/// `initialize` with `token`; the session id.
async fn open_session_as(server: &TestServer, token: &str) -> String {
    let response = server
        .post(
            &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "oauth-tests", "version": "1"}}}),
        )
        .set("authorization", &format!("Bearer {token}"))
        .send()
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    response.headers()["mcp-session-id"]
        .to_str()
        .expect("text")
        .to_owned()
}

#[test]
fn a_task_is_its_callers_only_in_both_eras() {
    let issuer = MockIssuer::start();
    let server = protected(&issuer, |_| {});
    let token = |subject: &str, client: &str| {
        issuer.token(TestKey::Key1, &issuer.claims(subject, client, RESOURCE, ""))
    };
    let (alice, alice_elsewhere, bob) = (
        token("alice", "cli"),
        token("alice", "inspector"),
        token("bob", "cli"),
    );
    server.run(async {
        let created = server
            .stateless(
                1,
                "tools/call",
                json!({"name": "long_running_task", "arguments": {}}),
            )
            .set("authorization", &format!("Bearer {alice}"))
            .send()
            .await;
        let created = messages(created).await.remove(0);
        let task = created["result"]["taskId"]
            .as_str()
            .expect("a task")
            .to_owned();
        let get_as = |token: &str| {
            server
                .stateless(2, "tasks/get", json!({"taskId": task}))
                .set("authorization", &format!("Bearer {token}"))
                .send()
        };
        let own = messages(get_as(&alice).await).await.remove(0);
        assert_eq!(own["result"]["taskId"], task.as_str());
        let as_other = |token: &str, method: &'static str, params: Value| {
            server
                .stateless(2, method, params)
                .set("authorization", &format!("Bearer {token}"))
                .send()
        };
        for other in [&bob, &alice_elsewhere] {
            for (method, params) in [
                ("tasks/get", json!({"taskId": task})),
                (
                    "tasks/update",
                    json!({"taskId": task, "inputResponses": {"q": {"action": "accept"}}}),
                ),
                ("tasks/cancel", json!({"taskId": task})),
            ] {
                let response = as_other(other, method, params).await;
                let status = response.status();
                let refused = messages(response).await.remove(0);
                assert_eq!(refused["error"]["code"], -32602, "{refused}");
                assert!(
                    refused["error"]["message"]
                        .as_str()
                        .is_some_and(|m| m.contains("not found") || m.contains("Not found")),
                    "{refused}"
                );
                assert_ne!(status, StatusCode::FORBIDDEN);
            }
        }
        // Still Alice's, not cancelled: the cancels above did not reach it.
        let own = messages(get_as(&alice).await).await.remove(0);
        assert_ne!(own["result"]["status"], "cancelled", "{own}");
        // 2025-11-25: a task made in one session of Alice's is listed in another of hers;
        // Bob's lists none, and cannot use Alice's session.
        let first = open_session_as(&server, &alice).await;
        let made = server
            .call_as_task(&first, "long_running_task", json!({}))
            .set("authorization", &format!("Bearer {alice}"))
            .send()
            .await;
        let made = messages(made).await.remove(0);
        let task = made["result"]["task"]["taskId"]
            .as_str()
            .expect("a task")
            .to_owned();
        let session = open_session_as(&server, &alice).await;
        let list = json!({"jsonrpc": "2.0", "id": 3, "method": "tasks/list"});
        let listed = server
            .in_session(&session, &list)
            .set("authorization", &format!("Bearer {alice}"))
            .send()
            .await;
        let listed = messages(listed).await.remove(0);
        let ids: Vec<&str> = listed["result"]["tasks"]
            .as_array()
            .expect("tasks")
            .iter()
            .filter_map(|t| t["taskId"].as_str())
            .collect();
        assert!(ids.contains(&task.as_str()), "{listed}");
        let hijack = server
            .in_session(&session, &list)
            .set("authorization", &format!("Bearer {bob}"))
            .send()
            .await;
        assert_eq!(hijack.status(), StatusCode::NOT_FOUND);
        let bobs = open_session_as(&server, &bob).await;
        let listed = server
            .in_session(&bobs, &list)
            .set("authorization", &format!("Bearer {bob}"))
            .send()
            .await;
        let listed = messages(listed).await.remove(0);
        assert_eq!(listed["result"]["tasks"], json!([]), "{listed}");
        let waited = server
            .ask_result(&bobs, 4, &json!(task))
            .set("authorization", &format!("Bearer {bob}"))
            .send()
            .await;
        let waited = messages(waited).await.remove(0);
        assert_eq!(waited["error"]["code"], -32602, "{waited}");
    });
}

#[test]
fn a_method_without_its_scope_is_refused_with_403_naming_it() {
    let issuer = MockIssuer::start();
    let server = protected(&issuer, |config| {
        config
            .method_scopes
            .insert("tools/call".into(), vec!["tasks:write".into()]);
    });
    let reader = issuer.token(
        TestKey::Key1,
        &issuer.claims("alice", "cli", RESOURCE, "tasks:read"),
    );
    let writer = issuer.token(
        TestKey::Key1,
        &issuer.claims("alice", "cli", RESOURCE, "tasks:read tasks:write"),
    );
    server.run(async {
        let call = |token: &str| {
            server
                .stateless(
                    1,
                    "tools/call",
                    json!({"name": "long_running_task", "arguments": {}}),
                )
                .set("authorization", &format!("Bearer {token}"))
                .send()
        };
        let refused = call(&reader).await;
        assert_eq!(refused.status(), StatusCode::FORBIDDEN);
        let challenge = challenge(&refused);
        assert!(
            challenge.contains("error=\"insufficient_scope\""),
            "{challenge}"
        );
        assert!(challenge.contains("scope=\"tasks:write\""), "{challenge}");
        assert!(challenge.contains("resource_metadata=\""), "{challenge}");
        // Other methods need no scope; the wider token calls.
        assert_eq!(
            list_with(&server, &format!("Bearer {reader}"))
                .await
                .status(),
            StatusCode::OK
        );
        assert_eq!(call(&writer).await.status(), StatusCode::OK);
        // 2025-11-25: the method is read from the body.
        let session = open_session_as(&server, &reader).await;
        let refused = server
            .call_as_task(&session, "long_running_task", json!({}))
            .set("authorization", &format!("Bearer {reader}"))
            .send()
            .await;
        assert_eq!(refused.status(), StatusCode::FORBIDDEN);
    });
}

#[test]
fn opaque_tokens_are_introspected_once_per_cache_time() {
    let issuer = MockIssuer::start();
    let server = protected(&issuer, |config| {
        config.tokens = TokenCheck::Introspection {
            client_id: "mcp-server".into(),
            client_secret: "s3cret".into(),
        };
    });
    issuer.opaque(
        "opaque-alice",
        json!({"sub": "alice", "client_id": "cli", "aud": RESOURCE, "iss": issuer.url,
            "exp": now() + 300}),
    );
    issuer.opaque(
        "opaque-elsewhere",
        json!({"sub": "alice", "client_id": "cli", "aud": "https://other.example/mcp"}),
    );
    server.run(async {
        assert_eq!(
            list_with(&server, "Bearer opaque-alice").await.status(),
            StatusCode::OK
        );
        assert_eq!(
            list_with(&server, "Bearer opaque-alice").await.status(),
            StatusCode::OK
        );
        assert_eq!(issuer.introspections(), 1, "the second answer was kept");
        for (token, says) in [
            ("opaque-elsewhere", "not for this resource"),
            ("opaque-unknown", "not active"),
        ] {
            let refused = list_with(&server, &format!("Bearer {token}")).await;
            assert_eq!(refused.status(), StatusCode::UNAUTHORIZED, "{token}");
            assert!(challenge(&refused).contains(says), "{token}");
        }
    });
}

#[test]
fn a_key_the_issuer_withdraws_stops_verifying_once_the_keys_are_read_again() {
    let issuer = MockIssuer::start();
    let server = protected(&issuer, |config| config.jwks_max_age = Duration::ZERO);
    let claims = issuer.claims("alice", "cli", RESOURCE, "");
    let token = format!("Bearer {}", issuer.token(TestKey::Key1, &claims));
    server.run(async {
        assert_eq!(list_with(&server, &token).await.status(), StatusCode::OK);
        issuer.set_jwks(Jwks::Keys(vec![TestKey::Rsa]));
        // Old keys still serve while they are read again in the background; then the
        // withdrawn one verifies nothing.
        let mut statuses = Vec::new();
        for _ in 0..50 {
            let status = list_with(&server, &token).await.status();
            statuses.push(status.as_u16());
            if status == StatusCode::UNAUTHORIZED {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert_eq!(statuses.last(), Some(&401), "{statuses:?}");
    });
}

#[test]
fn a_server_that_started_before_its_issuer_reads_the_keys_once_the_issuer_is_up() {
    let issuer = MockIssuer::start();
    issuer.set_jwks(Jwks::Garbage);
    // The default interval (30 s) between reads for unknown keys; a failed read is tried
    // again after 1 s.
    let server = protected(&issuer, |config| {
        config.jwks_refetch_interval = Duration::from_secs(30);
    });
    let claims = issuer.claims("alice", "cli", RESOURCE, "");
    let token = format!("Bearer {}", issuer.token(TestKey::Key1, &claims));
    server.run(async {
        assert_eq!(
            list_with(&server, &token).await.status(),
            StatusCode::UNAUTHORIZED
        );
        issuer.set_jwks(Jwks::Keys(vec![TestKey::Key1]));
        tokio::time::sleep(Duration::from_millis(1_100)).await;
        assert_eq!(list_with(&server, &token).await.status(), StatusCode::OK);
    });
}

#[test]
fn an_issuer_with_openid_discovery_only_is_found() {
    let issuer = MockIssuer::openid_only();
    let server = protected(&issuer, |_| {});
    let claims = issuer.claims("alice", "cli", RESOURCE, "");
    let token = format!("Bearer {}", issuer.token(TestKey::Key1, &claims));
    server.run(async {
        assert_eq!(list_with(&server, &token).await.status(), StatusCode::OK);
    });
}

#[test]
fn with_oauth_set_the_authenticate_hook_is_not_consulted() {
    let issuer = MockIssuer::start();
    let mut config = ResourceConfig::new(RESOURCE, &issuer.url);
    config.jwks_refetch_interval = Duration::ZERO;
    let hook: taskwire_http::Authenticate = Arc::new(|_| Some("anyone".to_owned()));
    let server = TestServer::with_config(HttpConfig {
        oauth: Some(Arc::new(
            ResourceServer::new(config).expect("a valid config"),
        )),
        authenticate: Some(hook),
        ..HttpConfig::default()
    });
    server.run(async {
        let refused = list_with(&server, "Bearer whatever-the-hook-would-take").await;
        assert_eq!(refused.status(), StatusCode::UNAUTHORIZED);
        assert!(challenge(&refused).contains("resource_metadata="));
    });
}
