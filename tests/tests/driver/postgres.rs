//! `taskwire-postgres` against a real PostgreSQL server (`tests/postgres.sh`), each test on a
//! database of its own: the tables made on first use, a database of another schema version or
//! with foreign `taskwire_*` tables refused and left alone, a terminal task immutable in the
//! database too (a late change of it from another replica is refused, and fails nothing else
//! in its batch), a change PostgreSQL cannot store refused alone in the middle of a batch of
//! 1,000 good ones, and a connection lost under a running server made again by the next
//! write, losing nothing acknowledged. A batch is one statement (no `BEGIN`, no `COMMIT`),
//! whose notification names only the tasks it stored. A server that cannot be reached fails the store's
//! opening, naming it.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};
use taskwire_driver::{CallToolResult, Config, Runtime, Server, TaskStore, TaskSupport, Tool};
use taskwire_postgres::PostgresStore;
use taskwire_tests::postgres::{fresh_database, query_text, run_sql, try_sql};

use crate::links::{initialize, reply, send};

#[test]
fn an_unreachable_server_fails_the_opening_naming_it() {
    let error = PostgresStore::connect("postgres://nobody:secret@127.0.0.1:1/none").unwrap_err();
    let error = error.to_string();
    assert!(
        error.starts_with("postgres://nobody@127.0.0.1:1/none: cannot connect"),
        "named, without the password: {error}"
    );
}

#[test]
fn another_schema_version_is_refused_and_left_alone() {
    let Some(url) = fresh_database("version") else {
        return;
    };
    drop(PostgresStore::connect(&url).expect("the tables are made"));
    run_sql(&url, &["UPDATE taskwire_schema SET version = 7"]);
    let refused = PostgresStore::connect(&url).unwrap_err().to_string();
    assert!(refused.contains("schema version 7"), "{refused}");
    assert!(
        refused.contains("taskwire_test_version"),
        "names the database: {refused}"
    );
    assert!(
        try_sql(&url, "DO $$ BEGIN IF (SELECT version FROM taskwire_schema) <> 7 THEN RAISE 'changed'; END IF; END $$").is_ok(),
        "left alone"
    );
}

#[test]
fn foreign_taskwire_tables_are_refused() {
    let Some(url) = fresh_database("foreign") else {
        return;
    };
    run_sql(&url, &["CREATE TABLE taskwire_tasks (n integer)"]);
    let refused = PostgresStore::connect(&url).unwrap_err().to_string();
    assert!(refused.contains("not a taskwire task store"), "{refused}");
}

#[test]
fn a_terminal_task_keeps_its_status_and_outcome() {
    let Some(url) = fresh_database("terminal") else {
        return;
    };
    drop(PostgresStore::connect(&url).expect("the tables are made"));
    run_sql(
        &url,
        &[
            r#"INSERT INTO taskwire_tasks VALUES ('t', 'o', 'completed', NULL, 1, '{"outcome":{"result":1}}')"#,
        ],
    );
    // The same outcome written again (a retried write) is no change.
    try_sql(
        &url,
        r#"UPDATE taskwire_tasks SET snapshot = '{"outcome": {"result": 1}, "x": 2}' WHERE id = 't'"#,
    )
    .expect("allowed");
    for change in [
        "UPDATE taskwire_tasks SET status = 'working' WHERE id = 't'",
        r#"UPDATE taskwire_tasks SET snapshot = '{"outcome":{"result":2}}' WHERE id = 't'"#,
    ] {
        let refused = try_sql(&url, change).unwrap_err();
        assert!(refused.contains("terminal status"), "{change}: {refused}");
    }
}

/// A journal entry putting task `id` in `status` with `outcome`.
fn put(seq: u64, id: &str, status: &str, outcome: Value) -> taskwire_driver::engine::JournalEntry {
    put_saying(seq, id, status, outcome, None)
}

