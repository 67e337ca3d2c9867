//! A server with a durable store (`Server::with_store`), against a store in memory that
//! records its writes and can hold them back or fail them: a reply that reveals a change
//! waits for the write holding it, changes made during a write go in the next one, a failed
//! write fails the replies that waited for it and is retried, and a new server on the same
//! store restores the tasks (a task that was running fails, saying why, or resumes with its
//! tool's hook).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};
use taskwire_driver::engine::{Change, JournalEntry, TaskSnapshot};
use taskwire_driver::{
    BoxFuture, CallToolResult, Config, MessageSession, Refused, Runtime, Server, ServerHandle,
    StoreError, TaskStore, TaskSupport, Tool, ToolContext,
};

use crate::links::{initialize, reply, send};

/// What the test store holds and did.
#[derive(Default)]
struct Held {
    tasks: BTreeMap<String, TaskSnapshot>,
    /// The seqs of each write, in order.
    writes: Vec<Vec<u64>>,
    /// Writes to fail before the next one succeeds.
    fail: usize,
}

/// A store in memory. With a gate, each write waits for one message on it.
#[derive(Clone, Default)]
struct TestStore {
    held: Arc<Mutex<Held>>,
    gate: Option<async_channel::Receiver<()>>,
}

impl TaskStore for TestStore {
    fn name(&self) -> &str {
        "test-store"
    }

    fn load(&self) -> BoxFuture<Result<Vec<TaskSnapshot>, StoreError>> {
        let tasks = self.held.lock().unwrap().tasks.values().cloned().collect();
        Box::pin(async move { Ok(tasks) })
    }

    fn write(&self, entries: Arc<[JournalEntry]>) -> BoxFuture<Result<Vec<Refused>, StoreError>> {
        let (held, gate) = (self.held.clone(), self.gate.clone());
        Box::pin(async move {
            if let Some(gate) = gate {
                let _ = gate.recv().await;
            }
            let mut held = held.lock().unwrap();
            if held.fail > 0 {
                held.fail -= 1;
                return Err(StoreError::new("the disk is full"));
            }
            held.writes.push(entries.iter().map(|e| e.seq).collect());
            for entry in entries.iter() {
                match &entry.change {
                    Change::Put(task) => {
                        held.tasks.insert(task.info.id.to_string(), task.clone());
                    }
                    Change::Message { task, message, at } => {
                        let stored = held.tasks.get_mut(task.as_str()).expect("stored");
                        stored.info.status_message = message.clone();
                        stored.info.last_updated_at = *at;
                    }
                    Change::Delete { task, .. } => {
                        held.tasks.remove(task.as_str());
                    }
                    other => panic!("unknown change {other:?}"),
                }
            }
            Ok(Vec::new())
        })
    }
}

/// `wait`: sets a status message, sleeps `ms`, answers "waited".
fn server(store: TestStore) -> Server {
    Server::new(Config::new("store", "1.0"))
        .tool(
            Tool::new("wait", TaskSupport::Optional),
            |ctx, args: Value| async move {
                ctx.set_status("waiting").await;
                let ms = args["ms"].as_u64().unwrap_or(10);
                ctx.sleep(Duration::from_millis(ms)).await;
                Ok(CallToolResult::text("waited"))
            },
        )
        .with_store(store)
}

fn run(store: TestStore, body: impl AsyncFnOnce(ServerHandle)) {
    let runtime: Arc<dyn Runtime> = Arc::new(taskwire_smol::Smol::default());
    let handle = server(store).start(runtime);
    crate::links::within_20s(handle, body);
}

/// The reply to `id` if it comes within `ms`.
async fn reply_within(session: &MessageSession, id: i64, ms: u64) -> Option<Value> {
    let waited = async { Some(reply(session, id).await) };
    let late = async {
        smol::Timer::after(Duration::from_millis(ms)).await;
        None
    };
    futures::pin_mut!(waited, late);
    match futures::future::select(waited, late).await {
        futures::future::Either::Left((value, _)) => value,
        futures::future::Either::Right((none, _)) => none,
    }
}

