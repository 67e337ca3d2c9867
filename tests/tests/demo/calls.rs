//! The demo server's plain answers over real processes, every (server, client) runtime pair:
//! a plain `tools/call`, an unknown tool, and `tasks/list` showing `demo-task`.

use std::time::{Duration, Instant};

use serde_json::json;
use taskwire_demo::tools::{DEMO_TASK, RESULT_TEXT, TOOL};
use taskwire_driver::engine::TaskStatus;
use taskwire_driver::CallToolResult;
use taskwire_tests::matrix;
use taskwire_tests::procs::{self, Rt};

use crate::common::{LIMIT, STEP_MS};

matrix!(plain_call, unknown_tool, tasks_list);

/// A plain call waits out the three steps and answers with the result text, no task.
fn plain_call(server: Rt, client: Rt) {
    client.block_on(LIMIT, async {
        let args = procs::server_args(server, STEP_MS);
        let (c, _child) = client.spawn(&procs::task_server(), &args);
        c.initialize().await.expect("initialize");
        let start = Instant::now();
        let result = c.call_tool(TOOL, json!({})).await.expect("tools/call");
        assert!(start.elapsed() >= Duration::from_millis(3 * STEP_MS));
        assert_eq!(result, CallToolResult::text(RESULT_TEXT));
        assert_eq!(c.list_tasks().await.expect("tasks/list").len(), 1);
        c.close().await;
    });
}

/// An unknown tool is a tool error (`isError`, "未知工具: NAME"), not a JSON-RPC error.
fn unknown_tool(server: Rt, client: Rt) {
    client.block_on(LIMIT, async {
        let args = procs::server_args(server, STEP_MS);
        let (c, _child) = client.spawn(&procs::task_server(), &args);
        c.initialize().await.expect("initialize");
        let result = c
            .call_tool("no_such_tool", json!({}))
            .await
            .expect("tools/call");
        assert_eq!(result, CallToolResult::error("未知工具: no_such_tool"));
        c.close().await;
    });
}

/// `tasks/list` shows the pre-created `demo-task` (completed, "已完成", kept 300 s) and then
/// the tasks the client runs; `demo-task`'s result is readable.
fn tasks_list(server: Rt, client: Rt) {
    client.block_on(LIMIT, async {
        let args = procs::server_args(server, STEP_MS);
        let (c, _child) = client.spawn(&procs::task_server(), &args);
        c.initialize().await.expect("initialize");
        let tasks = c.list_tasks().await.expect("tasks/list");
        let seen: Vec<_> = tasks
            .iter()
            .map(|t| {
                (
                    t.id.as_str(),
                    t.status,
                    t.status_message.as_deref(),
                    t.ttl_ms,
                )
            })
            .collect();
        assert_eq!(
            seen,
            [(
                DEMO_TASK,
                TaskStatus::Completed,
                Some("已完成"),
                Some(300_000)
            )]
        );
        let result = c.task_result(DEMO_TASK).await.expect("tasks/result");
        assert_eq!(result, CallToolResult::text("此任务用于List Tasks 功能"));

        let call = c
            .call_tool_as_task(TOOL, json!({}), None)
            .await
            .expect("the call is accepted");
        let id = call.task.as_ref().expect("a task").id.to_string();
        call.result().await.expect("the task completes");
        let mut ids: Vec<String> = c
            .list_tasks()
            .await
            .expect("tasks/list")
            .into_iter()
            .map(|t| t.id.to_string())
            .collect();
        ids.sort();
        let mut expected = vec![DEMO_TASK.to_owned(), id];
        expected.sort();
        assert_eq!(ids, expected);
        c.close().await;
    });
}
