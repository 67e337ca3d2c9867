//! Limits a peer cannot push past: requests it leaves waiting on us, and task metadata the
//! session does not use (spec §2.1 rule 10: ignored, even when malformed).

use serde_json::json;
use taskwire_engine::{Event, TaskSupport, ToolCall};
use taskwire_harness::msg::{error_code, error_message, response};
use taskwire_harness::setup::{initialize_params, server_config, text_result, tool};
use taskwire_harness::Probe;

#[test]
fn requests_waiting_on_us_are_capped_and_the_cap_frees_up() {
    let mut config = server_config();
    config.limits.max_pending_requests = 2;
    let mut d = Probe::ready_server(config, |s| s.add_tool(tool("slow", TaskSupport::Optional)));
    let plain = json!({ "name": "slow", "arguments": {} });
    let (first, _) = d.send("tools/call", plain.clone());
    let (_second, _) = d.send("tools/call", plain.clone());
    let (third, out) = d.send("tools/call", plain.clone());
    let refused = response(&out, &third).expect("refused at once");
    assert_eq!(error_code(refused), Some(-32603), "{refused}");
    assert!(
        error_message(refused).contains("Too many requests"),
        "{refused}"
    );
    // Requests answered at once are not affected.
    d.assert_alive();
    let tasks = d.call("tasks/list", json!({}));
    assert!(tasks["result"]["tasks"].is_array(), "{tasks}");
    // Answering one frees a place.
    let calls: Vec<_> = d
        .take_events()
        .into_iter()
        .filter_map(|e| match e {
            Event::ToolCall(c) => Some((c.call, c.request)),
            _ => None,
        })
        .collect();
    assert_eq!(calls.len(), 2, "the refused call never reached the app");
    assert_eq!(taskwire_harness::msg::id_json(&calls[0].1), first);
    d.host
        .respond(d.now, calls[0].0, Ok(text_result("done")))
        .unwrap();
    d.drain();
    let (fourth, out) = d.send("tools/call", plain);
    assert!(
        response(&out, &fourth).is_none(),
        "accepted: it waits for the app"
    );
}

#[test]
fn malformed_task_metadata_is_invalid_params_only_where_tasks_apply() {
    let bad = json!({ "name": "job", "arguments": {}, "task": { "ttl": "soon" } });
    let mut d = Probe::ready_server(server_config(), |s| {
        s.add_tool(tool("job", TaskSupport::Optional))
    });
    let reply = d.call("tools/call", bad.clone());
    assert_eq!(error_code(&reply), Some(-32602), "{reply}");
    assert!(error_message(&reply).contains("task"), "{reply}");

    // With an older protocol version there are no tasks: `params.task` is ignored, even
    // malformed, and the call runs plainly.
    let mut d = Probe::server(server_config());
    d.host.add_tool(tool("job", TaskSupport::Optional));
    d.call("initialize", initialize_params("2025-06-18", json!({})));
    let (id, out) = d.send("tools/call", bad);
    assert!(response(&out, &id).is_none(), "runs plainly: {out:?}");
    let events = d.take_events();
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::ToolCall(ToolCall { task: None, .. }))),
        "{events:?}"
    );
}
