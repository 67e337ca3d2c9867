//! Retention and limits (spec §2.12, §5.13): a task is deleted at `createdAt + ttl` whatever
//! its status, parked waiters get -32602, running work is told to stop; `max_tasks` caps the
//! store.

use serde_json::{json, Value};
use taskwire_engine::{Event, Owner, Quota, StopReason, TaskSupport, UsageError};
use taskwire_harness::msg::{error_code, error_message, response, with_method};
use taskwire_harness::probe::OWNER;
use taskwire_harness::setup::{server_config, text_result, tool};
use taskwire_harness::Probe;

fn server(max_tasks: usize) -> Probe {
    let mut config = server_config();
    config.tasks.max_tasks = max_tasks;
    Probe::ready_server(config, |s| s.add_tool(tool("job", TaskSupport::Optional)))
}

fn start(d: &mut Probe, ttl: u64) -> Value {
    d.call(
        "tools/call",
        json!({ "name": "job", "arguments": {}, "task": { "ttl": ttl } }),
    )
}

#[test]
fn a_working_task_expires_on_time_and_its_waiters_are_answered() {
    let mut d = server(10);
    start(&mut d, 10_000);
    d.take_events();
    let (parked, _) = d.send("tasks/result", json!({ "taskId": "task-1" }));
    let work = d.work("task-1");
    d.host
        .request_input(d.now, work, "elicitation/create",
            json!({ "mode": "form", "message": "?", "requestedSchema": { "type": "object", "properties": {} } }))
        .unwrap();
    let input = with_method(&d.drain(), "elicitation/create")[0]["id"].clone();
    assert_eq!(d.host.poll_timeout(), Some(d.now.plus(10_000)));

    assert!(d.advance(9_999).is_empty());
    let out = d.advance(1);
    let answer = response(&out, &parked).expect("the parked result is answered at expiry");
    assert_eq!(error_code(answer), Some(-32602));
    assert!(error_message(answer).contains("expired"), "{answer}");
    let withdrawn = with_method(&out, "notifications/cancelled");
    assert_eq!(
        withdrawn.len(),
        1,
        "the input request is withdrawn: {out:?}"
    );
    assert_eq!(withdrawn[0]["params"]["requestId"], input);
    let stops: Vec<_> = d
        .take_events()
        .into_iter()
        .filter_map(|e| match e {
            Event::Stop {
                call,
                reason,
                message,
            } => Some((call, reason, message)),
            _ => None,
        })
        .collect();
    assert_eq!(stops, [(work, StopReason::Expired, None)]);

    for method in ["tasks/get", "tasks/result", "tasks/cancel"] {
        let reply = d.call(method, json!({ "taskId": "task-1" }));
        assert_eq!(error_code(&reply), Some(-32602), "{method}: {reply}");
    }
    // The expired task's work call is gone with it (answers go through calls now).
    assert_eq!(
        d.host.respond(d.now, work, Ok(text_result("too late"))),
        Err(UsageError::UnknownCall(work))
    );
    assert_eq!(d.host.task_count(), 0);
    assert_eq!(d.host.poll_timeout(), None);
}

#[test]
fn a_finished_task_and_its_result_are_deleted_too() {
    let mut d = server(10);
    start(&mut d, 5_000);
    let work = d.work("task-1");
    d.host.respond(d.now, work, Ok(text_result("ok"))).unwrap();
    d.drain();
    d.take_events();
    let reply = d.call("tasks/result", json!({ "taskId": "task-1" }));
    assert_eq!(reply["result"]["content"][0]["text"], "ok");
    d.advance(5_000);
    let reply = d.call("tasks/result", json!({ "taskId": "task-1" }));
    assert_eq!(error_code(&reply), Some(-32602));
    assert!(
        !d.take_events()
            .iter()
            .any(|e| matches!(e, Event::Stop { .. })),
        "nothing was running"
    );
}

#[test]
fn expiry_happens_on_any_input_not_only_on_timeouts() {
    let mut d = server(10);
    start(&mut d, 1_000);
    d.now = d.now.plus(5_000);
    let reply = d.call("tasks/get", json!({ "taskId": "task-1" }));
    assert_eq!(error_code(&reply), Some(-32602), "{reply}");
}

#[test]
fn the_store_is_capped_and_frees_slots_on_expiry() {
    let mut d = server(2);
    start(&mut d, 1_000);
    start(&mut d, 60_000);
    d.take_events();
    let reply = start(&mut d, 60_000);
    assert_eq!(error_code(&reply), Some(-32603), "{reply}");
    assert!(error_message(&reply).contains("limit"), "{reply}");
    assert!(
        d.take_events().is_empty(),
        "a refused call never reaches the app"
    );
    // StoreFull became QuotaExceeded naming the limit (intended change 3).
    assert_eq!(
        d.host
            .create_task(d.now, &Owner::from(OWNER), "extra", None),
        Err(UsageError::QuotaExceeded(Quota::Host(2)))
    );
    assert_eq!(d.host.task_count(), 2);

    d.advance(1_000);
    let reply = start(&mut d, 60_000);
    assert_eq!(reply["result"]["task"]["status"], "working", "{reply}");
    // Plain calls are not tasks and are never capped.
    let (id, out) = d.send("tools/call", json!({ "name": "job", "arguments": {} }));
    assert!(response(&out, &id).is_none());
    d.assert_alive();
}
