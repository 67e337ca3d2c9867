//! Handshake rules (spec §2.1, §3.2, §5.20): capabilities, version negotiation, the order of
//! requests, and ping.

use serde_json::{json, Value};
use taskwire_engine::{ClientFeatures, Event, PeerErrorKind, TaskSupport, ToolCall};
use taskwire_harness::msg::{error_code, response};
use taskwire_harness::setup::{
    client_config, full_client_capabilities, initialize_params, server_config, tool,
};
use taskwire_harness::Probe;

fn initialize(d: &mut Probe, version: &str) -> Value {
    d.call(
        "initialize",
        initialize_params(version, full_client_capabilities()),
    )
}

#[test]
fn server_declares_tasks_capabilities_at_2025_11_25() {
    let mut d = Probe::server(server_config());
    let reply = initialize(&mut d, "2025-11-25");
    let result = &reply["result"];
    assert_eq!(result["protocolVersion"], "2025-11-25");
    assert_eq!(
        result["capabilities"]["tasks"],
        json!({ "list": {}, "cancel": {}, "requests": { "tools": { "call": {} } } })
    );
    assert_eq!(result["serverInfo"]["name"], "test-server");
    let events = d.take_events();
    assert!(matches!(
        &events[..],
        [Event::Initialized { protocol_version, capabilities, .. }]
            if protocol_version == "2025-11-25" && capabilities["tasks"]["cancel"] == json!({})
    ));
}

#[test]
fn server_capabilities_follow_the_configuration() {
    let mut config = server_config();
    config.tasks.list = false;
    config.tasks.cancel = false;
    let mut d = Probe::server(config);
    let caps = initialize(&mut d, "2025-11-25")["result"]["capabilities"].clone();
    assert_eq!(
        caps["tasks"],
        json!({ "requests": { "tools": { "call": {} } } })
    );

    let mut config = server_config();
    config.tasks.enabled = false;
    let mut d = Probe::server(config);
    let caps = initialize(&mut d, "2025-11-25")["result"]["capabilities"].clone();
    assert!(caps.get("tasks").is_none(), "{caps}");
    assert!(caps.get("tools").is_some(), "{caps}");
}

#[test]
fn client_declares_what_it_answers_and_hosts() {
    let mut d = Probe::client(client_config());
    d.host.initialize(d.now, d.session).unwrap();
    let out = d.drain();
    let caps = &out[0]["params"]["capabilities"];
    assert_eq!(out[0]["params"]["protocolVersion"], "2025-11-25");
    assert_eq!(caps["sampling"], json!({}));
    assert_eq!(caps["elicitation"], json!({ "form": {} }));
    assert_eq!(
        caps["tasks"]["requests"],
        json!({ "sampling": { "createMessage": {} }, "elicitation": { "create": {} } })
    );

    let mut plain = client_config();
    plain.client = ClientFeatures::default();
    let mut d = Probe::client(plain);
    d.host.initialize(d.now, d.session).unwrap();
    let out = d.drain();
    assert_eq!(out[0]["params"]["capabilities"], json!({}));
}

