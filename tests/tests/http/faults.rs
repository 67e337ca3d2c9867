//! What a network brings: a client gone mid-request that comes back for its result, a body
//! cut off, a server restarted under a client (in memory: a clear "not found", never a
//! hang).

use std::io::Write;
use std::time::Duration;

use reqwest::StatusCode;
use serde_json::json;

use crate::common::{messages, task_id, TestServer};

#[test]
fn a_client_that_drops_its_wait_for_a_result_gets_it_on_return() {
    let server = TestServer::start();
    server.run(async {
        let session = server.open_session().await;
        let task = task_id(
            server
                .call_as_task(&session, "long_running_task", json!({}))
                .send()
                .await,
        )
        .await;
        let result = |id: u64| server.ask_result(&session, id, &task).send();
        // The connection goes away while tasks/result waits.
        let dropped = tokio::time::timeout(Duration::from_millis(30), result(2)).await;
        assert!(dropped.is_err(), "the task was not done yet");
        let again = messages(result(3).await).await;
        let reply = again.last().expect("the reply");
        assert_eq!(reply["id"], 3);
        assert_eq!(reply["result"]["content"][0]["text"], "任务完成！");
    });
}

#[test]
fn a_body_cut_off_harms_nothing_else() {
    let server = TestServer::start();
    let address = server
        .url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_owned();
    let mut socket = std::net::TcpStream::connect(&address).expect("connect");
    write!(
        socket,
        "POST /mcp HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: 200\r\n\r\n{{\"jsonrpc\":"
    )
    .expect("write");
    drop(socket);
    server.run(async {
        let session = server.open_session().await;
        let pong = server
            .in_session(
                &session,
                &json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}),
            )
            .send()
            .await;
        assert_eq!(pong.status(), StatusCode::OK);
    });
}

#[test]
fn after_a_restart_a_task_and_a_session_are_clearly_gone() {
    let first = TestServer::start();
    let url = first.url.clone();
    let (session, task) = first.run(async {
        let session = first.open_session().await;
        let created = first
            .stateless(
                1,
                "tools/call",
                json!({"name": "long_running_task", "arguments": {}}),
            )
            .send()
            .await;
        let task = messages(created).await[0]["result"]["taskId"]
            .as_str()
            .expect("a task")
            .to_owned();
        (session, task)
    });
    let address = url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_owned();
    drop(first);
    let second = TestServer::at(&address);
    second.run(async {
        let got = second
            .stateless(2, "tasks/get", json!({"taskId": task}))
            .send()
            .await;
        assert_eq!(got.status(), StatusCode::BAD_REQUEST);
        assert_eq!(messages(got).await[0]["error"]["code"], -32602);
        let ping = second
            .in_session(
                &session,
                &json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}),
            )
            .send()
            .await;
        assert_eq!(ping.status(), StatusCode::NOT_FOUND);
    });
}
