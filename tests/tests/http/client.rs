//! Our client over Streamable HTTP (`taskwire_http::HttpClient`, `task-client --url`) against
//! our server, in each era: the seed flow to its result, input asked mid-task and answered
//! by the client's handler, a cancel; a refused connection said as such; names and task ids
//! that are no plain header text sent as `=?base64?…?=`; marked arguments at any depth sent
//! as `Mcp-Param-*` headers.

use std::time::Duration;

use serde_json::{json, Value};
use taskwire_driver::{
    CallToolResult, Client, ClientBuilder, ClientEra, Config, ElicitationAnswer, Era, Error,
    Server, TaskStatus, TaskSupport, TaskUpdate, Tool,
};
use taskwire_http::{HttpClient, HttpConfig};
use taskwire_tests::peers::http::free_port;
use taskwire_tests::peers::{self, Argv};

use crate::common::TestServer;

fn client(server: &TestServer, era: Era) -> Client {
    let mut config = Config::new("http-client-tests", "1");
    config.client_era = ClientEra::Only(era);
    let builder = ClientBuilder::new(config).on_elicitation(|request| async move {
        let confirm = request.message == "Ship it?";
        ElicitationAnswer::accept(&json!({ "confirm": confirm }))
    });
    HttpClient::new(&server.url).connect(builder)
}

/// The seed flow in `era`: created, each status, the result.
fn seed_flow(era: Era) {
    let server = TestServer::start();
    server.run(async {
        let client = client(&server, era);
        let init = client.initialize().await.expect("initialize");
        assert_eq!(init.protocol_version, era.as_str());
        let tools = client.list_tools().await.expect("tools/list");
        assert!(tools.iter().any(|t| t.name == "long_running_task"));
        let call = client
            .call_tool_as_task("long_running_task", json!({}), Some(60_000))
            .await
            .expect("a task");
        assert!(call.task.is_some(), "a task, not {:?}", call.plain);
        let mut messages = Vec::new();
        let result = loop {
            match call.updates.recv().await.expect("updates until the result") {
                TaskUpdate::Status(task) | TaskUpdate::Message(task) => {
                    messages.extend(task.status_message)
                }
                TaskUpdate::Result(outcome) => break outcome.expect("a result"),
                _ => {}
            }
        };
        assert_eq!(result.all_text(), "任务完成！");
        assert!(
            messages.iter().any(|m| m == "处理步骤 2..."),
            "the statuses seen: {messages:?}"
        );
        client.close().await;
    });
}

#[test]
fn the_seed_flow_runs_over_http_in_2025_11_25() {
    seed_flow(Era::V2025_11_25);
}

#[test]
fn the_seed_flow_runs_over_http_in_2026_07_28() {
    seed_flow(Era::V2026_07_28);
}

/// `confirm_task` asks mid-task; the client's handler answers, over the GET stream and a
/// POST in 2025-11-25, through `tasks/update` in 2026-07-28.
fn input_mid_task(era: Era) {
    let server = TestServer::start();
    server.run(async {
        let client = client(&server, era);
        client.initialize().await.expect("initialize");
        client.list_tools().await.expect("tools/list");
        let call = client
            .call_tool_as_task("confirm_task", json!({"question": "Ship it?"}), None)
            .await
            .expect("a task");
        let result = call.result().await.expect("a result");
        assert_eq!(
            result.structured_content,
            Some(json!({"confirmed": true, "action": "accept"})),
            "{result:?}"
        );
    });
}

#[test]
fn input_asked_mid_task_is_answered_over_http_in_2025_11_25() {
    input_mid_task(Era::V2025_11_25);
}

#[test]
fn input_asked_mid_task_is_answered_over_http_in_2026_07_28() {
    input_mid_task(Era::V2026_07_28);
}

#[test]
fn a_task_is_cancelled_over_http_in_each_era() {
    let server = TestServer::start();
    server.run(async {
        for era in [Era::V2025_11_25, Era::V2026_07_28] {
            let client = client(&server, era);
            client.initialize().await.expect("initialize");
            client.list_tools().await.expect("tools/list");
            let call = client
                .call_tool_as_task("long_running_task", json!({}), None)
                .await
                .expect("a task");
            let id = call.task.as_ref().expect("a task").id.to_string();
            let cancelled = client.cancel_task(&id).await.expect("tasks/cancel");
            assert_eq!(cancelled.status, TaskStatus::Cancelled, "{era:?}");
        }
    });
}

