//! The Python SDK's (`mcp==1.30.0`, the seed) departures from the 2025-11-25 spec, pinned
//! deterministically: its side of a recorded conversation (`tests/fixtures/recorded/`) is fed to
//! our engine, which tolerates it on input while every line it sends stays schema-valid (the
//! harness checks each one). Live counterparts are in `python.rs`.
//!
//! Test names: `python_<side>_<quirk>_<what our side does>`.

use std::collections::HashMap;

use serde_json::json;
use taskwire_engine::{Event, Millis, TaskStatus, TaskSupport, Tool};
use taskwire_harness::setup::text_result;
use taskwire_tests::peers::fed::{
    answer_to, call_as_task, client_for, demo_server_for, feed_mapped, run_to_result, task_id,
    unknown_task_errors, TaskEvents, RELATED, TOOL,
};
use taskwire_tests::peers::replay::ServerReplay;
use taskwire_tests::peers::wire::fixture;

/// mcp 1.30 omits `ttl` when the request had `"task":{}`; the schema requires it (null allowed).
/// The TS client and the Inspector reject such a Task; our client reads the absence as null.
#[test]
fn python_server_task_without_ttl_is_read_as_unlimited() {
    let log = fixture("tsclient-seedserver-task-nottl");
    let created = log.answer(log.request("tools/call"));
    assert!(created["result"]["task"].get("ttl").is_none(), "{created}");
    let mut d = client_for(&log);
    let mut replay = ServerReplay::new(log);
    let sent = call_as_task(&mut d, &mut replay, TOOL, json!({}), None);
    assert_eq!(sent[0]["params"]["task"], json!({}), "we sent task:{{}}");
    replay.finish(&mut d);
    let seen = TaskEvents::take(&mut d);
    assert!(seen.errors.is_empty(), "{:?}", seen.errors);
    assert_eq!(seen.tasks[0].ttl_ms, None);
    assert_eq!(seen.tasks[0].poll_interval_ms, Some(500));
    assert_eq!(
        seen.seen(),
        [
            (TaskStatus::Working, String::new()),
            (TaskStatus::Working, "开始执行...".into())
        ]
    );
}

/// The seed writes `"execution":{"task_support":"optional"}` (the spec key is `taskSupport`);
/// our client reads it as optional when `taskSupport` is absent, and the task call runs the
/// whole recorded flow (polls every 500 ms) to its result.
#[test]
fn python_server_task_support_key_reads_as_optional_and_the_task_call_completes() {
    let log = fixture("tsclient-seedserver-task");
    let listed = log.answer(log.request("tools/list"))["result"]["tools"].clone();
    assert_eq!(
        listed[0]["execution"],
        json!({ "task_support": "optional" })
    );
    let tools: Vec<Tool> = serde_json::from_value(listed).unwrap();
    assert_eq!(tools[0].execution.task_support, TaskSupport::Optional);

    let mut d = client_for(&log);
    let mut replay = ServerReplay::new(log);
    call_as_task(&mut d, &mut replay, TOOL, json!({}), Some(60_000));
    run_to_result(&mut d, &mut replay, 500, 40);
    let seen = TaskEvents::take(&mut d);
    assert!(seen.errors.is_empty(), "{:?}", seen.errors);
    assert_eq!(
        seen.seen(),
        [
            (TaskStatus::Working, String::new()),
            (TaskStatus::Working, "开始执行...".into()),
            (TaskStatus::Working, "处理步骤 1...".into()),
            (TaskStatus::Working, "处理步骤 2...".into()),
            (TaskStatus::Completed, "处理步骤 2...".into()),
        ]
    );
    assert_eq!(seen.result()["content"][0]["text"], "任务完成！");
    assert_eq!(seen.result()["isError"], false);
}

/// Timestamps with microseconds (`…57.879245Z`) parse, so a stale update is recognised as
/// older by its `lastUpdatedAt` and dropped rather than shown as a change.
#[test]
fn python_server_microsecond_timestamps_order_status_updates() {
    let log = fixture("tsclient-seedserver-task");
    let updates = log.with_method("notifications/tasks/status");
    let stamp = updates[1]["params"]["lastUpdatedAt"].as_str().unwrap();
    assert_eq!(stamp.len(), "2026-11-30T05:31:57.879245Z".len(), "{stamp}");
    assert!(Millis::parse_rfc3339(stamp).is_some(), "{stamp}");

    let mut d = client_for(&log);
    let mut replay = ServerReplay::new(log.clone());
    call_as_task(&mut d, &mut replay, TOOL, json!({}), Some(60_000));
    d.feed_json(updates[2].clone()); // 处理步骤 2..., the newer one
    d.take_events();
    d.feed_json(updates[1].clone()); // 处理步骤 1..., older by its lastUpdatedAt
    let seen = TaskEvents::take(&mut d);
    assert!(seen.tasks.is_empty(), "a stale update was shown: {seen:?}");
    assert!(seen.errors.is_empty(), "{:?}", seen.errors);
}

/// Unknown ids get `-32602` with "Task not found: ID"; our client passes code and message on.
#[test]
fn python_server_unknown_task_errors_pass_through() {
    let unknown = "taskwire-no-such-task";
    for (method, error) in unknown_task_errors("tsclient-seedserver-get-unknown", unknown) {
        assert_eq!(error.code, -32602, "{method}");
        assert_eq!(
            error.message,
            format!("Task not found: {unknown}"),
            "{method}"
        );
    }
}

/// The Python SDK client declares `"capabilities":{}` and still sends task-augmented calls; our
/// server (which declared `tasks.requests.tools.call`) runs them as tasks, to the result.
#[test]
fn python_client_without_tasks_capability_still_gets_a_task() {
    let log = fixture("seedclient-seedserver-task");
    assert_eq!(
        log.request("initialize")["params"]["capabilities"],
        json!({})
    );
    let mut d = demo_server_for(&log);
    let call = log.request("tools/call");
    assert_eq!(call["params"]["task"], json!({ "ttl": 60_000 }));
    let out = d.feed_json(call.clone());
    let created = answer_to(&out, call);
    assert_eq!(created["result"]["task"]["status"], "working");
    assert_eq!(created["result"]["task"]["ttl"], 60_000);
    let ours = task_id(created);
    let started = d.take_events().into_iter().find_map(|e| match e {
        Event::ToolCall(c) => c.task,
        _ => None,
    });
    assert_eq!(started.as_deref(), Some(ours.as_str()));

    let ids = HashMap::from([(task_id(log.answer(call)), ours.clone())]);
    let work = d.work(&ours);
    d.host
        .respond(d.now, work, Ok(text_result("任务完成！")))
        .unwrap();
    d.drain();
    let fetch = log.request("tasks/result");
    let out = feed_mapped(&mut d, fetch, &ids);
    let result = &answer_to(&out, fetch)["result"];
    assert_eq!(result["content"][0]["text"], "任务完成！");
    assert_eq!(result["_meta"][RELATED]["taskId"], ours.as_str());
}