/// [`put`] with a status message.
fn put_saying(
    seq: u64,
    id: &str,
    status: &str,
    outcome: Value,
    message: Option<&str>,
) -> taskwire_driver::engine::JournalEntry {
    serde_json::from_value(json!({"seq": seq, "change": {"put": {
        "info": {"id": id, "status": status, "status_message": message, "created_at": 1,
                 "last_updated_at": seq, "ttl_ms": null, "poll_interval_ms": null},
        "owner": "o", "era": "2025-11-25",
        "input_kinds": {"elicitation": false, "sampling": false, "roots": false},
        "outcome": outcome}}}))
    .expect("an entry")
}

#[test]
fn a_change_to_a_task_finished_elsewhere_is_refused_and_fails_nothing_else() {
    let Some(url) = fresh_database("finished_first") else {
        return;
    };
    let store = PostgresStore::connect(&url).expect("connects");
    let done = json!({"result": {"value": {"content": []}, "is_error": false}});
    smol::block_on(async {
        store
            .write(Arc::from(vec![put(1, "t", "completed", done.clone())]))
            .await
            .expect("stored");
        // Another replica's cancel of `t`, late, in a batch with a new task.
        let late = json!({"error": {"code": -32602, "message": "Task was cancelled"}});
        let refused = store
            .write(Arc::from(vec![
                put(2, "t", "cancelled", late),
                put(3, "u", "working", Value::Null),
            ]))
            .await
            .expect("the batch is written");
        let seqs: Vec<u64> = refused.iter().map(|r| r.seq).collect();
        assert_eq!(seqs, [2], "{refused:?}");
        assert!(
            refused[0].reason.contains("task t is finished"),
            "{refused:?}"
        );
        let kept = refused[0]
            .stored
            .as_ref()
            .expect("the version stored comes with it");
        assert_eq!(kept.info.status.to_string(), "completed");
        assert_eq!(serde_json::to_value(&kept.outcome).unwrap(), done);
        // Written again as it is (a write retried after its commit was not heard): stored.
        let again = store
            .write(Arc::from(vec![put(4, "t", "completed", done.clone())]))
            .await
            .expect("written");
        assert!(again.is_empty(), "{again:?}");
        let stored = store.load().await.expect("load");
        let t = stored
            .iter()
            .find(|t| t.info.id.as_str() == "t")
            .expect("t");
        assert_eq!(t.info.status.to_string(), "completed");
        assert_eq!(serde_json::to_value(&t.outcome).unwrap(), done);
    });
    let runner = "DO $$ BEGIN IF (SELECT runner FROM taskwire_tasks WHERE id = 'u') IS NULL \
                  THEN RAISE 'no runner'; END IF; END $$";
    try_sql(&url, runner).expect("the new task names its runner");
}

#[test]
fn a_change_postgres_cannot_store_is_refused_alone_among_a_thousand() {
    let Some(url) = fresh_database("poisoned") else {
        return;
    };
    let store = PostgresStore::connect(&url).expect("connects");
    // PostgreSQL's text holds no NUL character: the change is refused whatever is tried.
    let mut batch = vec![put(1, "first", "working", Value::Null)];
    batch.push(put_saying(
        2,
        "poisoned",
        "working",
        Value::Null,
        Some("half\0way"),
    ));
    batch.extend((3..1003).map(|seq| put(seq, &format!("t{seq}"), "working", Value::Null)));
    smol::block_on(async {
        let refused = store
            .write(Arc::from(batch))
            .await
            .expect("the batch is written");
        let seqs: Vec<u64> = refused.iter().map(|r| r.seq).collect();
        assert_eq!(seqs, [2], "{refused:?}");
        assert!(
            refused[0].reason.contains("0x00"),
            "PostgreSQL's word: {refused:?}"
        );
        assert!(refused[0].stored.is_none(), "the change itself is refused");
        let stored = store.load().await.expect("load");
        assert_eq!(stored.len(), 1001, "every other task is stored");
        assert!(stored.iter().all(|t| t.info.id.as_str() != "poisoned"));
    });
}