#[test]
fn older_versions_are_echoed_and_have_no_tasks() {
    for version in ["2025-06-18", "2025-03-26", "2024-11-05"] {
        let mut d = Probe::server(server_config());
        d.host.add_tool(tool("opt", TaskSupport::Optional));
        d.host.add_tool(tool("req", TaskSupport::Required));
        let reply = initialize(&mut d, version);
        assert_eq!(reply["result"]["protocolVersion"], version);
        assert!(reply["result"]["capabilities"].get("tasks").is_none());
        d.notify("notifications/initialized", None);
        d.take_events();

        for method in ["tasks/get", "tasks/result", "tasks/cancel", "tasks/list"] {
            let reply = d.call(method, json!({ "taskId": "task-1" }));
            assert_eq!(
                error_code(&reply),
                Some(-32601),
                "{version} {method}: {reply}"
            );
        }
        // Unknown methods now also raise a PeerError (intended change 6).
        let events = d.take_events();
        let kinds: Vec<_> = events
            .iter()
            .map(|e| match e {
                Event::PeerError {
                    kind: PeerErrorKind::UnknownMethod(m),
                    ..
                } => m.as_str(),
                other => panic!("{version}: {other:?}"),
            })
            .collect();
        assert_eq!(
            kinds,
            ["tasks/get", "tasks/result", "tasks/cancel", "tasks/list"],
            "{version}"
        );
        // params.task is ignored: both calls run plainly, even the "required" tool.
        for name in ["opt", "req"] {
            let (id, out) = d.send(
                "tools/call",
                json!({ "name": name, "arguments": {}, "task": { "ttl": 1000 } }),
            );
            assert!(response(&out, &id).is_none(), "{version}: {out:?}");
            let events = d.take_events();
            assert!(
                matches!(&events[..], [Event::ToolCall(ToolCall { task: None, name: n, .. })] if n == name),
                "{version}: {events:?}"
            );
        }
        assert_eq!(d.host.task_count(), 0);
    }
}

#[test]
fn unknown_version_gets_the_latest() {
    let mut d = Probe::server(server_config());
    let reply = initialize(&mut d, "2099-01-01");
    assert_eq!(reply["result"]["protocolVersion"], "2025-11-25");
    assert_eq!(d.host.protocol_version(d.session), Some("2025-11-25"));
}

#[test]
fn client_gives_up_on_a_version_it_does_not_speak() {
    let mut d = Probe::client(client_config());
    let id = d.host.initialize(d.now, d.session).unwrap();
    d.drain();
    let out = d.feed_json(json!({ "jsonrpc": "2.0", "id": id, "result": {
        "protocolVersion": "1999-01-01", "capabilities": {},
        "serverInfo": { "name": "old", "version": "1" } } }));
    assert!(out.is_empty(), "no notifications/initialized: {out:?}");
    let events = d.take_events();
    // A failed handshake now also reports the session's close (the new Closed event).
    assert!(
        matches!(&events[..], [Event::InitializeFailed { error, .. }, Event::Closed { .. }] if error.code == -32602),
        "{events:?}"
    );
    assert!(d.host.is_closed(d.session));
}

#[test]
fn client_confirms_the_handshake_with_initialized() {
    let mut d = Probe::client(client_config());
    let id = d.host.initialize(d.now, d.session).unwrap();
    d.drain();
    let out = d.feed_json(json!({ "jsonrpc": "2.0", "id": id, "result": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "serverInfo": { "name": "s", "version": "1" } } }));
    assert_eq!(
        out,
        [json!({ "jsonrpc": "2.0", "method": "notifications/initialized" })]
    );
    assert_eq!(d.host.protocol_version(d.session), Some("2025-06-18"));
}

/// A dual-era server takes a request before `initialize` that lacks the 2026-07-28 `_meta`
/// for a malformed v2026 one (2026 checklist §3.1 r4, replacing -32600).
#[test]
fn requests_before_initialize_are_malformed_v2026_requests_but_ping_works() {
    let mut d = Probe::server(server_config());
    for method in ["tools/list", "tools/call", "tasks/get", "tasks/list"] {
        let reply = d.call(method, json!({ "name": "x", "taskId": "t" }));
        assert_eq!(error_code(&reply), Some(-32602), "{method}: {reply}");
        let message = reply["error"]["message"].as_str().unwrap();
        assert!(message.contains("protocolVersion"), "{message}");
        assert!(reply["error"]["message"].as_str().unwrap().contains(method));
    }
    d.assert_alive();
    assert_eq!(
        initialize(&mut d, "2025-11-25")["result"]["protocolVersion"],
        "2025-11-25"
    );
    let reply = d.call("tools/list", Value::Null);
    assert_eq!(reply["result"]["tools"], json!([]));
}

#[test]
fn a_second_initialize_is_refused_and_changes_nothing() {
    let mut d = Probe::server(server_config());
    initialize(&mut d, "2025-11-25");
    let reply = initialize(&mut d, "2024-11-05");
    assert_eq!(error_code(&reply), Some(-32600));
    assert_eq!(d.host.protocol_version(d.session), Some("2025-11-25"));
    d.assert_alive();
}

