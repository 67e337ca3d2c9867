//! A server whose host journals its changes (`Durability::Journal`, `Durability::Confirmed`)
//! while no store is attached: every entry counts as stored at once, so nothing waits for a
//! confirmation that would never come (a `CreateTaskResult`, the task's result).

use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};
use taskwire_driver::engine::Durability;
use taskwire_driver::{CallToolResult, Config, Runtime, Server, TaskSupport, Tool};

use crate::links::{initialize, reply, send};

#[test]
fn journaled_changes_hold_no_reply_without_a_store() {
    for durability in [Durability::Journal, Durability::Confirmed] {
        let mut config = Config::new("durability", "1.0");
        config.durability = durability;
        let server = Server::new(config).tool(
            Tool::new("work", TaskSupport::Optional),
            |ctx, _: Value| async move {
                ctx.set_status("halfway").await;
                Ok(CallToolResult::text("done"))
            },
        );
        let runtime: Arc<dyn Runtime> = Arc::new(taskwire_smol::Smol::default());
        let handle = server.start(runtime);
        smol::block_on(async {
            let body = async {
                let session = handle.open("alice", 64).await.expect("open");
                initialize(&session).await;
                send(
                    &session,
                    json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
                        "name": "work", "arguments": {}, "task": {"ttl": 60000}}}),
                );
                let created = reply(&session, 2).await;
                let task = created["result"]["task"]["taskId"].clone();
                assert!(task.is_string(), "{durability:?}: {created}");
                send(
                    &session,
                    json!({"jsonrpc": "2.0", "id": 3, "method": "tasks/result",
                        "params": {"taskId": task}}),
                );
                let result = reply(&session, 3).await;
                assert_eq!(
                    result["result"]["content"][0]["text"], "done",
                    "{durability:?}"
                );
            };
            let limit = smol::Timer::after(Duration::from_secs(20));
            futures::pin_mut!(body);
            if let futures::future::Either::Right(_) = futures::future::select(body, limit).await {
                panic!("{durability:?}: a reply waited for a confirmation");
            }
        });
    }
}
