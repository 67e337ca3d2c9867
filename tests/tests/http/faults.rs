//! What a network brings: a client gone mid-request that comes back for its result, a body
//! cut off, a server restarted under a client (in memory: a clear "not found", never a
//! hang), a reader too slow for its stream, a SIGTERM with streams open.

use std::io::Write;
use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{json, Value};
use taskwire_driver::engine::Config;
use taskwire_driver::{CallToolResult, Server, TaskSupport, Tool};
use taskwire_http::HttpConfig;
use taskwire_tests::peers::demo::binary;
use taskwire_tests::peers::http::HttpServer;
use taskwire_tests::peers::Argv;
use taskwire_tests::procs;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

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

/// Progress messages of `flood`, each about 4 KB: far more than the socket buffers of a
/// reader that reads nothing hold (and fewer than the session's link may hold while its
/// router has not run: 16 × 65).
const FLOOD: u32 = 1_000;

/// A server whose plain tool `flood` sends [`FLOOD`] progress messages at once, then answers
/// "flooded"; its streams hold 16 messages for a reader.
fn flood_server() -> TestServer {
    let mut config = Config::new("flood", "1");
    config.tasks.enabled = false;
    let flood = Tool::new("flood", TaskSupport::Forbidden);
    let server = Server::new(config).tool(flood, |ctx, _: Value| async move {
        let filler = "x".repeat(4_000);
        for step in 0..FLOOD {
            ctx.progress(f64::from(step), None, Some(filler.clone()))
                .await;
        }
        Ok(CallToolResult::text("flooded"))
    });
    let config = HttpConfig {
        stream_capacity: 16,
        ..HttpConfig::default()
    };
    TestServer::serving(server, "127.0.0.1:0", config)
}

/// A chunked HTTP/1.1 body, decoded (as far as it goes).
fn dechunk(raw: &[u8]) -> String {
    let text = String::from_utf8_lossy(raw);
    let mut rest = text.split_once("\r\n\r\n").map_or("", |(_, body)| body);
    let mut body = String::new();
    while let Some((size, after)) = rest.split_once("\r\n") {
        let Ok(size) = usize::from_str_radix(size.trim(), 16) else {
            break;
        };
        if size == 0 || after.len() < size {
            break;
        }
        body.push_str(&after[..size]);
        rest = after[size..].trim_start_matches("\r\n");
    }
    body
}

/// A reader that stops reading its SSE response loses that stream once it is 16 messages
/// behind (the server buffers no more for it); meanwhile the session serves other
/// requests, and the reply waits for the reader to resume with `Last-Event-ID`.
#[test]
fn a_reader_too_slow_loses_its_stream_not_the_server_and_resumes_it() {
    let server = flood_server();
    server.run(async {
        let session = server.open_session().await;
        let address = server
            .url
            .trim_start_matches("http://")
            .trim_end_matches("/mcp");
        let socket = tokio::net::TcpSocket::new_v4().expect("a socket");
        socket
            .set_recv_buffer_size(4096)
            .expect("a small receive buffer");
        let mut slow = socket
            .connect(address.parse().expect("an address"))
            .await
            .expect("connected");
        let call = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
            "params": {"name": "flood", "arguments": {}, "_meta": {"progressToken": 1}}})
        .to_string();
        let request = format!(
            "POST /mcp HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nMcp-Session-Id: {session}\r\n\
             Mcp-Protocol-Version: 2025-11-25\r\nContent-Length: {}\r\n\r\n{call}",
            call.len()
        );
        slow.write_all(request.as_bytes()).await.expect("sent");

        // Not reading: the flood fills the socket, then the stream's 16 places.
        tokio::time::sleep(Duration::from_millis(1_500)).await;
        let ping = server
            .in_session(
                &session,
                &json!({"jsonrpc": "2.0", "id": 8, "method": "ping"}),
            )
            .send()
            .await;
        let pong = messages(ping).await;
        assert_eq!(pong[0]["result"], json!({}), "{pong:?}");

        // Reads up to the end of the chunked body (the connection itself stays open).
        let mut raw = Vec::new();
        let read_all = async {
            let mut buffer = [0u8; 65_536];
            while !raw.ends_with(b"\r\n0\r\n\r\n") {
                let n = slow.read(&mut buffer).await.expect("read");
                assert!(n > 0, "the connection closed mid-body");
                raw.extend_from_slice(&buffer[..n]);
            }
        };
        tokio::time::timeout(Duration::from_secs(20), read_all)
            .await
            .expect("the server ends the stream of a reader that fell behind");
        let body = dechunk(&raw);
        let events: Vec<&str> = body
            .lines()
            .filter_map(|l| l.strip_prefix("id: "))
            .collect();
        let got = body.matches("notifications/progress").count();
        assert!(got < FLOOD as usize, "the whole flood was buffered: {got}");
        assert!(
            !body.contains("flooded"),
            "the reply came on the lost stream"
        );

        let last = events.last().expect("events with ids");
        let resumed = server
            .http
            .get(&server.url)
            .header("accept", "text/event-stream")
            .header("mcp-session-id", &session)
            .header("last-event-id", *last)
            .send()
            .await
            .expect("GET");
        assert_eq!(resumed.status(), StatusCode::OK);
        let rest = messages(resumed).await;
        let reply = rest.last().expect("the reply");
        assert_eq!(reply["id"], 7);
        assert_eq!(reply["result"]["content"][0]["text"], "flooded");
    });
}

