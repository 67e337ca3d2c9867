//! Log messages (`notifications/message`) from the application's work: with
//! `Config::logging`, 2025-11-25 declares `logging`, answers `logging/setLevel` and filters by
//! the session's level; a task's messages carry related-task `_meta`. In 2026-07-28 only a
//! plain call whose request named `_meta["io.modelcontextprotocol/logLevel"]` gets them, and a
//! task never does. Every message is validated against its era's schema.

use serde_json::{json, Value};
use taskwire_engine::{CallId, Config, Event, LogLevel, TaskSupport, UsageError};
use taskwire_harness::msg::{error_code, with_method};
use taskwire_harness::schema::{assert_valid_in, CORE_2026};
use taskwire_harness::setup::{
    full_client_capabilities, initialize_params, server_config, text_result, tool,
};
use taskwire_harness::Probe;

fn logging_config() -> Config {
    Config {
        logging: true,
        ..server_config()
    }
}

fn with_tools(host: &mut taskwire_engine::Host) {
    host.add_tool(tool("job", TaskSupport::Optional));
    host.add_tool(tool("quick", TaskSupport::Forbidden));
}

fn v2025() -> Probe {
    Probe::ready_server(logging_config(), with_tools)
}

fn log(d: &mut Probe, call: CallId, level: LogLevel, data: &str) -> Vec<Value> {
    d.host
        .log(d.now, call, level, None, json!(data))
        .expect("logging is on");
    d.drain()
}

#[test]
fn the_capability_is_declared_only_with_config_logging() {
    for (logging, declared) in [(true, true), (false, false)] {
        let mut d = Probe::server(Config {
            logging,
            ..server_config()
        });
        let reply = d.call(
            "initialize",
            initialize_params("2025-11-25", full_client_capabilities()),
        );
        assert_eq!(
            reply["result"]["capabilities"].get("logging").is_some(),
            declared,
            "{reply}"
        );
    }
}

#[test]
fn every_level_goes_until_set_level_raises_the_minimum() {
    let mut d = v2025();
    let (id, _) = d.send("tools/call", json!({ "name": "quick", "arguments": {} }));
    let call = d.call_for(&id);
    let out = log(&mut d, call, LogLevel::Debug, "first");
    assert_eq!(
        out,
        [json!({ "jsonrpc": "2.0", "method": "notifications/message",
                 "params": { "level": "debug", "data": "first" } })]
    );
    let reply = d.call("logging/setLevel", json!({ "level": "warning" }));
    assert_eq!(
        reply["result"],
        json!({}),
        "exactly an empty result: {reply}"
    );
    assert!(log(&mut d, call, LogLevel::Info, "dropped").is_empty());
    let out = log(&mut d, call, LogLevel::Error, "kept");
    assert_eq!(out[0]["params"]["level"], "error");
    d.host
        .log(
            d.now,
            call,
            LogLevel::Warning,
            Some("db"),
            json!({ "rows": 3 }),
        )
        .unwrap();
    let out = d.drain();
    assert_eq!(
        out[0]["params"],
        json!({ "level": "warning", "logger": "db", "data": { "rows": 3 } })
    );
    d.host
        .respond(d.now, call, Ok(text_result("done")))
        .unwrap();
    d.drain();
    assert_eq!(
        d.host
            .log(d.now, call, LogLevel::Error, None, json!("late")),
        Err(UsageError::UnknownCall(call))
    );
}

#[test]
fn the_level_belongs_to_its_session() {
    let mut d = v2025();
    let other = d.open("peer");
    d.call_on(other, "logging/setLevel", json!({ "level": "emergency" }));
    let (id, _) = d.send("tools/call", json!({ "name": "quick", "arguments": {} }));
    let call = d.call_for(&id);
    assert_eq!(log(&mut d, call, LogLevel::Info, "here").len(), 1);
}

#[test]
fn a_bad_level_is_invalid_params_and_changes_nothing() {
    let mut d = v2025();
    d.call("logging/setLevel", json!({ "level": "error" }));
    for params in [json!({ "level": "loud" }), json!({}), json!({ "level": 3 })] {
        let reply = d.call("logging/setLevel", params);
        assert_eq!(error_code(&reply), Some(-32602), "{reply}");
    }
    let (id, _) = d.send("tools/call", json!({ "name": "quick", "arguments": {} }));
    let call = d.call_for(&id);
    assert!(log(&mut d, call, LogLevel::Warning, "below error").is_empty());
    d.assert_alive();
}

#[test]
fn without_config_logging_set_level_is_unknown_and_log_is_a_usage_error() {
    let mut d = Probe::ready_server(server_config(), with_tools);
    let reply = d.call("logging/setLevel", json!({ "level": "info" }));
    assert_eq!(error_code(&reply), Some(-32601), "{reply}");
    let (id, _) = d.send("tools/call", json!({ "name": "quick", "arguments": {} }));
    let call = d.call_for(&id);
    let refused = d.host.log(d.now, call, LogLevel::Info, None, json!("x"));
    assert_eq!(refused, Err(UsageError::LoggingOff));
    assert!(refused.unwrap_err().to_string().contains("Config::logging"));
    assert!(d.drain().is_empty());
}

