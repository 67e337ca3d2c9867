//! What every request passes first: `Host` and `Origin` (DNS-rebinding protection), the body
//! size limit, and authentication, which names the owner of the tasks.

use std::sync::Arc;

use reqwest::StatusCode;
use serde_json::{json, Value};
use taskwire_http::{AllowedHosts, HttpConfig};

use crate::common::{messages, task_id, TestServer};

#[test]
fn foreign_hosts_and_origins_are_refused_by_default() {
    let server = TestServer::start();
    server.run(async {
        let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
        let origin = server
            .post(&ping)
            .set("origin", "http://evil.example")
            .send()
            .await;
        assert_eq!(origin.status(), StatusCode::FORBIDDEN);
        let body: Value = origin.json().await.expect("a JSON-RPC error");
        assert!(body["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("allowed_hosts")));
        let host = server
            .post(&ping)
            .set("host", "evil.example:80")
            .send()
            .await;
        assert_eq!(host.status(), StatusCode::FORBIDDEN);
        let local = server
            .post(&ping)
            .set("origin", "http://localhost:6274")
            .send()
            .await;
        assert_ne!(local.status(), StatusCode::FORBIDDEN);
    });
}

#[test]
fn an_allow_list_admits_its_hosts_only() {
    let server = TestServer::with_config(HttpConfig {
        allowed_hosts: AllowedHosts::Only(vec!["127.0.0.1".into(), "mcp.example".into()]),
        ..HttpConfig::default()
    });
    server.run(async {
        let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
        let listed = server
            .post(&ping)
            .set("origin", "https://mcp.example")
            .send()
            .await;
        assert_ne!(listed.status(), StatusCode::FORBIDDEN);
        let localhost = server
            .post(&ping)
            .set("origin", "http://localhost:3000")
            .send()
            .await;
        assert_eq!(localhost.status(), StatusCode::FORBIDDEN);
    });
}

#[test]
fn a_body_over_the_limit_is_refused_with_413() {
    let server = TestServer::with_config(HttpConfig {
        max_body_bytes: 1024,
        ..HttpConfig::default()
    });
    server.run(async {
        let big = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "long_running_task", "arguments": {"pad": "x".repeat(2000)}}});
        let refused = server.post(&big).send().await;
        assert_eq!(refused.status(), StatusCode::PAYLOAD_TOO_LARGE);
        // The server goes on.
        let session = server.open_session().await;
        assert!(!session.is_empty());
    });
}

/// A server where bearer tokens `alice` and `bob` name those owners; anything else is
/// refused.
fn with_auth() -> TestServer {
    TestServer::with_config(auth_config())
}

/// Bearer tokens `alice` and `bob` name those owners; anything else is refused.
pub(crate) fn auth_config() -> HttpConfig {
    let authenticate: taskwire_http::Authenticate = Arc::new(|headers| {
        let token = headers.get("authorization")?.to_str().ok()?;
        match token.strip_prefix("Bearer ")? {
            who @ ("alice" | "bob") => Some(who.to_owned()),
            _ => None,
        }
    });
    HttpConfig {
        authenticate: Some(authenticate),
        ..HttpConfig::default()
    }
}

#[test]
fn a_missing_or_bad_token_is_refused_with_401_and_a_challenge() {
    let server = with_auth();
    server.run(async {
        for token in [None, Some("Bearer mallory")] {
            let mut post = server.post(&json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}));
            if let Some(token) = token {
                post = post.set("authorization", token);
            }
            let refused = post.send().await;
            assert_eq!(refused.status(), StatusCode::UNAUTHORIZED, "{token:?}");
            assert_eq!(
                refused
                    .headers()
                    .get("www-authenticate")
                    .and_then(|v| v.to_str().ok()),
                Some("Bearer")
            );
        }
    });
}

