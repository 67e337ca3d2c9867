//! `tools/list` and `tools/call` admission (spec §2.2, §3.6, §5.3, §5.11): which calls become
//! tasks, which run plainly, and which are refused before any task exists.

use serde_json::{json, Value};
use taskwire_engine::{Event, RpcError, TaskSupport, ToolCall};
use taskwire_harness::msg::{error_code, error_message, id_json, response};
use taskwire_harness::setup::{server_config, text_result, tool};
use taskwire_harness::Probe;

fn server() -> Probe {
    Probe::ready_server(server_config(), |s| {
        s.add_tool(tool("never", TaskSupport::Forbidden));
        s.add_tool(tool("maybe", TaskSupport::Optional));
        s.add_tool(tool("always", TaskSupport::Required));
    })
}

fn call(name: &str, task: Option<Value>) -> Value {
    let mut params = json!({ "name": name, "arguments": {} });
    if let Some(task) = task {
        params["task"] = task;
    }
    params
}

#[test]
fn forbidden_tool_called_as_task_is_method_not_found() {
    let mut d = server();
    let reply = d.call("tools/call", call("never", Some(json!({ "ttl": 1000 }))));
    assert_eq!(error_code(&reply), Some(-32601), "{reply}");
    assert!(error_message(&reply).contains("never"), "{reply}");
    assert_eq!(d.host.task_count(), 0);
    assert!(d.take_events().is_empty());
}

#[test]
fn required_tool_called_plainly_is_method_not_found() {
    let mut d = server();
    for task in [None, Some(Value::Null)] {
        let reply = d.call("tools/call", call("always", task));
        assert_eq!(error_code(&reply), Some(-32601), "{reply}");
        assert!(error_message(&reply).contains("always"), "{reply}");
    }
    assert!(d.take_events().is_empty());
}

#[test]
fn optional_tool_runs_either_way() {
    let mut d = server();
    let (id, out) = d.send("tools/call", call("maybe", None));
    assert!(
        response(&out, &id).is_none(),
        "a plain call waits for the app"
    );
    let events = d.take_events();
    let [Event::ToolCall(ToolCall {
        call: work,
        task: None,
        ..
    })] = &events[..]
    else {
        panic!("{events:?}");
    };
    d.host
        .respond(d.now, *work, Ok(text_result("plain")))
        .unwrap();
    let out = d.drain();
    assert_eq!(response(&out, &id).unwrap()["result"], text_result("plain"));

    let reply = d.call("tools/call", call("maybe", Some(json!({}))));
    assert_eq!(reply["result"]["task"]["status"], "working");
    let events = d.take_events();
    assert!(
        matches!(&events[..], [Event::ToolCall(ToolCall { task: Some(t), .. })] if t == "task-1"),
        "{events:?}"
    );
}

#[test]
fn required_tool_called_as_task_is_accepted() {
    let mut d = server();
    let reply = d.call("tools/call", call("always", Some(json!({}))));
    assert_eq!(reply["result"]["task"]["taskId"], "task-1");
    assert_eq!(d.host.task_count(), 1);
}

#[test]
fn unknown_tool_is_invalid_params_and_creates_no_task() {
    let mut d = server();
    for task in [None, Some(json!({}))] {
        let reply = d.call("tools/call", call("nope", task));
        assert_eq!(error_code(&reply), Some(-32602), "{reply}");
        assert!(error_message(&reply).contains("nope"));
    }
    assert_eq!(d.host.task_count(), 0);
    assert!(d.take_events().is_empty());
}

#[test]
fn accepting_unknown_tools_hands_them_to_the_app() {
    let mut d = server();
    d.host.accept_unknown_tools(true);
    let reply = d.call("tools/call", call("dynamic", Some(json!({}))));
    assert_eq!(reply["result"]["task"]["status"], "working");
    let (_, out) = d.send("tools/call", call("dynamic", None));
    assert!(out.is_empty(), "{out:?}");
    let names: Vec<_> = d
        .take_events()
        .into_iter()
        .filter_map(|e| match e {
            Event::ToolCall(ToolCall { name, task, .. }) => Some((name, task.is_some())),
            _ => None,
        })
        .collect();
    assert_eq!(
        names,
        [("dynamic".to_owned(), true), ("dynamic".to_owned(), false)]
    );
}

