//! `Host::notify`: a server's notices about its tools (as they change: `Host::add_tool`,
//! `Host::remove_tool`), resources and prompts, and its log messages about no call. In
//! 2025-11-25 each goes as it is (validated against the schema), a log message only when
//! the session wants its level, a resource's update only to the sessions subscribed; in
//! 2026-07-28 each goes on the listen streams that asked for it and were granted it (never
//! a log message); a client session cannot send them.

use serde_json::json;
use taskwire_engine::{
    Config, Event, LogLevel, LogMessage, Notice, SessionId, TaskSupport, UsageError,
};
use taskwire_harness::schema::{assert_valid, assert_valid_in, CORE_2026};
use taskwire_harness::setup::{server_config, tool};
use taskwire_harness::Probe;

#[test]
fn a_v2025_session_gets_each_notice_as_the_schema_has_it() {
    let mut d = Probe::ready_server(subscribable(), |_| {});
    let uri = "file:///notes.txt".to_owned();
    d.call("resources/subscribe", json!({ "uri": uri }));
    d.clear();
    for (notice, definition, params) in [
        (
            Notice::ResourceUpdated { uri: uri.clone() },
            "ResourceUpdatedNotification",
            Some(json!({ "uri": uri })),
        ),
        (
            Notice::ResourcesListChanged,
            "ResourceListChangedNotification",
            None,
        ),
        (
            Notice::PromptsListChanged,
            "PromptListChangedNotification",
            None,
        ),
    ] {
        d.host.notify(d.now, d.session, &notice).unwrap();
        let out = d.drain();
        assert_eq!(out.len(), 1, "{out:?}");
        assert_eq!(out[0]["method"], notice.method());
        assert_eq!(out[0].get("params").cloned(), params);
        assert_valid(definition, &out[0]);
        let read = Notice::from_notification(notice.method(), out[0].get("params"));
        assert_eq!(read, Some(notice), "read back as sent");
    }
}

/// A server config whose `resources` declares `subscribe`.
fn subscribable() -> Config {
    let mut config = server_config();
    let resources = json!({ "subscribe": true });
    config
        .app_capabilities
        .insert("resources".into(), resources);
    config
}

/// With `resources.subscribe` declared the engine answers 2025-11-25 subscriptions (exactly
/// `{}`; bad params -32602), reports each session's resources when they change, and sends a
/// resource's update only to the sessions subscribed to it.
#[test]
fn a_v2025_resource_update_goes_only_to_the_sessions_subscribed() {
    let mut d = Probe::ready_server(subscribable(), |_| {});
    let (first, second) = (d.session, d.open("second"));
    let (a, b) = ("file:///a", "file:///b");
    let subscribe = |d: &mut Probe, session, method, uri: &str| {
        let reply = d.call_on(session, method, json!({ "uri": uri }));
        assert_eq!(reply["result"], json!({}), "{reply}");
        assert_valid("EmptyResult", &reply["result"]);
    };
    let reported = |d: &mut Probe| -> Vec<(SessionId, Vec<String>)> {
        let events = d.take_events().into_iter();
        let reports = events.filter_map(|e| match e {
            Event::ResourceSubscriptions { session, uris } => Some((session, uris)),
            _ => None,
        });
        reports.collect()
    };
    d.clear();
    subscribe(&mut d, first, "resources/subscribe", a);
    subscribe(&mut d, first, "resources/subscribe", a);
    subscribe(&mut d, second, "resources/subscribe", b);
    let wanted = reported(&mut d);
    let (a_only, b_only) = (vec![a.to_owned()], vec![b.to_owned()]);
    assert_eq!(
        wanted,
        [(first, a_only.clone()), (second, b_only.clone())],
        "a second subscription to `a` changes nothing"
    );

    d.clear();
    for uri in [a, b] {
        let update = Notice::ResourceUpdated { uri: uri.into() };
        d.host.notify(d.now, first, &update).unwrap();
        d.host.notify(d.now, second, &update).unwrap();
    }
    let sent = d.drain_addressed();
    let sent: Vec<(SessionId, &str)> = sent
        .iter()
        .map(|(s, m)| (*s, m["params"]["uri"].as_str().unwrap()))
        .collect();
    assert_eq!(sent, [(first, a), (second, b)]);

    subscribe(&mut d, first, "resources/unsubscribe", a);
    subscribe(&mut d, first, "resources/unsubscribe", "file:///never");
    assert_eq!(reported(&mut d), [(first, vec![])]);
    d.clear();
    let update = Notice::ResourceUpdated { uri: a.into() };
    d.host.notify(d.now, first, &update).unwrap();
    assert!(d.drain().is_empty(), "unsubscribed");

    let bad = d.call_on(first, "resources/subscribe", json!({}));
    assert_eq!(bad["error"]["code"], -32602, "{bad}");
    assert_valid("JSONRPCErrorResponse", &bad);
}

