//! A fleet on one PostgreSQL database: `task-server --role front` processes take the requests
//! (directly, or behind HAProxy balancing round-robin) and store each task's work as queued;
//! `task-server --role worker` processes claim it and run it. Work waits queued until a worker
//! takes it; 1,000 tasks through the balancer each run once; a worker killed mid-task has its
//! resumable work run again by the other (and its other work failed, saying it was lost); a
//! worker stopped gracefully gives its work back at once (the other resumes it long before its
//! lease runs out); a worker paused past its lease cannot overwrite what the other stored; a cancel through
//! another front stops the work on the worker; a question is shown and answered through
//! another front; a front killed leaves its clients going through the others; the database
//! restarted under the fleet fails what it caught, clearly, and loses nothing acknowledged.

use std::time::{Duration, Instant};

use serde_json::{json, Value};
use taskwire_demo::tools::DEMO_TASK;
use taskwire_tests::fleet::{self, balancer, Worker};
use taskwire_tests::peers::http::HttpServer;
use taskwire_tests::postgres::{fresh_database, query_text, try_sql};

use crate::common::TestServer;
use crate::replicas::{ask, make_task, make_task_with, restart_under, until, until_status};

/// The status message of a task waiting for a worker (the driver's).
const QUEUED: &str = "waiting for a worker";

/// A front on `database` as `name`, and a client of it.
fn front(database: &str, name: &str, lease_ms: u64, step_ms: u64) -> (HttpServer, TestServer) {
    let server = fleet::front(database, name, lease_ms, step_ms);
    let client = TestServer::client_of(&server.url);
    (server, client)
}

/// HAProxy in front of `fronts`, and a client of it.
fn through(database: &str, fronts: &[&HttpServer]) -> (HttpServer, TestServer) {
    let server = balancer(database, fronts);
    let client = TestServer::client_of(&server.url);
    (server, client)
}

/// The runner (the worker holding its claim) of `task`, as stored; empty when none.
async fn runner_of(database: &str, task: &str) -> String {
    let sql = format!("SELECT runner FROM taskwire_tasks WHERE id = '{task}'");
    let database = database.to_owned();
    let rows = tokio::task::spawn_blocking(move || query_text(&database, &sql))
        .await
        .expect("the query runs");
    rows.into_iter().next().unwrap_or_default()
}

/// Polls `task` until its status message contains `text`.
async fn until_saying(server: &TestServer, task: &str, text: &str) -> Value {
    let says = |got: &Value| {
        got["result"]["statusMessage"]
            .as_str()
            .is_some_and(|m| m.contains(text))
    };
    until(server, task, &format!("saying {text:?}"), says).await
}

/// Runs `statement` on `database`, off the test's runtime.
async fn sql(database: &str, statement: String) -> Result<(), String> {
    let database = database.to_owned();
    tokio::task::spawn_blocking(move || try_sql(&database, &statement))
        .await
        .expect("the statement runs")
}

/// `task`'s `tasks/get` result without what each front says for itself (the poll interval).
fn stored(mut got: Value) -> Value {
    got["result"]["pollIntervalMs"].take();
    got["result"].take()
}

#[test]
fn a_task_waits_queued_until_a_worker_takes_it() {
    let Some(database) = fresh_database("fleet_queue") else {
        return;
    };
    let (_front, on_front) = front(&database, "front", 15_000, 100);
    on_front.run(async {
        let task = make_task(&on_front, 1, "long_running_task").await;
        let got = ask(&on_front, 2, "tasks/get", json!({"taskId": task})).await;
        assert_eq!(got["result"]["status"], "working", "{got}");
        assert!(
            got["result"]["statusMessage"]
                .as_str()
                .is_some_and(|m| m.contains(QUEUED)),
            "says it waits: {got}"
        );
        // No process runs work: it stays queued.
        tokio::time::sleep(Duration::from_millis(500)).await;
        let still = ask(&on_front, 3, "tasks/get", json!({"taskId": task})).await;
        assert_eq!(stored(still), stored(got.clone()), "nothing ran it");
        assert_eq!(runner_of(&database, &task).await, "", "queued: no runner");

        let worker = Worker::start(&database, "worker", 15_000, 100);
        let done = until_status(&on_front, &task, "completed").await;
        assert_eq!(
            done["result"]["result"]["content"][0]["text"], "任务完成！",
            "{done}"
        );
        assert!(
            worker.log().contains("a claimed task's work starts"),
            "{}",
            worker.log()
        );
    });
}

