//! Our driver `Client`, opening in 2026-07-28, against the demo `task-server` over real stdio
//! pipes: the seed tool as a task (every status change once, the inline result), the
//! elicitation of `confirm_task` answered by the `on_elicitation` handler both ways the era
//! offers (a task's `inputRequests` by `tasks/update`; MRTR on a plain call), and cancel.

use std::sync::{Arc, Mutex};

use serde_json::json;
use taskwire_demo::extra_tools::CONFIRM_TASK;
use taskwire_demo::tools::{DONE_MESSAGE, RESULT_TEXT, STEPS, TOOL};
use taskwire_driver::engine::{ClientEra, Config, TaskStatus};
use taskwire_driver::RpcError;
use taskwire_driver::{ClientBuilder, ElicitationAnswer};
use taskwire_tests::matrix;
use taskwire_tests::procs::{self, Rt};

use crate::common::{LIMIT, STEP_MS};

matrix!(seed_tool_as_a_task, confirm_both_ways, cancel_a_task);

/// A 2026-07-28 client that accepts every confirmation and records the questions asked.
fn confirming_client(asked: Arc<Mutex<Vec<String>>>) -> ClientBuilder {
    let config = Config {
        client_era: ClientEra::Only(taskwire_engine::Era::V2026_07_28),
        ..Config::new("demo-tests", "0")
    };
    ClientBuilder::new(config).on_elicitation(move |request| {
        asked.lock().unwrap().push(request.message);
        async { ElicitationAnswer::accept(&json!({ "confirm": true })) }
    })
}

fn seed_tool_as_a_task(server: Rt, client: Rt) {
    client.block_on(LIMIT, async {
        let args = procs::server_args(server, STEP_MS);
        let (c, _child) = client.spawn_in(
            ClientEra::Only(taskwire_engine::Era::V2026_07_28),
            &procs::task_server(),
            &args,
        );
        let opened = c.initialize().await.expect("server/discover");
        assert_eq!(opened.protocol_version, "2026-07-28");
        assert_eq!(opened.server.name, "task-server");
        let call = c
            .call_tool_as_task(TOOL, json!({}), None)
            .await
            .expect("the call is accepted");
        let task = call.task.clone().expect("the server created a task");
        assert_eq!(task.status, TaskStatus::Working);
        let mut expected: Vec<String> = STEPS.map(|s| format!("working: {s}")).into();
        expected.push(format!("working: {DONE_MESSAGE}"));
        expected.push(format!("completed: {DONE_MESSAGE}"));
        expected.push(format!("result: {RESULT_TEXT}"));
        assert_eq!(procs::updates(&call).await, expected);
        let got = c.get_task(&task.id).await.expect("tasks/get");
        assert_eq!(got.status, TaskStatus::Completed);
        let no_result = c
            .task_result(&task.id)
            .await
            .map_err(RpcError::from)
            .unwrap_err();
        assert!(
            no_result.message.contains("tasks/get carries the outcome"),
            "{no_result:?}"
        );
        c.close().await;
    });
}

fn confirm_both_ways(server: Rt, client: Rt) {
    let asked = Arc::new(Mutex::new(Vec::new()));
    client.block_on(LIMIT, async {
        let mut args = procs::server_args(server, STEP_MS);
        args.push("--extra-tools".into());
        let builder = confirming_client(asked.clone());
        let (c, _child) = client.spawn_with(builder, &procs::task_server(), &args);
        c.initialize().await.expect("server/discover");

        // As a task: input_required, the handler's answer by tasks/update, working, done.
        let question = json!({ "question": "Ship it?" });
        let call = c
            .call_tool_as_task(CONFIRM_TASK, question, None)
            .await
            .expect("the call is accepted");
        assert!(call.task.is_some(), "a task");
        let updates = procs::updates(&call).await;
        assert!(
            updates.contains(&"input_required: waiting for confirmation".to_owned()),
            "{updates:?}"
        );
        assert_eq!(updates.last().unwrap(), "result: Ship it? confirmed");

        // Plainly: the server asks by MRTR; the retry carries the same handler's answer.
        let result = c
            .call_tool(CONFIRM_TASK, json!({ "question": "Merge it?" }))
            .await
            .expect("tools/call");
        assert_eq!(result.all_text(), "Merge it? confirmed");
        #[derive(serde::Deserialize)]
        struct Confirmed {
            confirmed: bool,
        }
        assert!(
            result
                .structured::<Confirmed>()
                .expect("structured")
                .confirmed
        );
        c.close().await;
    });
    assert_eq!(
        *asked.lock().unwrap(),
        ["Ship it?", "Merge it?"],
        "each asked once"
    );
}

fn cancel_a_task(server: Rt, client: Rt) {
    client.block_on(LIMIT, async {
        let args = procs::server_args(server, 2_000);
        let (c, _child) = client.spawn_in(
            ClientEra::Only(taskwire_engine::Era::V2026_07_28),
            &procs::task_server(),
            &args,
        );
        c.initialize().await.expect("server/discover");
        let call = c
            .call_tool_as_task(TOOL, json!({}), None)
            .await
            .expect("the call is accepted");
        let task = call.task.clone().expect("a task");
        let after = c.cancel_task(&task.id).await.expect("tasks/cancel");
        assert_eq!(after.id, task.id);
        let outcome = call.result().await;
        let error = outcome
            .map_err(RpcError::from)
            .expect_err("a cancelled task has no result");
        assert_eq!(error.message, "Task was cancelled");
        c.close().await;
    });
}
