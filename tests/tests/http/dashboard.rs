//! The task dashboard (`taskwire_http::dashboard`) mounted at `/tasks` beside `/mcp`: its live
//! feed shows a task appear, change and complete (tools that move only when the test lets
//! them); a reader that falls behind starts over from a fresh snapshot; a task's detail has
//! its history and outcome; cancel stops a running task in the name of the caller, and needs
//! its header; the data routes are authenticated as `/mcp` is (the `authenticate` hook, an
//! OAuth scope); a server not observed answers `503`.

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use reqwest::header::{HeaderMap, HeaderValue, AUTHORIZATION};
use reqwest::{Client, Response, StatusCode};
use serde_json::{json, Value};
use taskwire_driver::{CallToolResult, Config, NoArgs, Server, TaskSupport, Tool};
use taskwire_http::oauth::resource::{ResourceConfig, ResourceServer};
use taskwire_http::HttpConfig;
use taskwire_tests::oauth::{MockIssuer, TestKey};

use crate::common::{messages, task_id, TestServer};

/// The `authenticate` hook's one token, and whom it names.
const TOKEN: &str = "s3cret";
const USER: &str = "alice";

/// A server whose tools move only when the test says: `steps` says "first", waits for the
/// gate, says "second", waits again and answers "all done"; `wait` says "waiting" and waits
/// ten minutes, telling `stopped` when its work is dropped.
struct Tools {
    gate: async_channel::Sender<()>,
    stopped: async_channel::Receiver<()>,
}

/// Tells its channel when dropped (the work it lives in stopped).
struct OnDrop(async_channel::Sender<()>);

impl Drop for OnDrop {
    fn drop(&mut self) {
        let _ = self.0.try_send(());
    }
}

/// How many status messages `churn` sets, one after the other: more than a reader that
/// stops reading can have buffered (the sockets' buffers and the server's backlog).
const CHURN: u32 = 60_000;

fn server() -> (Server, Tools) {
    let (gate, opened) = async_channel::unbounded::<()>();
    let (stop, stopped) = async_channel::unbounded::<()>();
    let server = Server::new(Config::new("dashboard-tests", "1"))
        .tool(
            Tool::new("churn", TaskSupport::Optional),
            |ctx, _: NoArgs| async move {
                for step in 0..CHURN {
                    ctx.set_status(step.to_string()).await;
                }
                Ok(CallToolResult::text("churned"))
            },
        )
        .tool(
            Tool::new("steps", TaskSupport::Optional),
            move |ctx, _: NoArgs| {
                let opened = opened.clone();
                async move {
                    ctx.set_status("first").await;
                    let _ = opened.recv().await;
                    ctx.set_status("second").await;
                    let _ = opened.recv().await;
                    Ok(CallToolResult::text("all done"))
                }
            },
        )
        .tool(
            Tool::new("wait", TaskSupport::Optional),
            move |ctx, _: NoArgs| {
                let guard = OnDrop(stop.clone());
                async move {
                    let _guard = guard;
                    ctx.set_status("waiting").await;
                    ctx.sleep(Duration::from_secs(600)).await;
                    Ok(CallToolResult::text("waited"))
                }
            },
        );
    (server, Tools { gate, stopped })
}

fn observed(config: HttpConfig) -> (TestServer, Tools) {
    let (server, tools) = server();
    (TestServer::with_dashboard(server.observe(), config), tools)
}

/// Requests to the dashboard: `/tasks…` of the server, with or without a token.
struct Dash<'a> {
    server: &'a TestServer,
    http: Client,
}

impl<'a> Dash<'a> {
    fn new(server: &'a TestServer, token: Option<&str>) -> Dash<'a> {
        let mut headers = HeaderMap::new();
        if let Some(token) = token {
            let value = HeaderValue::from_str(&format!("Bearer {token}")).expect("a header");
            headers.insert(AUTHORIZATION, value);
        }
        let http = Client::builder()
            .default_headers(headers)
            .build()
            .expect("a client");
        Dash { server, http }
    }

    fn url(&self, path: &str) -> String {
        format!("http://{}/tasks{path}", self.server.address())
    }

    async fn get(&self, path: &str) -> Response {
        self.http.get(self.url(path)).send().await.expect("GET")
    }

    /// `POST /tasks/tasks/{task}/cancel` with the dashboard's header, or without it.
    async fn cancel(&self, task: &str, with_header: bool) -> Response {
        let mut request = self.http.post(self.url(&format!("/tasks/{task}/cancel")));
        if with_header {
            request = request.header("x-taskwire-dashboard", "cancel");
        }
        request.send().await.expect("POST")
    }

    async fn feed(&self) -> Feed {
        let response = self.get("/events").await;
        assert_eq!(response.status(), StatusCode::OK);
        Feed::new(response)
    }

    async fn detail(&self, task: &str) -> Value {
        let response = self.get(&format!("/tasks/{task}")).await;
        assert_eq!(response.status(), StatusCode::OK);
        response.json().await.expect("JSON")
    }
}

/// The dashboard's SSE feed, read one named event at a time.
struct Feed {
    body: futures::stream::BoxStream<'static, reqwest::Result<bytes::Bytes>>,
    buffer: String,
}

impl Feed {
    fn new(response: Response) -> Feed {
        let kind = response.headers()["content-type"].to_str().expect("text");
        assert!(kind.starts_with("text/event-stream"), "{kind}");
        Feed {
            body: response.bytes_stream().boxed(),
            buffer: String::new(),
        }
    }