#[test]
fn an_unreachable_endpoint_fails_the_call_at_once_saying_why() {
    let server = TestServer::start();
    server.run(async {
        let url = format!("http://127.0.0.1:{}/mcp", free_port());
        let client = HttpClient::new(&url).connect(ClientBuilder::new(Config::new("t", "1")));
        let failed = tokio::time::timeout(Duration::from_secs(20), client.initialize())
            .await
            .expect("an answer, not a hang");
        let Err(Error::Negotiation(e)) = &failed else {
            panic!("a failed handshake expected, not {failed:?}");
        };
        assert_eq!(e.code, -32000, "{e}");
        assert!(
            e.message.starts_with(&format!(
                "connection refused: nothing accepts connections at {url}"
            )),
            "{e}"
        );
    });
}

#[test]
fn names_and_task_ids_that_are_no_plain_header_text_go_in_base64_in_2026_07_28() {
    let tool = Tool::new("prüfen", TaskSupport::Optional);
    let server = Server::new(Config::new("names", "1")).tool(tool, |_, _: Value| async {
        Ok(CallToolResult::text("geprüft"))
    });
    let server = TestServer::serving(server, "127.0.0.1:0", HttpConfig::default());
    server.run(async {
        let client = client(&server, Era::V2026_07_28);
        client.initialize().await.expect("initialize");
        client.list_tools().await.expect("tools/list");
        let checked = client.call_tool("prüfen", json!({})).await;
        assert_eq!(checked.expect("its result").all_text(), "geprüft");
        // Sent as they are (the server decodes its Mcp-Name): a task it does not know.
        for id in ["bad\nid", " padded", "日本", "=?base64?SGk=?="] {
            let unknown = client.get_task(id).await;
            assert!(
                matches!(&unknown, Err(Error::Rpc(e)) if e.code == -32602),
                "{id:?}: {unknown:?}"
            );
        }
        client.close().await;
    });
}

/// Arguments a tool marks `x-mcp-header`, at the top and nested, travel in `Mcp-Param-*`
/// headers that our server checks (a missing one is -32020).
#[test]
fn marked_arguments_at_any_depth_reach_a_server_that_checks_them_in_2026_07_28() {
    let tool = Tool::new("route", TaskSupport::Optional).with_input_schema(json!({
        "type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "where": {"type": "object", "properties": {
                "zone": {"type": "string", "x-mcp-header": "Zone"}}}}}));
    let server = Server::new(Config::new("marks", "1")).tool(tool, |_, args: Value| async move {
        Ok(CallToolResult::text(
            args["where"]["zone"].as_str().unwrap_or("none"),
        ))
    });
    let server = TestServer::serving(server, "127.0.0.1:0", HttpConfig::default());
    server.run(async {
        let client = client(&server, Era::V2026_07_28);
        client.initialize().await.expect("initialize");
        client.list_tools().await.expect("tools/list");
        let arguments = json!({ "region": "eu west", "where": { "zone": "b 2" } });
        let routed = client.call_tool("route", arguments).await;
        assert_eq!(routed.expect("its result").all_text(), "b 2");
        client.close().await;
    });
}

#[test]
fn task_client_runs_the_seed_flow_against_an_http_server() {
    let server = TestServer::start();
    for era in ["2025-11-25", "2026-07-28"] {
        let run = peers::run(
            &Argv::new(peers::demo::binary("task-client"))
                .args(&["--era", era, "--url"])
                .arg(&server.url),
            Duration::from_secs(60),
        );
        assert_eq!(run.code, Some(0), "{run}");
        assert!(run.stdout.contains(&format!("(protocol {era})")), "{run}");
        assert!(run.stdout.contains("result: 任务完成！"), "{run}");
    }
}

#[test]
fn our_client_resumes_a_stream_the_server_ends() {
    let server = TestServer::with_config(taskwire_http::HttpConfig {
        stream_after: Duration::from_millis(20),
        poll_after: Some(Duration::from_millis(100)),
        ..taskwire_http::HttpConfig::default()
    });
    server.run(async {
        let client = client(&server, Era::V2025_11_25);
        client.initialize().await.expect("initialize");
        // Six 50 ms steps: the call's stream is ended, and resumed, twice or more.
        let result = client
            .call_tool("progress_task", json!({"steps": 6}))
            .await
            .expect("the answer, after resuming");
        assert_eq!(result.all_text(), "6 steps done");
    });
}
