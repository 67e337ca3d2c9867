//! A tool that panics, over real processes (`test-server`'s `panic` tool), every (server,
//! client) runtime pair: its task ends `failed` with an internal error, a plain call gets
//! -32603, and the server keeps serving. (The server's panic message shows on stderr.)

use std::time::Duration;

use serde_json::json;
use taskwire_demo::tools::{DEMO_TASK, RESULT_TEXT, TOOL};
use taskwire_driver::engine::jsonrpc::code;
use taskwire_driver::engine::TaskStatus;
use taskwire_driver::RpcError;
use taskwire_tests::procs::{self, Rt};
use taskwire_tests::{matrix, test_server};

use crate::common::LIMIT;

const PANICKED: &str =
    "Internal error: the tool panicked: test-server: the panic tool panicked on purpose";

matrix!(panicking_tool);

fn panicking_tool(server: Rt, client: Rt) {
    client.block_on(LIMIT, async {
        let (c, mut child) = client.spawn(&test_server!(), &procs::server_args(server, 20));
        c.initialize().await.expect("initialize");

        let call = c
            .call_tool_as_task("panic", json!({}), None)
            .await
            .expect("the call is accepted");
        let id = call.task.as_ref().expect("a task").id.to_string();
        assert_eq!(
            procs::updates(&call).await,
            [
                "working: about to panic".to_owned(),
                format!("failed: {PANICKED}"),
                format!("error {}: {PANICKED}", code::INTERNAL_ERROR),
            ]
        );
        let error = c
            .task_result(&id)
            .await
            .map_err(RpcError::from)
            .expect_err("the task failed");
        assert_eq!(
            (error.code, error.message.as_str()),
            (code::INTERNAL_ERROR, PANICKED)
        );

        let error = c
            .call_tool("panic", json!({}))
            .await
            .map_err(RpcError::from)
            .expect_err("a plain call");
        assert_eq!(
            (error.code, error.message.as_str()),
            (code::INTERNAL_ERROR, PANICKED)
        );

        // Still serving: a full task, and tasks/list with all three.
        let call = c
            .call_tool_as_task(TOOL, json!({}), None)
            .await
            .expect("the call is accepted");
        let done = call.task.as_ref().expect("a task").id.to_string();
        let result = call.result().await.expect("the task completes");
        assert_eq!(result.all_text(), RESULT_TEXT);
        let mut tasks: Vec<_> = c
            .list_tasks()
            .await
            .expect("tasks/list")
            .into_iter()
            .map(|t| (t.id.to_string(), t.status.to_string()))
            .collect();
        tasks.sort();
        let mut expected = vec![
            (DEMO_TASK.to_owned(), TaskStatus::Completed.to_string()),
            (id, TaskStatus::Failed.to_string()),
            (done, TaskStatus::Completed.to_string()),
        ];
        expected.sort();
        assert_eq!(tasks, expected);

        c.close().await;
        let status = child.wait(client, Duration::from_secs(10)).await;
        assert!(status.expect("the server exits").success(), "{status:?}");
    });
}
