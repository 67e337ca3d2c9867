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
        // A request whose id is null is no notification (202): the engine's -32600.
        let null_id = json!({"jsonrpc": "2.0", "id": null, "method": "tools/list"});
        let null_id = server.post(&null_id).send().await;
        assert_eq!(null_id.status(), StatusCode::BAD_REQUEST);
        assert_eq!(messages(null_id).await[0]["error"]["code"], -32600);
        // An array is no request, though its items could be read as one's fields.
        let array = server.post(&json!([5, "tools/list"])).send().await;
        assert_eq!(array.status(), StatusCode::BAD_REQUEST);
        assert_eq!(messages(array).await[0]["error"]["code"], -32600);
        // Bytes that are no UTF-8, even in a part the transport does not read: -32700.
        let garbled = server.stateless(4, "tools/list", json!({})).bytes(
            b"{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/list\",\"params\":{\"a\xe1\":1}}",
        );
        let garbled = garbled.send().await;
        assert_eq!(garbled.status(), StatusCode::BAD_REQUEST);
        assert_eq!(messages(garbled).await[0]["error"]["code"], -32700);
        let listed = server.stateless(3, "tools/list", json!({})).send().await;
        assert_eq!(listed.status(), StatusCode::OK);
        // A notification, read by the engine alone (the header names the era): 202, no body.
        let note = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": 9}});
        let note = (server.post(&note))
            .set("mcp-protocol-version", "2026-07-28")
            .send()
            .await;
        assert_eq!(note.status(), StatusCode::ACCEPTED);
        assert!(note.bytes().await.expect("a body").is_empty());
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

/// The first JSON-RPC error code of a response, if any.
async fn error_code(response: reqwest::Response) -> Value {
    messages(response).await[0]["error"]["code"].clone()
}

/// FastMCP's 4.x client polls without `Mcp-Name` on `tasks/get`, `tasks/update` and
/// `tasks/cancel`: the body names the task, so they are served; a wrong name still is not.
#[test]
fn task_requests_without_mcp_name_are_served_and_a_wrong_name_is_refused() {
    let server = TestServer::start();
    server.run(async {
        let created = server
            .stateless(
                1,
                "tools/call",
                // It waits for its elicitation's answer, as a task in `input_required`.
                json!({"name": "confirm_task", "arguments": {}, "_meta": {
                    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {},
                        "extensions": {"io.modelcontextprotocol/tasks": {}}}}}),
            )
            .send()
            .await;
        let task = messages(created).await[0]["result"]["taskId"].clone();
        assert!(task.is_string(), "a task");
        let got = server
            .stateless(2, "tasks/get", json!({"taskId": task}))
            .unset("mcp-name")
            .send()
            .await;
        assert_eq!(got.status(), StatusCode::OK);
        assert!(messages(got).await[0]["result"]["status"].is_string());
        let wrong = server
            .stateless(4, "tasks/get", json!({"taskId": task}))
            .set("mcp-name", "another-task")
            .send()
            .await;
        assert_eq!(wrong.status(), StatusCode::BAD_REQUEST);
        assert_eq!(error_code(wrong).await, -32020);
        let cancelled = server
            .stateless(5, "tasks/cancel", json!({"taskId": task}))
            .unset("mcp-name")
            .send()
            .await;
        assert_eq!(cancelled.status(), StatusCode::OK);
        let cancelled = messages(cancelled).await.remove(0);
        assert!(cancelled["result"].is_object(), "{cancelled}");
        let got = server
            .stateless(6, "tasks/get", json!({"taskId": task}))
            .send()
            .await;
        assert_eq!(messages(got).await[0]["result"]["status"], "cancelled");
        // The engine answers (the task is over), not the header check.
        let updated = server
            .stateless(
                3,
                "tasks/update",
                json!({"taskId": task, "inputResponses": {}}),
            )
            .unset("mcp-name")
            .send()
            .await;
        let code = error_code(updated).await;
        assert!(code != -32020, "{code}");
        // Other methods still need it.
        let call = server
            .stateless(
                7,
                "tools/call",
                json!({"name": "long_running_task", "arguments": {}}),
            )
            .unset("mcp-name")
            .send()
            .await;
        assert_eq!(error_code(call).await, -32020);
    });
}