#[test]
fn a_thousand_tasks_through_the_balancer_each_run_once_on_a_worker() {
    const TASKS: u64 = 1_000;
    let Some(database) = fresh_database("fleet_thousand") else {
        return;
    };
    let fronts: Vec<_> = (0..3)
        .map(|i| front(&database, &format!("front{i}"), 15_000, 100))
        .collect();
    let workers: Vec<_> = (0..2)
        .map(|i| Worker::start(&database, &format!("worker{i}"), 15_000, 100))
        .collect();
    let servers: Vec<&HttpServer> = fronts.iter().map(|(server, _)| server).collect();
    let (_haproxy, through) = through(&database, &servers);
    through.run(async {
        let mut made: Vec<String> = Vec::new();
        let ids: Vec<u64> = (1..=TASKS).collect();
        for batch in ids.chunks(32) {
            let calls = batch
                .iter()
                .map(|&id| make_task(&through, id, "instant_task"));
            made.extend(futures::future::join_all(calls).await);
        }
        let distinct: std::collections::BTreeSet<&str> = made.iter().map(String::as_str).collect();
        assert_eq!(distinct.len(), made.len(), "task ids repeat");
        for task in &made {
            until_status(&through, task, "completed").await;
        }
    });
    let counted = format!(
        "DO $$ BEGIN IF (SELECT count(*) FROM taskwire_tasks
                         WHERE status = 'completed' AND id <> '{DEMO_TASK}') <> {TASKS}
         THEN RAISE 'not {TASKS} completed tasks'; END IF; END $$"
    );
    try_sql(&database, &counted).expect("each task stored once, completed");
    // Each task's work ran once, on one worker.
    let mut runs = std::collections::BTreeMap::<String, usize>::new();
    for worker in &workers {
        for line in worker.log().lines() {
            if line.contains("a claimed task's work starts") {
                let task = line.split("task=").nth(1).unwrap_or("").split(' ').next();
                *runs.entry(task.unwrap_or("").to_owned()).or_default() += 1;
            }
        }
    }
    assert_eq!(runs.len() as u64, TASKS, "every task ran on a worker");
    let twice: Vec<_> = runs.iter().filter(|(_, n)| **n > 1).collect();
    assert!(twice.is_empty(), "tasks run more than once: {twice:?}");
}

#[test]
fn a_worker_killed_mid_task_has_its_resumable_work_run_again_by_the_other() {
    let Some(database) = fresh_database("fleet_kill") else {
        return;
    };
    let (_front, on_front) = front(&database, "front", 1_000, 300);
    // One worker first, so that both tasks run on it and one kill catches both; the other
    // starts once they run.
    let killed_worker = Worker::start(&database, "worker0", 1_000, 300);
    on_front.run(async {
        let resumable = make_task(&on_front, 1, "long_running_task").await;
        let steps = json!({"steps": 50});
        let lost = make_task_with(&on_front, 2, "progress_task", steps).await;
        until_saying(&on_front, &resumable, "处理步骤 1").await;
        until_status(&on_front, &lost, "working").await;
        for task in [&resumable, &lost] {
            assert_eq!(runner_of(&database, task).await, "worker0", "{task}");
        }
        let survivor = Worker::start(&database, "worker1", 1_000, 300);
        killed_worker.signal("KILL");
        let killed = Instant::now();
        let resumed = until_saying(&on_front, &resumable, "第 2 次尝试").await;
        assert!(
            killed.elapsed() >= Duration::from_millis(500),
            "run again before the lease could run out: {resumed}"
        );
        let failed = until_status(&on_front, &lost, "failed").await;
        assert!(
            failed["result"]["statusMessage"]
                .as_str()
                .is_some_and(|m| m.contains("work was lost")),
            "{failed}"
        );
        let done = until_status(&on_front, &resumable, "completed").await;
        assert_eq!(done["result"]["result"]["content"][0]["text"], "任务完成！");
        assert_eq!(
            runner_of(&database, &resumable).await,
            "",
            "finished: no runner"
        );
        assert!(
            survivor.log().contains("a task's work resumes"),
            "{}",
            survivor.log()
        );
    });
}

