//! 2026-07-28 over HTTP: one request per POST, no session, the routing headers checked, the
//! spec's HTTP statuses, and `subscriptions/listen` as a long-lived SSE response.

use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::common::{is_sse, messages, SseStream, TestServer};

#[test]
fn a_task_is_created_polled_and_read_inline_without_a_session() {
    let server = TestServer::start();
    server.run(async {
        let created = server
            .stateless(
                1,
                "tools/call",
                json!({"name": "long_running_task", "arguments": {}}),
            )
            .send()
            .await;
        assert_eq!(created.status(), StatusCode::OK);
        assert!(created.headers().get("mcp-session-id").is_none());
        let created = messages(created).await;
        assert_eq!(created[0]["result"]["resultType"], "task");
        let task = created[0]["result"]["taskId"]
            .as_str()
            .expect("an id")
            .to_owned();
        let done = loop {
            let got = server
                .stateless(2, "tasks/get", json!({"taskId": task}))
                .send()
                .await;
            let got = messages(got).await.remove(0);
            if got["result"]["status"] == "completed" {
                break got;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        };
        assert_eq!(done["result"]["result"]["content"][0]["text"], "任务完成！");
    });
}

#[test]
fn routing_headers_that_do_not_match_the_body_are_refused_with_32020() {
    let server = TestServer::start();
    server.run(async {
        let cases = [
            ("mcp-method", "tasks/get", "Mcp-Method is \"tasks/get\""),
            ("mcp-name", "other_tool", "Mcp-Name is \"other_tool\""),
            (
                "mcp-protocol-version",
                "2026-01-01",
                "MCP-Protocol-Version is",
            ),
        ];
        for (header, value, says) in cases {
            let response = server
                .stateless(
                    7,
                    "tools/call",
                    json!({"name": "long_running_task", "arguments": {}}),
                )
                .set(header, value)
                .send()
                .await;
            assert_eq!(response.status(), StatusCode::BAD_REQUEST, "{header}");
            let body: Value = response.json().await.expect("a JSON-RPC error");
            assert_eq!(body["id"], 7);
            assert_eq!(body["error"]["code"], -32020, "{header}: {body}");
            let message = body["error"]["message"].as_str().expect("a message");
            assert!(message.contains(says), "{header}: {message}");
        }
        let missing = server
            .post(
                &json!({"jsonrpc": "2.0", "id": 8, "method": "tools/list", "params": {"_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28"}}}),
            )
            .set("mcp-protocol-version", "2026-07-28")
            .send()
            .await;
        assert_eq!(missing.status(), StatusCode::BAD_REQUEST);
        let body: Value = missing.json().await.expect("a JSON-RPC error");
        assert!(body["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("Mcp-Method header is missing")));
    });
}

#[test]
fn json_rpc_errors_take_the_specs_http_statuses() {
    let server = TestServer::start();
    server.run(async {
        let unknown = server
            .stateless(1, "no/such/method", json!({}))
            .send()
            .await;
        assert_eq!(unknown.status(), StatusCode::NOT_FOUND);
        assert_eq!(messages(unknown).await[0]["error"]["code"], -32601);
        let missing_task = server
            .stateless(2, "tasks/get", json!({"taskId": "nope"}))
            .send()
            .await;
        assert_eq!(missing_task.status(), StatusCode::BAD_REQUEST);
        assert_eq!(messages(missing_task).await[0]["error"]["code"], -32602);
        let unreadable = server.post(&json!("not a message")).send().await;
        assert_eq!(unreadable.status(), StatusCode::BAD_REQUEST);
        assert_eq!(messages(unreadable).await[0]["error"]["code"], -32600);
        let listed = server.stateless(3, "tools/list", json!({})).send().await;
        assert_eq!(listed.status(), StatusCode::OK);
    });
}

#[test]
fn subscriptions_listen_streams_a_tasks_changes_until_it_ends() {
    let server = TestServer::start();
    server.run(async {
        let created = server
            .stateless(
                1,
                "tools/call",
                json!({"name": "long_running_task", "arguments": {}}),
            )
            .send()
            .await;
        let task = messages(created).await[0]["result"]["taskId"].clone();
        let listen = server
            .stateless(
                2,
                "subscriptions/listen",
                json!({"notifications": {"taskIds": [task]}}),
            )
            .send()
            .await;
        assert!(is_sse(&listen));
        let mut stream = SseStream::new(listen);
        let ack = stream.next().await.expect("the acknowledgement");
        assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
        let mut last = Value::Null;
        while let Some(message) = stream.next().await {
            last = message;
        }
        // The last task reached its end, so the subscription did too: a result ends it.
        assert_eq!(last["id"], 2, "{last}");
        assert_eq!(last["result"]["resultType"], "complete");
    });
}

#[test]
fn a_client_that_takes_json_only_gets_the_reply_alone() {
    // A plain call (no tasks extension) that reports progress before its reply.
    let server = TestServer::start();
    server.run(async {
        let response = server
            .stateless(
                1,
                "tools/call",
                json!({"name": "progress_task", "arguments": {"steps": 2},
                "_meta": {"progressToken": "p", "io.modelcontextprotocol/clientCapabilities": {}}}),
            )
            .set("accept", "application/json")
            .send()
            .await;
        assert!(!is_sse(&response));
        let reply = messages(response).await;
        assert_eq!(reply[0]["result"]["content"][0]["text"], "2 steps done");
    });
}

#[test]
fn a_notification_is_accepted_with_202() {
    let server = TestServer::start();
    server.run(async {
        let response = server
            .post(
                &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                "params": {"requestId": 5}}),
            )
            .send()
            .await;
        assert_eq!(response.status(), StatusCode::ACCEPTED);
    });
}
