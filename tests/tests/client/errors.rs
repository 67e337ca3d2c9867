//! Every error the server sends reaches the client application with its code (and data).

use serde_json::json;
use taskwire_engine::{Event, RequestId, RpcError, TaskSupport};
use taskwire_harness::setup::{client_config, server_config, text_result, tool};
use taskwire_harness::{Pair, Side};

fn pair() -> Pair {
    let mut server = server_config();
    server.tasks.list = false;
    Pair::connected(client_config(), server, |s| {
        s.add_tool(tool("never", TaskSupport::Forbidden));
        s.add_tool(tool("maybe", TaskSupport::Optional));
        s.add_tool(tool("always", TaskSupport::Required));
    })
}

fn error_of(pair: &Pair, id: &RequestId) -> RpcError {
    let found = pair.find(Side::Client, |e| match e {
        Event::Response {
            request,
            outcome: Err(e),
            ..
        } if request == id => Some(e.clone()),
        // `tasks/*` and `tools/list` answer with typed events.
        Event::TaskAnswer {
            request,
            outcome: Err(e),
            ..
        }
        | Event::TaskPage {
            request,
            outcome: Err(e),
            ..
        }
        | Event::ToolPage {
            request,
            outcome: Err(e),
            ..
        } if request == id => Some(e.clone()),
        _ => None,
    });
    assert_eq!(found.len(), 1, "one error for {id}:\n{}", pair.transcript());
    found.into_iter().next().unwrap()
}

#[test]
fn protocol_errors_keep_their_codes() {
    let mut pair = pair();
    let now = pair.now;
    let cs = pair.cs;
    let c = &mut pair.client;
    let cases: Vec<(RequestId, i64)> = vec![
        (c.call_tool(now, cs, "nope", json!({})).unwrap(), -32602),
        (c.call_tool(now, cs, "always", json!({})).unwrap(), -32601),
        (
            c.call_tool_as_task(now, cs, "never", json!({}), None)
                .unwrap(),
            -32601,
        ),
        (
            c.call_tool_as_task(now, cs, "nope", json!({}), None)
                .unwrap(),
            -32602,
        ),
        (c.get_task(now, cs, "nope").unwrap(), -32602),
        (c.task_result(now, cs, "nope").unwrap(), -32602),
        (c.cancel_task(now, cs, "nope").unwrap(), -32602),
        (c.list_tasks(now, cs, None).unwrap(), -32601),
        (c.request(now, cs, "foo/bar", None).unwrap(), -32601),
        (
            c.request(now, cs, "tasks/get", Some(json!({ "taskId": "" })))
                .unwrap(),
            -32602,
        ),
        (c.list_tools(now, cs, Some("bogus".into())).unwrap(), -32602),
    ];
    pair.deliver();
    for (id, code) in cases {
        assert_eq!(error_of(&pair, &id).code, code, "request {id}");
    }
    assert!(
        pair.client.remote_task_ids(pair.cs).is_empty(),
        "no task came of it"
    );
}

#[test]
fn application_errors_keep_code_message_and_data() {
    let mut pair = pair();
    let plain = pair
        .client
        .call_tool(pair.now, pair.cs, "maybe", json!({}))
        .unwrap();
    pair.client
        .call_tool_as_task(pair.now, pair.cs, "maybe", json!({}), None)
        .unwrap();
    pair.deliver();
    let calls = pair.find(Side::Server, |e| match e {
        Event::ToolCall(c) => Some((c.call, c.task.clone())),
        _ => None,
    });
    let custom =
        RpcError::new(-32042, "URL elicitation required").with_data(json!({ "elicitations": [] }));
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0].1, None, "the plain call");
    assert_eq!(calls[1].1.as_deref(), Some("task-1"), "the task");
    pair.server
        .respond(pair.now, calls[0].0, Err(custom.clone()))
        .unwrap();
    pair.server
        .respond(pair.now, calls[1].0, Err(custom.clone()))
        .unwrap();
    pair.run_until_task_result(5_000);
    assert_eq!(error_of(&pair, &plain), custom);
    let failed = pair.task_results();
    assert_eq!(failed, [Err(custom)]);
    let status = pair.find(Side::Client, |e| match e {
        Event::TaskStatus { task, .. } => Some(task.status_message.clone()),
        _ => None,
    });
    assert_eq!(status, [Some("URL elicitation required".to_owned())]);
}

#[test]
fn is_error_results_arrive_as_results() {
    let mut pair = pair();
    pair.client
        .call_tool_as_task(pair.now, pair.cs, "maybe", json!({}), None)
        .unwrap();
    pair.deliver();
    let work = pair.work(Side::Server, "task-1");
    let mut failed = text_result("bad input");
    failed["isError"] = json!(true);
    pair.server
        .respond(pair.now, work, Ok(failed.clone()))
        .unwrap();
    let results = pair.run_until_task_result(5_000);
    let result = results[0].as_ref().expect("a success response (§5.4)");
    assert_eq!(result["isError"], true);
    assert_eq!(
        pair.client
            .remote_task(pair.cs, "task-1")
            .map(|t| t.status.as_str()),
        None,
        "forgotten once reported"
    );
    let last = pair.find(Side::Client, |e| match e {
        Event::TaskStatus { task, .. } => Some(task.status.as_str()),
        _ => None,
    });
    assert_eq!(last, ["failed"]);
}