#[test]
fn a_lost_connection_is_made_again_and_nothing_acknowledged_is_lost() {
    let Some(url) = fresh_database("reconnect") else {
        return;
    };
    let store = PostgresStore::connect(&url).expect("connects");
    let runtime: Arc<dyn Runtime> = Arc::new(taskwire_smol::Smol::default());
    let handle = Server::new(Config::new("reconnect", "1.0"))
        .tool(
            Tool::new("instant", TaskSupport::Optional),
            |_, _: Value| async { Ok(CallToolResult::text("done")) },
        )
        .with_store(store.clone())
        .start(runtime);
    let acknowledged = smol::block_on(async {
        let session = handle.open("alice", 64).await.expect("open");
        initialize(&session).await;
        let call = |id: i64| {
            send(
                &session,
                json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
                    "name": "instant", "arguments": {}, "task": {"ttl": 60000}}}),
            );
        };
        let mut acknowledged = Vec::new();
        call(2);
        let created = reply(&session, 2).await;
        acknowledged.push(
            created["result"]["task"]["taskId"]
                .as_str()
                .unwrap()
                .to_owned(),
        );
        // The server drops the store's connection (as a restart of the database would).
        run_sql(
            &url,
            &["SELECT pg_terminate_backend(pid) FROM pg_stat_activity
               WHERE datname = current_database() AND pid <> pg_backend_pid()"],
        );
        smol::Timer::after(Duration::from_millis(100)).await;
        for id in 3..6 {
            call(id);
            let answer = reply(&session, id).await;
            match answer["result"]["task"]["taskId"].as_str() {
                Some(task) => acknowledged.push(task.to_owned()),
                None => {
                    let message = answer["error"]["message"].as_str().unwrap_or_default();
                    assert!(
                        id == 3 && message.contains("taskwire_test_reconnect"),
                        "only the first write after the loss may fail, naming the store: {answer}"
                    );
                }
            }
        }
        assert!(acknowledged.len() >= 3, "{acknowledged:?}");
        handle.shutdown().await;
        acknowledged
    });
    let stored = smol::block_on(store.load()).expect("loads");
    for task in &acknowledged {
        assert!(
            stored.iter().any(|t| t.info.id.as_str() == task),
            "acknowledged task {task} is stored"
        );
    }
}

/// A journal entry putting task `id` as a front does: `working`, its work queued for a
/// worker (attempt 0).
fn queued(seq: u64, id: &str) -> taskwire_driver::engine::JournalEntry {
    let mut entry = serde_json::to_value(put(seq, id, "working", Value::Null)).expect("JSON");
    entry["change"]["put"]["request"] = json!({"tool": "slow", "attempt": 0});
    serde_json::from_value(entry).expect("an entry")
}

/// Connects to `url` as replica `name`, its lease 15 s.
fn replica(url: &str, name: &str) -> PostgresStore {
    let options = taskwire_postgres::PostgresOptions {
        replica: name.to_owned(),
        lease: Duration::from_secs(15),
    };
    PostgresStore::connect_with(url, options).expect("connects")
}

