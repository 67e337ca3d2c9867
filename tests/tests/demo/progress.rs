//! `progress_task` (`task-server --extra-tools`) as our client sees it: a 2025-11-25 task's
//! progress reports arrive among its updates, each with its total and message; a 2026-07-28
//! task, which carries no progress, shows the same reports as its status message (the tool
//! only reports progress: the engine sets the message).

use serde_json::json;
use taskwire_demo::extra_tools::PROGRESS_TASK;
use taskwire_driver::engine::{ClientEra, Era};
use taskwire_tests::matrix;
use taskwire_tests::procs::{self, Rt};

use crate::common::{LIMIT, STEP_MS};

matrix!(progress_of_a_task_in_both_eras);

fn progress_of_a_task_in_both_eras(server: Rt, client: Rt) {
    for era in [Era::V2025_11_25, Era::V2026_07_28] {
        client.block_on(LIMIT, async {
            let mut args = procs::server_args(server, STEP_MS);
            args.push("--extra-tools".into());
            let (c, _child) = client.spawn_in(ClientEra::Only(era), &procs::task_server(), &args);
            c.initialize().await.expect("initialize");
            let call = c
                .call_tool_as_task(PROGRESS_TASK, json!({ "steps": 3 }), None)
                .await
                .expect("the call is accepted");
            assert!(call.task.is_some(), "{era:?}: a task");
            let updates = procs::updates(&call).await;
            let progress: Vec<&str> = updates
                .iter()
                .filter(|u| u.starts_with("progress "))
                .map(String::as_str)
                .collect();
            let shown: Vec<&str> = updates
                .iter()
                .filter(|u| u.starts_with("working: step"))
                .map(String::as_str)
                .collect();
            let (want_progress, want_shown) = match era {
                Era::V2025_11_25 => (
                    vec![
                        "progress 1/3: step 1 of 3",
                        "progress 2/3: step 2 of 3",
                        "progress 3/3: step 3 of 3",
                    ],
                    vec![],
                ),
                _ => (
                    vec![],
                    vec![
                        "working: step 1 of 3",
                        "working: step 2 of 3",
                        "working: step 3 of 3",
                    ],
                ),
            };
            assert_eq!(progress, want_progress, "{era:?}: {updates:?}");
            // 2026-07-28 is polled: a step may be missed between two polls.
            assert!(
                shown.iter().all(|s| want_shown.contains(s)) && shown.len() <= 3,
                "{era:?}: {updates:?}"
            );
            if era == Era::V2026_07_28 {
                assert!(!shown.is_empty(), "{era:?}: {updates:?}");
            }
            assert_eq!(
                updates.last().map(String::as_str),
                Some("result: 3 steps done"),
                "{era:?}"
            );
            c.close().await;
        });
    }
}
