//! Two `task-server --http` processes sharing one PostgreSQL database as replicas, spoken to
//! in 2026-07-28 (stateless: a load balancer may send each request anywhere): a task made on
//! one is polled and read on the other; a cancel taken by one stops the work on the other; a
//! process killed mid-task has its task failed by the other once its lease runs out; 1,000
//! tasks made across both are each stored once and read as completed on the replica that did
//! not make them; the database restarted under both (a cluster of the test's own) fails the
//! calls it caught, clearly, and loses no task either acknowledged.

use std::time::{Duration, Instant};

use serde_json::{json, Value};
use taskwire_demo::tools::DEMO_TASK;
use taskwire_tests::fleet;
use taskwire_tests::peers::http::HttpServer;
use taskwire_tests::postgres::{fresh_database, try_sql, OwnCluster};

use crate::common::{messages, TestServer};

/// A replica: `task-server --http` on `database` as `name`, its steps 100 ms, its lease
/// `lease_ms`, its debug log in a file of its database's and name's own (the tests run
/// together); and a client of it.
fn replica(database: &str, name: &str, lease_ms: u64) -> (HttpServer, TestServer) {
    replica_stepping(database, name, lease_ms, 100)
}

/// [`replica`] with steps of `step_ms`.
fn replica_stepping(
    database: &str,
    name: &str,
    lease_ms: u64,
    step_ms: u64,
) -> (HttpServer, TestServer) {
    let server = fleet::http_server(database, name, "both", lease_ms, step_ms);
    let client = TestServer::client_of(&server.url);
    (server, client)
}

/// `method` with `params` on `server` (2026-07-28, request `id`); the reply.
pub(crate) async fn ask(server: &TestServer, id: u64, method: &str, params: Value) -> Value {
    messages(server.stateless(id, method, params).send().await)
        .await
        .remove(0)
}

/// Makes a `tool` task on `server`; its id.
pub(crate) async fn make_task(server: &TestServer, id: u64, tool: &str) -> String {
    make_task_with(server, id, tool, json!({})).await
}

/// [`make_task`] with `arguments`.
pub(crate) async fn make_task_with(
    server: &TestServer,
    id: u64,
    tool: &str,
    arguments: Value,
) -> String {
    let created = ask(
        server,
        id,
        "tools/call",
        json!({"name": tool, "arguments": arguments}),
    )
    .await;
    created["result"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("a task: {created}"))
        .to_owned()
}

/// Polls `task` on `server` until its status is `status` (within 15 s); the last `tasks/get`
/// reply.
pub(crate) async fn until_status(server: &TestServer, task: &str, status: &str) -> Value {
    until(server, task, status, |got| {
        got["result"]["status"] == status
    })
    .await
}

