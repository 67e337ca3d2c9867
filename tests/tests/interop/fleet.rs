//! Real clients through a fleet on PostgreSQL: HAProxy (round-robin per request; a
//! 2025-11-25 session stays on the front that opened it, stuck on its `Mcp-Session-Id`) in
//! front of two `task-server --role front` processes, and one `--role worker` running the
//! work they queue. Our `task-client` in both eras, and FastMCP's client (3.4.11: a
//! 2025-11-25 session, its status notifications on its `GET` stream; 4.1.4: 2026-07-28
//! stateless requests) each follow a task to its result; FastMCP also cancels one. The
//! `taskwire` CLI answers a question the worker's tool asks, in both eras: a 2025-11-25
//! session gets it from its front (on the stream of its `tasks/result`), and its answer
//! reaches the worker through the database, and the progress the worker's tool reports
//! reaches it too.

use serde_json::{json, Value};
use taskwire_demo::tools::{CANCELLED_MESSAGE, DONE_MESSAGE};
use taskwire_tests::fleet::{balancer, front, Worker};
use taskwire_tests::peers::demo::{binary, DemoClient, RESULT, STEPS};
use taskwire_tests::peers::fastmcp::FastMcp;
use taskwire_tests::peers::http::HttpServer;
use taskwire_tests::peers::{self, run, Argv, Run};
use taskwire_tests::postgres::fresh_database;

use crate::common::DEADLINE;

/// The fleet's processes, stopped when dropped.
struct Fleet {
    balancer: HttpServer,
    _fronts: [HttpServer; 2],
    _worker: Worker,
}

/// A fleet on a fresh database named after `test`; `None` when the PostgreSQL tests are
/// skipped.
fn fleet(test: &str) -> Option<Fleet> {
    let database = fresh_database(test)?;
    let fronts = [
        front(&database, "front0", 15_000, 300),
        front(&database, "front1", 15_000, 300),
    ];
    let worker = Worker::start(&database, "worker", 15_000, 300);
    Some(Fleet {
        balancer: balancer(&database, &[&fronts[0], &fronts[1]]),
        _fronts: fronts,
        _worker: worker,
    })
}

/// The task views a client printed end `completed` with the demo's closing message, after
/// only `working` ones.
fn assert_completed(out: &Run, views: &[Value]) {
    let (last, before) = views
        .split_last()
        .unwrap_or_else(|| panic!("no task view\n{out}"));
    assert_eq!(
        (&last["status"], &last["message"]),
        (&json!("completed"), &json!(DONE_MESSAGE)),
        "{out}"
    );
    assert!(before.iter().all(|v| v["status"] == "working"), "{out}");
}

#[test]
fn task_client_through_a_fleet_in_both_eras() {
    let test = "fleet_task_client";
    let Some(fleet) = fleet(test) else { return };
    for era in ["2025-11-25", "2026-07-28"] {
        let argv =
            Argv::new(binary("task-client")).args(&["--era", era, "--url", &fleet.balancer.url]);
        let out = run(&argv, DEADLINE);
        assert_eq!(out.code, Some(0), "{out}");
        let demo = DemoClient::parse(&out);
        let connected = format!("task-server 0.1.0 (protocol {era})");
        assert_eq!(demo.connected.as_deref(), Some(connected.as_str()), "{out}");
        assert_eq!(demo.status_path(), ["working", "completed"], "{out}");
        // A 2025-11-25 session hears every step (its front notifies it of each change the
        // worker stores); a 2026-07-28 client polls, and may miss some.
        if era == "2025-11-25" {
            for step in STEPS {
                assert!(demo.messages().contains(&step), "{step} not seen\n{out}");
            }
        }
        assert_eq!(demo.result.as_deref(), Some(RESULT), "{out}");
    }
}