    /// The next event: its name and its JSON data (keep-alive comments skipped).
    async fn next(&mut self) -> (String, Value) {
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let block: String = self.buffer.drain(..end + 2).collect();
                let mut name = String::new();
                let mut data = String::new();
                for line in block.lines() {
                    if let Some(value) = line.strip_prefix("event:") {
                        name = value.trim().to_owned();
                    } else if let Some(value) = line.strip_prefix("data:") {
                        data.push_str(value.trim_start());
                    }
                }
                if data.is_empty() {
                    continue;
                }
                let data = serde_json::from_str(&data).unwrap_or_else(|e| panic!("{e}: {data}"));
                return (name, data);
            }
            let chunk = tokio::time::timeout(Duration::from_secs(10), self.body.next())
                .await
                .expect("an event within 10 s")
                .expect("the feed goes on")
                .expect("a chunk");
            self.buffer.push_str(&String::from_utf8_lossy(&chunk));
        }
    }

    /// Reads events until a `row` of `task` for which `wanted` holds; returns every row of
    /// `task` read on the way, that one last.
    async fn rows_until(&mut self, task: &str, wanted: impl Fn(&Value) -> bool) -> Vec<Value> {
        let mut seen = Vec::new();
        loop {
            let (name, data) = self.next().await;
            if name == "row" && data["id"] == task {
                seen.push(data.clone());
                if wanted(&data) {
                    return seen;
                }
            }
        }
    }
}

/// A task of `tool` made in a fresh session; the session and the task id.
async fn start(server: &TestServer, tool: &str) -> (String, String) {
    let session = server.open_session().await;
    let task = task_id(server.call_as_task(&session, tool, json!({})).send().await).await;
    (session, task.as_str().expect("an id").to_owned())
}

/// The task as `tasks/get` shows it to its owner.
async fn tasks_get(server: &TestServer, session: &str, task: &str) -> Value {
    let request = json!({"jsonrpc": "2.0", "id": 9, "method": "tasks/get",
        "params": {"taskId": task}});
    let reply = messages(server.in_session(session, &request).send().await).await;
    reply[0]["result"].clone()
}

/// The `(status, message)` of each status step of a detail's history.
fn status_steps(detail: &Value) -> Vec<(String, Value)> {
    detail["history"]["steps"]
        .as_array()
        .expect("steps")
        .iter()
        .filter(|s| s["kind"] == "status")
        .map(|s| {
            (
                s["status"].as_str().unwrap_or("").to_owned(),
                s["message"].clone(),
            )
        })
        .collect()
}

async fn error_message(response: Response) -> String {
    let body: Value = response.json().await.expect("a JSON-RPC error");
    body["error"]["message"].as_str().unwrap_or("").to_owned()
}