/// Polls `task` on `server` until its `tasks/get` reply is `what` (`done`; within 15 s).
pub(crate) async fn until(
    server: &TestServer,
    task: &str,
    what: &str,
    done: impl Fn(&Value) -> bool,
) -> Value {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let got = ask(server, 9, "tasks/get", json!({"taskId": task})).await;
        if done(&got) {
            return got;
        }
        assert!(
            Instant::now() < deadline,
            "{task} is not {what} within 15 s: {got}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[test]
fn a_task_made_by_one_process_is_polled_and_read_on_the_other() {
    let Some(database) = fresh_database("http_replicas_read") else {
        return;
    };
    let (_a, on_a) = replica(&database, "a", 15_000);
    let (_b, on_b) = replica(&database, "b", 15_000);
    on_a.run(async {
        let task = make_task(&on_a, 1, "long_running_task").await;
        let got = ask(&on_b, 2, "tasks/get", json!({"taskId": task})).await;
        assert_eq!(got["result"]["status"], "working", "{got}");
        let done = until_status(&on_b, &task, "completed").await;
        assert_eq!(
            done["result"]["result"]["content"][0]["text"], "任务完成！",
            "{done}"
        );
        // Both read the same task (only the poll interval each suggests is their own).
        let mut made_on_a = ask(&on_a, 3, "tasks/get", json!({"taskId": task})).await;
        let mut done = done;
        for reply in [&mut made_on_a, &mut done] {
            reply["result"]["pollIntervalMs"].take();
        }
        assert_eq!(made_on_a["result"], done["result"]);
    });
}

#[test]
fn a_cancel_taken_by_one_process_stops_the_work_on_the_other() {
    let Some(database) = fresh_database("http_replicas_cancel") else {
        return;
    };
    // Steps of 2 s: the cancel is taken long before the work could finish, even on a slow
    // machine (a cancel racing the finish across replicas is a documented limit).
    let (a, on_a) = replica_stepping(&database, "a", 15_000, 2_000);
    let (_b, on_b) = replica_stepping(&database, "b", 15_000, 2_000);
    on_a.run(async {
        let task = make_task(&on_a, 1, "long_running_task").await;
        let cancelled = ask(&on_b, 2, "tasks/cancel", json!({"taskId": task})).await;
        assert!(cancelled.get("result").is_some(), "{cancelled}");
        until_status(&on_a, &task, "cancelled").await;
        let deadline = Instant::now() + Duration::from_secs(5);
        while !a.log().contains("reason=Cancelled") {
            assert!(
                Instant::now() < deadline,
                "the work did not stop on a:{}",
                a.log()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    });
}

#[test]
fn a_process_killed_mid_task_has_its_work_resumed_by_the_other_after_its_lease() {
    let Some(database) = fresh_database("http_replicas_resume") else {
        return;
    };
    let (a, on_a) = replica(&database, "a", 1_000);
    let (_b, on_b) = replica(&database, "b", 1_000);
    on_a.run(async {
        let task = make_task(&on_a, 1, "long_running_task").await;
        until_status(&on_b, &task, "working").await;
        drop(a); // SIGKILL
        let killed = Instant::now();
        // The demo tool's resume hook starts its steps over on B, saying so.
        let second = |got: &Value| {
            (got["result"]["statusMessage"].as_str()).is_some_and(|m| m.contains("第 2 次尝试"))
        };
        until(&on_b, &task, "resumed as its second attempt", second).await;
        assert!(
            killed.elapsed() >= Duration::from_millis(500),
            "resumed before the lease could run out"
        );
        until_status(&on_b, &task, "completed").await;
    });
}

#[test]
fn a_process_killed_mid_task_without_a_resume_hook_has_it_failed_by_the_other() {
    let Some(database) = fresh_database("http_replicas_lease") else {
        return;
    };
    let (a, on_a) = replica(&database, "a", 1_000);
    let (_b, on_b) = replica(&database, "b", 1_000);
    on_a.run(async {
        let steps = json!({"steps": 20});
        let task = make_task_with(&on_a, 1, "progress_task", steps).await;
        until_status(&on_b, &task, "working").await;
        drop(a); // SIGKILL
        let killed = Instant::now();
        let failed = until_status(&on_b, &task, "failed").await;
        assert!(
            failed["result"]["statusMessage"]
                .as_str()
                .is_some_and(|m| m.contains("lease")),
            "{failed}"
        );
        assert!(
            killed.elapsed() >= Duration::from_millis(500),
            "failed before the lease could run out"
        );
    });
}

#[test]
fn a_thousand_tasks_across_two_processes_are_each_stored_once_and_read_on_the_other() {
    const TASKS: u64 = 1_000;
    let Some(database) = fresh_database("http_replicas_thousand") else {
        return;
    };
    let (_a, on_a) = replica(&database, "a", 15_000);
    let (_b, on_b) = replica(&database, "b", 15_000);
    let replicas = [&on_a, &on_b];
    on_a.run(async {
        let mut made: Vec<(usize, String)> = Vec::new();
        let ids: Vec<u64> = (1..=TASKS).collect();
        for batch in ids.chunks(32) {
            let calls = batch.iter().map(|&id| {
                let maker = usize::from(id % 2 == 1);
                async move { (maker, make_task(replicas[maker], id, "instant_task").await) }
            });
            made.extend(futures::future::join_all(calls).await);
        }
        let distinct: std::collections::BTreeSet<&str> =
            made.iter().map(|(_, task)| task.as_str()).collect();
        assert_eq!(distinct.len(), made.len(), "task ids repeat");
        for (maker, task) in &made {
            let other = replicas[1 - maker];
            until_status(other, task, "completed").await;
        }
    });
    // (Besides the demo server's own `demo-task`.)
    let counted = format!(
        "DO $$ BEGIN IF (SELECT count(*) FROM taskwire_tasks
                         WHERE status = 'completed' AND id <> '{DEMO_TASK}') <> {TASKS}
         THEN RAISE 'not {TASKS} completed tasks'; END IF; END $$"
    );
    try_sql(&database, &counted).expect("each task stored once, completed");
}

#[test]
fn the_database_restarted_mid_run_fails_what_it_caught_and_loses_nothing_acknowledged() {
    let Some(cluster) = OwnCluster::start("replicas", 55433) else {
        return;
    };
    let database = cluster.fresh_database("replicas_restart");
    // Tasks of about 2 s, so that the ones made before the restart run through it.
    let (_a, on_a) = replica_stepping(&database, "a", 15_000, 700);
    let (_b, on_b) = replica_stepping(&database, "b", 15_000, 700);
    on_a.run(async {
        let mut before = Vec::new();
        for id in 1..=4 {
            before.push(make_task(&on_a, id, "long_running_task").await);
        }
        restart_under(&cluster, &on_a, &on_b).await;
        for task in &before {
            let done = until_status(&on_b, task, "completed").await;
            assert_eq!(done["result"]["result"]["content"][0]["text"], "任务完成！");
        }
    });
}

#[test]
fn finished_tasks_let_go_are_read_back_got_and_listed_from_the_database() {
    let Some(database) = fresh_database("http_replicas_read_back") else {
        return;
    };
    let server = HttpServer::start(
        |port| {
            fleet::server_argv(&database, "alone", 15_000, 100).args(&[
                "--keep-finished",
                "2",
                "--http",
                &format!("127.0.0.1:{port}"),
            ])
        },
        Some(&fleet::log_of(&database, "alone")),
    );
    let client = TestServer::client_of(&server.url);
    client.run(async {
        let session = client.open_session().await;
        let mut tasks = Vec::new();
        for _ in 0..6 {
            let made = client
                .call_as_task(&session, "instant_task", json!({}))
                .send()
                .await;
            tasks.push(crate::common::task_id(made).await);
        }
        // Each finished at once; the server holds the newest two. The oldest, changed in
        // the database behind its back, shows the change: it was read back.
        tokio::time::sleep(Duration::from_millis(300)).await;
        let first = tasks[0].as_str().expect("an id").to_owned();
        let sql =
            format!("UPDATE taskwire_tasks SET message = 'from the store' WHERE id = '{first}'");
        let changed = {
            let database = database.clone();
            tokio::task::spawn_blocking(move || try_sql(&database, &sql)).await
        };
        changed.expect("joined").expect("updated");
        let get = json!({"jsonrpc": "2.0", "id": 50, "method": "tasks/get",
            "params": {"taskId": first}});
        let got = messages(client.in_session(&session, &get).send().await).await;
        assert_eq!(got[0]["result"]["status"], "completed", "{got:?}");
        assert_eq!(
            got[0]["result"]["statusMessage"], "from the store",
            "{got:?}"
        );
        let result = messages(client.ask_result(&session, 51, &tasks[1]).send().await).await;
        assert!(result[0]["result"]["content"].is_array(), "{result:?}");
        // The listing is read from the database: every task, in creation order.
        let list = json!({"jsonrpc": "2.0", "id": 52, "method": "tasks/list", "params": {}});
        let listed = messages(client.in_session(&session, &list).send().await).await;
        let ids: Vec<&Value> = listed[0]["result"]["tasks"]
            .as_array()
            .unwrap_or_else(|| panic!("a list: {listed:?}"))
            .iter()
            .map(|t| &t["taskId"])
            .collect();
        assert_eq!(ids, tasks.iter().collect::<Vec<_>>(), "{listed:?}");
    });
}

/// Restarts `cluster` under the processes `a` and `b` serve: a call `a` takes while it is
/// down fails with -32603 naming the store; once it is back, `b` takes a task again (within
/// 20 s: the processes connect again on their own), which completes, as `a` reads it.
pub(crate) async fn restart_under(cluster: &OwnCluster, a: &TestServer, b: &TestServer) {
    cluster.stop();
    let instant = json!({"name": "instant_task", "arguments": {}});
    let caught = ask(a, 10, "tools/call", instant.clone()).await;
    assert_eq!(caught["error"]["code"], -32603, "{caught}");
    let message = caught["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("could not save") && message.contains("postgres://"),
        "names the store: {caught}"
    );
    cluster.start_again();
    let deadline = Instant::now() + Duration::from_secs(20);
    let after = loop {
        let made = ask(b, 11, "tools/call", instant.clone()).await;
        if let Some(task) = made["result"]["taskId"].as_str() {
            break task.to_owned();
        }
        assert!(
            Instant::now() < deadline,
            "no task taken after the restart: {made}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    until_status(a, &after, "completed").await;
}
