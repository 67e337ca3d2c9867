//! What the client accepts from servers that bend the schema (spec §5.5, §5.6, §5.15, the
//! seed's defects): a missing `ttl`, explicit nulls, RFC 3339 offsets and long fractions,
//! opaque ids, `execution.task_support`, numbers written as floats.

use serde_json::{json, Value};
use taskwire_engine::{Event, TaskInfo, TaskSupport, Tool, ToolExecution};
use taskwire_harness::msg::{id_json, with_method};
use taskwire_harness::setup::{client_config, first_text};
use taskwire_harness::Probe;

fn server_init() -> Value {
    json!({ "protocolVersion": "2025-11-25",
            "capabilities": { "tools": { "listChanged": null }, "tasks": { "list": true, "requests": { "tools": { "call": true } } } },
            "serverInfo": { "name": "lenient", "version": "1" }, "instructions": null })
}

fn created(d: &mut Probe, task: Value) -> TaskInfo {
    let call = d
        .host
        .call_tool_as_task(d.now, d.session, "job", json!({}), None)
        .unwrap();
    d.drain();
    d.reply(&id_json(&call), json!({ "task": task, "_meta": null }));
    let events = d.take_events();
    match &events[..] {
        [Event::TaskCreated { task, .. }] => task.clone(),
        other => panic!("{other:?}"),
    }
}

#[test]
fn missing_ttl_and_explicit_nulls() {
    let mut d = Probe::ready_client(client_config(), server_init());
    let task = created(
        &mut d,
        json!({ "taskId": "t", "status": "working",
        "createdAt": "2026-01-15T09:00:00Z", "lastUpdatedAt": "2026-01-15T09:00:00Z",
        "statusMessage": null, "pollInterval": null }),
    );
    assert_eq!(
        (task.ttl_ms, task.poll_interval_ms, task.status_message),
        (None, None, None)
    );
    // No interval suggested: the client's default (1 s) applies.
    assert!(d.advance(999).is_empty());
    assert_eq!(with_method(&d.advance(1), "tasks/get").len(), 1);
}

#[test]
fn float_numbers_are_read_as_milliseconds() {
    let mut d = Probe::ready_client(client_config(), server_init());
    let task = created(
        &mut d,
        json!({ "taskId": "t", "status": "working",
        "createdAt": "2026-01-15T09:00:00Z", "lastUpdatedAt": "2026-01-15T09:00:00Z",
        "ttl": 60000.0, "pollInterval": 1500.0 }),
    );
    assert_eq!(
        (task.ttl_ms, task.poll_interval_ms),
        (Some(60_000), Some(1_500))
    );
    assert!(d.advance(1_499).is_empty());
    assert_eq!(with_method(&d.advance(1), "tasks/get").len(), 1);
}

#[test]
fn timestamps_with_offsets_and_long_fractions_order_updates() {
    let mut d = Probe::ready_client(client_config(), server_init());
    let view = |message: &str, updated: &str| {
        json!({ "taskId": "t", "status": "working", "statusMessage": message,
                "createdAt": "2026-01-15T17:00:00+08:00", "lastUpdatedAt": updated, "ttl": null })
    };
    created(
        &mut d,
        view("created", "2026-01-15T17:00:00.000000001+08:00"),
    );
    let mut messages = Vec::new();
    for (message, updated) in [
        ("newer", "2026-01-15T17:00:05.123456789+08:00"), // 09:00:05.123Z
        ("older", "2026-01-15T09:00:04.999Z"),            // before "newer": ignored
        ("newest", "2026-01-15T04:00:06-05:00"),          // 09:00:06Z
    ] {
        d.notify("notifications/tasks/status", Some(view(message, updated)));
        for e in d.take_events() {
            if let Event::TaskStatus { task, .. } = e {
                messages.push(task.status_message.unwrap());
            }
        }
    }
    assert_eq!(messages, ["newer", "newest"]);
}

#[test]
fn opaque_task_ids_travel_unchanged() {
    let odd = "urn:task/ü?x=1&y=\"2\"#frag \\ 🙂";
    let mut d = Probe::ready_client(client_config(), server_init());
    let task = created(
        &mut d,
        json!({ "taskId": odd, "status": "working",
        "createdAt": "2026-01-15T09:00:00Z", "lastUpdatedAt": "2026-01-15T09:00:00Z",
        "ttl": 1000, "pollInterval": 100 }),
    );
    assert_eq!(task.id, odd);
    let out = d.advance(100);
    let get = with_method(&out, "tasks/get");
    assert_eq!(get[0]["params"]["taskId"], odd);
    let done = json!({ "taskId": odd, "status": "completed", "createdAt": "2026-01-15T09:00:00Z",
                       "lastUpdatedAt": "2026-01-15T09:00:00.100Z", "ttl": 1000 });
    let out = d.reply(&get[0]["id"], done);
    let fetch = with_method(&out, "tasks/result");
    assert_eq!(fetch[0]["params"]["taskId"], odd);
    d.reply(
        &fetch[0]["id"],
        json!({ "content": [{ "type": "text", "text": "ok" }],
        "_meta": { "io.modelcontextprotocol/related-task": { "taskId": odd } } }),
    );
    let results: Vec<_> = d
        .take_events()
        .into_iter()
        .filter_map(|e| match e {
            Event::TaskResult { task, outcome, .. } => Some((task, outcome.unwrap())),
            _ => None,
        })
        .collect();
    assert_eq!(results.len(), 1);
    assert_eq!(results[0].0, odd);
    assert_eq!(first_text(&results[0].1), Some("ok"));
}

