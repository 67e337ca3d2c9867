//! `Host::respond_raw`: a result already serialized goes out as given, on one line, and is
//! held to the same rules as `Host::respond`.

use serde_json::value::RawValue;
use serde_json::{json, Value};
use taskwire_engine::{TaskStatus, TaskSupport, UsageError};
use taskwire_harness::msg::response;
use taskwire_harness::setup::{server_config, tool};
use taskwire_harness::Probe;

use crate::common::last_call;

fn server() -> Probe {
    Probe::ready_server(server_config(), |h| {
        h.add_tool(tool("raw", TaskSupport::Optional));
    })
}

fn raw(text: &str) -> Box<RawValue> {
    RawValue::from_string(text.to_owned()).expect("valid JSON")
}

#[test]
fn a_plain_call_gets_the_text_as_its_result_on_one_line() {
    let mut d = server();
    let (id, _) = d.send("tools/call", json!({ "name": "raw", "arguments": {} }));
    let call = last_call(&mut d);
    let pretty = "{\n  \"content\": [\n    {\"type\": \"text\", \"text\": \"a\\nb\"}\n  ]\n}";
    let now = d.now;
    d.host.respond_raw(now, call.call, Ok(raw(pretty))).unwrap();
    let out = d.drain();
    let reply = response(&out, &id).expect("the reply");
    assert_eq!(reply["result"]["content"][0]["text"], "a\nb");
    let line = &d.transmits.last().expect("a transmit").message;
    assert!(!line.contains('\n'), "one line: {line:?}");
}

#[test]
fn anything_but_an_object_is_refused_and_the_call_stays_open() {
    let mut d = server();
    let (id, _) = d.send("tools/call", json!({ "name": "raw", "arguments": {} }));
    let call = last_call(&mut d);
    let now = d.now;
    for text in ["[1]", "\"done\"", "null", " 5"] {
        assert_eq!(
            d.host.respond_raw(now, call.call, Ok(raw(text))),
            Err(UsageError::NotAnObject("a result")),
            "{text}"
        );
    }
    assert!(d.drain().is_empty(), "nothing was sent");
    d.host
        .respond_raw(now, call.call, Ok(raw(r#" {"content":[]}"#)))
        .unwrap();
    let out = d.drain();
    assert_eq!(
        response(&out, &id).unwrap()["result"],
        json!({ "content": [] })
    );
}

#[test]
fn a_task_stores_the_text_and_reads_is_error_from_it() {
    let mut d = server();
    let mut results = Vec::new();
    for text in [
        r#"{"content":[{"type":"text","text":"fine"}]}"#,
        r#"{"content":[{"type":"text","text":"broke"}],"isError":true}"#,
    ] {
        let created = d.call(
            "tools/call",
            json!({ "name": "raw", "arguments": {}, "task": {} }),
        );
        let task = created["result"]["task"]["taskId"].clone();
        let call = last_call(&mut d);
        let now = d.now;
        d.host.respond_raw(now, call.call, Ok(raw(text))).unwrap();
        d.drain();
        let got = d.call("tasks/get", json!({ "taskId": task }));
        let result = d.call("tasks/result", json!({ "taskId": task }));
        results.push((got["result"].clone(), result["result"].clone()));
    }
    let (fine, fine_result) = &results[0];
    assert_eq!(fine["status"], TaskStatus::Completed.as_str());
    assert_eq!(fine_result["content"][0]["text"], "fine");
    let (broke, broke_result) = &results[1];
    assert_eq!(
        broke["status"], "failed",
        "isError shows as failed in 2025-11-25"
    );
    assert_eq!(broke["statusMessage"], "broke");
    assert_eq!(broke_result["isError"], Value::Bool(true));
}