#[test]
fn a_worker_stopped_gracefully_gives_its_work_back_at_once() {
    let Some(database) = fresh_database("fleet_hand_back") else {
        return;
    };
    // A lease far longer than the test waits: only the work given back can be resumed.
    let (_front, on_front) = front(&database, "front", 60_000, 1_000);
    let workers = [
        Worker::start(&database, "worker0", 60_000, 1_000),
        Worker::start(&database, "worker1", 60_000, 1_000),
    ];
    on_front.run(async {
        let task = make_task(&on_front, 1, "long_running_task").await;
        until_saying(&on_front, &task, "处理步骤 1").await;
        let runner = runner_of(&database, &task).await;
        let stopping = workers
            .iter()
            .find(|w| w.name == runner)
            .expect("a worker runs it");
        stopping.signal("TERM");
        let stopped = Instant::now();
        until_saying(&on_front, &task, "第 2 次尝试").await;
        assert!(
            stopped.elapsed() < Duration::from_secs(10),
            "resumed {:?} after the stop",
            stopped.elapsed()
        );
        stopping
            .until_logged("the work this process ran is given back for others to take")
            .await;
        until_status(&on_front, &task, "completed").await;
    });
}

#[test]
fn a_worker_paused_past_its_lease_cannot_overwrite_what_the_other_stored() {
    let Some(database) = fresh_database("fleet_pause") else {
        return;
    };
    let (_front, on_front) = front(&database, "front", 1_000, 600);
    let workers = [
        Worker::start(&database, "worker0", 1_000, 600),
        Worker::start(&database, "worker1", 1_000, 600),
    ];
    on_front.run(async {
        let task = make_task(&on_front, 1, "long_running_task").await;
        until_saying(&on_front, &task, "处理步骤 1").await;
        let runner = runner_of(&database, &task).await;
        let paused = workers.iter().find(|w| w.name == runner).expect("a runner");
        paused.signal("STOP");
        until_saying(&on_front, &task, "第 2 次尝试").await;
        // Back while the other runs the task: its tool goes on where it stopped, and its
        // lease is renewed, but what it writes of the task is refused, and its work there
        // stops. The task's status messages stay the second attempt's to the end.
        paused.signal("CONT");
        let deadline = Instant::now() + Duration::from_secs(15);
        let done = loop {
            let got = ask(&on_front, 2, "tasks/get", json!({"taskId": task})).await;
            if got["result"]["status"] == "completed" {
                break got;
            }
            let message = got["result"]["statusMessage"].as_str().unwrap_or_default();
            assert!(
                message.contains("第 2 次尝试"),
                "the paused worker wrote: {got}"
            );
            assert!(
                Instant::now() < deadline,
                "not completed within 15 s: {got}"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        };
        paused
            .until_logged("this process's claim on a task ran out and another runs it now")
            .await;
        tokio::time::sleep(Duration::from_millis(1_500)).await;
        let after = ask(&on_front, 3, "tasks/get", json!({"taskId": task})).await;
        assert_eq!(stored(after), stored(done), "the outcome stored stays");
        let fence = format!("SELECT fence FROM taskwire_tasks WHERE id = '{task}'");
        let database = database.clone();
        let fence = tokio::task::spawn_blocking(move || query_text(&database, &fence))
            .await
            .expect("the query runs");
        assert_eq!(fence, ["2"], "claimed twice");
    });
}

#[test]
fn a_cancel_through_another_front_stops_the_work_on_the_worker() {
    let Some(database) = fresh_database("fleet_cancel") else {
        return;
    };
    let (_a, on_a) = front(&database, "front-a", 15_000, 1_000);
    let (_b, on_b) = front(&database, "front-b", 15_000, 1_000);
    let worker = Worker::start(&database, "worker", 15_000, 1_000);
    on_a.run(async {
        let task = make_task(&on_a, 1, "long_running_task").await;
        until_saying(&on_b, &task, "开始执行").await;
        let cancelled = ask(&on_b, 2, "tasks/cancel", json!({"taskId": task})).await;
        assert!(cancelled["error"].is_null(), "{cancelled}");
        worker.until_logged("reason=Cancelled").await;
        tokio::time::sleep(Duration::from_millis(1_500)).await;
        let got = ask(&on_a, 3, "tasks/get", json!({"taskId": task})).await;
        assert_eq!(got["result"]["status"], "cancelled", "{got}");
    });
}

#[test]
fn an_operator_cancels_from_a_fronts_dashboard_a_queued_task_and_one_running_on_a_worker() {
    let Some(database) = fresh_database("fleet_dashboard_cancel") else {
        return;
    };
    let front = HttpServer::start(
        |port| {
            fleet::server_argv(&database, "front", 15_000, 1_000).args(&[
                "--role",
                "front",
                "--http",
                &format!("127.0.0.1:{port}"),
                "--dashboard",
            ])
        },
        Some(&fleet::log_of(&database, "front")),
    );
    let on = TestServer::client_of(&front.url);
    let cancel = |task: &str| {
        let url = front
            .url
            .replace("/mcp", &format!("/tasks/tasks/{task}/cancel"));
        on.http
            .post(url)
            .header("x-taskwire-dashboard", "cancel")
            .send()
    };
    on.run(async {
        // Queued: no worker has it (the front ran no call for it).
        let queued = make_task(&on, 1, "long_running_task").await;
        let response = cancel(&queued).await.expect("the dashboard answers");
        let status = response.status();
        assert!(
            status.is_success(),
            "{status}: {}",
            response.text().await.unwrap_or_default()
        );
        let got = until_status(&on, &queued, "cancelled").await;
        assert_eq!(
            got["result"]["statusMessage"], "Cancelled by anonymous",
            "{got}"
        );

        // Running on a worker: the worker stops it.
        let worker = Worker::start(&database, "worker", 15_000, 1_000);
        let running = make_task(&on, 2, "long_running_task").await;
        until_saying(&on, &running, "开始执行").await;
        let response = cancel(&running).await.expect("the dashboard answers");
        assert!(response.status().is_success(), "{}", response.status());
        worker.until_logged("reason=Cancelled").await;
        until_status(&on, &running, "cancelled").await;
        assert!(
            !worker.log().contains(&format!("task={queued}")),
            "the worker never ran the cancelled queued task: {}",
            worker.log()
        );
    });
}

#[test]
fn a_cancel_that_loses_the_race_to_the_works_end_is_answered_from_the_stored_end() {
    let Some(database) = fresh_database("fleet_cancel_race") else {
        return;
    };
    let (_a, on_a) = front(&database, "front-a", 15_000, 1_000);
    let (_b, on_b) = front(&database, "front-b", 15_000, 1_000);
    let worker = Worker::start(&database, "worker", 15_000, 1_000);
    on_a.run(async {
        let task = make_task(&on_a, 1, "long_running_task").await;
        until_saying(&on_b, &task, "开始执行").await;
        // The work's end is stored, and front-b has not heard of it yet (no notification):
        // the moment a cancel races the end.
        let end = format!(
            r#"UPDATE taskwire_tasks SET status = 'completed', runner = NULL,
                   snapshot = jsonb_set(jsonb_set(snapshot::jsonb, '{{info,status}}', '"completed"'),
                       '{{outcome}}', '{{"result": {{"value": {{"content":
                           [{{"type": "text", "text": "finished first"}}]}}, "is_error": false}}}}')::text
               WHERE id = '{task}'"#
        );
        sql(&database, end).await.expect("the end is stored");
        let cancelled = ask(&on_b, 2, "tasks/cancel", json!({"taskId": task})).await;
        assert!(cancelled["error"].is_null(), "acknowledged: {cancelled}");
        let got = ask(&on_b, 3, "tasks/get", json!({"taskId": task})).await;
        assert_eq!(got["result"]["status"], "completed", "{got}");
        assert_eq!(
            got["result"]["result"]["content"][0]["text"], "finished first",
            "{got}"
        );
        let status = format!("SELECT status FROM taskwire_tasks WHERE id = '{task}'");
        let database_now = database.clone();
        let status = tokio::task::spawn_blocking(move || query_text(&database_now, &status))
            .await
            .expect("the query runs");
        assert_eq!(status, ["completed"]);
        // Told to the others, as the worker's end would be: every front agrees, and the
        // worker, whose claim the end took, stops.
        let told = format!("SELECT pg_notify('taskwire_tasks', 'test' || chr(10) || '{task}')");
        sql(&database, told).await.expect("told");
        until_status(&on_a, &task, "completed").await;
        worker.until_logged("reason=Removed").await;
    });
}