#[test]
fn without_task_hosting_params_task_is_ignored() {
    let mut config = server_config();
    config.tasks.enabled = false;
    let mut d = Probe::ready_server(config, |s| {
        s.add_tool(tool("maybe", TaskSupport::Optional));
        s.add_tool(tool("always", TaskSupport::Required));
        s.add_tool(tool("never", TaskSupport::Forbidden));
    });
    for name in ["maybe", "always", "never"] {
        let (id, out) = d.send("tools/call", call(name, Some(json!({ "ttl": 5 }))));
        assert!(response(&out, &id).is_none(), "{name}: {out:?}");
    }
    let (id, out) = d.send("tools/call", call("always", None));
    assert!(response(&out, &id).is_none(), "rule 2.2.6: {out:?}");
    let plain = d
        .take_events()
        .iter()
        .filter(|e| matches!(e, Event::ToolCall(ToolCall { task: None, .. })))
        .count();
    assert_eq!(plain, 4);
    assert_eq!(d.host.task_count(), 0);
    let reply = d.call("tasks/get", json!({ "taskId": "task-1" }));
    assert_eq!(error_code(&reply), Some(-32601));
}

#[test]
fn malformed_call_params_are_invalid_params_naming_the_field() {
    let mut d = server();
    let reply = d.call("tools/call", json!({ "arguments": {} }));
    assert_eq!(error_code(&reply), Some(-32602));
    assert!(error_message(&reply).contains("name"), "{reply}");
    let reply = d.call(
        "tools/call",
        json!({ "name": "maybe", "arguments": [1, 2] }),
    );
    assert_eq!(error_code(&reply), Some(-32602));
    assert!(error_message(&reply).contains("arguments"), "{reply}");
    let reply = d.call("tools/call", json!({ "name": 7 }));
    assert_eq!(error_code(&reply), Some(-32602));
    let reply = d.call(
        "tools/call",
        json!({ "name": "maybe", "task": { "ttl": "soon" } }),
    );
    assert_eq!(error_code(&reply), Some(-32602), "{reply}");
    assert_eq!(d.host.task_count(), 0);
    d.assert_alive();
}

#[test]
fn plain_call_can_be_answered_with_an_error() {
    let mut d = server();
    let (id, _) = d.send("tools/call", call("maybe", None));
    let (work, request) = match &d.take_events()[..] {
        [Event::ToolCall(c)] => (c.call, c.request.clone()),
        other => panic!("{other:?}"),
    };
    assert_eq!(id_json(&request), id);
    let error = RpcError::new(-32603, "tool crashed");
    d.host.respond(d.now, work, Err(error)).unwrap();
    let out = d.drain();
    assert_eq!(error_code(response(&out, &id).unwrap()), Some(-32603));
    assert!(
        d.host.respond(d.now, work, Ok(json!({}))).is_err(),
        "answered twice"
    );
}

#[test]
fn tools_list_writes_task_support_and_pages() {
    let mut config = server_config();
    // tools/list pages by its own size now (intended change 4).
    config.tools_page_size = 2;
    let mut d = Probe::ready_server(config, |s| {
        s.add_tool(tool("never", TaskSupport::Forbidden));
        s.add_tool(tool("maybe", TaskSupport::Optional));
        s.add_tool(tool("always", TaskSupport::Required));
    });
    let first = d.call("tools/list", Value::Null);
    let tools = &first["result"]["tools"];
    assert_eq!(tools[0]["execution"]["taskSupport"], "forbidden");
    assert_eq!(tools[1]["execution"]["taskSupport"], "optional");
    assert_eq!(tools.as_array().unwrap().len(), 2);
    let cursor = first["result"]["nextCursor"].clone();
    assert!(cursor.is_string());
    let second = d.call("tools/list", json!({ "cursor": cursor }));
    assert_eq!(second["result"]["tools"][0]["name"], "always");
    assert!(second["result"].get("nextCursor").is_none());
    for bad in [json!("garbage"), json!("tools:99"), json!(3)] {
        let reply = d.call("tools/list", json!({ "cursor": bad }));
        assert_eq!(error_code(&reply), Some(-32602), "{bad}: {reply}");
    }
}