#[test]
fn the_feed_shows_a_task_appear_change_and_complete_and_its_detail_has_history_and_outcome() {
    let (server, tools) = observed(HttpConfig::default());
    server.run(async {
        let dash = Dash::new(&server, None);
        let mut feed = dash.feed().await;
        let (name, snapshot) = feed.next().await;
        assert_eq!(
            (name.as_str(), &snapshot),
            ("snapshot", &json!({"rows": []}))
        );

        let (_, task) = start(&server, "steps").await;
        let appeared = feed.rows_until(&task, |r| r["message"] == "first").await;
        let row = appeared.last().expect("a row");
        assert_eq!(row["status"], "working");
        assert_eq!(row["tool"], "steps");
        assert_eq!(row["era"], "2025-11-25");
        assert_eq!(row["runsHere"], true);
        assert!(
            row["owner"].as_str().is_some_and(|o| !o.is_empty()),
            "{row}"
        );
        assert!(row["createdAt"].as_u64().is_some_and(|t| t > 0), "{row}");

        tools.gate.send(()).await.expect("the tool waits");
        let changed = feed.rows_until(&task, |r| r["message"] == "second").await;
        assert_eq!(changed.last().expect("a row")["status"], "working");
        tools.gate.send(()).await.expect("the tool waits");
        let done = feed.rows_until(&task, |r| r["status"] == "completed").await;
        let done = done.last().expect("a row");
        assert!(done["updatedAt"].as_u64() >= done["createdAt"].as_u64());

        let detail = dash.detail(&task).await;
        let steps = status_steps(&detail);
        let messages: Vec<&Value> = steps.iter().map(|(_, m)| m).collect();
        let first = messages.iter().position(|m| **m == "first").expect("first");
        let second = messages
            .iter()
            .position(|m| **m == "second")
            .expect("second");
        assert!(first < second, "{steps:?}");
        assert_eq!(steps.last().expect("a step").0, "completed", "{steps:?}");
        assert!(steps
            .iter()
            .all(|(s, _)| s == "working" || s == "completed"));
        assert_eq!(detail["row"]["status"], "completed");
        assert_eq!(detail["task"]["info"]["status"], "completed");
        assert_eq!(
            detail["task"]["outcome"]["result"]["value"]["content"][0]["text"],
            "all done"
        );

        // A browser that comes later starts from the rows as they stand.
        let mut later = dash.feed().await;
        let (name, snapshot) = later.next().await;
        assert_eq!(name, "snapshot");
        assert_eq!(snapshot["rows"][0]["id"], task.as_str());
        assert_eq!(snapshot["rows"][0]["status"], "completed");

        let missing = dash.get("/tasks/no-such-task").await;
        assert_eq!(missing.status(), StatusCode::NOT_FOUND);
    });
}

#[test]
fn a_reader_that_falls_behind_starts_over_from_a_fresh_snapshot() {
    let (server, _tools) = observed(HttpConfig::default());
    server.run(async {
        let dash = Dash::new(&server, None);
        let mut feed = dash.feed().await;
        assert_eq!(feed.next().await.0, "snapshot");
        // The task churns through its messages while this reader reads nothing.
        let (session, task) = start(&server, "churn").await;
        let result = server.ask_result(&session, 2, &json!(task)).send().await;
        let result = messages(result).await;
        assert_eq!(result[0]["result"]["content"][0]["text"], "churned");
        let (mut rows, mut snapshots) = (0, 0);
        let last = loop {
            let (name, data) = feed.next().await;
            let row = match name.as_str() {
                "snapshot" => {
                    snapshots += 1;
                    data["rows"][0].clone()
                }
                "row" => {
                    rows += 1;
                    data
                }
                _ => continue,
            };
            if row["status"] == "completed" {
                break row;
            }
        };
        assert!(snapshots >= 1, "no fresh snapshot after {rows} rows");
        assert!(rows < CHURN, "{rows} rows: the reader did not fall behind");
        assert_eq!(last["id"], task.as_str());
        assert_eq!(last["message"], (CHURN - 1).to_string());
    });
}