async fn session(handle: &ServerHandle) -> MessageSession {
    let session = handle.open("alice", 256).await.expect("open");
    initialize(&session).await;
    session
}

fn call_as_task(session: &MessageSession, id: i64, ms: u64) {
    send(
        session,
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
            "name": "wait", "arguments": {"ms": ms}, "task": {"ttl": 60000}}}),
    );
}

#[test]
fn a_create_task_result_waits_for_the_write_that_stores_the_task() {
    let (open, gate) = async_channel::unbounded();
    let store = TestStore {
        gate: Some(gate),
        ..TestStore::default()
    };
    let held = store.held.clone();
    run(store, async |handle| {
        let session = session(&handle).await;
        call_as_task(&session, 2, 5_000);
        assert!(
            reply_within(&session, 2, 300).await.is_none(),
            "no CreateTaskResult before the task is stored"
        );
        assert!(held.lock().unwrap().tasks.is_empty());
        // Every write from here on goes through.
        for _ in 0..64 {
            open.try_send(()).unwrap();
        }
        let created = reply(&session, 2).await;
        let task = created["result"]["task"]["taskId"].as_str().unwrap();
        let held = held.lock().unwrap();
        let stored = &held.tasks[task];
        assert_eq!(stored.info.status.to_string(), "working");
        // The creation went alone in the first write; what changed meanwhile (the status
        // message) in a later one.
        assert_eq!(held.writes[0], [1]);
        assert_eq!(
            held.writes.concat(),
            (1..=held.writes.concat().len() as u64).collect::<Vec<_>>()
        );
    });
}

#[test]
fn a_failed_write_fails_the_reply_waiting_for_it_and_is_retried() {
    let store = TestStore::default();
    store.held.lock().unwrap().fail = 1;
    let held = store.held.clone();
    run(store, async |handle| {
        let session = session(&handle).await;
        call_as_task(&session, 2, 10);
        let refused = reply(&session, 2).await;
        assert_eq!(refused["error"]["code"], -32603, "{refused}");
        let message = refused["error"]["message"].as_str().unwrap();
        assert!(
            message.contains("test-store") && message.contains("the disk is full"),
            "the error names the store and says why: {message}"
        );
        // The task nobody learnt of is gone; the retried writes store it and then its
        // deletion.
        call_as_task(&session, 3, 10);
        let created = reply(&session, 3).await;
        let task = created["result"]["task"]["taskId"]
            .as_str()
            .expect("the next call is stored")
            .to_owned();
        let held = held.lock().unwrap();
        assert_eq!(held.fail, 0, "the failed write was retried");
        assert_eq!(held.tasks.keys().collect::<Vec<_>>(), [&task]);
    });
}

/// A server whose tool `slow` never finishes.
fn slow_server() -> Server {
    Server::new(Config::new("store", "1.0"))
        .tool(Tool::new("slow", TaskSupport::Optional), |_, _: Value| {
            futures::future::pending()
        })
}

/// A task of `slow` left running in `store` by a server that stopped.
fn a_running_task(store: &TestStore) -> String {
    let store = store.clone();
    let mut task = String::new();
    let runtime: Arc<dyn Runtime> = Arc::new(taskwire_smol::Smol::default());
    let handle = slow_server().with_store(store).start(runtime);
    smol::block_on(async {
        let session = session(&handle).await;
        send(
            &session,
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
                "name": "slow", "arguments": {"word": "again"}, "task": {"ttl": 60000}}}),
        );
        task = reply(&session, 2).await["result"]["task"]["taskId"]
            .as_str()
            .unwrap()
            .to_owned();
        handle.shutdown().await;
    });
    task
}