/// Without `resources.subscribe` the engine keeps no subscriptions: the methods are the
/// application's (here not served: -32601), and no update is sent.
#[test]
fn without_subscribe_declared_subscriptions_are_not_the_engines() {
    let mut d = Probe::ready_server(server_config(), |_| {});
    let refused = d.call("resources/subscribe", json!({ "uri": "file:///a" }));
    assert_eq!(refused["error"]["code"], -32601, "{refused}");
    let update = Notice::ResourceUpdated {
        uri: "file:///a".into(),
    };
    d.host.notify(d.now, d.session, &update).unwrap();
    assert!(d.drain().is_empty());
}

#[test]
fn tools_that_change_while_serving_are_listed_so_and_announced_when_declared() {
    let mut off = Probe::ready_server(server_config(), |_| {});
    let refused = off
        .host
        .notify(off.now, off.session, &Notice::ToolsListChanged);
    assert!(
        matches!(refused, Err(UsageError::ToolsListChangedOff)),
        "{refused:?}"
    );
    assert!(off.drain().is_empty());

    let mut config = server_config();
    config.tools_list_changed = true;
    let mut d = Probe::server(config);
    for name in ["a", "b", "c"] {
        d.host.add_tool(tool(name, TaskSupport::Optional));
    }
    let opened = d.call(
        "initialize",
        json!({ "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": { "name": "c", "version": "1" } }),
    );
    assert_eq!(
        opened["result"]["capabilities"]["tools"]["listChanged"],
        true
    );
    d.feed_json(json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }));
    d.clear();
    assert!(d.host.remove_tool("b"));
    assert!(!d.host.remove_tool("b"), "gone already");
    d.host.add_tool(tool("d", TaskSupport::Forbidden));
    d.host
        .notify(d.now, d.session, &Notice::ToolsListChanged)
        .unwrap();
    let out = d.drain();
    assert_eq!(out.len(), 1, "{out:?}");
    assert_eq!(out[0]["method"], "notifications/tools/list_changed");
    assert_valid("ToolListChangedNotification", &out[0]);
    let read = Notice::from_notification("notifications/tools/list_changed", None);
    assert_eq!(read, Some(Notice::ToolsListChanged));
    let listed = d.call("tools/list", json!({}));
    let names: Vec<&str> = (listed["result"]["tools"].as_array().unwrap().iter())
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(names, ["a", "c", "d"]);
    // The tool removed is unknown to calls from then on.
    let called = d.call("tools/call", json!({ "name": "b", "arguments": {} }));
    assert_eq!(called["error"]["code"], -32602, "{called}");
}

#[test]
fn a_log_message_about_no_call_goes_when_the_session_wants_its_level() {
    let log = |level, data: &str| {
        Notice::Log(LogMessage {
            level,
            logger: Some("behind".into()),
            data: json!(data),
        })
    };
    let mut off = Probe::ready_server(server_config(), |_| {});
    let refused = off
        .host
        .notify(off.now, off.session, &log(LogLevel::Info, "x"));
    assert!(
        matches!(refused, Err(UsageError::LoggingOff)),
        "{refused:?}"
    );
    assert!(off.drain().is_empty());

    let mut config = server_config();
    config.logging = true;
    let mut d = Probe::ready_server(config, |_| {});
    let info = log(LogLevel::Info, "every level until setLevel");
    d.host.notify(d.now, d.session, &info).unwrap();
    let out = d.drain();
    assert_eq!(out.len(), 1, "{out:?}");
    assert_eq!(
        out[0]["params"],
        json!({ "level": "info", "logger": "behind", "data": "every level until setLevel" })
    );
    assert_valid("LoggingMessageNotification", &out[0]);
    let read = Notice::from_notification(info.method(), out[0].get("params"));
    assert_eq!(read, Some(info.clone()), "read back as sent");

    d.feed_json(
        json!({ "jsonrpc": "2.0", "id": 7, "method": "logging/setLevel",
                        "params": { "level": "warning" } }),
    );
    d.clear();
    d.host.notify(d.now, d.session, &info).unwrap();
    assert!(d.drain().is_empty(), "info is below warning");
    d.host
        .notify(d.now, d.session, &log(LogLevel::Error, "kept"))
        .unwrap();
    let out = d.drain();
    assert_eq!(out.len(), 1, "{out:?}");
    assert_eq!(out[0]["params"]["level"], "error");
}

