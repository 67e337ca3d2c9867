//! Caller-supplied time: it never goes back inside the engine, timestamps never decrease,
//! and a due deadline always moves once handled (no busy loop).

use serde_json::json;
use taskwire_engine::{Millis, TaskSupport};
use taskwire_harness::setup::{server_config, stamp, text_result, tool, T0};
use taskwire_harness::Probe;

#[test]
fn time_that_goes_back_is_clamped() {
    let mut d = Probe::ready_server(server_config(), |s| {
        s.add_tool(tool("job", TaskSupport::Optional))
    });
    d.now = T0.plus(5_000);
    d.call(
        "tools/call",
        json!({ "name": "job", "arguments": {}, "task": {} }),
    );
    d.now = T0; // the caller's clock jumps back
    let work = d.work("task-1");
    d.host
        .set_task_message(d.now, work, Some("back".into()))
        .unwrap();
    d.host
        .respond(Millis(0), work, Ok(text_result("ok")))
        .unwrap();
    d.drain();
    let task = d.call("tasks/get", json!({ "taskId": "task-1" }));
    assert_eq!(task["result"]["createdAt"], stamp(5_000));
    assert_eq!(task["result"]["lastUpdatedAt"], stamp(5_000));
    assert_eq!(d.host.now(), T0.plus(5_000));
}

#[test]
fn far_future_times_saturate_instead_of_overflowing() {
    let mut d = Probe::ready_server(server_config(), |s| {
        s.add_tool(tool("job", TaskSupport::Optional))
    });
    d.now = Millis(u64::MAX);
    let reply = d.call(
        "tools/call",
        json!({ "name": "job", "arguments": {}, "task": { "ttl": 1000 } }),
    );
    assert_eq!(
        reply["result"]["task"]["createdAt"],
        "9999-12-31T23:59:59.999Z"
    );
    d.advance(u64::MAX);
    d.assert_alive();
}

#[test]
fn handled_deadlines_always_move_on() {
    let mut d = Probe::ready_server(server_config(), |s| {
        s.add_tool(tool("job", TaskSupport::Optional))
    });
    for ttl in [0u64, 1, 1, 2, 1000] {
        d.call(
            "tools/call",
            json!({ "name": "job", "arguments": {}, "task": { "ttl": ttl } }),
        );
    }
    // Probe::advance panics if a deadline stays due after handle_timeout.
    d.advance(2_000);
    assert_eq!(d.host.task_count(), 0);
    assert_eq!(d.host.poll_timeout(), None);
}
