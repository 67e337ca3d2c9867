//! The mounting example of `adapters/http/README.md` (`adapters/http/examples/greeter_http.rs`),
//! run: its own route and the MCP endpoint answer side by side.

use std::net::{TcpListener, TcpStream};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use taskwire_tests::examples::binary;

#[test]
fn the_greeter_example_serves_mcp_beside_its_own_route() {
    let port = TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let address = format!("127.0.0.1:{port}");
    let mut child = Command::new(binary("greeter_http"))
        .arg(&address)
        .stdin(Stdio::null())
        .spawn()
        .expect("the example starts");
    let deadline = Instant::now() + Duration::from_secs(10);
    while TcpStream::connect(&address).is_err() {
        assert!(Instant::now() < deadline, "the example did not listen");
        std::thread::sleep(Duration::from_millis(20));
    }
    let checked = tokio::runtime::Runtime::new()
        .expect("a runtime")
        .block_on(async {
            let http = reqwest::Client::new();
            let health = http
                .get(format!("http://{address}/health"))
                .send()
                .await?
                .text()
                .await?;
            let reply: Value = http
                .post(format!("http://{address}/mcp"))
                .header("content-type", "application/json")
                .header("accept", "application/json, text/event-stream")
                .body(
                    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                        "protocolVersion": "2025-11-25", "capabilities": {},
                        "clientInfo": {"name": "t", "version": "1"}}})
                    .to_string(),
                )
                .send()
                .await?
                .json()
                .await?;
            Ok::<_, reqwest::Error>((health, reply))
        });
    let _ = child.kill();
    let _ = child.wait();
    let (health, reply) = checked.expect("both answered");
    assert_eq!(health, "ok");
    assert_eq!(reply["result"]["serverInfo"]["name"], "greeter");
}