#[test]
fn cancel_stops_a_running_task_in_the_name_of_the_caller_and_needs_its_header() {
    let authenticate: taskwire_http::Authenticate = Arc::new(|headers| {
        let sent = headers.get("authorization")?.to_str().ok()?;
        (sent == format!("Bearer {TOKEN}")).then(|| USER.to_owned())
    });
    let config = HttpConfig {
        authenticate: Some(authenticate),
        ..HttpConfig::default()
    };
    let (mut server, tools) = observed(config);
    // The MCP requests carry the token too.
    let mut headers = HeaderMap::new();
    let bearer = HeaderValue::from_str(&format!("Bearer {TOKEN}")).expect("a header");
    headers.insert(AUTHORIZATION, bearer);
    server.http = Client::builder()
        .default_headers(headers)
        .build()
        .expect("a client");
    server.run(async {
        // Without the token: the page loads (it holds no data), its data routes do not.
        let stranger = Dash::new(&server, None);
        let page = stranger.get("").await;
        assert_eq!(page.status(), StatusCode::OK);
        let policy = page.headers()["content-security-policy"]
            .to_str()
            .expect("text");
        assert!(policy.contains("frame-ancestors 'none'"), "{policy}");
        assert!(page
            .text()
            .await
            .expect("HTML")
            .contains("/tasks/dashboard.js"));
        for path in ["/events", "/tasks/any"] {
            let refused = stranger.get(path).await;
            assert_eq!(refused.status(), StatusCode::UNAUTHORIZED, "{path}");
            assert_eq!(refused.headers()["www-authenticate"], "Bearer", "{path}");
        }
        let wrong = Dash::new(&server, Some("guess"));
        assert_eq!(
            wrong.get("/events").await.status(),
            StatusCode::UNAUTHORIZED
        );

        let dash = Dash::new(&server, Some(TOKEN));
        let mut feed = dash.feed().await;
        let (session, task) = start(&server, "wait").await;
        let row = feed.rows_until(&task, |r| r["message"] == "waiting").await;
        assert_eq!(row.last().expect("a row")["owner"], USER);

        assert_eq!(
            stranger.cancel(&task, true).await.status(),
            StatusCode::UNAUTHORIZED
        );
        // No header: a cross-site form could have sent it.
        let forged = dash.cancel(&task, false).await;
        assert_eq!(forged.status(), StatusCode::FORBIDDEN);
        assert!(error_message(forged)
            .await
            .contains("x-taskwire-dashboard: cancel"));
        // From a page of another origin.
        let foreign = dash
            .http
            .post(dash.url(&format!("/tasks/{task}/cancel")))
            .header("x-taskwire-dashboard", "cancel")
            .header("origin", "http://evil.example")
            .send()
            .await
            .expect("POST");
        assert_eq!(foreign.status(), StatusCode::FORBIDDEN);
        assert_eq!(
            tasks_get(&server, &session, &task).await["status"],
            "working"
        );
        assert!(tools.stopped.try_recv().is_err(), "the work still runs");

        let cancelled = dash.cancel(&task, true).await;
        assert_eq!(cancelled.status(), StatusCode::OK);
        let body: Value = cancelled.json().await.expect("JSON");
        assert_eq!(body, json!({"task": task, "cancelledBy": USER}));
        let message = format!("Cancelled by {USER}");
        let row = feed.rows_until(&task, |r| r["status"] == "cancelled").await;
        assert_eq!(row.last().expect("a row")["message"], message.as_str());
        tokio::time::timeout(Duration::from_secs(5), tools.stopped.recv())
            .await
            .expect("the work stopped within 5 s")
            .expect("told");
        let seen = tasks_get(&server, &session, &task).await;
        assert_eq!(seen["status"], "cancelled", "{seen}");
        assert_eq!(seen["statusMessage"], message.as_str(), "{seen}");
        let steps = status_steps(&dash.detail(&task).await);
        assert_eq!(
            steps.last(),
            Some(&("cancelled".to_owned(), json!(message)))
        );

        let again = dash.cancel(&task, true).await;
        assert_eq!(again.status(), StatusCode::CONFLICT);
        assert!(error_message(again).await.contains("already cancelled"));
        let unknown = dash.cancel("no-such-task", true).await;
        assert_eq!(unknown.status(), StatusCode::NOT_FOUND);
    });
}

#[test]
fn a_server_not_observed_answers_503_saying_what_to_do() {
    let (server, _tools) = server();
    let server = TestServer::with_dashboard(server, HttpConfig::default());
    server.run(async {
        let dash = Dash::new(&server, None);
        assert_eq!(dash.get("").await.status(), StatusCode::OK);
        let script = dash.get("/dashboard.js").await;
        assert_eq!(script.status(), StatusCode::OK);
        assert!(script.headers()["content-type"]
            .to_str()
            .is_ok_and(|t| t.starts_with("text/javascript")));
        let refused = [
            dash.get("/events").await,
            dash.get("/tasks/any").await,
            dash.cancel("any", true).await,
        ];
        for response in refused {
            assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
            let message = error_message(response).await;
            assert!(message.contains("Server::observe()"), "{message}");
        }
    });
}

#[test]
fn under_oauth_a_scope_of_its_own_guards_the_dashboard() {
    const RESOURCE: &str = "https://mcp.example/mcp";
    let issuer = MockIssuer::start();
    let mut oauth = ResourceConfig::new(RESOURCE, &issuer.url);
    let scope = vec!["admin".to_owned()];
    oauth
        .method_scopes
        .insert("taskwire/dashboard".into(), scope);
    let config = HttpConfig {
        oauth: Some(Arc::new(ResourceServer::new(oauth).expect("a config"))),
        ..HttpConfig::default()
    };
    let (server, _tools) = observed(config);
    let token = |scope: &str| {
        let claims = issuer.claims("alice", "cli", RESOURCE, scope);
        issuer.token(TestKey::Key1, &claims)
    };
    server.run(async {
        let none = Dash::new(&server, None).get("/events").await;
        assert_eq!(none.status(), StatusCode::UNAUTHORIZED);
        let user = Dash::new(&server, Some(&token("tasks")))
            .get("/events")
            .await;
        assert_eq!(user.status(), StatusCode::FORBIDDEN);
        let challenge = user.headers()["www-authenticate"].to_str().expect("text");
        assert!(challenge.contains("insufficient_scope"), "{challenge}");
        assert!(challenge.contains("scope=\"admin\""), "{challenge}");
        let admin = Dash::new(&server, Some(&token("tasks admin")));
        let mut feed = admin.feed().await;
        assert_eq!(feed.next().await.0, "snapshot");
    });
}
