//! A change the store refuses for good stalls nothing: a task is made terminal in the
//! database behind the server's back (as a second process on the file would), so the
//! server's completion of it is refused by the database's trigger; the `tasks/result` waiting
//! for that completion fails with -32603 naming the store, and 1,000 tasks made right after
//! are all answered and stored. On SQLite and on PostgreSQL.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use taskwire_driver::engine::{MessageKind, RequestId};
use taskwire_driver::{CallToolResult, Config, Runtime, Server, TaskStore, TaskSupport, Tool};
use taskwire_postgres::{PostgresOptions, PostgresStore};
use taskwire_sqlite::SqliteStore;

use crate::links::{initialize, send};

const TASKS: i64 = 1_000;

/// The database under a store, as another process sees it.
struct Behind {
    /// Makes task `id` cancelled.
    cancel: Box<dyn Fn(&str)>,
    /// How many tasks have this status.
    count: Box<dyn Fn(&str) -> i64>,
}

#[test]
fn on_sqlite_a_refused_change_fails_its_reply_alone_and_a_thousand_tasks_follow() {
    let dir = taskwire_tests::peers::target_dir().join("tmp/store");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("refused.db");
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
    }
    let store = SqliteStore::open(&path).expect("opens");
    let file = move || {
        let db = rusqlite::Connection::open(&path).expect("the file opens");
        db.busy_timeout(Duration::from_secs(10)).unwrap();
        db
    };
    let count_file = file.clone();
    let behind = Behind {
        cancel: Box::new(move |id| {
            file()
                .execute(
                    "UPDATE tasks SET status = 'cancelled',
                         snapshot = json_set(snapshot, '$.info.status', 'cancelled')
                     WHERE id = ?1",
                    [id],
                )
                .expect("cancelled behind the server's back");
        }),
        count: Box::new(move |status| {
            count_file()
                .query_row(
                    "SELECT count(*) FROM tasks WHERE status = ?1",
                    [status],
                    |row| row.get(0),
                )
                .expect("counted")
        }),
    };
    refused_change_stalls_nothing(Arc::new(store), &behind);
}

#[test]
fn on_postgres_a_refused_change_fails_its_reply_alone_and_a_thousand_tasks_follow() {
    let Some(url) = taskwire_tests::postgres::fresh_database("refused") else {
        return;
    };
    let options = PostgresOptions {
        replica: "refused".into(),
        ..PostgresOptions::default()
    };
    let store = PostgresStore::connect_with(&url, options).expect("connects");
    let count_url = url.clone();
    let behind = Behind {
        cancel: Box::new(move |id| {
            taskwire_tests::postgres::run_sql(
                &url,
                &[&format!(
                    "UPDATE taskwire_tasks SET status = 'cancelled',
                         snapshot = jsonb_set(snapshot::jsonb, '{{info,status}}', '\"cancelled\"')::text
                     WHERE id = '{id}'"
                )],
            );
        }),
        count: Box::new(move |status| pg_count(&count_url, status)),
    };
    refused_change_stalls_nothing(Arc::new(store), &behind);
}

/// `gated` (finishes when told) made as a task, then cancelled behind the server's back; its
/// result asked for; then it finishes, and `instant` is called `TASKS` times at once.
fn refused_change_stalls_nothing(store: Arc<dyn TaskStore>, behind: &Behind) {
    let name = store.name().to_owned();
    let (open, gate) = async_channel::bounded::<()>(1);
    let server = Server::new(Config::new("refused", "1.0"))
        .tool(
            Tool::new("gated", TaskSupport::Optional),
            move |_, _: Value| {
                let gate = gate.clone();
                async move {
                    let _ = gate.recv().await;
                    Ok(CallToolResult::text("finished late"))
                }
            },
        )
        .tool(
            Tool::new("instant", TaskSupport::Optional),
            |_, _: Value| async { Ok(CallToolResult::text("done")) },
        )
        .with_store(store);
    let runtime: Arc<dyn Runtime> = Arc::new(taskwire_smol::Smol::default());
    let handle = server.start(runtime);
    smol::block_on(async {
        let limit = smol::Timer::after(Duration::from_secs(60));
        let body = async {
            let session = handle
                .open("alice", 4 * TASKS as usize)
                .await
                .expect("open");
            initialize(&session).await;
            let call = |id: i64, tool: &str| {
                send(
                    &session,
                    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
                        "name": tool, "arguments": {}, "task": {"ttl": 600_000}}}),
                );
            };
            call(2, "gated");
            let created = crate::links::reply(&session, 2).await;
            let poisoned = created["result"]["task"]["taskId"]
                .as_str()
                .unwrap_or_else(|| panic!("a task: {created}"))
                .to_owned();
            (behind.cancel)(&poisoned);
            send(
                &session,
                json!({"jsonrpc": "2.0", "id": 3, "method": "tasks/result",
                       "params": {"taskId": poisoned}}),
            );
            open.send(()).await.expect("the tool waits");
            for id in 10..10 + TASKS {
                call(id, "instant");
            }
            let mut replies = HashMap::new();
            while replies.len() < 1 + TASKS as usize {
                let out = session.recv().await.expect("a message");
                if let MessageKind::Reply {
                    to: Some(RequestId::Number(id)),
                    ..
                } = out.kind
                {
                    replies.insert(id, serde_json::from_str::<Value>(&out.message).unwrap());
                }
            }
            let refused = &replies[&3];
            assert_eq!(refused["error"]["code"], -32603, "{refused}");
            let message = refused["error"]["message"].as_str().unwrap_or_default();
            assert!(
                message.contains(&name) && message.contains("refused"),
                "the error names the store and says it refused the change: {message}"
            );
            for id in 10..10 + TASKS {
                let created = &replies[&id];
                assert!(
                    created["result"]["task"]["taskId"].is_string(),
                    "every later task is stored and answered: {created}"
                );
            }
            // Each one's completion follows its creation into the database.
            let deadline = Instant::now() + Duration::from_secs(20);
            while (behind.count)("completed") < TASKS {
                assert!(
                    Instant::now() < deadline,
                    "{} of {TASKS} completions stored",
                    (behind.count)("completed")
                );
                smol::Timer::after(Duration::from_millis(50)).await;
            }
            assert_eq!((behind.count)("cancelled"), 1, "the database's word stands");
            handle.shutdown().await;
        };
        futures::pin_mut!(body);
        if let futures::future::Either::Right(_) = futures::future::select(body, limit).await {
            panic!("the test did not finish within 60 s: the writes stalled");
        }
    });
}

/// How many tasks of the database at `url` have `status`.
fn pg_count(url: &str, status: &str) -> i64 {
    taskwire_tests::postgres::with_client(url, async |client| {
        client
            .query_one(
                "SELECT count(*) FROM taskwire_tasks WHERE status = $1",
                &[&status],
            )
            .await
            .expect("counted")
            .get(0)
    })
}
