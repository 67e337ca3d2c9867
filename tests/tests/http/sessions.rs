//! 2025-11-25 sessions over HTTP: the session id, replies as JSON or SSE, the GET stream for
//! the session's own messages, input requests answered by POST, DELETE, and idle expiry.

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{json, Value};
use taskwire_http::HttpConfig;

use crate::common::{is_sse, messages, task_id, SseStream, TestServer};

#[test]
fn a_task_runs_to_its_result_in_a_session() {
    let server = TestServer::start();
    server.run(async {
        let session = server.open_session().await;
        let created = server
            .in_session(
                &session,
                &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": {"name": "long_running_task", "arguments": {}, "task": {"ttl": 60000}}}),
            )
            .send()
            .await;
        let created = messages(created).await;
        assert_eq!(created[0]["result"]["task"]["status"], "working");
        let task = created[0]["result"]["task"]["taskId"].clone();

        let listed = server
            .in_session(
                &session,
                &json!({"jsonrpc": "2.0", "id": 2, "method": "tasks/list"}),
            )
            .send()
            .await;
        assert_eq!(
            messages(listed).await[0]["result"]["tasks"][0]["taskId"],
            task
        );

        let result = server.ask_result(&session, 3, &task).send().await;
        let result = messages(result).await;
        let reply = result.last().expect("the reply");
        assert_eq!(reply["id"], 3);
        assert_eq!(reply["result"]["content"][0]["text"], "任务完成！");
    });
}

#[test]
fn a_plain_calls_progress_comes_first_on_its_sse_response() {
    let server = TestServer::start();
    server.run(async {
        let session = server.open_session().await;
        let response = server
            .in_session(
                &session,
                &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": {"name": "progress_task", "arguments": {"steps": 2},
                    "_meta": {"progressToken": "p1"}}}),
            )
            .send()
            .await;
        assert!(
            is_sse(&response),
            "progress before the reply makes it a stream"
        );
        let all = messages(response).await;
        let methods: Vec<&str> = all.iter().filter_map(|m| m["method"].as_str()).collect();
        assert_eq!(
            methods,
            ["notifications/progress", "notifications/progress"]
        );
        assert_eq!(all[1]["params"]["progress"], 2.0);
        let reply = all.last().expect("the reply");
        assert_eq!(reply["id"], 1);
        assert_eq!(reply["result"]["content"][0]["text"], "2 steps done");
    });
}

#[test]
fn the_get_stream_carries_status_and_the_tasks_question_answered_by_post() {
    let server = TestServer::start();
    server.run(async {
        let session = server.open_session().await;
        let created = server
            .in_session(
                &session,
                &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": {"name": "confirm_task", "arguments": {"question": "Ship it?"},
                    "task": {"ttl": 60000}}}),
            )
            .send()
            .await;
        let task = messages(created).await[0]["result"]["task"]["taskId"].clone();

        // Opened after the task asked: what waited for the stream comes first.
        let get = server.get_stream(&session).await;
        assert_eq!(get.status(), StatusCode::OK);
        let mut stream = SseStream::new(get);
        let question = loop {
            let message = stream.next().await.expect("the stream stays open");
            if message["method"] == "elicitation/create" {
                break message;
            }
            assert_eq!(message["method"], "notifications/tasks/status", "{message}");
        };
        assert_eq!(question["params"]["message"], "Ship it?");
        assert_eq!(
            question["params"]["_meta"]["io.modelcontextprotocol/related-task"]["taskId"],
            task
        );
        let answered = server
            .in_session(
                &session,
                &json!({"jsonrpc": "2.0", "id": question["id"],
                "result": {"action": "accept", "content": {"confirm": true}}}),
            )
            .send()
            .await;
        assert_eq!(answered.status(), StatusCode::ACCEPTED);
        let completed = loop {
            let message = stream.next().await.expect("the stream stays open");
            if message["params"]["status"] == "completed" {
                break message;
            }
        };
        assert_eq!(completed["params"]["taskId"], task);

        // A second GET stream while one is open is refused.
        let second = server.get_stream(&session).await;
        assert_eq!(second.status(), StatusCode::CONFLICT);

        let result = server.ask_result(&session, 2, &task).send().await;
        let result = messages(result).await;
        assert_eq!(
            result.last().expect("the reply")["result"]["structuredContent"]["confirmed"],
            true
        );
    });
}

