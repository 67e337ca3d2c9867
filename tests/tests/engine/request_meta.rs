//! A request's `params._meta` travels as sent: a server hands a `tools/call`'s to the
//! application and keeps it in a journaled task's request (where a worker reads it), and a
//! client adds its own members to the requests it sends (`Host::send_with_meta`). The W3C
//! trace context is the case in point.

use serde_json::{json, Map, Value};
use taskwire_engine::{Config, Durability, Event, Request, TaskSupport, UsageError};
use taskwire_harness::msg::{error_code, error_message};
use taskwire_harness::setup::{client_config, server_config, tool, v2026_client_config};
use taskwire_harness::Probe;
use taskwire_harness::{Pair, Side};

use crate::common::{last_call, stored};

const TRACEPARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

fn trace_meta() -> Map<String, Value> {
    let mut meta = Map::new();
    meta.insert("traceparent".into(), TRACEPARENT.into());
    meta.insert("tracestate".into(), "vendor=1".into());
    meta
}

fn journaled_server() -> Probe {
    let mut config: Config = server_config();
    config.durability = Durability::Journal;
    Probe::ready_server(config, |h| h.add_tool(tool("job", TaskSupport::Optional)))
}

#[test]
fn a_task_call_keeps_its_meta_as_sent_for_the_app_and_the_store() {
    let mut d = journaled_server();
    let meta = json!({ "traceparent": TRACEPARENT, "progressToken": 7, "app": { "x": [1] } });
    let reply = d.call(
        "tools/call",
        json!({ "name": "job", "arguments": {}, "task": { "ttl": 60000 }, "_meta": meta }),
    );
    let task = reply["result"]["task"]["taskId"]
        .as_str()
        .unwrap()
        .to_owned();
    let call = last_call(&mut d);
    let seen: Value = serde_json::from_str(call.meta.as_ref().unwrap().get()).unwrap();
    assert_eq!(seen, meta);
    let request = stored(&d.journal, &task)
        .request
        .expect("a journaled request");
    let kept: Value = serde_json::from_str(request.meta.as_ref().unwrap().get()).unwrap();
    assert_eq!(kept, meta);
    // The stored form reads back the same, and an older record without it reads as none.
    let text = serde_json::to_string(&request).unwrap();
    let back: taskwire_engine::TaskRequest = serde_json::from_str(&text).unwrap();
    assert_eq!(back.meta.unwrap().get(), request.meta.unwrap().get());
    let old: taskwire_engine::TaskRequest =
        serde_json::from_str(r#"{"tool":"job","arguments":{}}"#).unwrap();
    assert!(old.meta.is_none());
}

#[test]
fn a_call_without_meta_has_none_and_a_meta_that_is_no_object_is_refused() {
    let mut d = journaled_server();
    d.send("tools/call", json!({ "name": "job", "arguments": {} }));
    assert!(last_call(&mut d).meta.is_none());
    d.send("tools/call", json!({ "name": "job", "_meta": null }));
    assert!(last_call(&mut d).meta.is_none());
    let refused = d.call("tools/call", json!({ "name": "job", "_meta": 7 }));
    assert_eq!(error_code(&refused), Some(-32602), "{refused}");
    assert!(
        error_message(&refused).contains("Invalid params"),
        "{refused}"
    );
    d.assert_alive();
}

#[test]
fn a_2026_call_keeps_each_requests_meta_even_when_the_last_one_was_the_same() {
    let mut d = Probe::server(server_config());
    d.host.add_tool(tool("job", TaskSupport::Optional));
    let mut seen = Vec::new();
    for parent in [
        TRACEPARENT,
        TRACEPARENT,
        "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00",
    ] {
        let meta = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": { "extensions": { "io.modelcontextprotocol/tasks": {} } },
            "traceparent": parent,
        });
        let answer = d.call(
            "tools/call",
            json!({ "name": "job", "arguments": {}, "_meta": meta }),
        );
        assert_eq!(answer["result"]["resultType"], "task", "{answer}");
        let call = last_call(&mut d);
        let meta: Value = serde_json::from_str(call.meta.unwrap().get()).unwrap();
        seen.push(meta["traceparent"].as_str().unwrap().to_owned());
    }
    assert_eq!(
        seen,
        [
            TRACEPARENT,
            TRACEPARENT,
            "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00"
        ]
    );
}

