//! A server in process on a durable store (`taskwire-sqlite`, `taskwire-postgres`): 10,000
//! tasks, made through one session with their calls in flight together (so the store writes
//! them in batches), survive a restart: a new server on the store lists every one of them,
//! completed, once.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};
use taskwire_driver::engine::{MessageKind, RequestId};
use taskwire_driver::TaskStore;
use taskwire_driver::{
    CallToolResult, Config, MessageSession, Runtime, Server, ServerHandle, TaskSupport, Tool,
};
use taskwire_postgres::PostgresStore;
use taskwire_sqlite::SqliteStore;

use crate::links::{initialize, send};

const TASKS: usize = 10_000;

/// Opens the store (again).
type Open = dyn Fn() -> Arc<dyn TaskStore>;

fn start(open: &Open) -> ServerHandle {
    let mut config = Config::new("restart", "1.0");
    config.tasks.page_size = 500;
    let store = open();
    let server = Server::new(config)
        .tool(
            Tool::new("instant", TaskSupport::Optional),
            |_, _: Value| async { Ok(CallToolResult::text("done")) },
        )
        .with_store(store);
    let runtime: Arc<dyn Runtime> = Arc::new(taskwire_smol::Smol::default());
    server.start(runtime)
}

/// The next `count` replies, with the ids they answer, skipping everything else.
async fn replies(session: &MessageSession, count: usize) -> Vec<(i64, Value)> {
    let mut got = Vec::with_capacity(count);
    while got.len() < count {
        let out = session.recv().await.expect("a message");
        if let MessageKind::Reply {
            to: Some(RequestId::Number(id)),
            ..
        } = out.kind
        {
            got.push((id, serde_json::from_str(&out.message).expect("JSON")));
        }
    }
    got
}

async fn session(handle: &ServerHandle) -> MessageSession {
    let session = handle.open("alice", 4 * TASKS).await.expect("open");
    initialize(&session).await;
    session
}

#[test]
fn ten_thousand_tasks_survive_a_restart_on_sqlite_and_list_once_each() {
    let dir = taskwire_tests::peers::target_dir().join("tmp/store");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("ten-thousand.db");
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
    }
    survive_a_restart(&move || Arc::new(SqliteStore::open(&path).expect("the store opens")));
}

#[test]
fn ten_thousand_tasks_survive_a_restart_on_postgres_and_list_once_each() {
    let Some(url) = taskwire_tests::postgres::fresh_database("restart") else {
        return;
    };
    survive_a_restart(&move || Arc::new(PostgresStore::connect(&url).expect("the store connects")));
}

fn survive_a_restart(open: &Open) {
    smol::block_on(async {
        let limit = smol::Timer::after(Duration::from_secs(120));
        let body = async {
            let made: BTreeSet<String> = {
                let handle = start(open);
                let session = session(&handle).await;
                for id in 1..=TASKS {
                    send(
                        &session,
                        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
                            "name": "instant", "arguments": {}, "task": {"ttl": 3_600_000}}}),
                    );
                }
                let made = replies(&session, TASKS)
                    .await
                    .into_iter()
                    .map(|(_, r)| r["result"]["task"]["taskId"].as_str().unwrap().to_owned())
                    .collect();
                handle.shutdown().await;
                made
            };
            assert_eq!(made.len(), TASKS);
            // A reply waits only for what it reveals: each task's completion may still be
            // on its way to the file while the server stops (its last write is waited for).
            // (Dropped before the server starts again: a PostgreSQL store of the same
            // replica name waits for it to go.)
            let observer = open();
            loop {
                let stored = observer.load().await.expect("load");
                let done = stored
                    .iter()
                    .filter(|t| t.info.status.to_string() == "completed")
                    .count();
                if done >= TASKS {
                    break;
                }
                smol::Timer::after(Duration::from_millis(50)).await;
            }
            drop(observer);

            let handle = start(open);
            let session = session(&handle).await;
            let mut listed = Vec::new();
            let mut cursor: Option<String> = None;
            for page in 1.. {
                let mut params = json!({});
                if let Some(cursor) = &cursor {
                    params["cursor"] = json!(cursor);
                }
                send(
                    &session,
                    json!({"jsonrpc": "2.0", "id": page, "method": "tasks/list", "params": params}),
                );
                let (_, reply) = replies(&session, 1).await.remove(0);
                for task in reply["result"]["tasks"].as_array().expect("tasks") {
                    assert_eq!(task["status"], "completed", "{task}");
                    listed.push(task["taskId"].as_str().unwrap().to_owned());
                }
                match reply["result"]["nextCursor"].as_str() {
                    Some(next) => cursor = Some(next.to_owned()),
                    None => break,
                }
            }
            // Exactly the tasks made, once each.
            let unique: BTreeSet<String> = listed.iter().cloned().collect();
            assert_eq!(unique.len(), listed.len(), "none twice");
            assert_eq!(unique, made);
        };
        futures::pin_mut!(body);
        if let futures::future::Either::Right(_) = futures::future::select(body, limit).await {
            panic!("the test did not finish within 120 s");
        }
    });
}

