//! The `input_required` round trip between two engines (spec §2.13, §5.9): the server's task
//! asks for an elicitation, the client app answers it, the task resumes and finishes.

use serde_json::{json, Value};
use taskwire_engine::{CallId, Event, TaskId, TaskStatus, TaskSupport};
use taskwire_harness::msg::related_task;
use taskwire_harness::setup::{client_config, first_text, server_config, text_result, tool};
use taskwire_harness::{Pair, Side};

fn form() -> Value {
    json!({ "mode": "form", "message": "Reindex 1.2M documents?",
            "requestedSchema": { "type": "object",
                "properties": { "confirm": { "type": "boolean" } }, "required": ["confirm"] } })
}

#[test]
fn elicitation_round_trip_in_input_required() {
    let mut pair = Pair::connected(client_config(), server_config(), |s| {
        s.add_tool(tool("reindex_all", TaskSupport::Required))
    });
    pair.client
        .call_tool_as_task(pair.now, pair.cs, "reindex_all", json!({}), None)
        .unwrap();
    pair.deliver();
    pair.advance(700);

    let work = pair.work(Side::Server, "task-1");
    let asked = pair
        .server
        .request_input(pair.now, work, "elicitation/create", form())
        .unwrap();
    pair.deliver();

    // The client learns of input_required and parks a tasks/result straight away.
    assert_eq!(pair.sent_method(Side::Client, "tasks/result").len(), 1);
    let requests: Vec<(CallId, String, Option<TaskId>, Option<TaskId>)> =
        pair.find(Side::Client, |e| match e {
            Event::Request(r) => Some((
                r.call,
                r.method.clone(),
                r.task.clone(),
                r.related_task.clone(),
            )),
            _ => None,
        });
    assert_eq!(requests.len(), 1);
    let (request, method, task, related) = &requests[0];
    assert_eq!(method, "elicitation/create");
    assert_eq!(
        (task.as_deref(), related.as_deref()),
        (None, Some("task-1"))
    );
    let statuses = pair.find(Side::Client, |e| match e {
        Event::TaskStatus { task, .. } => Some(task.status),
        _ => None,
    });
    assert_eq!(statuses, [TaskStatus::InputRequired]);

    pair.advance(3_000);
    pair.client
        .respond(
            pair.now,
            *request,
            Ok(json!({ "action": "accept", "content": { "confirm": true } })),
        )
        .unwrap();
    pair.deliver();
    let reply = pair
        .sent_by(Side::Client)
        .find(|s| s.json.get("result").is_some() && s.json["result"]["action"] == "accept")
        .expect("the answer went out");
    assert_eq!(
        related_task(&reply.json["result"]),
        Some("task-1"),
        "§2.13.2"
    );
    let inputs = pair.find(Side::Server, |e| match e {
        Event::InputResponse {
            call,
            input,
            outcome,
        } => Some((*call, *input, outcome.clone())),
        _ => None,
    });
    assert_eq!(inputs.len(), 1);
    assert_eq!(inputs[0].0, work, "the input is for the task's work");
    assert_eq!(inputs[0].1, asked);
    assert_eq!(inputs[0].2.as_ref().unwrap()["content"]["confirm"], true);

    pair.advance(1_000);
    pair.server
        .respond(
            pair.now,
            work,
            Ok(text_result("Reindexed 1204331 documents.")),
        )
        .unwrap();
    let results = pair.run_until_task_result(5_000);
    assert_eq!(
        first_text(results[0].as_ref().unwrap()),
        Some("Reindexed 1204331 documents.")
    );
    let statuses = pair.find(Side::Client, |e| match e {
        Event::TaskStatus { task, .. } => Some(task.status),
        _ => None,
    });
    assert_eq!(
        statuses,
        [
            TaskStatus::InputRequired,
            TaskStatus::Working,
            TaskStatus::Completed
        ]
    );
    assert_eq!(
        pair.sent_method(Side::Client, "tasks/result").len(),
        1,
        "the parked fetch delivered the result"
    );
}

#[test]
fn a_client_without_elicitation_cannot_be_asked() {
    let mut client = client_config();
    client.client.elicitation = false;
    let mut pair = Pair::connected(client, server_config(), |s| {
        s.add_tool(tool("job", TaskSupport::Optional))
    });
    pair.client
        .call_tool_as_task(pair.now, pair.cs, "job", json!({}), None)
        .unwrap();
    pair.deliver();
    let work = pair.work(Side::Server, "task-1");
    assert!(pair
        .server
        .request_input(pair.now, work, "elicitation/create", form())
        .is_err());
    // A server that sends it anyway gets -32601 from the client.
    let id = pair
        .server
        .request(pair.now, pair.ss, "elicitation/create", Some(form()))
        .unwrap();
    pair.deliver();
    let answers = pair.find(Side::Server, |e| match e {
        Event::Response {
            request,
            outcome: Err(e),
            ..
        } if *request == id => Some(e.code),
        _ => None,
    });
    assert_eq!(answers, [-32601]);
}
