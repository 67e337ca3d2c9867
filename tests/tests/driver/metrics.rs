//! The metrics of a server without a store, whose host does not journal: the driver counts
//! what its tools' tasks do (made, failed, reporting progress, cancelled, asking, expired
//! while running), and lets a finished task go from the tasks-by-status gauge when its
//! retention runs out.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use taskwire_driver::prometheus_client::encoding::text::encode;
use taskwire_driver::prometheus_client::registry::Registry;
use taskwire_driver::{CallToolResult, Config, MessageSession, Runtime, Server, TaskSupport, Tool};

use crate::links::{reply, send, within_20s};

/// `registry` as Prometheus reads it.
fn text(registry: &Registry) -> String {
    let mut text = String::new();
    encode(&mut text, registry).expect("the registry encodes");
    text
}

/// The value of `series` in `registry`'s text (`None`: absent).
fn read(registry: &Registry, series: &str) -> Option<f64> {
    text(registry)
        .lines()
        .find_map(|line| line.strip_prefix(series)?.strip_prefix(' '))
        .map(|value| value.parse().expect("a number"))
}

/// Waits (10 s at most) until `series` reads `wanted`.
async fn until_reads(registry: &Registry, series: &str, wanted: f64) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while read(registry, series) != Some(wanted) {
        assert!(
            Instant::now() < deadline,
            "{series} is not {wanted} in:\n{}",
            text(registry)
        );
        smol::Timer::after(Duration::from_millis(20)).await;
    }
}

/// Calls `tool` as a task kept `ttl` ms (request `id`); its id.
async fn make_task(session: &MessageSession, id: i64, tool: &str, ttl: u64) -> Value {
    send(
        session,
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
            "name": tool, "arguments": {}, "task": {"ttl": ttl}}}),
    );
    let created = reply(session, id).await;
    let task = created["result"]["task"]["taskId"].clone();
    assert!(task.is_string(), "{created}");
    task
}

#[test]
fn a_store_less_server_counts_each_change_its_tools_tasks_make_and_lets_finished_ones_go() {
    let mut registry = Registry::default();
    let optional = |name| Tool::new(name, TaskSupport::Optional);
    let server = Server::new(Config::new("metrics", "1.0"))
        .tool(optional("quick"), |_, _: Value| async {
            Ok(CallToolResult::text("done"))
        })
        .tool(optional("fails"), |_, _: Value| async {
            Ok(CallToolResult::error("no luck"))
        })
        .tool(optional("slow"), |ctx, _: Value| async move {
            ctx.sleep(Duration::from_secs(60)).await;
            Ok(CallToolResult::text("late"))
        })
        .tool(optional("reports"), |ctx, _: Value| async move {
            ctx.progress(1.0, Some(2.0), None).await;
            ctx.sleep(Duration::from_secs(60)).await;
            Ok(CallToolResult::text("late"))
        })
        .tool(optional("asks"), |ctx, _: Value| async move {
            let question = json!({"message": "go on?", "requestedSchema": {"type": "object"}});
            ctx.elicit(question).await?;
            Ok(CallToolResult::text("went on"))
        })
        .metrics(&mut registry);
    let runtime: Arc<dyn Runtime> = Arc::new(taskwire_smol::Smol::default());
    within_20s(server.start(runtime), async |handle| {
        let session = handle.open("alice", 64).await.expect("open");
        send(
            &session,
            json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}},
                "clientInfo": {"name": "t", "version": "1"}}}),
        );
        reply(&session, 0).await;
        send(
            &session,
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        );
        let status = |s| format!("taskwire_tasks{{status=\"{s}\"}}");
        let ended =
            |tool, s| format!("taskwire_tasks_ended_total{{tool=\"{tool}\",status=\"{s}\"}}");

        // Done at once, kept 300 ms: counted, then let go.
        make_task(&session, 1, "quick", 300).await;
        until_reads(&registry, &ended("quick", "completed"), 1.0).await;
        // An `isError` result: failed (2025-11-25).
        make_task(&session, 2, "fails", 60_000).await;
        until_reads(&registry, &ended("fails", "failed"), 1.0).await;
        // Its retention runs out while it runs.
        make_task(&session, 3, "slow", 300).await;
        until_reads(&registry, &status("working"), 1.0).await;
        until_reads(&registry, &ended("slow", "expired"), 1.0).await;
        until_reads(&registry, &status("working"), 0.0).await;
        // The finished `quick` is gone too; `fails` stays.
        until_reads(&registry, &status("completed"), 0.0).await;
        assert_eq!(read(&registry, &status("failed")), Some(1.0));

        // Progress is its work's first change; then it is cancelled.
        let reports = make_task(&session, 5, "reports", 60_000).await;
        let first = "taskwire_task_first_update_seconds_count{tool=\"reports\"}";
        until_reads(&registry, first, 1.0).await;
        assert_eq!(read(&registry, &status("working")), Some(1.0));
        send(
            &session,
            json!({"jsonrpc": "2.0", "id": 6, "method": "tasks/cancel", "params": {"taskId": reports}}),
        );
        until_reads(&registry, &ended("reports", "cancelled"), 1.0).await;
        until_reads(&registry, &status("cancelled"), 1.0).await;
        assert_eq!(read(&registry, &status("working")), Some(0.0));

        // A question: input_required until answered, then it completes.
        make_task(&session, 4, "asks", 60_000).await;
        let question = loop {
            let out = session.recv().await.expect("a message");
            let message: Value = serde_json::from_str(&out.message).expect("JSON");
            if message["method"] == "elicitation/create" {
                break message;
            }
        };
        until_reads(&registry, &status("input_required"), 1.0).await;
        send(
            &session,
            json!({"jsonrpc": "2.0", "id": question["id"], "result": {"action": "accept", "content": {}}}),
        );
        until_reads(&registry, &ended("asks", "completed"), 1.0).await;
        assert_eq!(read(&registry, &status("input_required")), Some(0.0));
        assert_eq!(read(&registry, &status("completed")), Some(1.0));
        for tool in ["quick", "fails", "slow", "reports", "asks"] {
            let made = format!("taskwire_tasks_created_total{{tool=\"{tool}\"}}");
            assert_eq!(read(&registry, &made), Some(1.0), "{made}");
        }
        // Each work's first change (its end, its question), but the one that expired first.
        for (tool, count) in [("quick", 1.0), ("fails", 1.0), ("asks", 1.0), ("slow", 0.0)] {
            let first = format!("taskwire_task_first_update_seconds_count{{tool=\"{tool}\"}}");
            assert_eq!(read(&registry, &first), Some(count), "{first}");
        }
    });
}
