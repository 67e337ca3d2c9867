//! `Host::report_requests`: the host names each request an input held (its session, id and
//! method), once, for a caller that times requests; messages that are no request are not
//! named, and a record not drained is gone at the next input.

use serde_json::{json, Value};
use taskwire_engine::{Method, RequestId, RequestRead};

use crate::common::job_server;

fn read(d: &mut taskwire_harness::Probe) -> Vec<(RequestId, Option<Method>)> {
    let session = d.session;
    d.host
        .requests_read()
        .map(
            |RequestRead {
                 session: s,
                 id,
                 method,
                 ..
             }| {
                assert_eq!(s, session, "a request is named with the session it came on");
                (id, method)
            },
        )
        .collect()
}

#[test]
fn each_request_of_an_input_is_named_once_in_order_and_nothing_else_is() {
    let mut d = job_server();
    d.host.report_requests(true);
    let lines = [
        r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":"b","method":"tools/list"}"#,
        r#"{"jsonrpc":"2.0","id":3,"method":"x/custom"}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"job","task":{}}}"#,
        r#"not json"#,
        r#"{"jsonrpc":"1.0","id":6,"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"cursor":}}"#,
        r#"{"jsonrpc":"2.0","id":8,"result":{}}"#,
        // A duplicate of a request still in progress is named too: it is answered.
        r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"job","task":{}}}"#,
    ];
    let mut bytes = lines.join("\n").into_bytes();
    bytes.push(b'\n');
    let out = d.feed_bytes(&bytes);
    let named = read(&mut d);
    assert_eq!(
        named,
        vec![
            (RequestId::Number(1), Some(Method::Ping)),
            (RequestId::String("b".into()), Some(Method::ToolsList)),
            (RequestId::Number(3), None),
            (RequestId::Number(4), Some(Method::ToolsCall)),
            (RequestId::Number(4), Some(Method::ToolsCall)),
        ]
    );
    // Each named request is answered by id (the duplicate with an error).
    let answered: Vec<&Value> = out.iter().filter_map(|m| m.get("id")).collect();
    for id in [json!(1), json!("b"), json!(3)] {
        assert_eq!(answered.iter().filter(|a| ***a == id).count(), 1, "{id}");
    }
    assert_eq!(answered.iter().filter(|a| ***a == json!(4)).count(), 2);
    assert!(read(&mut d).is_empty(), "drained once");
}

#[test]
fn records_not_drained_are_gone_at_the_next_input_and_none_are_kept_when_off() {
    let mut d = job_server();
    d.feed(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#);
    assert!(read(&mut d).is_empty(), "off by default");

    d.host.report_requests(true);
    d.feed(r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#);
    d.feed(r#"{"jsonrpc":"2.0","id":3,"method":"tasks/list"}"#);
    assert_eq!(
        read(&mut d),
        vec![(RequestId::Number(3), Some(Method::TasksList))]
    );

    d.host.report_requests(false);
    d.feed(r#"{"jsonrpc":"2.0","id":4,"method":"ping"}"#);
    assert!(read(&mut d).is_empty());
}

#[test]
fn a_request_on_a_line_too_long_is_answered_but_not_named() {
    let mut config = taskwire_harness::setup::server_config();
    config.limits.max_line_bytes = 64;
    let mut d = taskwire_harness::Probe::ready_server(config, |_| {});
    d.host.report_requests(true);
    let long = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{{"cursor":"{}"}}}}"#,
        "x".repeat(100)
    );
    let out = d.feed_bytes(
        format!(
            "{long}\n{}\n",
            r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#
        )
        .as_bytes(),
    );
    assert_eq!(out[0]["error"]["code"], -32600, "{out:?}");
    assert_eq!(
        read(&mut d),
        vec![(RequestId::Number(2), Some(Method::Ping))]
    );
}