/// `Mcp-Name` in the `=?base64?…?=` form is decoded before it is compared with the body.
#[test]
fn a_base64_mcp_name_is_decoded_before_it_is_compared() {
    let server = TestServer::start();
    server.run(async {
        let call = |id: u64, name: &str| {
            server
                .stateless(
                    id,
                    "tools/call",
                    json!({"name": "long_running_task", "arguments": {}}),
                )
                .set("mcp-name", name)
        };
        // "long_running_task", then "long_running_tasks", then broken Base64.
        let same = call(1, "=?base64?bG9uZ19ydW5uaW5nX3Rhc2s=?=").send().await;
        assert_eq!(same.status(), StatusCode::OK);
        assert_eq!(messages(same).await[0]["result"]["resultType"], "task");
        let other = call(2, "=?base64?bG9uZ19ydW5uaW5nX3Rhc2tz?=").send().await;
        assert_eq!(other.status(), StatusCode::BAD_REQUEST);
        let body = messages(other).await.remove(0);
        assert_eq!(body["error"]["code"], -32020);
        assert!(body["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("long_running_tasks")));
        let broken = call(3, "=?base64?bG9uZ19ydW5uaW5nX3Rhc2s?=").send().await;
        assert_eq!(error_code(broken).await, -32020);
    });
}

/// A tool whose input schema marks `region` (a string) and `zone.level` (an integer) with
/// `x-mcp-header`; it answers with its arguments.
fn routed_server() -> TestServer {
    use taskwire_driver::{CallToolResult, Config, Server, TaskSupport, Tool};
    let routed = Tool::new("routed", TaskSupport::Forbidden).with_input_schema(json!({
        "type": "object",
        "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "zone": {"type": "object", "properties": {
                "level": {"type": "integer", "x-mcp-header": "Level"}}},
            "query": {"type": "string"}
        }
    }));
    let server = Server::new(Config::new("routed", "1"))
        .tool(routed, |_, args: Value| async move {
            Ok(CallToolResult::text(args.to_string()))
        });
    TestServer::serving(server, "127.0.0.1:0", taskwire_http::HttpConfig::default())
}

/// SEP-2243: a tool's call carries its marked arguments in `Mcp-Param-*` headers, which the
/// server checks against the body, decoded; a missing, different or broken one is `-32020`.
#[test]
fn mcp_param_headers_are_checked_against_the_arguments_decoded() {
    let server = routed_server();
    server.run(async {
        let arguments = json!({"region": "eu west", "zone": {"level": 3}, "query": "q"});
        let call = |id: u64| {
            server.stateless(
                id,
                "tools/call",
                json!({"name": "routed", "arguments": arguments}),
            )
        };
        let plain = call(1)
            .set("mcp-param-region", "eu west")
            .set("mcp-param-level", "3")
            .send()
            .await;
        assert_eq!(plain.status(), StatusCode::OK);
        let encoded = call(2)
            .set("mcp-param-region", "=?base64?ZXUgd2VzdA==?=")
            .set("mcp-param-level", "3.0")
            .send()
            .await;
        assert_eq!(encoded.status(), StatusCode::OK);
        let text = messages(encoded).await[0]["result"]["content"][0]["text"].clone();
        assert!(
            text.as_str().is_some_and(|t| t.contains("eu west")),
            "{text}"
        );
        let refused = [
            (
                call(3).set("mcp-param-level", "3"),
                "Mcp-Param-Region header is missing",
            ),
            (
                call(4)
                    .set("mcp-param-region", "eu west")
                    .set("mcp-param-level", "4"),
                "Mcp-Param-Level is \"4\"",
            ),
            (
                call(5)
                    .set("mcp-param-region", "=?base64?ZXUgZWFzdA==?=")
                    .set("mcp-param-level", "3"),
                "Mcp-Param-Region is \"eu east\"",
            ),
            (
                call(6)
                    .set("mcp-param-region", "=?base64?ZXUgd2VzdA?=")
                    .set("mcp-param-level", "3"),
                "does not decode",
            ),
        ];
        for (request, says) in refused {
            let response = request.send().await;
            assert_eq!(response.status(), StatusCode::BAD_REQUEST, "{says}");
            let body = messages(response).await.remove(0);
            assert_eq!(body["error"]["code"], -32020, "{body}");
            let message = body["error"]["message"].as_str().unwrap_or_default();
            assert!(message.contains(says), "{message}");
        }
        // An argument left out needs no header.
        let partial = server
            .stateless(
                7,
                "tools/call",
                json!({"name": "routed", "arguments": {"query": "q"}}),
            )
            .send()
            .await;
        assert_eq!(partial.status(), StatusCode::OK);
    });
}