#[test]
fn queued_work_goes_to_one_claimer_whose_changes_are_refused_once_another_claims_it() {
    let Some(url) = fresh_database("claims") else {
        return;
    };
    let front = replica(&url, "front");
    let (one, two) = (replica(&url, "one"), replica(&url, "two"));
    smol::block_on(async {
        let refused = front
            .write(Arc::from(vec![queued(1, "t")]))
            .await
            .expect("stored");
        assert!(refused.is_empty(), "{refused:?}");
        let (a, b) = futures::join!(one.claim(8), two.claim(8));
        let (a, b) = (a.expect("claims"), b.expect("claims"));
        assert_eq!(a.len() + b.len(), 1, "claimed once: {a:?} {b:?}");
        let (claimer, other, name) = if a.is_empty() {
            (&two, &one, "two")
        } else {
            (&one, &two, "one")
        };
        assert!(
            other.claim(8).await.expect("claims").is_empty(),
            "nothing left"
        );
        // The claimer's changes go through under its claim.
        let step = put_saying(2, "t", "working", Value::Null, Some("step 1"));
        assert!(claimer
            .write(Arc::from(vec![step]))
            .await
            .expect("written")
            .is_empty());
        // Another process takes the claim over (as after the claimer's lease ran out).
        let taken = format!(
            "UPDATE taskwire_tasks SET runner = 'three', fence = fence + 1 WHERE id = 't' \
             AND runner = '{name}'"
        );
        let rows = {
            let url = url.clone();
            std::thread::spawn(move || try_sql(&url, &taken))
                .join()
                .unwrap()
        };
        rows.expect("taken over");
        let done = json!({"result": {"value": {"content": []}, "is_error": false}});
        let late = put_saying(3, "t", "completed", done, Some("done late"));
        let refused = claimer
            .write(Arc::from(vec![late]))
            .await
            .expect("the batch is written");
        assert_eq!(refused.len(), 1, "{refused:?}");
        assert!(
            refused[0]
                .reason
                .contains("no longer this process's to change"),
            "{refused:?}"
        );
        // The refusal carries the task as stored: the claimer's driver lets its work go.
        let lost = refused[0].stored.clone().expect("the task as stored");
        assert_eq!(lost.info.status.to_string(), "working");
        assert_eq!(lost.info.status_message.as_deref(), Some("step 1"));
    });
    let unchanged = "DO $$ BEGIN IF (SELECT status || ':' || message || ':' || runner \
                     FROM taskwire_tasks WHERE id = 't') <> 'working:step 1:three' \
                     THEN RAISE 'changed'; END IF; END $$";
    try_sql(&url, unchanged).expect("the late change left the task alone");
}

/// The tables as taskwire-postgres's schema version 1 made them (a database of an older
/// release), without the trigger (the upgrades leave it as it is).
const VERSION_1: &str = "
CREATE TABLE taskwire_schema (version integer NOT NULL);
INSERT INTO taskwire_schema (version) VALUES (1);
CREATE TABLE taskwire_tasks (
    id         text PRIMARY KEY,
    owner      text NOT NULL,
    status     text NOT NULL,
    message    text,
    updated_at bigint NOT NULL,
    snapshot   text NOT NULL
);";

/// A version-1 row of task `id` in `status` (`outcome` when finished, a request otherwise).
fn version_1_row(id: &str, status: &str, outcome: Value) -> String {
    let mut entry = serde_json::to_value(put(1, id, status, outcome)).expect("JSON");
    let snapshot = &mut entry["change"]["put"];
    if status == "working" {
        snapshot["request"] = json!({"tool": "slow"});
    }
    format!(
        "INSERT INTO taskwire_tasks VALUES ('{id}', 'o', '{status}', NULL, 1, '{}')",
        snapshot
    )
}

#[test]
fn a_version_1_database_is_upgraded_in_place_and_its_running_task_taken_over() {
    let Some(url) = fresh_database("upgrade_v1") else {
        return;
    };
    let done = json!({"result": {"value": {"content": []}, "is_error": false}});
    run_sql(
        &url,
        &[
            VERSION_1,
            &version_1_row("done", "completed", done),
            &version_1_row("running", "working", Value::Null),
        ],
    );
    let store = replica(&url, "a");
    smol::block_on(async {
        let loaded = store.load().await.expect("loads");
        let ids: Vec<&str> = loaded.iter().map(|t| t.info.id.as_str()).collect();
        assert_eq!(
            ids,
            ["done"],
            "the finished task; the running one is nobody's yet"
        );
        // Version 1 named no runner: the running task is taken over (run again, or failed),
        // not run as new work.
        let claimed = store.claim(8).await.expect("claims");
        assert_eq!(claimed.len(), 1, "{claimed:?}");
        assert_eq!(claimed[0].info.id.as_str(), "running");
        assert_eq!(claimed[0].request.as_ref().map(|r| r.attempt), Some(1));
    });
    let upgraded = "DO $$ BEGIN
        IF (SELECT version FROM taskwire_schema) <> 3 THEN RAISE 'not version 3'; END IF;
        IF (SELECT era || ':' || created_at FROM taskwire_tasks WHERE id = 'done')
           <> '2025-11-25:1' THEN RAISE 'no listing columns'; END IF;
        END $$";
    try_sql(&url, upgraded).expect("upgraded in place");
}