#[test]
fn delete_ends_the_session_once_and_unknown_sessions_are_not_found() {
    let server = TestServer::start();
    server.run(async {
        let session = server.open_session().await;
        assert_eq!(server.delete(&session).await.status(), StatusCode::OK);
        assert_eq!(
            server.delete(&session).await.status(),
            StatusCode::NOT_FOUND
        );
        let after = server
            .in_session(
                &session,
                &json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}),
            )
            .send()
            .await;
        assert_eq!(after.status(), StatusCode::NOT_FOUND);
        let body: Value = after.json().await.expect("a JSON-RPC error");
        assert!(body["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("initialize again")));
        let never = server
            .in_session(
                "no-such-session",
                &json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}),
            )
            .send()
            .await;
        assert_eq!(never.status(), StatusCode::NOT_FOUND);
        let no_header = server
            .http
            .delete(&server.url)
            .send()
            .await
            .expect("DELETE");
        assert_eq!(no_header.status(), StatusCode::BAD_REQUEST);
    });
}

#[test]
fn without_authentication_a_session_owns_its_tasks() {
    let server = TestServer::start();
    server.run(async {
        let first = server.open_session().await;
        let task = task_id(
            server
                .call_as_task(&first, "long_running_task", json!({}))
                .send()
                .await,
        )
        .await;
        server.delete(&first).await;
        // Without authentication a session owns its tasks: another session cannot see it.
        let second = server.open_session().await;
        let other = server
            .in_session(
                &second,
                &json!({"jsonrpc": "2.0", "id": 1, "method": "tasks/get",
                "params": {"taskId": task}}),
            )
            .send()
            .await;
        assert_eq!(messages(other).await[0]["error"]["code"], -32602);
    });
}

#[test]
fn a_stream_the_server_ends_is_resumed_from_its_last_event() {
    // The server polls (SEP-1699): a response stream open 120 ms ends, and the client resumes
    // it with GET and Last-Event-ID.
    let server = TestServer::with_config(taskwire_http::HttpConfig {
        stream_after: std::time::Duration::from_millis(20),
        poll_after: Some(std::time::Duration::from_millis(120)),
        ..taskwire_http::HttpConfig::default()
    });
    server.run(async {
        let session = server.open_session().await;
        let response = server
            .in_session(
                &session,
                &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": {"name": "progress_task", "arguments": {"steps": 6},
                    "_meta": {"progressToken": "p"}}}),
            )
            .send()
            .await;
        let mut first = SseStream::new(response);
        let mut seen = Vec::new();
        while let Some(message) = first.next().await {
            seen.push(message);
        }
        assert!(
            first.retry,
            "the priming event names the reconnection delay"
        );
        assert!(
            seen.iter().all(|m| m["id"] != 1),
            "the stream ended before the reply: {seen:?}"
        );
        let last = first.last_id.clone().expect("numbered events");
        let mut progress = seen.len();
        let mut last_id = last;
        let reply = loop {
            let resumed = server
                .http
                .get(&server.url)
                .header("accept", "text/event-stream")
                .header("mcp-session-id", &session)
                .header("last-event-id", &last_id)
                .send()
                .await
                .expect("GET");
            assert_eq!(resumed.status(), StatusCode::OK);
            let mut stream = SseStream::new(resumed);
            let mut reply = None;
            while let Some(message) = stream.next().await {
                if message["id"] == 1 {
                    reply = Some(message);
                } else {
                    progress += 1;
                }
            }
            if let Some(reply) = reply {
                break reply;
            }
            last_id = stream.last_id.clone().unwrap_or(last_id);
        };
        assert_eq!(progress, 6, "every progress notification, once");
        assert_eq!(reply["result"]["content"][0]["text"], "6 steps done");
    });
}

/// With `session_idle_timeout` 300 ms, a session unused that long is closed (`404` after),
/// while one whose `GET` stream is open is not idle, however long it is quiet.
#[test]
fn an_idle_session_is_closed_and_one_with_an_open_stream_is_kept() {
    let server = TestServer::with_config(HttpConfig {
        session_idle_timeout: Duration::from_millis(300),
        ..HttpConfig::default()
    });
    server.run(async {
        let ping = |id: u64| json!({"jsonrpc": "2.0", "id": id, "method": "ping"});
        let idle = server.open_session().await;
        let watched = server.open_session().await;
        let stream = server.get_stream(&watched).await;
        assert_eq!(stream.status(), StatusCode::OK);
        tokio::time::sleep(Duration::from_millis(700)).await;
        // Any request sweeps (at most every quarter of the timeout).
        let swept = server.in_session(&watched, &ping(1)).send().await;
        assert_eq!(swept.status(), StatusCode::OK);
        let gone = server.in_session(&idle, &ping(2)).send().await;
        assert_eq!(gone.status(), StatusCode::NOT_FOUND);
        let kept = server.in_session(&watched, &ping(3)).send().await;
        assert_eq!(kept.status(), StatusCode::OK);
        drop(stream);
    });
}
