//! One host, three sessions, two owners (issue 11): tasks belong to their owner. Another
//! owner gets exactly what an unknown id gets; any session of the same owner reads, waits
//! for and cancels them, and hears about their changes once it follows them.

use serde_json::{json, Value};
use taskwire_engine::{Event, SessionId, StopReason, TaskSupport};
use taskwire_harness::msg::{error_code, error_message};
use taskwire_harness::setup::{server_config, text_result, tool};
use taskwire_harness::Probe;

/// `alice` (the probe's first session, owner "peer"), `alice_again` (same owner, a second
/// connection) and `bob` (another owner), all initialized.
fn three_sessions() -> (Probe, SessionId, SessionId, SessionId) {
    let mut d = Probe::ready_server(server_config(), |h| {
        h.add_tool(tool("job", TaskSupport::Optional))
    });
    let alice = d.session;
    let alice_again = d.open(taskwire_harness::probe::OWNER);
    let bob = d.open("bob");
    d.clear();
    (d, alice, alice_again, bob)
}

/// Starts a task of `job` on `session`; returns its id.
fn start_task(d: &mut Probe, session: SessionId) -> String {
    let reply = d.call_on(
        session,
        "tools/call",
        json!({ "name": "job", "arguments": {}, "task": { "ttl": 60_000 } }),
    );
    reply["result"]["task"]["taskId"]
        .as_str()
        .expect("a task")
        .to_owned()
}

fn messages_to(out: &[(SessionId, Value)], session: SessionId) -> Vec<&Value> {
    out.iter()
        .filter(|(s, _)| *s == session)
        .map(|(_, v)| v)
        .collect()
}

#[test]
fn another_owner_sees_exactly_what_an_unknown_id_gets() {
    let (mut d, alice, _, bob) = three_sessions();
    let task = start_task(&mut d, alice);
    for method in ["tasks/get", "tasks/result", "tasks/cancel"] {
        let foreign = d.call_on(bob, method, json!({ "taskId": task }));
        let unknown = d.call_on(bob, method, json!({ "taskId": "no-such-task" }));
        assert_eq!(error_code(&foreign), Some(-32602), "{method}: {foreign}");
        assert_eq!(
            foreign["error"], unknown["error"],
            "{method} must not leak existence"
        );
    }
    let listed = d.call_on(bob, "tasks/list", json!({}));
    assert_eq!(listed["result"], json!({ "tasks": [] }));
    // Bob's cancel did nothing: the task still runs for alice.
    let got = d.call_on(alice, "tasks/get", json!({ "taskId": task }));
    assert_eq!(got["result"]["status"], "working");
}