/// The transport says to ignore an `Mcp-Session-Id` on a 2026-07-28 request: one the server
/// does not know (or does) is served statelessly; a 2025-11-25 request with an unknown one
/// still gets `404`.
#[test]
fn a_stray_session_id_on_a_2026_request_is_ignored() {
    let server = TestServer::start();
    server.run(async {
        let known = server.open_session().await;
        for session in ["no-such-session", known.as_str()] {
            let listed = server
                .stateless(1, "tools/list", json!({}))
                .set("mcp-session-id", session)
                .send()
                .await;
            assert_eq!(listed.status(), StatusCode::OK, "{session}");
            assert!(listed.headers().get("mcp-session-id").is_none());
            let listed = messages(listed).await.remove(0);
            assert_eq!(listed["result"]["resultType"], "complete", "{listed}");
        }
        let legacy = server
            .in_session(
                "no-such-session",
                &json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}),
            )
            .send()
            .await;
        assert_eq!(legacy.status(), StatusCode::NOT_FOUND);
    });
}

/// `initialize` is no 2026-07-28 method: with that era's `_meta` it opens no session and gets
/// the engine's `-32601` with `404`, as an unknown method does.
#[test]
fn a_2026_initialize_opens_no_session() {
    let server = TestServer::start();
    server.run(async {
        let response = server
            .stateless(
                1,
                "initialize",
                json!({"protocolVersion": "2026-07-28", "capabilities": {},
                    "clientInfo": {"name": "t", "version": "1"}}),
            )
            .send()
            .await;
        assert_eq!(response.status(), StatusCode::NOT_FOUND);
        assert!(response.headers().get("mcp-session-id").is_none());
        assert_eq!(error_code(response).await, -32601);
    });
}

/// A JSON object that is no JSON-RPC message (no method, no result, no error) gets the
/// engine's `-32600` with `400`, in both eras; a response is still taken with `202`.
#[test]
fn a_json_object_that_is_no_message_gets_32600_in_both_eras() {
    let server = TestServer::start();
    server.run(async {
        let session = server.open_session().await;
        let odd = [json!({"foo": 1}), json!({"jsonrpc": "2.0", "id": 3})];
        for body in &odd {
            for response in [
                server.post(body).send().await,
                server.in_session(&session, body).send().await,
            ] {
                assert_eq!(response.status(), StatusCode::BAD_REQUEST, "{body}");
                assert_eq!(error_code(response).await, -32600, "{body}");
            }
        }
        let answer = json!({"jsonrpc": "2.0", "id": 9, "result": {}});
        let taken = server.post(&answer).send().await;
        assert_eq!(taken.status(), StatusCode::ACCEPTED);
    });
}