/// A task past its retention leaves the store: while the server runs (its expiry deadline
/// writes the deletion) and at start (a server started after a task's retention ran out,
/// with the process down, deletes it as it loads).
#[test]
fn expired_tasks_leave_the_sqlite_store_while_running_and_at_start() {
    let dir = taskwire_tests::peers::target_dir().join("tmp/store");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("expiry.db");
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
    }
    let file = path.clone();
    let open = move || -> Arc<dyn TaskStore> { Arc::new(SqliteStore::open(&path).unwrap()) };
    // The file as another program reads it: a store is its server's alone.
    let stored = || -> BTreeSet<String> {
        let db = rusqlite::Connection::open(&file).expect("the file opens");
        db.busy_timeout(Duration::from_secs(10)).unwrap();
        let mut ids = db.prepare("SELECT id FROM tasks").unwrap();
        let ids = ids.query_map([], |row| row.get(0)).unwrap();
        ids.map(|id| id.expect("an id")).collect()
    };
    let call = |session: &MessageSession, id: i64, ttl: u64| {
        send(
            session,
            json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
                "name": "instant", "arguments": {}, "task": {"ttl": ttl}}}),
        );
    };
    let (soon, later) = smol::block_on(async {
        let handle = start(&open);
        let session = session(&handle).await;
        call(&session, 2, 1_000);
        call(&session, 3, 2_500);
        call(&session, 4, 600_000);
        let made = replies(&session, 3).await;
        let id = |n: i64| {
            made.iter().find(|(id, _)| *id == n).unwrap().1["result"]["task"]["taskId"]
                .as_str()
                .unwrap()
                .to_owned()
        };
        let (soon, later, kept) = (id(2), id(3), id(4));
        // Past the first one's retention, with the server running.
        smol::Timer::after(Duration::from_millis(1_500)).await;
        let now = stored();
        assert!(!now.contains(&soon), "its expiry deleted it: {now:?}");
        assert!(now.contains(&later) && now.contains(&kept), "{now:?}");
        handle.shutdown().await;
        (soon, later)
    });
    // Past the second one's retention, with the server down: still stored.
    std::thread::sleep(Duration::from_millis(1_500));
    assert!(stored().contains(&later));
    smol::block_on(async {
        let handle = start(&open);
        let session = session(&handle).await;
        send(
            &session,
            json!({"jsonrpc": "2.0", "id": 2, "method": "tasks/get", "params": {"taskId": later}}),
        );
        let (_, got) = replies(&session, 1).await.remove(0);
        assert_eq!(got["error"]["code"], -32602, "expired: {got}");
        handle.shutdown().await;
    });
    // The server's last writes may still be on their way after shutdown() returns.
    let mut left = stored();
    for _ in 0..50 {
        if !left.contains(&later) {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
        left = stored();
    }
    assert!(
        !left.contains(&later) && !left.contains(&soon) && left.len() == 1,
        "the start deleted it: {left:?}"
    );
}