#[test]
fn snake_case_task_support_is_read_when_task_support_is_absent() {
    let listed = json!({ "name": "long_running_task", "inputSchema": { "type": "object", "properties": {} },
                         "execution": { "task_support": "optional" } });
    let tool: Tool = serde_json::from_value(listed.clone()).expect("accepted");
    assert_eq!(
        tool.execution.task_support,
        TaskSupport::Optional,
        "the Python SDK writes task_support; it is read when taskSupport is absent"
    );
    let mut d = Probe::ready_client(client_config(), server_init());
    let list = d.host.list_tools(d.now, d.session, None).unwrap();
    d.drain();
    d.reply(
        &id_json(&list),
        json!({ "tools": [listed], "nextCursor": null }),
    );
    let events = d.take_events();
    assert!(
        matches!(&events[..], [Event::ToolPage { outcome: Ok(page), .. }]
        if page.tools[0].execution.task_support == TaskSupport::Optional)
    );
    // Listed optional: the call goes out as a task, with no plain fallback needed.
    let call = d
        .host
        .call_tool_as_task(
            d.now,
            d.session,
            "long_running_task",
            json!({}),
            Some(60_000),
        )
        .unwrap();
    let out = d.drain();
    assert_eq!(out[0]["id"], id_json(&call));
    assert_eq!(out[0]["params"]["task"], json!({ "ttl": 60000 }));
}

#[test]
fn a_task_view_with_wrong_types_is_reported_not_trusted() {
    let mut d = Probe::ready_client(client_config(), server_init());
    created(
        &mut d,
        json!({ "taskId": "t", "status": "working",
        "createdAt": "2026-01-15T09:00:00Z", "lastUpdatedAt": "2026-01-15T09:00:00Z", "ttl": null,
        "pollInterval": 100 }),
    );
    let out = d.advance(100);
    let get = with_method(&out, "tasks/get");
    d.reply(
        &get[0]["id"],
        json!({ "taskId": "t", "status": "exploded" }),
    );
    let events = d.take_events();
    assert!(
        matches!(&events[..], [Event::PeerError { .. }]),
        "{events:?}"
    );
    assert_eq!(
        d.host
            .remote_task(d.session, "t")
            .map(|t| t.status.as_str()),
        Some("working")
    );
    let out = d.advance(100);
    assert_eq!(with_method(&out, "tasks/get").len(), 1, "polling goes on");
}

/// A listed tool whose `execution` cannot be read is listed without it (the engine still
/// tries it as a task); a tool that cannot be read at all fails the page with -32603.
#[test]
fn an_unreadable_execution_is_left_out_of_the_listed_tool() {
    let schema = json!({ "type": "object", "properties": {} });
    let mut d = Probe::ready_client(client_config(), server_init());
    let list = d.host.list_tools(d.now, d.session, None).unwrap();
    let broken = d.host.list_tools(d.now, d.session, None).unwrap();
    d.drain();
    let odd = json!({ "name": "odd", "inputSchema": schema, "execution": { "taskSupport": 1 } });
    d.reply(
        &id_json(&list),
        json!({ "tools": [odd], "nextCursor": "2" }),
    );
    d.reply(
        &id_json(&broken),
        json!({ "tools": [{ "inputSchema": schema }] }),
    );
    let events = d.take_events();
    let page = |id| {
        events.iter().find_map(|e| match e {
            Event::ToolPage {
                request, outcome, ..
            } if *request == id => Some(outcome.clone()),
            _ => None,
        })
    };
    let listed = page(list).expect("a page").expect("read");
    assert_eq!(listed.tools[0].name, "odd");
    assert_eq!(listed.tools[0].execution, ToolExecution::default());
    assert_eq!(listed.next_cursor.as_deref(), Some("2"));
    let error = page(broken).expect("a page").unwrap_err();
    assert_eq!(error.code, -32603);
    assert!(error.message.contains("malformed tool"), "{error:?}");
}