/// `slow` never finishes on the first server; the second resumes it (the arguments kept),
/// as its second attempt.
#[test]
fn a_resume_hook_runs_a_restored_task_again_with_its_arguments() {
    let store = TestStore::default();
    let task = a_running_task(&store);
    let stored = store.held.lock().unwrap().tasks[&task].request.clone();
    let stored = stored.expect("the store keeps the call of a running task");
    assert_eq!(stored.tool, "slow");
    let runtime: Arc<dyn Runtime> = Arc::new(taskwire_smol::Smol::default());
    let handle = slow_server()
        .resume("slow", |ctx: ToolContext, args: Value| async move {
            let task = ctx.task_id().unwrap_or_default().to_owned();
            Ok(CallToolResult::text(format!(
                "resumed {task} {} attempt {}",
                args["word"],
                ctx.attempt()
            )))
        })
        .with_store(store.clone())
        .start(runtime);
    smol::block_on(async {
        let session = session(&handle).await;
        send(
            &session,
            json!({"jsonrpc": "2.0", "id": 2, "method": "tasks/result", "params": {"taskId": task}}),
        );
        let result = reply(&session, 2).await;
        assert_eq!(
            result["result"]["content"][0]["text"],
            format!("resumed {task} \"again\" attempt 2"),
            "{result}"
        );
        handle.shutdown().await;
    });
    let held = store.held.lock().unwrap();
    assert!(
        held.tasks[&task].request.is_none(),
        "a finished task no longer keeps its call"
    );
}

/// A task whose work already ran `max_attempts` times fails instead of resuming.
#[test]
fn a_resume_past_the_attempt_limit_fails_the_task_saying_so() {
    let store = TestStore::default();
    let task = a_running_task(&store);
    let runtime: Arc<dyn Runtime> = Arc::new(taskwire_smol::Smol::default());
    let handle = slow_server()
        .resume("slow", |_, _: Value| async {
            Ok(CallToolResult::text("resumed"))
        })
        .max_attempts(1)
        .with_store(store)
        .start(runtime);
    smol::block_on(async {
        let session = session(&handle).await;
        send(
            &session,
            json!({"jsonrpc": "2.0", "id": 2, "method": "tasks/get", "params": {"taskId": task}}),
        );
        let got = reply(&session, 2).await;
        assert_eq!(got["result"]["status"], "failed", "{got}");
        let message = got["result"]["statusMessage"].as_str().unwrap_or_default();
        assert!(message.contains("the limit is 1 attempts"), "{got}");
        handle.shutdown().await;
    });
}

#[test]
fn a_new_server_on_the_store_restores_the_tasks_and_fails_the_running_ones() {
    let store = TestStore::default();
    let (done, running) = {
        let store = store.clone();
        let mut ids = (String::new(), String::new());
        run(store, async |handle| {
            let session = session(&handle).await;
            call_as_task(&session, 2, 10);
            call_as_task(&session, 3, 60_000);
            let done = reply(&session, 2).await["result"]["task"]["taskId"].clone();
            let running = reply(&session, 3).await["result"]["task"]["taskId"].clone();
            send(
                &session,
                json!({"jsonrpc": "2.0", "id": 4, "method": "tasks/result", "params": {"taskId": done}}),
            );
            assert_eq!(
                reply(&session, 4).await["result"]["content"][0]["text"],
                "waited"
            );
            ids = (
                done.as_str().unwrap().to_owned(),
                running.as_str().unwrap().to_owned(),
            );
            handle.shutdown().await;
        });
        ids
    };
    run(store, async |handle| {
        let session = session(&handle).await;
        send(
            &session,
            json!({"jsonrpc": "2.0", "id": 2, "method": "tasks/result", "params": {"taskId": done}}),
        );
        assert_eq!(
            reply(&session, 2).await["result"]["content"][0]["text"],
            "waited"
        );
        send(
            &session,
            json!({"jsonrpc": "2.0", "id": 3, "method": "tasks/get", "params": {"taskId": running}}),
        );
        let got = reply(&session, 3).await;
        assert_eq!(got["result"]["status"], "failed", "{got}");
        assert!(
            got["result"]["statusMessage"]
                .as_str()
                .is_some_and(|m| m.contains("was running when its server process stopped")),
            "{got}"
        );
    });
}
