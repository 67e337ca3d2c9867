//! Many sessions at once over one host: 1,000 sessions, each running a task, then each
//! reading its result.

use std::sync::Arc;

use futures::future::join_all;
use serde_json::json;
use tokio::sync::Semaphore;

use crate::common::{messages, TestServer};

const SESSIONS: usize = 1000;
/// Requests in flight at once (the sessions and their tasks all exist together).
const IN_FLIGHT: usize = 100;

#[test]
fn a_thousand_sessions_each_run_a_task() {
    let server = TestServer::start();
    server.run(async {
        let gate = Arc::new(Semaphore::new(IN_FLIGHT));
        let started = join_all((0..SESSIONS).map(|_| {
            let gate = gate.clone();
            let server = &server;
            async move {
                let _turn = gate.acquire().await.expect("open");
                let session = server.open_session().await;
                let created = server
                    .in_session(
                        &session,
                        &json!({"jsonrpc": "2.0", "id": 1,
                        "method": "tools/call", "params": {"name": "long_running_task",
                            "arguments": {}, "task": {"ttl": 60000}}}),
                    )
                    .send()
                    .await;
                let task = messages(created).await[0]["result"]["task"]["taskId"].clone();
                (session, task)
            }
        }))
        .await;
        let results = join_all(started.iter().map(|(session, task)| {
            let gate = gate.clone();
            let server = &server;
            async move {
                let _turn = gate.acquire().await.expect("open");
                let result = server
                    .in_session(
                        session,
                        &json!({"jsonrpc": "2.0", "id": 2,
                        "method": "tasks/result", "params": {"taskId": task}}),
                    )
                    .send()
                    .await;
                messages(result).await.pop().expect("the reply")
            }
        }))
        .await;
        let done = results
            .iter()
            .filter(|r| r["result"]["content"][0]["text"] == "任务完成！")
            .count();
        assert_eq!(done, SESSIONS);
    });
}
