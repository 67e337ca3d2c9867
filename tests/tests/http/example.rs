//! The HTTP examples (`adapters/http/examples/`), run as processes:
//! - `greeter_http`: its own route and the MCP endpoint answer side by side;
//! - `tasks_http`: a request without its bearer token (or with another) is refused `401`,
//!   its health route is not; a task called with the token runs to its result, and is read
//!   again, completed with the same result, after the process is killed and started again
//!   on the same SQLite file;
//! - `http_client` against `tasks_http`: it lists the tool, runs it as a task and prints its
//!   status messages and result; without the token it fails, having run nothing.

use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use taskwire_driver::engine::{Config, TaskStatus};
use taskwire_driver::{Client, ClientBuilder, TaskUpdate};
use taskwire_http::HttpClient;
use taskwire_tests::examples::{binary, database};
use taskwire_tests::peers::{run, Argv};

const TOKEN: &str = "example-token";

/// A free local address.
fn free_address() -> String {
    let port = TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    format!("127.0.0.1:{port}")
}

/// An example serving at an address until dropped (then killed, as a crash).
struct Serving {
    child: Child,
    address: String,
}

impl Serving {
    /// Starts example `name` with `args` after a fresh address, `MCP_TOKEN` set, and waits
    /// until it listens.
    fn start(name: &str, args: &[&str]) -> Serving {
        let address = free_address();
        let child = Command::new(binary(name))
            .arg(&address)
            .args(args)
            .env("MCP_TOKEN", TOKEN)
            .stdin(Stdio::null())
            .spawn()
            .expect("the example starts");
        let mut serving = Serving { child, address };
        let deadline = Instant::now() + Duration::from_secs(10);
        while TcpStream::connect(&serving.address).is_err() {
            let exited = serving.child.try_wait().expect("its status");
            assert!(exited.is_none(), "{name} exited: {exited:?}");
            assert!(Instant::now() < deadline, "{name} did not listen");
            std::thread::sleep(Duration::from_millis(20));
        }
        serving
    }

    fn url(&self) -> String {
        format!("http://{}/mcp", self.address)
    }

    /// Our client of it, with `token` as its bearer token (call on a tokio runtime).
    fn client(&self, token: &str) -> Client {
        let endpoint = HttpClient::new(self.url());
        let endpoint = endpoint.header("Authorization", &format!("Bearer {token}"));
        let builder = ClientBuilder::new(Config::new("example-tests", "0"));
        endpoint.expect("a valid header").connect(builder)
    }
}

impl Drop for Serving {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs `body` on a fresh tokio runtime, failing after 60 s.
fn block_on<T>(body: impl std::future::Future<Output = T>) -> T {
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    runtime.block_on(async {
        tokio::time::timeout(Duration::from_secs(60), body)
            .await
            .expect("the test body did not finish within 60 s")
    })
}

#[test]
fn the_greeter_example_serves_mcp_beside_its_own_route() {
    let serving = Serving::start("greeter_http", &[]);
    let address = &serving.address;
    let (health, reply) = block_on(async {
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
            .body(initialize().to_string())
            .send()
            .await?
            .json()
            .await?;
        Ok::<_, reqwest::Error>((health, reply))
    })
    .expect("both answered");
    assert_eq!(health, "ok");
    assert_eq!(reply["result"]["serverInfo"]["name"], "greeter");
}

fn initialize() -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}}})
}

#[test]
fn the_tasks_example_wants_its_token_and_keeps_tasks_across_a_restart() {
    let database = database("tasks_http-restart");
    let database = database.to_str().expect("a UTF-8 path");
    let serving = Serving::start("tasks_http", &[database]);
    let (task, result) = block_on(async {
        let http = reqwest::Client::new();
        let health = http.get(format!("http://{}/health", serving.address));
        let health = health.send().await.expect("an answer");
        assert_eq!(health.status(), 200, "the health route wants no token");
        // No token, another token, the token without its `Bearer` scheme.
        for authorization in [None, Some("Bearer wrong-token"), Some(TOKEN)] {
            let mut post = http
                .post(serving.url())
                .header("content-type", "application/json")
                .header("accept", "application/json, text/event-stream")
                .body(initialize().to_string());
            if let Some(authorization) = authorization {
                post = post.header("authorization", authorization);
            }
            let refused = post.send().await.expect("an answer");
            assert_eq!(refused.status(), 401, "{authorization:?}");
            let challenge = refused.headers().get("www-authenticate");
            assert_eq!(challenge.map(|h| h.to_str().unwrap()), Some("Bearer"));
        }

        let client = serving.client(TOKEN);
        client
            .initialize()
            .await
            .expect("initialize with the token");
        let call = client.call_tool_as_task("brew", json!({"drink": "tea"}), Some(600_000));
        let call = call.await.expect("a call");
        let task = call.task.clone().expect("a task").id.to_string();
        let mut messages = Vec::new();
        let mut result = None;
        while let Ok(update) = call.updates.recv().await {
            match update {
                TaskUpdate::Status(info) | TaskUpdate::Message(info) => {
                    messages.extend(info.status_message)
                }
                TaskUpdate::Result(outcome) => result = Some(outcome.expect("its result")),
                _ => {}
            }
        }
        let result = result.expect("an outcome").all_text();
        assert_eq!(result, "your tea is ready");
        assert!(messages.contains(&"pouring".to_owned()), "{messages:?}");
        client.close().await;
        (task, result)
    });

    drop(serving);
    let serving = Serving::start("tasks_http", &[database]);
    block_on(async {
        let client = serving.client(TOKEN);
        client
            .initialize()
            .await
            .expect("initialize after the restart");
        let info = client.get_task(&task).await.expect("the task, still there");
        assert_eq!(info.status, TaskStatus::Completed, "{info:?}");
        let followed = client.follow_task(&task).await.expect("followed");
        let again = followed.result().await.expect("its result");
        assert_eq!(again.all_text(), result);
        client.close().await;
    });
}

#[test]
fn the_http_client_example_runs_a_task_on_the_tasks_example() {
    let database = database("tasks_http-client");
    let serving = Serving::start("tasks_http", &[database.to_str().expect("a UTF-8 path")]);
    let client = |token: &str| {
        let argv = Argv::new(binary("http_client"))
            .arg(serving.url())
            .args(&["brew", r#"{"drink": "coffee"}"#])
            .env("MCP_TOKEN", token);
        run(&argv, Duration::from_secs(30))
    };
    let ran = client(TOKEN);
    assert_eq!(ran.code, Some(0), "{ran}");
    let lines: Vec<&str> = ran.stdout.lines().collect();
    assert!(lines[0].starts_with("connected to tasks-http ("), "{ran}");
    assert_eq!(lines[1], "tools: brew", "{ran}");
    assert!(lines[2].starts_with("task: "), "{ran}");
    let statuses: Vec<&str> = lines
        .iter()
        .filter_map(|l| l.strip_prefix("status: "))
        .collect();
    assert!(statuses.iter().any(|s| s.starts_with("working ")), "{ran}");
    assert!(statuses.contains(&"completed pouring"), "{ran}");
    assert_eq!(lines.last(), Some(&"result: your coffee is ready"), "{ran}");

    let refused = client("wrong-token");
    assert_eq!(refused.code, Some(1), "{refused}");
    assert!(refused.stderr.contains("Unauthorized"), "{refused}");
    assert!(!refused.stdout.contains("result:"), "{refused}");
}
