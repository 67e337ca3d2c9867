//! `task-server --metrics ADDR`: what a Prometheus scrape shows after real traffic. Tasks made
//! and ended per tool (completed, cancelled), tasks by status, durations, requests per method
//! and era with their error codes, HTTP refusals by status; over stdio too; on a PostgreSQL
//! fleet, each event counted once (the front made it, the worker ended it), each process's
//! role, and the queue of unclaimed work. No label names a task.

use std::time::Duration;

use serde_json::json;
use taskwire_tests::fleet::{self, Worker};
use taskwire_tests::peers::demo::binary;
use taskwire_tests::peers::http::{free_port, HttpServer};
use taskwire_tests::peers::{target_dir, Argv};
use taskwire_tests::postgres::fresh_database;
use taskwire_tests::procs::{call_as_task, request, Raw};

use crate::common::TestServer;
use crate::replicas::{ask, make_task, until_status};

/// The scrape of `http://{address}/metrics`.
async fn scrape(address: &str) -> String {
    let response = reqwest::get(format!("http://{address}/metrics"))
        .await
        .expect("the metrics listener answers");
    assert_eq!(response.status(), 200);
    let kind = response.headers()["content-type"].to_str().unwrap_or("");
    assert!(kind.starts_with("application/openmetrics-text"), "{kind}");
    response.text().await.expect("a text body")
}

/// The value of the series written exactly as `series` (`name{label="v",…}`), if any.
fn value(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .filter_map(|line| line.rsplit_once(' '))
        .find(|(name, _)| *name == series)
        .and_then(|(_, v)| v.parse().ok())
}

/// [`value`], which must be there.
fn must(text: &str, series: &str) -> f64 {
    value(text, series).unwrap_or_else(|| panic!("no {series} in the scrape:\n{text}"))
}

