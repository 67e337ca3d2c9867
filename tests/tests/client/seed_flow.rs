//! The seed's whole demo through a client and a server engine: list tools, call
//! `long_running_task` as a task, watch three status messages one second apart, get
//! "任务完成！".

use serde_json::json;
use taskwire_engine::{Event, TaskStatus, TaskSupport};
use taskwire_harness::msg::related_task;
use taskwire_harness::setup::{client_config, first_text, server_config, text_result, tool};
use taskwire_harness::{Pair, Side};

const STEPS: [&str; 3] = ["开始执行...", "处理步骤 1...", "处理步骤 2..."];

fn seed_pair() -> Pair {
    Pair::connected(client_config(), server_config(), |s| {
        s.add_tool(
            tool("long_running_task", TaskSupport::Optional)
                .with_description("一个需要几秒钟完成的任务，会输出进度状态。"),
        )
    })
}

/// Runs the seed's flow; returns the pair after the client got its result.
fn run_seed(pair: &mut Pair) {
    let list = pair.client.list_tools(pair.now, pair.cs, None).unwrap();
    pair.deliver();
    let pages = pair.find(Side::Client, |e| match e {
        Event::ToolPage {
            request,
            outcome: Ok(page),
            ..
        } if *request == list => Some(page.clone()),
        _ => None,
    });
    assert_eq!(pages[0].tools[0].name, "long_running_task");
    assert_eq!(
        pages[0].tools[0].execution.task_support,
        TaskSupport::Optional
    );

    pair.client
        .call_tool_as_task(
            pair.now,
            pair.cs,
            "long_running_task",
            json!({}),
            Some(60_000),
        )
        .unwrap();
    pair.deliver();
    let calls = pair.find(Side::Server, |e| match e {
        Event::ToolCall(c) => Some((c.task.clone(), c.name.clone())),
        _ => None,
    });
    assert_eq!(
        calls,
        [(Some("task-1".into()), "long_running_task".to_owned())]
    );

    let work = pair.work(Side::Server, "task-1");
    for step in STEPS {
        pair.server
            .set_task_message(pair.now, work, Some(step.into()))
            .unwrap();
        pair.advance(1000);
    }
    pair.server
        .respond(pair.now, work, Ok(text_result("任务完成！")))
        .unwrap();
    pair.run_until_task_result(10_000);
    pair.advance(5_000);
}

#[test]
fn the_client_sees_creation_each_status_once_and_the_result() {
    let mut pair = seed_pair();
    run_seed(&mut pair);

    let created = pair.find(Side::Client, |e| match e {
        Event::TaskCreated { task, .. } => Some(task.clone()),
        _ => None,
    });
    assert_eq!(created.len(), 1);
    assert_eq!(created[0].id, "task-1");
    assert_eq!(created[0].ttl_ms, Some(60_000));

    let changes = pair.find(Side::Client, |e| match e {
        Event::TaskStatus { task, .. } => Some((task.status, task.status_message.clone())),
        _ => None,
    });
    let expected: Vec<_> = STEPS
        .iter()
        .map(|m| (TaskStatus::Working, Some(m.to_string())))
        .chain([(TaskStatus::Completed, Some(STEPS[2].to_string()))])
        .collect();
    assert_eq!(changes, expected);

    let results = pair.find(Side::Client, |e| match e {
        Event::TaskResult { task, outcome, .. } => Some((task.clone(), outcome.clone())),
        _ => None,
    });
    assert_eq!(results.len(), 1, "reported once");
    let (task, outcome) = &results[0];
    assert_eq!(task, "task-1");
    let result = outcome.as_ref().expect("a success");
    assert_eq!(first_text(result), Some("任务完成！"));
    assert_eq!(related_task(result), Some("task-1"));

    assert!(
        pair.client.remote_task_ids(pair.cs).is_empty(),
        "forgotten once reported"
    );
    assert!(pair
        .find(Side::Client, |e| match e {
            Event::PeerError { message, .. } => Some(message.clone()),
            _ => None,
        })
        .is_empty());
}

#[test]
fn the_client_polls_while_working_and_fetches_the_result_once() {
    let mut pair = seed_pair();
    run_seed(&mut pair);
    let gets = pair.sent_method(Side::Client, "tasks/get");
    // 3 s of work at the server's pollInterval of 500 ms.
    assert!(
        (5..=7).contains(&gets.len()),
        "{} polls:\n{}",
        gets.len(),
        pair.transcript()
    );
    assert_eq!(pair.sent_method(Side::Client, "tasks/result").len(), 1);
    let last_get = gets.last().unwrap().at;
    let completed_at = pair
        .sent_method(Side::Server, "notifications/tasks/status")
        .iter()
        .find(|s| s.json["params"]["status"] == "completed")
        .unwrap()
        .at;
    assert!(last_get <= completed_at, "no polling once terminal");
    assert_eq!(
        pair.client.poll_timeout(),
        None,
        "nothing left to do on the client"
    );
}

#[test]
fn the_server_keeps_the_finished_task_until_its_ttl() {
    let mut pair = seed_pair();
    run_seed(&mut pair);
    let task = pair.server.task("task-1").expect("kept after completion");
    assert_eq!(task.info.status, TaskStatus::Completed);
    pair.run_until_quiet();
    assert!(pair.server.task("task-1").is_none(), "gone after 60 s");
}
