//! The requestor's polling (spec §2.7.3, §2.12.5): never sooner than `pollInterval` (clamped
//! to the client's bounds), not driven by status notifications, stopped at terminal status,
//! and under the application's control.

use serde_json::json;
use taskwire_engine::{Config, Millis, TaskSupport};
use taskwire_tests::setup::{client_config, server_config, text_result, tool};
use taskwire_tests::{Pair, Side};

fn pair(server_poll: Option<u32>) -> Pair {
    let mut server: Config = server_config();
    server.tasks.poll_interval_ms = server_poll;
    Pair::connected(client_config(), server, |s| {
        s.add_tool(tool("job", TaskSupport::Optional))
    })
}

/// Starts a task, keeps it working for `ms` with a status change every 300 ms, completes it.
fn run(pair: &mut Pair, ms: u64) -> Millis {
    pair.client
        .call_tool_as_task(pair.now, pair.cs, "job", json!({}), None)
        .unwrap();
    pair.deliver();
    let work = pair.work(Side::Server, "task-1");
    let created = pair.now;
    let mut elapsed = 0;
    while elapsed < ms {
        let step = 300.min(ms - elapsed);
        pair.advance(step);
        elapsed += step;
        pair.server
            .set_task_message(pair.now, work, Some(format!("at {elapsed}")))
            .unwrap();
    }
    pair.server
        .respond(pair.now, work, Ok(text_result("ok")))
        .unwrap();
    pair.run_until_task_result(60_000);
    created
}

fn poll_times(pair: &Pair) -> Vec<u64> {
    pair.sent_method(Side::Client, "tasks/get")
        .iter()
        .map(|s| s.at.0)
        .collect()
}

fn assert_spacing(pair: &Pair, created: Millis, interval: u64) {
    let times = poll_times(pair);
    assert!(!times.is_empty());
    assert!(times[0] >= created.0 + interval, "first poll too early");
    for w in times.windows(2) {
        assert!(
            w[1] - w[0] >= interval,
            "polls {} ms apart, interval {interval}:\n{}",
            w[1] - w[0],
            pair.transcript()
        );
    }
}

#[test]
fn polls_follow_the_servers_interval_despite_notifications() {
    let mut pair = pair(Some(2000));
    let created = run(&mut pair, 10_000);
    assert_spacing(&pair, created, 2000);
    let polls = poll_times(&pair).len();
    assert!((4..=5).contains(&polls), "{polls} polls in 10 s at 2 s");
}

#[test]
fn the_interval_is_clamped_to_the_clients_bounds() {
    let mut pair_fast = pair(Some(10));
    let created = run(&mut pair_fast, 2_000);
    assert_spacing(&pair_fast, created, 100);

    let mut pair_slow = pair(Some(10_000_000));
    let created = run(&mut pair_slow, 65_000);
    assert_spacing(&pair_slow, created, 30_000);
    assert_eq!(poll_times(&pair_slow).len(), 2);
}

#[test]
fn without_a_suggestion_the_default_interval_applies() {
    let mut pair = pair(None);
    let created = run(&mut pair, 5_000);
    assert_spacing(&pair, created, 1000);
    assert!(poll_times(&pair).len() >= 4);
}

#[test]
fn the_application_can_stop_and_resume_polling() {
    let mut pair = pair(Some(500));
    pair.client
        .call_tool_as_task(pair.now, pair.cs, "job", json!({}), None)
        .unwrap();
    pair.deliver();
    let work = pair.work(Side::Server, "task-1");
    pair.client.set_auto_poll(pair.cs, "task-1", false).unwrap();
    pair.advance(5_000);
    assert!(poll_times(&pair).is_empty());
    // Off, the client still learns of changes from notifications, but fetches nothing.
    pair.server
        .respond(pair.now, work, Ok(text_result("ok")))
        .unwrap();
    pair.advance(5_000);
    assert!(pair.sent_method(Side::Client, "tasks/result").is_empty());
    assert_eq!(
        pair.client
            .remote_task(pair.cs, "task-1")
            .map(|t| t.status.as_str()),
        Some("completed")
    );
    pair.client.set_auto_poll(pair.cs, "task-1", true).unwrap();
    pair.deliver();
    assert_eq!(pair.sent_method(Side::Client, "tasks/result").len(), 1);
    assert!(pair.client.set_auto_poll(pair.cs, "nope", true).is_err());
}