#[test]
fn a_v2026_session_gets_the_notices_its_listen_stream_asked_for_and_was_granted() {
    let mut config = server_config();
    config.tools_list_changed = true;
    config.logging = true;
    config.app_capabilities.insert(
        "resources".into(),
        json!({ "subscribe": true, "listChanged": true }),
    );
    config
        .app_capabilities
        .insert("prompts".into(), json!({ "listChanged": false }));
    let mut d = Probe::server(config);
    let meta = json!({ "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                       "io.modelcontextprotocol/clientCapabilities": {} });
    let uri = "file:///notes.txt";
    // No stream yet: nothing is sent, which is no error.
    d.host
        .notify(d.now, d.session, &Notice::ToolsListChanged)
        .unwrap();
    assert!(d.drain().is_empty());

    let asked = json!({ "toolsListChanged": true, "promptsListChanged": true,
                        "resourcesListChanged": null,
                        "resourceSubscriptions": [uri, uri] });
    let out = d.feed_json(json!({ "jsonrpc": "2.0", "id": "listen-1",
        "method": "subscriptions/listen", "params": { "notifications": asked, "_meta": meta } }));
    assert_eq!(out.len(), 1, "only the ack; the stream stays open: {out:?}");
    assert_valid_in(CORE_2026, "SubscriptionsAcknowledgedNotification", &out[0]);
    assert_eq!(
        out[0]["params"],
        json!({ "notifications": { "toolsListChanged": true, "resourceSubscriptions": [uri] },
                "_meta": { "io.modelcontextprotocol/subscriptionId": "listen-1" } }),
        "prompts do not say they change, and the resources' list was not asked for"
    );

    let on_stream = json!({ "io.modelcontextprotocol/subscriptionId": "listen-1" });
    let granted = [
        (Notice::ToolsListChanged, "ToolListChangedNotification"),
        (
            Notice::ResourceUpdated { uri: uri.into() },
            "ResourceUpdatedNotification",
        ),
    ];
    for (notice, definition) in granted {
        d.host.notify(d.now, d.session, &notice).unwrap();
        let out = d.drain();
        assert_eq!(out.len(), 1, "{notice:?}: {out:?}");
        assert_eq!(out[0]["method"], notice.method());
        assert_eq!(out[0]["params"]["_meta"], on_stream);
        assert_valid_in(CORE_2026, definition, &out[0]);
    }
    let elsewhere = Notice::ResourceUpdated {
        uri: "file:///other.txt".into(),
    };
    let log = Notice::Log(LogMessage {
        level: LogLevel::Error,
        logger: None,
        data: json!("never on a stream"),
    });
    for notice in [
        Notice::PromptsListChanged,
        Notice::ResourcesListChanged,
        elsewhere,
        log,
    ] {
        d.host.notify(d.now, d.session, &notice).unwrap();
        assert!(d.drain().is_empty(), "{notice:?} was not granted");
    }

    // The client ends the stream: nothing more on it.
    d.feed_json(
        json!({ "jsonrpc": "2.0", "method": "notifications/cancelled",
                        "params": { "requestId": "listen-1" } }),
    );
    d.clear();
    d.host
        .notify(d.now, d.session, &Notice::ToolsListChanged)
        .unwrap();
    assert!(d.drain().is_empty());
}

#[test]
fn a_client_session_is_refused_and_nothing_is_sent() {
    let mut c = Probe::ready_client(
        taskwire_harness::setup::client_config(),
        json!({ "protocolVersion": "2025-11-25", "capabilities": {},
                "serverInfo": { "name": "s", "version": "1" } }),
    );
    let refused = c
        .host
        .notify(c.now, c.session, &Notice::ResourcesListChanged);
    assert!(
        matches!(
            refused,
            Err(UsageError::WrongRole { .. }) | Err(UsageError::NotInitialized(_))
        ),
        "{refused:?}"
    );
}
