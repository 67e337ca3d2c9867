//! A client-hosted task (spec §2.1.3, §2.3.3): the server sends `sampling/createMessage` as a
//! task to a client that declared sampling tasks, then polls the client for it.

use serde_json::{json, Value};
use taskwire_engine::{Event, RpcError, StopReason, TaskId, TaskStatus};
use taskwire_harness::msg::related_task;
use taskwire_harness::setup::{client_config, server_config};
use taskwire_harness::{Pair, Side};

fn sampling_params() -> Value {
    json!({ "messages": [{ "role": "user", "content": { "type": "text", "text": "Summarise." } }],
            "maxTokens": 100 })
}

fn sampled() -> Value {
    json!({ "role": "assistant", "content": { "type": "text", "text": "A summary." },
            "model": "test-model", "stopReason": "endTurn" })
}

fn server_results(pair: &Pair) -> Vec<(TaskId, Result<Value, RpcError>)> {
    pair.find(Side::Server, |e| match e {
        Event::TaskResult { task, outcome, .. } => Some((task.clone(), outcome.clone())),
        _ => None,
    })
}

/// The server asks; returns the client's task id.
fn ask(pair: &mut Pair) -> String {
    pair.server
        .request_as_task(
            pair.now,
            pair.ss,
            "sampling/createMessage",
            sampling_params(),
            Some(120_000),
        )
        .unwrap();
    pair.deliver();
    let created = pair.find(Side::Server, |e| match e {
        Event::TaskCreated { task, .. } => Some(task.clone()),
        _ => None,
    });
    assert_eq!(created.len(), 1, "{}", pair.transcript());
    assert_eq!(created[0].id, "ctask-1", "the client chose the id");
    assert_eq!(created[0].ttl_ms, Some(120_000));
    let requests = pair.find(Side::Client, |e| match e {
        Event::Request(r) => Some((
            r.method.clone(),
            r.task.clone(),
            r.params.as_ref().map(|p| p.get().to_owned()),
        )),
        _ => None,
    });
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].0, "sampling/createMessage");
    assert_eq!(requests[0].1.as_deref(), Some("ctask-1"));
    assert!(requests[0].2.as_deref().unwrap().contains("Summarise."));
    "ctask-1".to_owned()
}

#[test]
fn the_server_polls_a_client_hosted_sampling_task() {
    let mut pair = Pair::connected(client_config(), server_config(), |_| {});
    let task = ask(&mut pair);
    let work = pair.work(Side::Client, &task);
    pair.advance(2_500);
    pair.client
        .set_task_message(pair.now, work, Some("waiting for the model".into()))
        .unwrap();
    pair.advance(2_500);
    pair.client.respond(pair.now, work, Ok(sampled())).unwrap();
    pair.run_until(10_000, |p| !server_results(p).is_empty());

    assert!(
        !pair.sent_method(Side::Server, "tasks/get").is_empty(),
        "the server polled"
    );
    let results = server_results(&pair);
    assert_eq!(results.len(), 1);
    let result = results[0].1.as_ref().unwrap();
    assert_eq!(result["content"]["text"], "A summary.");
    assert_eq!(related_task(result), Some("ctask-1"));
    let changes = pair.find(Side::Server, |e| match e {
        Event::TaskStatus { task, .. } => Some((task.status, task.status_message.clone())),
        _ => None,
    });
    assert_eq!(
        changes,
        [
            (
                TaskStatus::Working,
                Some("waiting for the model".to_owned())
            ),
            (
                TaskStatus::Completed,
                Some("waiting for the model".to_owned())
            ),
        ]
    );
}

#[test]
fn the_server_can_cancel_a_client_hosted_task() {
    let mut pair = Pair::connected(client_config(), server_config(), |_| {});
    let task = ask(&mut pair);
    let work = pair.work(Side::Client, &task);
    pair.server.cancel_task(pair.now, pair.ss, &task).unwrap();
    pair.deliver();
    let stops = pair.find(Side::Client, |e| match e {
        Event::Stop { call, reason, .. } => Some((*call, *reason)),
        _ => None,
    });
    assert_eq!(stops, [(work, StopReason::Cancelled)]);
    pair.advance(1_000);
    let results = server_results(&pair);
    assert_eq!(results.len(), 1);
    assert_eq!(results[0].1.as_ref().unwrap_err().code, -32602);
}

#[test]
fn a_client_without_sampling_tasks_runs_the_request_plainly() {
    let mut client = client_config();
    client.tasks.enabled = false;
    let mut pair = Pair::connected(client, server_config(), |_| {});
    let id = pair
        .server
        .request_as_task(
            pair.now,
            pair.ss,
            "sampling/createMessage",
            sampling_params(),
            None,
        )
        .unwrap();
    pair.deliver();
    let request = pair.find(Side::Client, |e| match e {
        Event::Request(r) if r.task.is_none() => Some(r.call),
        _ => None,
    });
    assert_eq!(request.len(), 1, "params.task ignored");
    pair.client
        .respond(pair.now, request[0], Ok(sampled()))
        .unwrap();
    pair.deliver();
    let answers = pair.find(Side::Server, |e| match e {
        Event::Response {
            request, outcome, ..
        } if *request == id => Some(outcome.clone()),
        _ => None,
    });
    assert_eq!(answers.len(), 1, "a plain answer, not TaskCreated");
    assert_eq!(answers[0].as_ref().unwrap()["model"], "test-model");
}