#[test]
fn a_question_asked_on_a_worker_is_answered_by_the_cli_through_the_balancer_in_both_eras() {
    let test = "fleet_cli_question";
    let Some(fleet) = fleet(test) else { return };
    let dir = peers::target_dir().join("tmp").join(test);
    std::fs::create_dir_all(&dir).expect("a directory for the answers");
    let answers = dir.join("answers.json");
    std::fs::write(
        &answers,
        r#"{"action": "accept", "content": {"confirm": true}}"#,
    )
    .expect("answers written");
    for era in ["2025-11-25", "2026-07-28"] {
        let argv = Argv::new(taskwire_tests::procs::taskwire()).args(&[
            "--json",
            "call",
            "confirm_task",
            "--arg",
            "question=Ship it?",
            "--answers",
            answers.to_str().expect("a UTF-8 path"),
            "--era",
            era,
            "--url",
            &fleet.balancer.url,
        ]);
        let out = run(&argv, DEADLINE);
        assert_eq!(out.code, Some(0), "{era}: {out}");
        let events = out.json_lines();
        let asked = events
            .iter()
            .find(|e| e["event"] == "input")
            .unwrap_or_else(|| panic!("{era}: asked\n{out}"));
        assert_eq!(asked["params"]["message"], "Ship it?", "{era}: {out}");
        let last = events.last().cloned().unwrap_or_default();
        assert_eq!(
            last["result"]["content"][0]["text"], "Ship it? confirmed",
            "{era}: {out}"
        );
    }
}

#[test]
fn progress_of_a_workers_tool_reaches_a_2025_session_through_the_balancer() {
    let test = "fleet_cli_progress";
    let Some(fleet) = fleet(test) else { return };
    let argv = Argv::new(taskwire_tests::procs::taskwire()).args(&[
        "--json",
        "call",
        "progress_task",
        "--arg",
        "steps=3",
        "--era",
        "2025-11-25",
        "--url",
        &fleet.balancer.url,
    ]);
    let out = run(&argv, DEADLINE);
    assert_eq!(out.code, Some(0), "{out}");
    let told: Vec<(f64, f64)> = out
        .json_lines()
        .iter()
        .filter(|e| e["event"] == "progress")
        .filter_map(|e| Some((e["progress"].as_f64()?, e["total"].as_f64()?)))
        .collect();
    // A front tells the newest progress it hears (two reported within one write of the
    // worker's are told as the second), in order. The last step's may reach the client
    // after the result it came with (on another of the session's streams), so the client
    // may end first.
    assert!(!told.is_empty(), "progress told: {out}");
    assert!(told.iter().all(|&(_, total)| total == 3.0), "{out}");
    assert!(told.windows(2).all(|w| w[0].0 < w[1].0), "in order: {out}");
}

fn fastmcp_client_through_a_fleet(release: FastMcp, test: &str) {
    let Some(p) = peers::ready(test) else { return };
    let Some(fleet) = fleet(test) else { return };
    let out = run(
        &p.fastmcp_client_url(release, &fleet.balancer.url),
        DEADLINE,
    );
    out.assert_exit(0);
    assert_eq!(
        out.event("connected")["protocolVersion"],
        release.era(),
        "{out}"
    );
    assert_completed(&out, &out.events("status"));
    let result = out.event("result");
    assert_eq!(
        (&result["text"], &result["isError"]),
        (&json!(RESULT), &json!(false)),
        "{out}"
    );
    let cancelled = out.event("cancelled");
    assert_eq!(
        (&cancelled["status"], &cancelled["message"]),
        (&json!("cancelled"), &json!(CANCELLED_MESSAGE)),
        "{out}"
    );
    if release == FastMcp::V3 {
        // Its session's front tells it what the worker stored.
        assert_completed(&out, &out.events("notification"));
    } else {
        assert_eq!(out.event("transparent")["text"], RESULT, "{out}");
    }
}

#[test]
fn fastmcp3_client_through_a_fleet() {
    fastmcp_client_through_a_fleet(FastMcp::V3, "fleet_fastmcp3_client");
}

#[test]
fn fastmcp4_client_through_a_fleet() {
    fastmcp_client_through_a_fleet(FastMcp::V4, "fleet_fastmcp4_client");
}
