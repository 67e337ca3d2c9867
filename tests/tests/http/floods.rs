//! Floods that would lock others out: sessions opened and never ended (the longest-idle one
//! makes room; an authenticated owner has a cap of their own), connections that never finish
//! their headers or body (closed after the timeouts), and more connections than the server
//! serves (they wait for one to close).

use std::sync::Arc;
use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{json, Value};
use taskwire_http::HttpConfig;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::common::{messages, SseStream, TestServer};

fn ping(id: u64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "ping"})
}

fn initialize() -> Value {
    json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "floods", "version": "1"}}})
}

/// A plain `confirm_task` call in `session`: it waits for the client's answer to its
/// elicitation, so the request stays in flight. Its response stream, and the id of the
/// elicitation request on it.
async fn request_in_flight(server: &TestServer, session: &str) -> (SseStream, Value) {
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "confirm_task", "arguments": {}}});
    let response = server.in_session(session, &call).send().await;
    let mut stream = SseStream::new(response);
    loop {
        let message = stream.next().await.expect("the elicitation");
        if message["method"] == "elicitation/create" {
            return (stream, message["id"].clone());
        }
    }
}

/// With every session open (`max_sessions` 50 here, 10,000 by default), a new `initialize`
/// still gets a session: the one unused longest that has no request in flight and no stream
/// open is closed for it. Sessions with a `GET` stream or a request in flight are kept
/// however old.
#[test]
fn a_full_session_table_makes_room_by_closing_the_longest_idle_session() {
    let server = TestServer::with_config(HttpConfig {
        max_sessions: 50,
        ..HttpConfig::default()
    });
    server.run(async {
        let mut sessions = Vec::new();
        for _ in 0..50 {
            sessions.push(server.open_session().await);
        }
        // The two oldest are busy: a GET stream, a request in flight.
        let stream = server.get_stream(&sessions[0]).await;
        assert_eq!(stream.status(), StatusCode::OK);
        let _busy = request_in_flight(&server, &sessions[1]).await;
        // The third oldest is used again, so the fourth is the one unused longest.
        let used = server.in_session(&sessions[2], &ping(3)).send().await;
        assert_eq!(used.status(), StatusCode::OK);

        let newcomer = server.open_session().await;
        let status = |session: String| {
            let server = &server;
            async move {
                let answer = server.in_session(&session, &ping(4)).send().await;
                answer.status()
            }
        };
        assert_eq!(status(sessions[3].clone()).await, StatusCode::NOT_FOUND);
        for kept in [0, 1, 2, 4, 49] {
            assert_eq!(
                status(sessions[kept].clone()).await,
                StatusCode::OK,
                "{kept}"
            );
        }
        assert_eq!(status(newcomer).await, StatusCode::OK);
        drop(stream);
    });
}

