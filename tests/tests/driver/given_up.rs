//! A client call dropped before its answer is given up, in both eras: the server hears
//! `notifications/cancelled` and its tool stops; so does a `call_tool_as_task` that runs
//! without a task once its `TaskCall` (or the call making it) is dropped. A call that made a task is not: the task
//! runs on.

use crate::in_process;
use std::sync::Arc;
use std::time::Duration;

use async_channel::{Receiver, Sender};
use serde_json::{json, Value};
use taskwire_driver::engine::{ClientEra, Era, TaskStatus};
use taskwire_driver::{
    CallToolResult, Client, ClientBuilder, Config, Runtime, Server, TaskSupport, Tool,
};

/// Says which tool it was when dropped.
struct Stopped(&'static str, Sender<&'static str>);

impl Drop for Stopped {
    fn drop(&mut self) {
        let _ = self.1.try_send(self.0);
    }
}

/// `wait` (plain only) and `wait_task` (a task when asked) run until stopped; each says
/// `stopped` when its work is dropped.
fn server(stopped: Sender<&'static str>) -> Server {
    let mut server = Server::new(Config::new("given-up", "0"));
    for (name, support) in [
        ("wait", TaskSupport::Forbidden),
        ("wait_task", TaskSupport::Optional),
    ] {
        let stopped = stopped.clone();
        let tool = Tool::new(name, support);
        server = server.tool(tool, move |ctx, _: Value| {
            let guard = Stopped(name, stopped.clone());
            async move {
                let _guard = guard;
                ctx.sleep(Duration::from_secs(3600)).await;
                Ok(CallToolResult::text("never"))
            }
        });
    }
    server
}

fn with_client(era: Era, body: impl AsyncFnOnce(Client, Receiver<&'static str>)) {
    let runtime: Arc<dyn Runtime> = Arc::new(taskwire_smol::Smol::default());
    let (stopped, stops) = async_channel::unbounded();
    let server = server(stopped);
    let client = in_process::connect(&runtime, server, ClientEra::Only(era), ClientBuilder::new);
    smol::block_on(async {
        client.initialize().await.expect("initialize");
        client.list_tools().await.expect("tools/list");
        let limit = smol::Timer::after(Duration::from_secs(20));
        let body = body(client, stops);
        futures::pin_mut!(body);
        if let futures::future::Either::Right(_) = futures::future::select(body, limit).await {
            panic!("the test body did not finish within 20 s");
        }
    });
}

/// Runs `call` for a moment, then drops it.
async fn start_and_drop<T>(call: impl std::future::Future<Output = T>) {
    let moment = smol::Timer::after(Duration::from_millis(200));
    futures::pin_mut!(call);
    assert!(
        matches!(
            futures::future::select(call, moment).await,
            futures::future::Either::Right(_)
        ),
        "the call ended on its own"
    );
}

#[test]
fn a_dropped_plain_call_stops_the_tool_in_both_eras() {
    for era in Era::ALL {
        with_client(era, async |client, stops| {
            start_and_drop(client.call_tool("wait", json!({}))).await;
            assert_eq!(stops.recv().await, Ok("wait"), "{era:?}");
            // The session goes on.
            assert!(client.get_task("nope").await.is_err());
        });
    }
}

#[test]
fn a_dropped_task_call_that_ran_plainly_stops_the_tool_but_a_task_runs_on() {
    for era in Era::ALL {
        with_client(era, async |client, stops| {
            // 2025-11-25 hands the call back at once (the tool forbids tasks); 2026-07-28,
            // where the server decides, only with its answer.
            start_and_drop(async {
                let plain = client.call_tool_as_task("wait", json!({}), None).await;
                let plain = plain.unwrap();
                assert!(plain.task.is_none(), "{era:?}");
                std::future::pending::<()>().await;
                drop(plain);
            })
            .await;
            assert_eq!(stops.recv().await, Ok("wait"), "{era:?}");

            let task = client
                .call_tool_as_task("wait_task", json!({}), None)
                .await
                .unwrap();
            let id = task.task.clone().expect("a task").id;
            drop(task);
            smol::Timer::after(Duration::from_millis(200)).await;
            assert!(stops.try_recv().is_err(), "{era:?}: the task was stopped");
            let info = client.get_task(&id).await.unwrap();
            assert_eq!(info.status, TaskStatus::Working, "{era:?}");
        });
    }
}
