//! A task-augmented call to a server that does not do tasks runs plainly (spec §2.1.10,
//! §5.20): the client application gets an ordinary `Response`, no task is followed. After an
//! older version was negotiated, the engine refuses to task-augment at all.

use serde_json::json;
use taskwire_engine::{Config, Event, TaskSupport, UsageError};
use taskwire_harness::setup::{client_config, server_config, text_result, tool};
use taskwire_harness::{Pair, Probe, Side};

fn plain_answer(server: Config) {
    let mut pair = Pair::connected(client_config(), server, |s| {
        s.add_tool(tool("job", TaskSupport::Optional))
    });
    let id = pair
        .client
        .call_tool_as_task(pair.now, pair.cs, "job", json!({}), Some(1_000))
        .unwrap();
    pair.deliver();
    let calls = pair.find(Side::Server, |e| match e {
        Event::ToolCall(c) if c.task.is_none() => Some(c.call),
        _ => None,
    });
    assert_eq!(calls.len(), 1, "run plainly:\n{}", pair.transcript());
    pair.server
        .respond(pair.now, calls[0], Ok(text_result("plain")))
        .unwrap();
    pair.deliver();
    let answers = pair.find(Side::Client, |e| match e {
        Event::Response {
            request, outcome, ..
        } if *request == id => Some(outcome.clone()),
        _ => None,
    });
    assert_eq!(answers.len(), 1);
    assert_eq!(answers[0].as_ref().unwrap()["content"][0]["text"], "plain");
    assert!(pair.client.remote_task_ids(pair.cs).is_empty());
    assert_eq!(
        pair.client.poll_timeout().map(|_| ()),
        None,
        "nothing to poll"
    );
}

#[test]
fn a_server_with_tasks_switched_off() {
    let mut server = server_config();
    server.tasks.enabled = false;
    plain_answer(server);
}

#[test]
fn a_server_that_negotiated_an_older_version() {
    // The engine always offers 2025-11-25; a scripted server picks 2025-06-18.
    let mut d = Probe::ready_client(
        client_config(),
        json!({ "protocolVersion": "2025-06-18", "capabilities": { "tools": {} },
                "serverInfo": { "name": "old", "version": "1" } }),
    );
    assert_eq!(d.host.protocol_version(d.session), Some("2025-06-18"));
    // Tasks do not exist in that version: the engine refuses to send `params.task` ...
    let refused = d
        .host
        .call_tool_as_task(d.now, d.session, "job", json!({}), None);
    assert!(
        matches!(refused, Err(UsageError::NotNegotiated(_))),
        "{refused:?}"
    );
    assert!(d.drain().is_empty(), "nothing goes out");
    // ... and a plain call works as usual.
    let call = d
        .host
        .call_tool(d.now, d.session, "job", json!({}))
        .unwrap();
    d.drain();
    d.reply(
        &taskwire_harness::msg::id_json(&call),
        text_result("old style"),
    );
    let events = d.take_events();
    assert!(
        matches!(&events[..], [Event::Response { outcome: Ok(v), .. }] if v["content"][0]["text"] == "old style"),
        "{events:?}"
    );
}