/// A front on `database` as `name`, in this process, authenticating its clients (bearer
/// `alice` or `bob`; `crate::guard::auth_config`); it dies with the value.
fn authenticating_front(database: &str, name: &str) -> TestServer {
    use taskwire_demo::tools::{server, ServerOptions};
    let options = taskwire_postgres::PostgresOptions {
        replica: name.to_owned(),
        ..taskwire_postgres::PostgresOptions::default()
    };
    let store =
        taskwire_postgres::PostgresStore::connect_with(database, options).expect("the store opens");
    let demo = server(ServerOptions {
        step: Duration::from_millis(300),
        ..ServerOptions::default()
    })
    .expect("the demo server");
    let front = demo
        .with_store(store)
        .role(taskwire_driver::ServerRole::Front)
        .expect("a front");
    TestServer::serving(front, "127.0.0.1:0", crate::guard::auth_config())
}

/// `body` on `runtime`, failing after 30 s.
fn within<T>(runtime: &tokio::runtime::Runtime, body: impl std::future::Future<Output = T>) -> T {
    runtime.block_on(async {
        tokio::time::timeout(Duration::from_secs(30), body)
            .await
            .expect("within 30 s")
    })
}

/// A 2025-11-25 client of `url` with bearer token `who`, on the current tokio runtime.
fn client_2025(url: &str, who: &str) -> taskwire_driver::Client {
    use taskwire_driver::engine::{ClientEra, Config, Era};
    let mut config = Config::new("fleet-tests", "0");
    config.client_era = ClientEra::Only(Era::V2025_11_25);
    taskwire_http::HttpClient::new(url)
        .header("Authorization", &format!("Bearer {who}"))
        .expect("a valid header")
        .connect(taskwire_driver::ClientBuilder::new(config))
}

