//! Methods the engine does not own reach the application (issue 11 §5): requests listed in
//! `Config::app_methods` as `Event::Request` to answer, other notifications as
//! `Event::Notification`; the application's capabilities are merged into the handshake.
//! The engine keeps the handshake, `ping`, `tools/*` and `tasks/*`.

use serde_json::{json, Value};
use taskwire_engine::{Config, Event, LogLevel, PeerErrorKind, RpcError, TaskSupport};
use taskwire_harness::msg::{error_code, response};
use taskwire_harness::setup::{client_config, initialize_params, server_config, tool};
use taskwire_harness::Probe;

fn app_config(mut config: Config) -> Config {
    config.app_methods = vec![
        "resources/*".into(),
        "prompts/list".into(),
        "tools/*".into(),
        "custom/echo".into(),
    ];
    config.app_capabilities = serde_json::from_value(json!({
        "resources": { "subscribe": false },
        "prompts": {},
        "tools": { "listChanged": true },
        "logging": {}
    }))
    .unwrap();
    config
}

fn requests(events: &[Event]) -> Vec<(String, Option<Value>)> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::Request(r) => Some((
                r.method.clone(),
                r.params
                    .as_ref()
                    .map(|p| serde_json::from_str(p.get()).unwrap()),
            )),
            _ => None,
        })
        .collect()
}

#[test]
fn a_server_application_answers_its_own_methods() {
    let mut d = Probe::server(app_config(server_config()));
    d.host.add_tool(tool("job", TaskSupport::Optional));
    let reply = d.call("initialize", initialize_params("2025-11-25", json!({})));
    let caps = &reply["result"]["capabilities"];
    assert_eq!(caps["resources"], json!({ "subscribe": false }));
    assert_eq!(caps["prompts"], json!({}));
    assert_eq!(caps["logging"], json!({}));
    assert_eq!(
        caps["tools"],
        json!({ "listChanged": false }),
        "the engine's keys win"
    );
    assert!(caps["tasks"].is_object());
    d.take_events();

    let (read, out) = d.send("resources/read", json!({ "uri": "file:///a" }));
    assert!(out.is_empty(), "the application answers: {out:?}");
    assert_eq!(
        requests(&d.events),
        [(
            "resources/read".to_owned(),
            Some(json!({ "uri": "file:///a" }))
        )]
    );
    let call = d.call_for(&read);
    let now = d.now;
    d.host
        .respond(now, call, Ok(json!({ "contents": [] })))
        .unwrap();
    let out = d.drain();
    assert_eq!(
        response(&out, &read).unwrap()["result"],
        json!({ "contents": [] })
    );

    // An error answer goes back as the JSON-RPC error.
    let (list, _) = d.send("prompts/list", json!({}));
    let call = d.call_for(&list);
    d.host
        .respond(now, call, Err(RpcError::invalid_params("no prompts today")))
        .unwrap();
    let out = d.drain();
    assert_eq!(error_code(response(&out, &list).unwrap()), Some(-32602));

    // Unlisted methods are still -32601, reported with their name.
    d.take_events();
    let reply = d.call("prompts/get", json!({ "name": "x" }));
    assert_eq!(error_code(&reply), Some(-32601));
    assert!(d.take_events().iter().any(|e| matches!(e,
        Event::PeerError { kind: PeerErrorKind::UnknownMethod(m), .. } if m == "prompts/get")));

    // `tools/*` stays the engine's even when the application lists it.
    let listed = d.call("tools/list", json!({}));
    assert_eq!(listed["result"]["tools"][0]["name"], "job");
    assert!(requests(&d.take_events()).is_empty());
}

#[test]
fn notifications_the_engine_does_not_own_reach_the_application() {
    let mut d = Probe::ready_server(server_config(), |_| {});
    let out = d.notify(
        "notifications/roots/list_changed",
        Some(json!({ "_meta": { "x": 1 } })),
    );
    assert!(out.is_empty());
    let seen: Vec<_> = d
        .take_events()
        .into_iter()
        .filter_map(|e| match e {
            Event::Notification { method, params, .. } => {
                Some((method, params.map(|p| p.get().to_owned())))
            }
            _ => None,
        })
        .collect();
    assert_eq!(
        seen,
        [(
            "notifications/roots/list_changed".to_owned(),
            Some(r#"{"_meta":{"x":1}}"#.to_owned())
        )]
    );
}

#[test]
fn a_client_application_answers_the_servers_custom_requests() {
    let server_init = json!({
        "protocolVersion": "2025-11-25", "capabilities": {},
        "serverInfo": { "name": "s", "version": "1" }
    });
    let mut config = app_config(client_config());
    config.app_methods.push("resources/updated".into());
    let mut d = Probe::client(config);
    d.host.initialize(d.now, d.session).unwrap();
    let init = d.drain().remove(0);
    assert_eq!(
        init["params"]["capabilities"]["resources"],
        json!({ "subscribe": false }),
        "a client's application capabilities are declared too"
    );
    d.reply(&init["id"], server_init);
    d.take_events();

    let (id, out) = d.send("custom/echo", json!({ "say": "hi" }));
    assert!(out.is_empty());
    assert_eq!(
        requests(&d.events),
        [("custom/echo".to_owned(), Some(json!({ "say": "hi" })))]
    );
    let call = d.call_for(&id);
    let now = d.now;
    d.host
        .respond(now, call, Ok(json!({ "said": "hi" })))
        .unwrap();
    assert_eq!(
        response(&d.drain(), &id).unwrap()["result"],
        json!({ "said": "hi" })
    );

    // A log message is read (with the task it names); one that cannot be read passes on.
    d.notify(
        "notifications/message",
        Some(json!({ "level": "info", "data": "x",
            "_meta": { "io.modelcontextprotocol/related-task": { "taskId": "t-1" } } })),
    );
    assert!(d.take_events().iter().any(|e| matches!(e,
        Event::Log { message, task: Some(task), .. }
            if message.level == LogLevel::Info && message.data == "x" && task.as_str() == "t-1")));
    d.notify(
        "notifications/message",
        Some(json!({ "level": "loud", "data": "x" })),
    );
    assert!(d.take_events().iter().any(|e| matches!(e,
        Event::Notification { method, .. } if method == "notifications/message")));
    let reply = d.call("custom/other", json!({}));
    assert_eq!(error_code(&reply), Some(-32601));
}