/// SIGTERM with a session's `GET` stream open and a plain call in flight: the server stops
/// accepting, ends both responses (the call's without its reply: it failed with the server),
/// and exits 0 within seconds.
#[test]
fn sigterm_ends_open_streams_and_the_process_promptly() {
    let mut server = HttpServer::start(
        |port| {
            Argv::new(binary("task-server")).args(&[
                "--http",
                &format!("127.0.0.1:{port}"),
                "--step-ms",
                "1000",
            ])
        },
        None,
    );
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    let http = reqwest::Client::new();
    let post = |session: Option<&str>, body: serde_json::Value| {
        let mut request = http
            .post(&server.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream");
        if let Some(session) = session {
            request = request.header("mcp-session-id", session);
        }
        request.body(body.to_string()).send()
    };
    let (stream, call) = runtime.block_on(async {
        let opened = post(
            None,
            json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"}}}),
        )
        .await
        .expect("initialize");
        let session = opened.headers()["mcp-session-id"]
            .to_str()
            .unwrap()
            .to_owned();
        let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        post(Some(&session), note).await.expect("initialized");
        let stream = http
            .get(&server.url)
            .header("accept", "text/event-stream")
            .header("mcp-session-id", &session)
            .send()
            .await
            .expect("GET");
        let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "long_running_task", "arguments": {}}});
        let call = tokio::spawn(post(Some(&session), call));
        tokio::time::sleep(Duration::from_millis(300)).await;
        (stream, call)
    });
    procs::sigterm(server.pid());
    let status = server
        .wait_exit(Duration::from_secs(10))
        .expect("the server exits within 10 s of SIGTERM");
    assert!(status.success(), "{status}");
    runtime.block_on(async {
        let ended = tokio::time::timeout(Duration::from_secs(5), stream.text()).await;
        assert!(ended.is_ok(), "the GET stream ended with the server");
        let call = tokio::time::timeout(Duration::from_secs(5), call)
            .await
            .expect("the call's POST ended with the server")
            .expect("joined");
        if let Ok(response) = call {
            let body = tokio::time::timeout(Duration::from_secs(5), response.text()).await;
            let body = body.expect("its body ended").unwrap_or_default();
            assert!(
                !body.contains("任务完成！"),
                "the work did not finish: {body}"
            );
        }
        let refused = http.get(&server.url).send().await;
        assert!(refused.is_err(), "nothing listens after the exit");
    });
}