#[test]
fn a_2025_session_whose_front_died_is_opened_again_on_another_and_finds_its_owners_tasks() {
    let Some(database) = fresh_database("fleet_session_front_died") else {
        return;
    };
    let _worker = Worker::start(&database, "worker", 15_000, 300);
    let first = authenticating_front(&database, "front-1");
    let second = authenticating_front(&database, "front-2");
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    let task = within(&runtime, async {
        let alice = client_2025(&first.url, "alice");
        alice.initialize().await.expect("a session on front-1");
        let call = alice
            .call_tool_as_task("long_running_task", json!({}), None)
            .await
            .expect("a task");
        call.task.expect("a task").id.to_string()
    });
    // The session's front dies (its runtime, its session and its store go with it).
    drop(first);
    let (listed, text, others) = within(&runtime, async {
        let alice = client_2025(&second.url, "alice");
        alice.initialize().await.expect("a new session on front-2");
        let listed: Vec<String> = alice
            .list_tasks()
            .await
            .expect("listed")
            .into_iter()
            .map(|t| t.id.to_string())
            .collect();
        let result = alice.task_result(&task).await.expect("its result");
        let text = match result.content.first() {
            Some(taskwire_driver::Content::Text { text, .. }) => text.clone(),
            other => format!("not text: {other:?}"),
        };
        let bob = client_2025(&second.url, "bob");
        bob.initialize().await.expect("bob's session");
        let others = bob.get_task(&task).await.err().map(|e| e.to_string());
        (listed, text, others)
    });
    assert!(listed.contains(&task), "{task} in {listed:?}");
    assert_eq!(text, "任务完成！");
    assert!(
        others.is_some_and(|e| e.contains("not found") || e.contains("Failed to retrieve")),
        "another owner does not see it"
    );
}

#[test]
fn a_front_killed_leaves_its_clients_going_through_the_others() {
    let Some(database) = fresh_database("fleet_front_killed") else {
        return;
    };
    let (front0, _) = front(&database, "front0", 15_000, 100);
    let (front1, _) = front(&database, "front1", 15_000, 100);
    let _worker = Worker::start(&database, "worker", 15_000, 100);
    let (_haproxy, through) = through(&database, &[&front0, &front1]);
    let mut front0 = Some(front0);
    through.run(async {
        let mut made = Vec::new();
        for id in 1..=40u64 {
            if id == 20 {
                drop(front0.take()); // SIGKILL
            }
            made.push(make_task(&through, id, "long_running_task").await);
        }
        for task in &made {
            let done = until_status(&through, task, "completed").await;
            assert_eq!(done["result"]["result"]["content"][0]["text"], "任务完成！");
        }
    });
}