/// The tasks named in a notification on `taskwire_tasks` (`payload`: the writer, then a row
/// inline or an id per line).
fn notified_tasks(payload: &str) -> Vec<String> {
    payload
        .lines()
        .skip(1)
        .map(|line| match serde_json::from_str::<Value>(line) {
            Ok(row) => row[0].as_str().expect("an id first").to_owned(),
            Err(_) => line.to_owned(),
        })
        .collect()
}

#[test]
fn a_batch_notifies_only_the_tasks_it_stored() {
    let Some(url) = fresh_database("notified") else {
        return;
    };
    let store = PostgresStore::connect(&url).expect("connects");
    let done = json!({"result": {"value": {"content": []}, "is_error": false}});
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let heard = runtime.block_on(async {
        store
            .write(Arc::from(vec![put(1, "t", "completed", done)]))
            .await
            .expect("stored");
        let (client, mut connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
            .await
            .expect("connects");
        let (tell, mut notes) = tokio::sync::mpsc::unbounded_channel();
        tokio::spawn(async move {
            let mut messages = futures::stream::poll_fn(|cx| connection.poll_message(cx));
            while let Some(Ok(message)) = futures::StreamExt::next(&mut messages).await {
                if let tokio_postgres::AsyncMessage::Notification(note) = message {
                    let _ = tell.send(note.payload().to_owned());
                }
            }
        });
        client
            .batch_execute("LISTEN taskwire_tasks")
            .await
            .expect("listens");
        // A late cancel of `t` (finished first), refused, in a batch storing `u`.
        let late = json!({"error": {"code": -32602, "message": "Task was cancelled"}});
        let refused = store
            .write(Arc::from(vec![
                put(2, "t", "cancelled", late),
                put(3, "u", "working", Value::Null),
            ]))
            .await
            .expect("the batch is written");
        assert_eq!(refused.iter().map(|r| r.seq).collect::<Vec<_>>(), [2]);
        let mut heard = Vec::new();
        let mut wait = Duration::from_secs(5);
        while let Ok(Some(payload)) = tokio::time::timeout(wait, notes.recv()).await {
            heard.extend(notified_tasks(&payload));
            wait = Duration::from_millis(300);
        }
        heard
    });
    assert_eq!(heard, ["u"], "the refused task is not told");
}

#[test]
fn a_batch_is_one_statement() {
    let Some(url) = fresh_database("one_statement") else {
        return;
    };
    run_sql(&url, &["CREATE EXTENSION IF NOT EXISTS pg_stat_statements"]);
    let store = PostgresStore::connect(&url).expect("connects");
    let done = json!({"result": {"value": {"content": []}, "is_error": false}});
    smol::block_on(async {
        run_sql(&url, &["SELECT pg_stat_statements_reset()"]);
        let refused = store
            .write(Arc::from(vec![
                put(1, "a", "working", Value::Null),
                put(2, "b", "working", Value::Null),
                put(3, "c", "completed", done),
                put_saying(4, "d", "working", Value::Null, Some("going")),
            ]))
            .await
            .expect("the batch is written");
        assert!(refused.is_empty(), "{refused:?}");
    });
    // The statements a write may send, and how often each went (the store's other
    // connection takes answers: `DELETE FROM taskwire_answers`, not counted).
    let sent = query_text(
        &url,
        "SELECT calls || ' ' || left(query, 13) FROM pg_stat_statements
         WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
           AND query ~* '^\\s*(BEGIN|COMMIT|START|SAVEPOINT|RELEASE|ROLLBACK|WITH upserted)\
                         |pg_notify|(INSERT INTO|UPDATE) taskwire_(tasks|answers)|DELETE FROM taskwire_tasks'",
    );
    assert_eq!(sent, ["1 WITH upserted"]);
}