#[test]
fn an_owners_task_outlives_the_session_that_made_it_and_stays_theirs() {
    let server = with_auth();
    server.run(async {
        let init = |who: &str| {
            server
                .post(
                    &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                    "protocolVersion": "2025-11-25", "capabilities": {},
                    "clientInfo": {"name": "t", "version": "1"}}}),
                )
                .set("authorization", &format!("Bearer {who}"))
                .send()
        };
        let session_of = |r: &reqwest::Response| {
            r.headers()["mcp-session-id"]
                .to_str()
                .expect("an id")
                .to_owned()
        };
        let first = init("alice").await;
        let first = session_of(&first);
        let task = task_id(
            server
                .call_as_task(&first, "long_running_task", json!({}))
                .set("authorization", "Bearer alice")
                .send()
                .await,
        )
        .await;
        // Bob cannot use Alice's session.
        let hijack = server
            .in_session(
                &first,
                &json!({"jsonrpc": "2.0", "id": 2, "method": "tasks/list"}),
            )
            .set("authorization", "Bearer bob")
            .send()
            .await;
        assert_eq!(hijack.status(), StatusCode::NOT_FOUND);
        let deleted = server
            .http
            .delete(&server.url)
            .header("mcp-session-id", &first)
            .header("authorization", "Bearer alice")
            .send()
            .await
            .expect("DELETE");
        assert_eq!(deleted.status(), StatusCode::OK);

        let second = init("alice").await;
        let second = session_of(&second);
        let result = server
            .ask_result(&second, 1, &task)
            .set("authorization", "Bearer alice")
            .send()
            .await;
        let result = messages(result).await;
        assert_eq!(
            result.last().expect("the reply")["result"]["content"][0]["text"],
            "任务完成！"
        );

        let bobs = init("bob").await;
        let bobs = session_of(&bobs);
        let hidden = server
            .in_session(
                &bobs,
                &json!({"jsonrpc": "2.0", "id": 1, "method": "tasks/get",
                "params": {"taskId": task}}),
            )
            .set("authorization", "Bearer bob")
            .send()
            .await;
        assert_eq!(messages(hidden).await[0]["error"]["code"], -32602);
    });
}

/// With `max_requests_per_owner` 2, Alice's two open `GET` streams (in two sessions) are all
/// she may hold: her next request gets `429` while Bob is served; when one stream ends (its
/// session deleted), she is served again.
#[test]
fn an_owner_at_the_limit_is_refused_with_429_and_others_are_not() {
    let server = TestServer::with_config(HttpConfig {
        max_requests_per_owner: 2,
        ..auth_config()
    });
    server.run(async {
        let alice = "Bearer alice";
        let open = || async {
            let response = server
                .post(
                    &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                    "protocolVersion": "2025-11-25", "capabilities": {},
                    "clientInfo": {"name": "t", "version": "1"}}}),
                )
                .set("authorization", alice)
                .send()
                .await;
            assert_eq!(response.status(), StatusCode::OK);
            response.headers()["mcp-session-id"]
                .to_str()
                .unwrap()
                .to_owned()
        };
        let get = |session: String| {
            server
                .http
                .get(&server.url)
                .header("accept", "text/event-stream")
                .header("mcp-session-id", session)
                .header("authorization", alice)
                .send()
        };
        let (first, second) = (open().await, open().await);
        let kept = get(first.clone()).await.expect("GET");
        let ended = get(second.clone()).await.expect("GET");
        assert_eq!(
            (kept.status(), ended.status()),
            (StatusCode::OK, StatusCode::OK)
        );

        let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
        let refused = server
            .in_session(&first, &ping)
            .set("authorization", alice)
            .send()
            .await;
        assert_eq!(refused.status(), StatusCode::TOO_MANY_REQUESTS);
        let error = messages(refused).await;
        assert!(
            error[0]["error"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("max_requests_per_owner")),
            "{error:?}"
        );
        let bob = server
            .stateless(1, "tools/list", json!({}))
            .set("authorization", "Bearer bob")
            .send()
            .await;
        assert_eq!(bob.status(), StatusCode::OK);

        let deleted = server
            .http
            .delete(&server.url)
            .header("mcp-session-id", &second)
            .header("authorization", alice)
            .send()
            .await
            .expect("DELETE");
        assert_eq!(deleted.status(), StatusCode::OK);
        // The deleted session's stream ends, and with it what it held.
        let _ = ended.text().await;
        let served = server
            .in_session(&first, &ping)
            .set("authorization", alice)
            .send()
            .await;
        assert_eq!(served.status(), StatusCode::OK);
        drop(kept);
    });
}
