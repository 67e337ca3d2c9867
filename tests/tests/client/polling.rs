//! The requestor's polling (spec §2.7.3, §2.12.5): never sooner than `pollInterval` (raised
//! to the client's minimum; honoured up to the task's retention unless the client sets a
//! maximum), pushed back by status notifications (fresh state), stopped at terminal status,
//! and under the application's control.

use serde_json::json;
use taskwire_engine::{Config, Millis, TaskSupport};
use taskwire_harness::setup::{client_config, server_config, text_result, tool};
use taskwire_harness::{Pair, Side};

fn pair(server_poll: Option<u32>) -> Pair {
    pair_with(server_poll, false, client_config())
}

/// A pair whose server suggests `server_poll` and sends status notifications or not.
fn pair_with(server_poll: Option<u32>, notifications: bool, client: Config) -> Pair {
    let mut server: Config = server_config();
    server.tasks.poll_interval_ms = server_poll;
    server.tasks.status_notifications = notifications;
    Pair::connected(client, server, |s| {
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
fn polls_follow_the_servers_interval() {
    let mut pair = pair(Some(2000));
    let created = run(&mut pair, 10_000);
    assert_spacing(&pair, created, 2000);
    // At 2, 4, 6, 8 and 10 s while working, and the one that finds it completed.
    let polls = poll_times(&pair).len();
    assert!((5..=6).contains(&polls), "{polls} polls in 10 s at 2 s");
}

#[test]
fn status_notifications_count_as_fresh_state() {
    // A change every 300 ms, each one notified: the view is never older than the interval,
    // so no poll is needed at all until the notifications stop.
    let mut pair = pair_with(Some(2000), true, client_config());
    let created = run(&mut pair, 10_000);
    assert!(poll_times(&pair).is_empty(), "{}", pair.transcript());
    assert_eq!(pair.task_results().len(), 1);
    // Without them, the same run polls at the interval.
    let mut quiet = pair_with(Some(2000), false, client_config());
    run(&mut quiet, 10_000);
    assert!(poll_times(&quiet).len() >= 4);
    let _ = created;
}

#[test]
fn the_interval_is_raised_to_the_clients_minimum() {
    let mut fast = pair(Some(10));
    let created = run(&mut fast, 2_000);
    assert_spacing(&fast, created, 100);
    let mut zero = pair(Some(0));
    let created = run(&mut zero, 2_000);
    assert_spacing(&zero, created, 100);
}

#[test]
fn long_intervals_are_honoured_up_to_the_tasks_retention() {
    // 40 s, as the server asks (the old client cut it to 30 s).
    let mut slow = pair(Some(40_000));
    let created = run(&mut slow, 100_000);
    assert_spacing(&slow, created, 40_000);
    let at: Vec<u64> = poll_times(&slow).iter().map(|t| t - created.0).collect();
    assert_eq!(
        at,
        [40_000, 80_000, 120_000],
        "the last one finds it completed"
    );
    // Longer than the task's retention (5 min by default): polled just before it runs out.
    let mut longer = pair(Some(10_000_000));
    let created = run(&mut longer, 250_000);
    assert_eq!(poll_times(&longer), [created.0 + 299_900]);
    assert!(matches!(longer.task_results()[..], [Ok(_)]));
    // A client may still set a maximum.
    let mut capped_config = client_config();
    capped_config.polling.max_interval_ms = Some(30_000);
    let mut capped = pair_with(Some(10_000_000), false, capped_config);
    let created = run(&mut capped, 65_000);
    assert_spacing(&capped, created, 30_000);
    let at: Vec<u64> = poll_times(&capped).iter().map(|t| t - created.0).collect();
    assert_eq!(at, [30_000, 60_000, 90_000]);
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
    let mut pair = pair_with(Some(500), true, client_config());
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