#[test]
fn a_question_is_shown_and_answered_through_another_front_and_the_work_goes_on() {
    let Some(database) = fresh_database("fleet_question") else {
        return;
    };
    let (_a, on_a) = front(&database, "front-a", 15_000, 100);
    let (_b, on_b) = front(&database, "front-b", 15_000, 100);
    let _worker = Worker::start(&database, "worker", 15_000, 100);
    on_a.run(async {
        let asking = json!({"io.modelcontextprotocol/clientCapabilities": {
            "elicitation": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}}});
        let created = ask(
            &on_a,
            1,
            "tools/call",
            json!({"name": "confirm_task", "arguments": {"question": "Ship it?"},
                   "_meta": asking}),
        )
        .await;
        let task = created["result"]["taskId"]
            .as_str()
            .expect("a task")
            .to_owned();
        // Front B shows the worker's question.
        let waiting = until_status(&on_b, &task, "input_required").await;
        let requests = waiting["result"]["inputRequests"]
            .as_object()
            .unwrap_or_else(|| panic!("input requests: {waiting}"));
        let [(key, request)] = &requests.iter().collect::<Vec<_>>()[..] else {
            panic!("one question: {waiting}");
        };
        assert_eq!(request["method"], "elicitation/create", "{waiting}");
        assert_eq!(request["params"]["message"], "Ship it?", "{waiting}");
        // Answered through front B; the worker's tool goes on.
        let answer = json!({"action": "accept", "content": {"confirm": true}});
        let updated = ask(
            &on_b,
            2,
            "tasks/update",
            json!({"taskId": task, "inputResponses": {key.as_str(): answer}}),
        )
        .await;
        assert!(updated["error"].is_null(), "{updated}");
        let done = until_status(&on_a, &task, "completed").await;
        assert_eq!(
            done["result"]["result"]["content"][0]["text"], "Ship it? confirmed",
            "{done}"
        );
    });
}

#[test]
fn the_database_restarted_under_a_fleet_fails_what_it_caught_and_loses_nothing_acknowledged() {
    // A cluster of the test's own (the replicas' test uses 55433).
    let Some(cluster) = taskwire_tests::postgres::OwnCluster::start("fleet", 55434) else {
        return;
    };
    let database = cluster.fresh_database("fleet_restart");
    // Tasks of about 2 s, so that the ones made before the restart run through it.
    let (_a, on_a) = front(&database, "front-a", 15_000, 700);
    let (_b, on_b) = front(&database, "front-b", 15_000, 700);
    let _worker = Worker::start(&database, "worker", 15_000, 700);
    on_a.run(async {
        let mut before = Vec::new();
        for id in 1..=4 {
            before.push(make_task(&on_a, id, "long_running_task").await);
        }
        until_saying(&on_b, &before[3], "开始执行").await;
        restart_under(&cluster, &on_a, &on_b).await;
        for task in &before {
            let done = until_status(&on_b, task, "completed").await;
            assert_eq!(done["result"]["result"]["content"][0]["text"], "任务完成！");
        }
    });
}

#[test]
fn a_worker_runs_no_more_tools_at_once_than_its_concurrency() {
    let Some(database) = fresh_database("fleet_concurrency") else {
        return;
    };
    let (_front, on_front) = front(&database, "front", 15_000, 300);
    let worker = Worker::start_with(&database, "worker", 15_000, 300, &["--concurrency", "1"]);
    on_front.run(async {
        let first = make_task(&on_front, 1, "long_running_task").await;
        until_saying(&on_front, &first, "处理步骤 1").await;
        let second = make_task(&on_front, 2, "long_running_task").await;
        // The worker's one slot is taken: the second waits queued while the first runs.
        tokio::time::sleep(Duration::from_millis(300)).await;
        let waiting = ask(&on_front, 3, "tasks/get", json!({"taskId": second})).await;
        assert!(
            waiting["result"]["statusMessage"]
                .as_str()
                .is_some_and(|m| m.contains(QUEUED)),
            "the second waits: {waiting}"
        );
        until_status(&on_front, &first, "completed").await;
        until_status(&on_front, &second, "completed").await;
        assert_eq!(runner_of(&database, &second).await, "", "finished");
    });
    drop(worker);
}