#[test]
fn ping_answers_empty_with_or_without_params_in_either_role() {
    let mut d = Probe::ready_server(server_config(), |_| {});
    let reply = d.call("ping", json!({ "_meta": { "progressToken": 1 } }));
    assert_eq!(reply["result"], json!({}));
    let reply = d.call("ping", Value::Null);
    assert_eq!(reply["result"], json!({}));

    let mut c = Probe::client(client_config());
    let reply = c.call("ping", Value::Null);
    assert_eq!(
        reply["result"],
        json!({}),
        "a client answers ping even before init"
    );
}

#[test]
fn an_unanswered_initialize_is_never_cancelled_the_session_gives_up() {
    let mut config = client_config();
    config.request_timeout_ms = Some(1_000);
    let mut d = Probe::client(config);
    d.host.initialize(d.now, d.session).unwrap();
    d.drain();
    let out = d.advance(1_000);
    assert!(
        out.is_empty(),
        "the client MUST NOT cancel initialize (§3.2): {out:?}"
    );
    let events = d.take_events();
    // A failed handshake now also reports the session's close (the new Closed event).
    assert!(
        matches!(&events[..], [Event::InitializeFailed { error, .. }, Event::Closed { .. }] if error.code == -32001),
        "{events:?}"
    );
    assert!(d.host.is_closed(d.session));
    assert_eq!(d.host.poll_timeout(), None);
}

#[test]
fn an_initialize_error_fails_the_handshake() {
    let mut d = Probe::client(client_config());
    let id = d.host.initialize(d.now, d.session).unwrap();
    d.drain();
    d.feed_json(json!({ "jsonrpc": "2.0", "id": id,
        "error": { "code": -32602, "message": "Unsupported protocol version",
                   "data": { "supported": ["2024-11-05"], "requested": "2025-11-25" } } }));
    let events = d.take_events();
    // A failed handshake now also reports the session's close (the new Closed event).
    assert!(
        matches!(&events[..], [Event::InitializeFailed { error, .. }, Event::Closed { .. }]
            if error.code == -32602 && error.data.as_ref().unwrap()["supported"][0] == "2024-11-05"),
        "{events:?}"
    );
    assert!(d.host.is_closed(d.session));
}

#[test]
fn a_malformed_initialize_can_be_retried() {
    let mut d = Probe::server(server_config());
    let reply = d.call(
        "initialize",
        json!({ "protocolVersion": "2025-11-25", "capabilities": {} }),
    );
    assert_eq!(error_code(&reply), Some(-32602));
    assert!(
        reply["error"]["message"]
            .as_str()
            .unwrap()
            .contains("clientInfo"),
        "{reply}"
    );
    assert_eq!(d.host.protocol_version(d.session), None);
    let reply = initialize(&mut d, "2025-11-25");
    assert_eq!(reply["result"]["protocolVersion"], "2025-11-25");
}

#[test]
fn a_client_that_hosts_no_tasks_does_not_serve_tasks_methods() {
    let mut plain = client_config();
    plain.client = ClientFeatures::default();
    let mut d = Probe::ready_client(
        plain,
        json!({ "protocolVersion": "2025-11-25", "capabilities": {},
                "serverInfo": { "name": "s", "version": "1" } }),
    );
    for method in ["tasks/get", "tasks/result", "tasks/list", "tasks/cancel"] {
        let reply = d.call(method, json!({ "taskId": "t" }));
        assert_eq!(error_code(&reply), Some(-32601), "{method}: {reply}");
    }

    let mut d = Probe::ready_client(
        client_config(),
        json!({ "protocolVersion": "2025-11-25", "capabilities": {},
                "serverInfo": { "name": "s", "version": "1" } }),
    );
    let reply = d.call("tasks/list", Value::Null);
    assert_eq!(
        reply["result"]["tasks"],
        json!([]),
        "a client that declared tasks serves them"
    );
}
