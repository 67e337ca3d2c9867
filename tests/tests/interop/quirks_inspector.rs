//! The MCP Inspector 2.12 CLI's departures from the 2025-11-25 spec, pinned deterministically:
//! its side of a recorded conversation (`tests/fixtures/recorded/`) is fed to our server, whose
//! every line is checked against the schema. Live counterparts are in `inspector.rs`.

use std::collections::HashMap;

use serde_json::json;
use taskwire_harness::setup::text_result;
use taskwire_tests::peers::fed::{
    answer_to, demo_server_for, feed_mapped, task_id, RELATED, REQUIRED_TOOL,
};
use taskwire_tests::peers::wire::fixture;

/// The Inspector declares tasks only under `capabilities.extensions` and sends `"task":{}`. Our
/// server still runs the call as a task, and writes the `ttl` the Inspector insists on (it gives
/// up on the Python server's Task, which lacks it), then serves its polls and `tasks/result`.
#[test]
fn inspector_tasks_under_extensions_still_get_a_task_with_ttl() {
    let nottl = fixture("inspector-seedrequired-nottl");
    let call = nottl.request("tools/call");
    assert!(nottl.answer(call)["result"]["task"].get("ttl").is_none());
    assert!(
        nottl.with_method("tasks/get").is_empty(),
        "the Inspector gave up"
    );

    let log = fixture("inspector-tsserver-required");
    let caps = &log.request("initialize")["params"]["capabilities"];
    assert!(caps.get("tasks").is_none(), "{caps}");
    assert!(caps["extensions"]["io.modelcontextprotocol/tasks"].is_object());
    let mut d = demo_server_for(&log);
    let call = log.request("tools/call");
    assert_eq!(call["params"]["name"], REQUIRED_TOOL);
    assert_eq!(call["params"]["task"], json!({}));
    let out = d.feed_json(call.clone());
    let created = answer_to(&out, call);
    assert_eq!(created["result"]["task"]["ttl"], 300_000, "{created}");
    let ours = task_id(created);
    let ids = HashMap::from([(task_id(log.answer(call)), ours.clone())]);

    let polls = log.with_method("tasks/get");
    let out = feed_mapped(&mut d, polls[0], &ids);
    assert_eq!(answer_to(&out, polls[0])["result"]["status"], "working");
    let work = d.work(&ours);
    d.host
        .respond(d.now, work, Ok(text_result("任务完成！")))
        .unwrap();
    d.drain();
    let last = polls.last().unwrap();
    let out = feed_mapped(&mut d, last, &ids);
    assert_eq!(answer_to(&out, last)["result"]["status"], "completed");
    let fetch = log.request("tasks/result");
    let out = feed_mapped(&mut d, fetch, &ids);
    let result = &answer_to(&out, fetch)["result"];
    assert_eq!(result["content"][0]["text"], "任务完成！");
    assert_eq!(result["_meta"][RELATED]["taskId"], ours.as_str());
}

/// The Inspector calls an `optional` tool plainly; our server answers plainly, with no task.
#[test]
fn inspector_optional_tool_plain_call_gets_a_plain_answer() {
    let log = fixture("inspector-tsserver-optional");
    let mut d = demo_server_for(&log);
    let call = log.request("tools/call");
    assert!(call["params"].get("task").is_none(), "{call}");
    let out = d.feed_json(call.clone());
    assert!(out.iter().all(|m| m["id"] != call["id"]), "answered early");
    let request = d
        .take_events()
        .into_iter()
        .find_map(|e| match e {
            taskwire_engine::Event::ToolCall(c) => {
                assert_eq!(c.task, None);
                Some(c.call)
            }
            _ => None,
        })
        .expect("the tool runs");
    d.host
        .respond(d.now, request, Ok(text_result("任务完成！")))
        .unwrap();
    let out = d.drain();
    let answer = answer_to(&out, call);
    assert_eq!(answer["result"]["content"][0]["text"], "任务完成！");
    assert!(answer["result"].get("task").is_none());
}
