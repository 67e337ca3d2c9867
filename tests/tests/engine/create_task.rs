//! `CreateTaskResult` (spec §2.4, §2.5, §2.12, §5.5): nested task, `working`, timestamps,
//! and a `ttl` that is always written: requested, clamped, defaulted or `null`.

use serde_json::{json, Value};
use taskwire_engine::{
    Config, Event, Owner, TaskDecision, TaskSupport, ToolCall, ToolDef, UsageError,
};
use taskwire_harness::probe::OWNER;
use taskwire_harness::setup::{server_config, stamp, tool};
use taskwire_harness::Probe;

fn server(config: Config) -> Probe {
    Probe::ready_server(config, |s| s.add_tool(tool("job", TaskSupport::Optional)))
}

fn create(d: &mut Probe, task: Value) -> Value {
    let reply = d.call(
        "tools/call",
        json!({ "name": "job", "arguments": {}, "task": task }),
    );
    reply["result"].clone()
}

#[test]
fn create_task_result_nests_a_working_task_with_every_field() {
    let mut d = server(server_config());
    d.now = d.now.plus(1234);
    let result = create(&mut d, json!({}));
    assert_eq!(
        result,
        json!({ "task": {
            "taskId": "task-1", "status": "working",
            "createdAt": stamp(1234), "lastUpdatedAt": stamp(1234),
            "ttl": 300000, "pollInterval": 500 } })
    );
    assert_eq!(stamp(1234), "2026-01-15T09:00:01.234Z");
}

#[test]
fn requested_ttl_is_kept_below_the_maximum_and_clamped_above_it() {
    let mut d = server(server_config());
    assert_eq!(create(&mut d, json!({ "ttl": 1234 }))["task"]["ttl"], 1234);
    assert_eq!(
        create(&mut d, json!({ "ttl": 999_999_999_999u64 }))["task"]["ttl"],
        86_400_000
    );
    assert_eq!(
        create(&mut d, json!({ "ttl": 1500.9 }))["task"]["ttl"],
        1500
    );
}

#[test]
fn ttl_defaults_and_unlimited_retention() {
    let mut config = server_config();
    config.tasks.default_ttl_ms = None;
    config.tasks.max_ttl_ms = None;
    let mut d = server(config);
    let task = &create(&mut d, json!({}))["task"];
    assert_eq!(
        task.get("ttl"),
        Some(&Value::Null),
        "ttl must be written as null"
    );
    assert_eq!(
        create(&mut d, json!({ "ttl": 4_200 }))["task"]["ttl"],
        4_200
    );
    assert_eq!(d.host.poll_timeout(), Some(d.now.plus(4_200)));
    // A retention below the minimum (1 s by default) is raised to it: ttl 0 does not
    // create a task that is gone before the requestor can poll it.
    assert_eq!(create(&mut d, json!({ "ttl": 0 }))["task"]["ttl"], 1_000);

    let mut config = server_config();
    config.tasks.default_ttl_ms = None;
    config.tasks.max_ttl_ms = Some(60_000);
    let mut d = server(config);
    assert_eq!(create(&mut d, json!({}))["task"]["ttl"], 60_000);
    assert_eq!(
        create(&mut d, json!({ "ttl": null }))["task"]["ttl"],
        60_000
    );
}

#[test]
fn poll_interval_is_optional() {
    let mut config = server_config();
    config.tasks.poll_interval_ms = None;
    let mut d = server(config);
    let task = &create(&mut d, json!({}))["task"];
    assert!(task.get("pollInterval").is_none(), "{task}");
}

#[test]
fn model_immediate_response_rides_in_meta() {
    let mut d = Probe::ready_server(server_config(), |s| {
        s.add_tool(ToolDef {
            tool: tool("report", TaskSupport::Optional),
            immediate_response: Some("Started; poll for the result.".into()),
            decision: TaskDecision::Policy,
        })
    });
    let reply = d.call(
        "tools/call",
        json!({ "name": "report", "arguments": {}, "task": {} }),
    );
    assert_eq!(
        reply["result"]["_meta"]["io.modelcontextprotocol/model-immediate-response"],
        "Started; poll for the result."
    );
    assert!(reply["result"]["_meta"]
        .get("io.modelcontextprotocol/related-task")
        .is_none());
}

#[test]
fn task_ids_come_from_the_source_and_never_repeat() {
    let mut d = server(server_config());
    d.host
        .create_task(d.now, &Owner::from(OWNER), "task-2", None)
        .unwrap();
    assert_eq!(create(&mut d, json!({}))["task"]["taskId"], "task-1");
    // The source's next id, task-2, is taken: the engine draws again.
    assert_eq!(create(&mut d, json!({}))["task"]["taskId"], "task-3");
    let events = d.take_events();
    let ids: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            Event::ToolCall(ToolCall { task, .. }) => task.clone(),
            _ => None,
        })
        .collect();
    assert_eq!(ids, ["task-1", "task-3"]);
}

#[test]
fn app_created_task_is_served_like_any_other() {
    let mut d = server(server_config());
    let owner = Owner::from(OWNER);
    let work = d
        .host
        .create_task(d.now, &owner, "demo-task", Some(300_000))
        .unwrap();
    assert_eq!(
        d.host.call_task(work).map(|t| t.as_str()),
        Some("demo-task")
    );
    let created = d.host.task("demo-task").expect("created").info;
    assert_eq!(created.id, "demo-task");
    assert_eq!(created.ttl_ms, Some(300_000));
    assert_eq!(
        d.host.create_task(d.now, &owner, "demo-task", None),
        Err(UsageError::DuplicateTask("demo-task".into()))
    );
    let reply = d.call("tasks/get", json!({ "taskId": "demo-task" }));
    assert_eq!(reply["result"]["status"], "working");
    assert_eq!(reply["result"]["ttl"], 300_000);
}