#[test]
fn a_client_adds_its_meta_to_the_request_beside_the_engines_own_members() {
    // 2025-11-25: a task call, whose `_meta` also carries the progress token.
    let init = json!({
        "protocolVersion": "2025-11-25",
        "capabilities": { "tasks": { "requests": { "tools": { "call": {} } } } },
        "serverInfo": { "name": "s", "version": "1" }
    });
    let mut d = Probe::ready_client(client_config(), init);
    let meta = trace_meta();
    let call = Request::CallToolAsTask {
        name: "job".into(),
        arguments: json!({}),
        ttl_ms: Some(60_000),
    };
    let session = d.session;
    let id = d.host.send_with_meta(d.now, session, call, meta).unwrap();
    let sent = d.drain();
    assert_eq!(sent[0]["method"], "tools/call", "{sent:?}");
    let sent_meta = &sent[0]["params"]["_meta"];
    assert_eq!(sent_meta["traceparent"], TRACEPARENT, "{sent:?}");
    assert_eq!(sent_meta["tracestate"], "vendor=1", "{sent:?}");
    assert!(
        sent_meta["progressToken"].is_number(),
        "the engine's own: {sent:?}"
    );
    assert_eq!(sent[0]["id"], serde_json::to_value(&id).unwrap());
    // Only that request: the next one carries none.
    d.host.list_tools(d.now, session, None).unwrap();
    let next = d.drain();
    assert!(next[0]["params"].get("_meta").is_none(), "{next:?}");

    // 2026-07-28: beside the protocol keys, and the server's application gets them.
    let mut pair = Pair::connected(v2026_client_config(), server_config(), |s| {
        s.add_tool(tool("job", TaskSupport::Optional))
    });
    let (host, session) = pair.session(Side::Client);
    let call = Request::CallToolAsTask {
        name: "job".into(),
        arguments: json!({}),
        ttl_ms: None,
    };
    let now = host.now();
    host.send_with_meta(now, session, call, trace_meta())
        .unwrap();
    pair.deliver();
    let sent = pair.sent_method(Side::Client, "tools/call");
    let sent_meta = &sent[0].json["params"]["_meta"];
    assert_eq!(sent_meta["traceparent"], TRACEPARENT, "{sent_meta}");
    assert_eq!(
        sent_meta["io.modelcontextprotocol/protocolVersion"], "2026-07-28",
        "{sent_meta}"
    );
    let got = pair.find(Side::Server, |e| match e {
        Event::ToolCall(call) => call.meta.as_ref().map(|m| m.get().to_owned()),
        _ => None,
    });
    let got: Value = serde_json::from_str(&got[0]).unwrap();
    assert_eq!(got["traceparent"], TRACEPARENT, "{got}");
}

#[test]
fn a_client_may_not_add_the_engines_own_meta_members() {
    let mut d = Probe::client(client_config());
    let session = d.session;
    for key in ["progressToken", "io.modelcontextprotocol/protocolVersion"] {
        let mut meta = trace_meta();
        meta.insert(key.into(), json!(1));
        let call = Request::CallTool {
            name: "job".into(),
            arguments: Value::Null,
        };
        let refused = d.host.send_with_meta(d.now, session, call, meta);
        assert_eq!(refused, Err(UsageError::ReservedMeta(key.into())));
        assert!(refused.unwrap_err().to_string().contains("leave it out"));
    }
    assert!(d.drain().is_empty(), "nothing was sent");
}
