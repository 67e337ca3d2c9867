//! Task quotas (issue 11): a cap for the host and one per owner. Over either, the call gets
//! -32603 naming the limit, no task is created, and other owners keep working. Finished
//! tasks count until they expire or the application removes them.

use serde_json::{json, Value};
use taskwire_engine::{Config, Owner, Quota, SessionId, TaskSupport, UsageError};
use taskwire_harness::msg::{error_code, error_message};
use taskwire_harness::setup::{server_config, text_result, tool};
use taskwire_harness::Probe;

fn config(host: usize, per_owner: usize) -> Config {
    let mut config = server_config();
    config.tasks.max_tasks = host;
    config.tasks.max_tasks_per_owner = per_owner;
    config.tasks.default_ttl_ms = Some(10_000);
    config
}

fn server(config: Config) -> Probe {
    Probe::ready_server(config, |h| h.add_tool(tool("job", TaskSupport::Optional)))
}

fn task_call(d: &mut Probe, session: SessionId) -> Value {
    d.call_on(
        session,
        "tools/call",
        json!({ "name": "job", "arguments": {}, "task": {} }),
    )
}

#[test]
fn one_noisy_owner_cannot_lock_out_the_others() {
    let mut d = server(config(10, 3));
    let (noisy, quiet) = (d.session, d.open("quiet"));
    for _ in 0..3 {
        assert!(task_call(&mut d, noisy)["result"]["task"].is_object());
    }
    let refused = task_call(&mut d, noisy);
    assert_eq!(error_code(&refused), Some(-32603), "{refused}");
    assert!(
        error_message(&refused).contains("max_tasks_per_owner")
            && error_message(&refused).contains('3'),
        "the error names the limit: {refused}"
    );
    assert_eq!(d.host.task_count(), 3, "no task was created");
    assert!(task_call(&mut d, quiet)["result"]["task"].is_object());
    assert_eq!(d.host.owner_task_count(&Owner::from("quiet")), 1);
}

#[test]
fn the_host_cap_holds_across_owners() {
    let mut d = server(config(4, 3));
    let (a, b) = (d.session, d.open("b"));
    for session in [a, a, b, b] {
        assert!(task_call(&mut d, session)["result"]["task"].is_object());
    }
    for session in [a, b] {
        let refused = task_call(&mut d, session);
        assert_eq!(error_code(&refused), Some(-32603));
        assert!(error_message(&refused).contains("max_tasks"), "{refused}");
    }
    // Plain calls and reads still work.
    d.assert_alive();
    let listed = d.call_on(a, "tasks/list", json!({}));
    assert_eq!(listed["result"]["tasks"].as_array().map(Vec::len), Some(2));
}

#[test]
fn finished_tasks_count_until_they_expire_or_are_removed() {
    let mut d = server(config(10, 2));
    let s = d.session;
    for _ in 0..2 {
        task_call(&mut d, s);
    }
    let now = d.now;
    for call in d.tool_calls() {
        d.host.respond(now, call, Ok(text_result("done"))).unwrap();
    }
    d.drain();
    assert_eq!(
        error_code(&task_call(&mut d, s)),
        Some(-32603),
        "completed tasks count"
    );
    // The application removes one: room for one more.
    let first = d.host.task("task-1").map(|t| t.info.id).expect("task-1");
    d.host.remove_task(now, &first).unwrap();
    assert!(task_call(&mut d, s)["result"]["task"].is_object());
    assert_eq!(error_code(&task_call(&mut d, s)), Some(-32603));
    // Retention runs out: room again.
    d.advance(10_000);
    assert_eq!(d.host.task_count(), 0);
    assert!(task_call(&mut d, s)["result"]["task"].is_object());
}

#[test]
fn app_created_tasks_obey_the_same_quotas() {
    let mut d = server(config(3, 2));
    let now = d.now;
    let peer = Owner::from(taskwire_harness::probe::OWNER);
    d.host.create_task(now, &peer, "a", None).unwrap();
    d.host.create_task(now, &peer, "b", None).unwrap();
    assert_eq!(
        d.host.create_task(now, &peer, "c", None),
        Err(UsageError::QuotaExceeded(Quota::Owner(2)))
    );
    d.host
        .create_task(now, &Owner::from("other"), "c", None)
        .unwrap();
    assert_eq!(
        d.host.create_task(now, &Owner::from("third"), "d", None),
        Err(UsageError::QuotaExceeded(Quota::Host(3)))
    );
}

#[test]
fn the_defaults_hold_far_more_than_the_old_1024_tasks_per_window() {
    // Today's defaults: 100,000 on the host, 10,000 per owner (finished tasks count).
    let mut d = server(server_config());
    let s = d.session;
    for i in 0..1_100 {
        let reply = task_call(&mut d, s);
        assert!(reply["result"]["task"].is_object(), "call {i}: {reply}");
        d.lines.clear();
        d.transmits.clear();
    }
    assert_eq!(d.host.task_count(), 1_100);
}