/// When every session is busy (here each of 3 has a request in flight), an `initialize` is
/// refused with `503`; once one is idle again (its request answered), it makes room.
#[test]
fn sessions_all_busy_refuse_a_new_one_until_one_is_idle() {
    let server = TestServer::with_config(HttpConfig {
        max_sessions: 3,
        ..HttpConfig::default()
    });
    server.run(async {
        let mut busy = Vec::new();
        for _ in 0..3 {
            let session = server.open_session().await;
            let (stream, asked) = request_in_flight(&server, &session).await;
            busy.push((session, stream, asked));
        }
        let initialize = initialize();
        let refused = server.post(&initialize).send().await;
        assert_eq!(refused.status(), StatusCode::SERVICE_UNAVAILABLE);
        let body = messages(refused).await.remove(0);
        assert!(body["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("every session is busy")));
        // The first session's request is answered, and ends.
        let (session, mut stream, asked) = busy.remove(0);
        let answer = json!({"jsonrpc": "2.0", "id": asked,
            "result": {"action": "accept", "content": {"confirm": true}}});
        let sent = server.in_session(&session, &answer).send().await;
        assert_eq!(sent.status(), StatusCode::ACCEPTED);
        while let Some(message) = stream.next().await {
            if message["id"] == 1 {
                break;
            }
        }
        let admitted = server.post(&initialize).send().await;
        assert_eq!(admitted.status(), StatusCode::OK);
        let gone = server.in_session(&session, &ping(5)).send().await;
        assert_eq!(gone.status(), StatusCode::NOT_FOUND);
    });
}

/// With authentication, an owner has at most `max_sessions_per_owner` sessions: one more is
/// refused with `429` (others are not), and a `DELETE` makes room again.
#[test]
fn an_owner_at_max_sessions_per_owner_is_refused_and_others_are_not() {
    let authenticate: taskwire_http::Authenticate = Arc::new(|headers| {
        let token = headers.get("authorization")?.to_str().ok()?;
        token.strip_prefix("Bearer ").map(str::to_owned)
    });
    let server = TestServer::with_config(HttpConfig {
        authenticate: Some(authenticate),
        max_sessions_per_owner: 2,
        ..HttpConfig::default()
    });
    server.run(async {
        let initialize = |who: &str| {
            server
                .post(&initialize())
                .set("authorization", &format!("Bearer {who}"))
                .send()
        };
        let mut alices = Vec::new();
        for _ in 0..2 {
            let opened = initialize("alice").await;
            assert_eq!(opened.status(), StatusCode::OK);
            alices.push(
                opened.headers()["mcp-session-id"]
                    .to_str()
                    .unwrap()
                    .to_owned(),
            );
        }
        let refused = initialize("alice").await;
        assert_eq!(refused.status(), StatusCode::TOO_MANY_REQUESTS);
        let body = messages(refused).await.remove(0);
        assert!(body["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("max_sessions_per_owner")));
        assert_eq!(initialize("bob").await.status(), StatusCode::OK);
        let deleted = server
            .http
            .delete(&server.url)
            .header("mcp-session-id", &alices[0])
            .header("authorization", "Bearer alice")
            .send()
            .await
            .expect("DELETE");
        assert_eq!(deleted.status(), StatusCode::OK);
        assert_eq!(initialize("alice").await.status(), StatusCode::OK);
    });
}

/// Reads `connection` until the server closes it; panics if it does not within `within`.
async fn closed_within(connection: &mut TcpStream, within: Duration) -> String {
    let mut got = Vec::new();
    let read = tokio::time::timeout(within, connection.read_to_end(&mut got)).await;
    assert!(
        read.is_ok(),
        "the connection is still open after {within:?}"
    );
    String::from_utf8_lossy(&got).into_owned()
}

/// A connection that sends part of its headers and then nothing is closed after
/// `header_read_timeout`; one whose body stops short gets `408` after `body_read_timeout`.
/// A response streaming longer than either is not cut.
#[test]
fn connections_that_stall_their_headers_or_body_are_closed() {
    let server = TestServer::with_config(HttpConfig {
        header_read_timeout: Duration::from_millis(300),
        body_read_timeout: Duration::from_millis(300),
        ..HttpConfig::default()
    });
    server.run(async {
        let mut slow = TcpStream::connect(server.address())
            .await
            .expect("connected");
        slow.write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: appl")
            .await
            .expect("sent");
        closed_within(&mut slow, Duration::from_secs(5)).await;

        let mut short = TcpStream::connect(server.address())
            .await
            .expect("connected");
        short
            .write_all(
                b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
                  Content-Length: 100\r\n\r\n{\"jsonrpc\":",
            )
            .await
            .expect("sent");
        let answer = closed_within(&mut short, Duration::from_secs(5)).await;
        assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
        assert!(answer.contains("body_read_timeout"), "{answer}");

        // Progress every 50 ms for a second: the stream outlives both timeouts.
        let session = server.open_session().await;
        let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "progress_task", "arguments": {"steps": 20},
                "_meta": {"progressToken": "p"}}});
        let streamed = messages(server.in_session(&session, &call).send().await).await;
        let reply = streamed.last().expect("messages");
        assert_eq!(reply["result"]["content"][0]["text"], "20 steps done");
    });
}

/// Beyond `max_connections` a connection is not served until one closes: its request waits
/// (in the listener's backlog), then is answered.
#[test]
fn connections_beyond_max_connections_wait_for_one_to_close() {
    let server = TestServer::with_config(HttpConfig {
        max_connections: 2,
        ..HttpConfig::default()
    });
    server.run(async {
        let first = TcpStream::connect(server.address())
            .await
            .expect("connected");
        let _second = TcpStream::connect(server.address())
            .await
            .expect("connected");
        // Let the server take both before the third comes.
        tokio::time::sleep(Duration::from_millis(200)).await;
        let waiting = tokio::spawn({
            let url = server.url.clone();
            async move {
                reqwest::Client::new()
                    .post(&url)
                    .header("content-type", "application/json")
                    .header("accept", "application/json, text/event-stream")
                    .body(initialize().to_string())
                    .send()
                    .await
                    .map(|r| r.status())
            }
        });
        tokio::time::sleep(Duration::from_millis(700)).await;
        assert!(!waiting.is_finished(), "served beyond max_connections");
        drop(first);
        let served = tokio::time::timeout(Duration::from_secs(5), waiting)
            .await
            .expect("served once a connection closed")
            .expect("the request task");
        assert_eq!(served.expect("an answer"), StatusCode::OK);
    });
}