/// Scrapes until `series` reads `wanted` (a gauge read at intervals), for up to 10 s.
async fn until_reads(address: &str, series: &str, wanted: f64) -> String {
    for _ in 0..100 {
        let text = scrape(address).await;
        if value(&text, series) == Some(wanted) {
            return text;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("{series} never read {wanted}:\n{}", scrape(address).await);
}

#[test]
fn a_scrape_counts_tasks_per_tool_requests_per_method_and_era_and_refusals() {
    let metrics = format!("127.0.0.1:{}", free_port());
    let server = HttpServer::start(
        |port| {
            Argv::new(binary("task-server")).args(&[
                "--http",
                &format!("127.0.0.1:{port}"),
                "--metrics",
                &metrics,
                "--step-ms",
                "50",
            ])
        },
        None,
    );
    let on = TestServer::client_of(&server.url);
    on.run(async {
        // Before any traffic: each status shows, and the process's role.
        let text = scrape(&metrics).await;
        assert_eq!(must(&text, r#"taskwire_tasks{status="working"}"#), 0.0);
        assert_eq!(must(&text, r#"taskwire_process_role{role="both"}"#), 1.0);
        // The demo's pre-made finished task is held, but nobody made it here.
        assert_eq!(must(&text, r#"taskwire_tasks{status="completed"}"#), 1.0);

        // 2026-07-28: one task completes, one is cancelled, one call names no tool.
        let done = make_task(&on, 1, "long_running_task").await;
        let cancelled = make_task(&on, 2, "long_running_task").await;
        let got = ask(&on, 3, "tasks/cancel", json!({"taskId": cancelled})).await;
        assert!(got.get("result").is_some(), "{got}");
        until_status(&on, &done, "completed").await;
        // A tool the server does not have (the seed's server answers any name, with a tool
        // error): no label names it.
        let unknown = ask(&on, 4, "tools/call", json!({"name": "no_such_tool"})).await;
        let stranger = unknown["result"]["taskId"].as_str().expect("a task").to_owned();
        until_status(&on, &stranger, "completed").await;
        let missing = ask(&on, 8, "tasks/get", json!({"taskId": "no-such-task"})).await;
        let code = missing["error"]["code"]
            .as_i64()
            .unwrap_or_else(|| panic!("an error: {missing}"));
        // 2025-11-25: a session lists the tools.
        let session = on.open_session().await;
        let listed = on
            .in_session(&session, &request(5, "tools/list", json!({})))
            .send()
            .await;
        assert_eq!(listed.status(), 200);
        // Refused: another origin (403), a body over the limit (413).
        let refused = on
            .post(&request(6, "tools/list", json!({})))
            .set("origin", "http://elsewhere.example")
            .send()
            .await;
        assert_eq!(refused.status(), 403);
        let huge = json!({"jsonrpc": "2.0", "id": 7, "method": "ping", "params": {"pad": "x".repeat(5 << 20)}});
        assert_eq!(on.post(&huge).send().await.status(), 413);

        let text = scrape(&metrics).await;
        for help in [
            "# HELP taskwire_tasks_created ",
            "# HELP taskwire_tasks_ended ",
            "# HELP taskwire_task_duration_seconds ",
            "# HELP taskwire_request_duration_seconds ",
            "# HELP taskwire_http_refusals ",
            "# HELP taskwire_http_streams ",
        ] {
            assert!(text.contains(help), "{help} in:\n{text}");
        }
        let tool = r#"tool="long_running_task""#;
        assert_eq!(must(&text, &format!("taskwire_tasks_created_total{{{tool}}}")), 2.0);
        for (status, count) in [("completed", 1.0), ("cancelled", 1.0)] {
            let series = format!(r#"taskwire_tasks_ended_total{{{tool},status="{status}"}}"#);
            assert_eq!(must(&text, &series), count, "{series}");
            let series =
                format!(r#"taskwire_task_duration_seconds_count{{{tool},status="{status}"}}"#);
            assert_eq!(must(&text, &series), count, "{series}");
        }
        // The completed one took its three 50 ms steps.
        let took = must(
            &text,
            &format!(r#"taskwire_task_duration_seconds_sum{{{tool},status="completed"}}"#),
        );
        assert!((0.1..10.0).contains(&took), "{took} s");
        // Buckets from half a millisecond to an hour.
        for le in ["0.0005", "3600.0"] {
            let bucket = format!(r#"taskwire_task_duration_seconds_bucket{{le="{le}",{tool},status="completed"}}"#);
            assert!(value(&text, &bucket).is_some(), "{bucket} in:\n{text}");
        }
        // Each task's work changed it (a status message; the cancel) after it was made.
        assert_eq!(
            must(&text, &format!("taskwire_task_first_update_seconds_count{{{tool}}}")),
            2.0
        );
        assert_eq!(must(&text, r#"taskwire_tasks{status="working"}"#), 0.0);
        assert_eq!(must(&text, r#"taskwire_tasks{status="completed"}"#), 3.0);
        assert_eq!(must(&text, r#"taskwire_tasks{status="cancelled"}"#), 1.0);

        let other = r#"taskwire_tasks_ended_total{tool="other",status="completed"}"#;
        assert_eq!(must(&text, other), 1.0);
        let calls = r#"taskwire_request_duration_seconds_count{method="tools/call",era="2026-07-28"}"#;
        assert_eq!(must(&text, calls), 3.0);
        let cancels = r#"taskwire_request_duration_seconds_count{method="tasks/cancel",era="2026-07-28"}"#;
        assert_eq!(must(&text, cancels), 1.0);
        let errors = format!(
            r#"taskwire_request_errors_total{{method="tasks/get",era="2026-07-28",code="{code}"}}"#
        );
        assert_eq!(must(&text, &errors), 1.0);
        let gets = r#"taskwire_request_duration_seconds_count{method="tasks/get",era="2026-07-28"}"#;
        assert!(must(&text, gets) >= 2.0);
        for (method, count) in [("initialize", 1.0), ("tools/list", 1.0)] {
            let series = format!(
                r#"taskwire_request_duration_seconds_count{{method="{method}",era="2025-11-25"}}"#
            );
            assert_eq!(must(&text, &series), count, "{series}");
        }
        assert_eq!(must(&text, "taskwire_http_sessions"), 1.0);
        assert_eq!(must(&text, r#"taskwire_http_refusals_total{status="403"}"#), 1.0);
        assert_eq!(must(&text, r#"taskwire_http_refusals_total{status="413"}"#), 1.0);
        // Low cardinality: no task id, session id or peer-made method is a label.
        for id in [&done, &cancelled, &stranger, &session] {
            assert!(!text.contains(id.as_str()), "{id} in:\n{text}");
        }
        assert!(!text.contains("no_such_tool"), "{text}");
    });
}

#[test]
fn a_stdio_server_counts_its_requests_too() {
    let metrics = format!("127.0.0.1:{}", free_port());
    let args: Vec<String> = ["--metrics", &metrics, "--step-ms", "20"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let mut server = Raw::spawn(&binary("task-server"), &args, None);
    server.handshake();
    // A request cut across two writes, and two requests in one: the metrics read lines as
    // the engine does.
    let call = format!("{}\n", call_as_task(2, "long_running_task"));
    let (head, tail) = call.split_at(call.len() / 2);
    server.write_raw(head.as_bytes()).expect("written");
    server
        .write_raw(
            format!(
                "{tail}{}\n{}\n",
                request(3, "tools/list", json!({})),
                request(4, "no/such/method", json!({}))
            )
            .as_bytes(),
        )
        .expect("written");
    // The answers, in whatever order they come.
    let mut answers = std::collections::HashMap::new();
    while answers.len() < 3 {
        let answer = server.expect(Duration::from_secs(10), "the answers", |m| {
            m["id"].as_i64().is_some_and(|id| (2..=4).contains(&id))
        });
        answers.insert(answer["id"].as_i64().unwrap_or(0), answer);
    }
    let task = answers[&2]["result"]["task"]["taskId"]
        .as_str()
        .expect("a task")
        .to_owned();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        let text = until_reads(
            &metrics,
            r#"taskwire_tasks_ended_total{tool="long_running_task",status="completed"}"#,
            1.0,
        )
        .await;
        let era = r#"era="2025-11-25""#;
        for method in ["initialize", "tools/call", "tools/list", "other"] {
            let series =
                format!(r#"taskwire_request_duration_seconds_count{{method="{method}",{era}}}"#);
            assert_eq!(must(&text, &series), 1.0, "{series}");
        }
        let unknown =
            format!(r#"taskwire_request_errors_total{{method="other",{era},code="-32601"}}"#);
        assert_eq!(must(&text, &unknown), 1.0);
        assert!(!text.contains(&task), "{text}");
    });
    server.close_stdin();
    server.wait(Duration::from_secs(10));
}

#[test]
fn a_fleet_counts_each_task_once_where_it_happened_and_shows_its_queue() {
    let Some(database) = fresh_database("fleet_metrics") else {
        return;
    };
    let front_metrics = format!("127.0.0.1:{}", free_port());
    let front = HttpServer::start(
        |port| {
            fleet::server_argv(&database, "front", 1_500, 50).args(&[
                "--role",
                "front",
                "--http",
                &format!("127.0.0.1:{port}"),
                "--metrics",
                &front_metrics,
            ])
        },
        Some(&fleet::log_of(&database, "front")),
    );
    let on = TestServer::client_of(&front.url);
    on.run(async {
        let text = scrape(&front_metrics).await;
        assert_eq!(must(&text, r#"taskwire_process_role{role="front"}"#), 1.0);
        let task = make_task(&on, 1, "long_running_task").await;
        // No worker yet: the front's lease renewal reads the queue (every 500 ms here).
        let queued = "taskwire_store_unclaimed_tasks";
        until_reads(&front_metrics, queued, 1.0).await;

        let worker_metrics = format!("127.0.0.1:{}", free_port());
        let _worker = Worker::start_with(
            &database,
            "worker",
            1_500,
            50,
            &["--metrics", &worker_metrics],
        );
        until_status(&on, &task, "completed").await;
        let front_text = until_reads(&front_metrics, queued, 0.0).await;
        let tool = r#"tool="long_running_task""#;
        let created = format!("taskwire_tasks_created_total{{{tool}}}");
        let ended = format!(r#"taskwire_tasks_ended_total{{{tool},status="completed"}}"#);
        assert_eq!(must(&front_text, &created), 1.0, "the front made it");
        // A write's entries in buckets from 1 to 1,024.
        assert!(
            front_text.contains(r#"taskwire_store_batch_entries_bucket{le="1024.0",store="#),
            "{front_text}"
        );
        assert_eq!(
            value(&front_text, &ended).unwrap_or(0.0),
            0.0,
            "the front ran nothing"
        );
        let worker_text = until_reads(&worker_metrics, &ended, 1.0).await;
        assert_eq!(
            value(&worker_text, &created).unwrap_or(0.0),
            0.0,
            "the worker made nothing"
        );
        assert_eq!(
            must(&worker_text, r#"taskwire_process_role{role="worker"}"#),
            1.0
        );
        let writes = worker_text
            .lines()
            .find(|l| l.starts_with("taskwire_store_commit_duration_seconds_count{"))
            .and_then(|l| l.rsplit_once(' '))
            .and_then(|(_, v)| v.parse::<f64>().ok());
        assert!(writes.is_some_and(|n| n >= 1.0), "{worker_text}");
    });
}

#[test]
fn a_durable_server_restarted_shows_the_tasks_it_restored() {
    let dir = target_dir().join("tmp/metrics");
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    let path = dir.join("restarted.db");
    let _ = std::fs::remove_file(&path);
    let store = format!("sqlite:{}", path.display());
    let metrics = format!("127.0.0.1:{}", free_port());
    let argv = |port: u16| {
        Argv::new(binary("task-server")).args(&[
            "--http",
            &format!("127.0.0.1:{port}"),
            "--store",
            &store,
            "--metrics",
            &metrics,
            "--step-ms",
            "20",
        ])
    };
    let mut server = HttpServer::start(argv, None);
    let on = TestServer::client_of(&server.url);
    let completed = r#"taskwire_tasks{status="completed"}"#;
    on.run(async {
        let task = make_task(&on, 1, "long_running_task").await;
        until_status(&on, &task, "completed").await;
        // The demo's own finished task and this one.
        assert_eq!(must(&scrape(&metrics).await, completed), 2.0);
    });
    let port = server
        .url
        .rsplit(':')
        .next()
        .and_then(|p| p.trim_end_matches("/mcp").parse().ok());
    server.kill();
    let port: u16 = port.expect("the server's port");
    let _again = HttpServer::start_at(port, argv(port), None);
    on.run(async {
        let text = scrape(&metrics).await;
        assert_eq!(must(&text, completed), 2.0, "both restored:\n{text}");
        // Restored, not made again.
        let created = r#"taskwire_tasks_created_total{tool="long_running_task"}"#;
        assert_eq!(value(&text, created).unwrap_or(0.0), 0.0, "{text}");
    });
}