#[test]
fn lists_hold_only_the_callers_tasks() {
    let (mut d, alice, alice_again, bob) = three_sessions();
    let a1 = start_task(&mut d, alice);
    let b1 = start_task(&mut d, bob);
    let a2 = start_task(&mut d, alice_again);
    let ids = |v: &Value| -> Vec<String> {
        v["result"]["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["taskId"].as_str().unwrap().to_owned())
            .collect()
    };
    let alice_list = d.call_on(alice, "tasks/list", json!({}));
    assert_eq!(ids(&alice_list), [a1.clone(), a2.clone()]);
    let again = d.call_on(alice_again, "tasks/list", json!({}));
    assert_eq!(ids(&again), [a1, a2]);
    assert_eq!(ids(&d.call_on(bob, "tasks/list", json!({}))), [b1]);
}

#[test]
fn a_reconnecting_owner_picks_up_its_task_and_its_result() {
    let (mut d, alice, alice_again, bob) = three_sessions();
    let task = start_task(&mut d, alice);
    let work = d.work(&task);
    // The first connection goes away; the task lives on.
    let now = d.now;
    d.host.close(now, alice);
    d.drain();
    assert!(d.host.is_closed(alice));
    assert!(
        !d.take_events()
            .iter()
            .any(|e| matches!(e, Event::Stop { call, .. } if *call == work)),
        "closing a session does not stop its tasks"
    );
    // The second connection of the same owner waits for the result.
    let (parked, out) = d.send_on(alice_again, "tasks/result", json!({ "taskId": task }));
    assert!(out.is_empty(), "tasks/result waits for the work: {out:?}");
    let now = d.now;
    d.host
        .respond(now, work, Ok(text_result("finished")))
        .unwrap();
    let out = d.drain_addressed();
    assert!(
        messages_to(&out, bob).is_empty(),
        "bob hears nothing: {out:?}"
    );
    let to_alice = messages_to(&out, alice_again);
    let status: Vec<&str> = to_alice
        .iter()
        .filter(|m| m["method"] == "notifications/tasks/status")
        .map(|m| m["params"]["status"].as_str().unwrap())
        .collect();
    assert_eq!(
        status,
        ["completed"],
        "the waiting session follows the task"
    );
    let answer = to_alice
        .iter()
        .find(|m| m["id"] == parked)
        .expect("the parked result is answered on the new connection");
    assert_eq!(answer["result"]["content"][0]["text"], "finished");
    assert_eq!(
        answer["result"]["_meta"]["io.modelcontextprotocol/related-task"]["taskId"],
        task.as_str()
    );
}

#[test]
fn a_same_owner_session_cancels_and_the_work_stops() {
    let (mut d, alice, alice_again, bob) = three_sessions();
    let task = start_task(&mut d, alice);
    let work = d.work(&task);
    let refused = d.call_on(bob, "tasks/cancel", json!({ "taskId": task }));
    assert_eq!(error_code(&refused), Some(-32602));
    assert!(error_message(&refused).contains("not found"), "{refused}");
    d.take_events();
    let (id, out) = d.send_on(alice_again, "tasks/cancel", json!({ "taskId": task }));
    let answer = out
        .iter()
        .find(|(s, m)| *s == alice_again && m["id"] == id)
        .expect("answered");
    assert_eq!(answer.1["result"]["status"], "cancelled");
    // The creating session follows the task, so it hears of the cancel too.
    assert!(
        messages_to(&out, alice)
            .iter()
            .any(|m| m["method"] == "notifications/tasks/status"
                && m["params"]["status"] == "cancelled"),
        "{out:?}"
    );
    assert!(messages_to(&out, bob).is_empty());
    let stops: Vec<_> = d
        .take_events()
        .into_iter()
        .filter_map(|e| match e {
            Event::Stop { call, reason, .. } => Some((call, reason)),
            _ => None,
        })
        .collect();
    assert_eq!(stops, [(work, StopReason::Cancelled)]);
}

#[test]
fn tasks_get_from_another_session_makes_it_a_follower() {
    let (mut d, alice, alice_again, _) = three_sessions();
    let task = start_task(&mut d, alice);
    let got = d.call_on(alice_again, "tasks/get", json!({ "taskId": task }));
    assert_eq!(got["result"]["status"], "working");
    let (now, work) = (d.now, d.work(&task));
    d.host
        .set_task_message(now, work, Some("half way".into()))
        .unwrap();
    let out = d.drain_addressed();
    for session in [alice, alice_again] {
        let notes = messages_to(&out, session);
        assert_eq!(notes.len(), 1, "{out:?}");
        assert_eq!(notes[0]["params"]["statusMessage"], "half way");
    }
}

/// Sessions of owners of their own (a 2025-11-25 HTTP session without authentication owns
/// its tasks) that come and go leave nothing behind: once each is closed, and each task it
/// made has expired, the host holds what it held before. (Issue 37: the owner table grew by
/// one entry per session, forever.)
#[test]
fn owners_that_came_and_went_are_forgotten() {
    let (mut d, _, _, _) = three_sessions();
    let before = d.host.footprint();
    let churn = |d: &mut Probe, n: usize, task: bool| {
        for i in 0..n {
            let session = d.open(&format!("session:{i}"));
            let params = if task {
                json!({ "name": "job", "arguments": {}, "task": { "ttl": 1_000 } })
            } else {
                json!({ "name": "job", "arguments": {} })
            };
            let (id, _) = d.send_on(session, "tools/call", params);
            let (now, call) = (d.now, d.call_for(&id));
            d.host.respond(now, call, Ok(text_result("done"))).unwrap();
            d.host.close(now, session);
            d.drain();
            d.take_events();
        }
    };
    churn(&mut d, 2_000, false);
    assert_eq!(d.host.footprint(), before, "plain calls leave nothing");
    churn(&mut d, 2_000, true);
    assert_eq!(d.host.footprint().tasks, before.tasks + 2_000);
    assert_eq!(d.host.footprint().sessions, before.sessions);
    d.advance(1_001);
    let after = d.host.footprint();
    assert_eq!(after.tasks, before.tasks, "every task expired");
    // Expired tasks are remembered (so asking says "expired"), 1,024 at most, each naming
    // its owner; the owners of the others are forgotten.
    assert_eq!(after.owners, before.owners + 1_024);
    assert_eq!(after.calls, before.calls);
}