#[test]
fn a_tasks_messages_carry_related_task_meta_until_it_ends() {
    let mut d = v2025();
    d.call(
        "tools/call",
        json!({ "name": "job", "arguments": {}, "task": {} }),
    );
    let work = d.work("task-1");
    let out = log(&mut d, work, LogLevel::Notice, "working");
    assert_eq!(
        out[0]["params"],
        json!({ "level": "notice", "data": "working",
                "_meta": { "io.modelcontextprotocol/related-task": { "taskId": "task-1" } } })
    );
    d.call("tasks/cancel", json!({ "taskId": "task-1" }));
    assert!(matches!(
        d.host.log(d.now, work, LogLevel::Info, None, json!("late")),
        Err(UsageError::TaskFinished { .. })
    ));
    assert!(with_method(&d.drain(), "notifications/message").is_empty());
}

// ---- 2026-07-28 ------------------------------------------------------------------------------

/// A 2026-07-28 request line; `level` goes in `_meta` when given.
fn v2026(id: u32, method: &str, mut params: Value, level: Option<Value>, caps: Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": caps,
    });
    if let Some(level) = level {
        params["_meta"]["io.modelcontextprotocol/logLevel"] = level;
    }
    json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params })
}

fn v2026_call(d: &mut Probe, id: u32, name: &str, level: Option<Value>, caps: Value) -> CallId {
    let line = v2026(
        id,
        "tools/call",
        json!({ "name": name, "arguments": {} }),
        level,
        caps,
    );
    d.feed_json(line);
    let call = d.take_events().into_iter().rev().find_map(|e| match e {
        Event::ToolCall(c) => Some(c.call),
        _ => None,
    });
    call.expect("the call reached the app")
}

fn v2026_server() -> Probe {
    let mut d = Probe::server(logging_config());
    with_tools(&mut d.host);
    d
}

#[test]
fn v2026_discover_declares_logging() {
    let mut d = v2026_server();
    let out = d.feed_json(v2026(1, "server/discover", json!({}), None, json!({})));
    assert_eq!(
        out[0]["result"]["capabilities"]["logging"],
        json!({}),
        "{}",
        out[0]
    );
}

#[test]
fn a_v2026_call_gets_messages_from_the_level_its_request_named() {
    let mut d = v2026_server();
    let call = v2026_call(&mut d, 1, "quick", Some(json!("info")), json!({}));
    assert!(log(&mut d, call, LogLevel::Debug, "below info").is_empty());
    let out = log(&mut d, call, LogLevel::Info, "started");
    assert_eq!(
        out,
        [json!({ "jsonrpc": "2.0", "method": "notifications/message",
                 "params": { "level": "info", "data": "started" } })]
    );
    assert_valid_in(CORE_2026, "LoggingMessageNotification", &out[0]);
}

#[test]
fn a_v2026_call_without_a_level_gets_none() {
    let mut d = v2026_server();
    for (id, level) in [(1, None), (2, Some(Value::Null))] {
        let call = v2026_call(&mut d, id, "quick", level, json!({}));
        assert!(log(&mut d, call, LogLevel::Emergency, "never").is_empty());
    }
}

#[test]
fn a_v2026_task_gets_no_messages_whatever_its_request_named() {
    let mut d = v2026_server();
    let caps = json!({ "extensions": { "io.modelcontextprotocol/tasks": {} } });
    let work = v2026_call(&mut d, 1, "job", Some(json!("debug")), caps);
    let created = d.drain();
    assert!(with_method(&created, "notifications/message").is_empty());
    assert!(log(&mut d, work, LogLevel::Error, "not for tasks").is_empty());
}

#[test]
fn a_v2026_request_naming_an_unknown_level_is_invalid_params() {
    let mut d = v2026_server();
    let line = v2026(
        1,
        "tools/call",
        json!({ "name": "quick" }),
        Some(json!("loud")),
        json!({}),
    );
    let out = d.feed_json(line);
    assert_eq!(error_code(&out[0]), Some(-32602), "{}", out[0]);
    assert!(out[0]["error"]["message"]
        .as_str()
        .unwrap()
        .contains("io.modelcontextprotocol/logLevel"));
    assert!(d
        .take_events()
        .iter()
        .all(|e| !matches!(e, Event::ToolCall(_))));
}

#[test]
fn a_client_cannot_log_to_its_server() {
    let mut config = taskwire_harness::setup::client_config();
    config.logging = true;
    let mut pair = taskwire_harness::Pair::connected(config, server_config(), |_| {});
    let sampling = json!({ "maxTokens": 10, "messages": [
        { "role": "user", "content": { "type": "text", "text": "hi" } }] });
    pair.server
        .request(pair.now, pair.ss, "sampling/createMessage", Some(sampling))
        .unwrap();
    pair.deliver();
    let calls = pair.find(taskwire_harness::Side::Client, |e| match e {
        Event::Request(r) => Some(r.call),
        _ => None,
    });
    let refused = pair
        .client
        .log(pair.now, calls[0], LogLevel::Info, None, json!("x"));
    assert_eq!(
        refused,
        Err(UsageError::WrongRole {
            needs: taskwire_engine::Role::Server
        })
    );
}
