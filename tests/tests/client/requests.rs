//! What the client puts on the wire for the application's commands: valid requests only
//! (every line is also schema-checked by the harness).

use serde_json::{json, Value};
use taskwire_engine::{Event, LogLevel, Request, UsageError};
use taskwire_harness::setup::{client_config, server_config};
use taskwire_harness::{Pair, Probe, Side};

fn ready() -> Probe {
    Probe::ready_client(
        client_config(),
        json!({ "protocolVersion": "2025-11-25",
                "capabilities": { "tools": {}, "tasks": { "requests": { "tools": { "call": {} } } } },
                "serverInfo": { "name": "s", "version": "1" } }),
    )
}

#[test]
fn tool_calls_carry_name_arguments_and_task() {
    let mut d = ready();
    let now = d.now;
    let s = d.session;
    d.host
        .call_tool(now, s, "echo", json!({ "text": "hi" }))
        .unwrap();
    d.host
        .call_tool_as_task(now, s, "echo", json!({}), Some(5_000))
        .unwrap();
    d.host
        .call_tool_as_task(now, s, "echo", json!({}), None)
        .unwrap();
    let out = d.drain();
    assert_eq!(
        out[0]["params"],
        json!({ "name": "echo", "arguments": { "text": "hi" } })
    );
    assert_eq!(out[1]["params"]["task"], json!({ "ttl": 5000 }));
    assert_eq!(out[2]["params"]["task"], json!({}));
}

#[test]
fn absent_arguments_are_omitted_and_non_objects_refused() {
    let mut d = ready();
    let now = d.now;
    let s = d.session;
    d.host.call_tool(now, s, "noargs", Value::Null).unwrap();
    d.host
        .call_tool_as_task(now, s, "noargs", Value::Null, None)
        .unwrap();
    let out = d.drain();
    assert_eq!(out[0]["params"], json!({ "name": "noargs" }));
    // A task call asks for progress, its request id the token.
    assert_eq!(
        out[1]["params"],
        json!({ "name": "noargs", "task": {}, "_meta": { "progressToken": out[1]["id"] } })
    );
    // Intended change: `UsageError::Invalid(_)` became the precise `NotAnObject`.
    for bad in [json!([1]), json!("x"), json!(3)] {
        assert!(matches!(
            d.host.call_tool(now, s, "t", bad.clone()),
            Err(UsageError::NotAnObject(_))
        ));
        assert!(matches!(
            d.host.call_tool_as_task(now, s, "t", bad, None),
            Err(UsageError::NotAnObject(_))
        ));
    }
    assert!(d.drain().is_empty(), "refused commands send nothing");
}

#[test]
fn commands_before_the_handshake_are_refused() {
    let mut d = Probe::client(client_config());
    let now = d.now;
    let s = d.session;
    // Intended change: `NotInitialized` names the session.
    assert_eq!(
        d.host.call_tool(now, s, "x", json!({})),
        Err(UsageError::NotInitialized(s))
    );
    assert_eq!(
        d.host.get_task(now, s, "t"),
        Err(UsageError::NotInitialized(s))
    );
    assert!(d.drain().is_empty());
}

/// `Request::SetLogLevel` goes out as `logging/setLevel` with the level's wire name, and the
/// server's `{}` answers it.
#[test]
fn set_log_level_is_logging_set_level() {
    let mut server = server_config();
    server.logging = true;
    let mut pair = Pair::connected(client_config(), server, |_| {});
    let (host, session) = pair.session(Side::Client);
    let level = LogLevel::Warning;
    let id = host
        .send(host.now(), session, Request::SetLogLevel { level })
        .unwrap();
    pair.run_until_quiet();
    let sent = pair.sent_method(Side::Client, "logging/setLevel");
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].json["params"], json!({ "level": "warning" }));
    let answers = pair.find(Side::Client, |e| match e {
        Event::Response {
            request, outcome, ..
        } if *request == id => Some(outcome.clone()),
        _ => None,
    });
    assert_eq!(answers, vec![Ok(json!({}))]);
}
