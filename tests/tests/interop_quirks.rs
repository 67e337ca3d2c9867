//! Each way an official SDK departs from the 2025-11-25 spec (tests/peers/README.md, "Quirks
//! seen on the wire"), pinned deterministically: the peer's side of a recorded conversation
//! (`tests/fixtures/recorded/*.jsonl`) is fed to our engine, which must tolerate it on input
//! while everything it sends stays schema-valid (the harness checks every line).
//!
//! Test names: `<peer>_<quirk>_<what our side does>`.

use std::collections::HashMap;

use serde_json::{json, Value};
use taskwire_engine::{Event, Millis, Task, TaskStatus, TaskSupport, Tool};
use taskwire_tests::msg::error_code;
use taskwire_tests::peers::replay::ServerReplay;
use taskwire_tests::peers::wire::{fixture, Log};
use taskwire_tests::setup::{client_config, server_config, text_result};
use taskwire_tests::{Driver, Side};

const TOOL: &str = "long_running_task";
const RELATED: &str = "io.modelcontextprotocol/related-task";

// ---- helpers -----------------------------------------------------------------------------

/// Our client, after the recorded server's `initialize` answer.
fn client_for(log: &Log) -> Driver {
    let init = log.answer(log.request("initialize"))["result"].clone();
    Driver::ready_client(client_config(), init)
}

/// Our server with the demo's tools (optional, and required).
fn server() -> Driver {
    let mut d = Driver::server(server_config());
    d.session.add_tool(Tool::new(TOOL, TaskSupport::Optional));
    d.session.add_tool(Tool::new(
        "long_running_task_required",
        TaskSupport::Required,
    ));
    d
}

/// Feeds a recorded client message to our server with the recorded task ids replaced by ours.
fn feed_mapped(d: &mut Driver, msg: &Value, ids: &HashMap<String, String>) -> Vec<Value> {
    let mut text = msg.to_string();
    for (theirs, ours) in ids {
        text = text.replace(&format!("\"{theirs}\""), &format!("\"{ours}\""));
    }
    d.feed(&text)
}

/// The answer to `request` among `out`.
fn answer_to<'a>(out: &'a [Value], request: &Value) -> &'a Value {
    out.iter()
        .find(|m| m.get("method").is_none() && m["id"] == request["id"])
        .unwrap_or_else(|| panic!("no answer to {request} in {out:?}"))
}

fn task_events(d: &mut Driver) -> (Vec<Task>, Vec<Result<Value, String>>, Vec<String>) {
    let (mut statuses, mut results, mut errors) = (Vec::new(), Vec::new(), Vec::new());
    for event in d.take_events() {
        match event {
            Event::TaskCreated { task, .. } | Event::TaskStatus { task } => statuses.push(task),
            Event::TaskResult { outcome, .. } => results.push(outcome.map_err(|e| e.message)),
            Event::PeerError { message } => errors.push(message),
            _ => {}
        }
    }
    (statuses, results, errors)
}

fn seen(tasks: &[Task]) -> Vec<(TaskStatus, String)> {
    tasks
        .iter()
        .map(|t| (t.status, t.status_message.clone().unwrap_or_default()))
        .collect()
}

/// Runs our client against a replayed server: polls as the clock moves `step` ms at a time
/// until a task result arrives (at most `steps` times).
fn run_to_result(d: &mut Driver, replay: &mut ServerReplay, step: u64, steps: usize) {
    for _ in 0..steps {
        if d.events
            .iter()
            .any(|e| matches!(e, Event::TaskResult { .. }))
        {
            return;
        }
        let out = d.advance(step);
        replay.serve(d, out);
    }
}

// ---- Python SDK 1.30.0 (the seed server and client) --------------------------------------------

/// mcp 1.30 omits `ttl` when the request had `"task":{}`; the schema requires it (null allowed).
/// The TS client and the Inspector reject such a Task; our client reads the absence as null.
#[test]
fn python_server_task_without_ttl_is_read_as_unlimited() {
    let log = fixture("tsclient-seedserver-task-nottl");
    let created = log.answer(log.request("tools/call"));
    assert!(created["result"]["task"].get("ttl").is_none(), "{created}");
    let mut d = client_for(&log);
    let mut replay = ServerReplay::new(log);
    d.session
        .call_tool_as_task(d.now, TOOL, json!({}), None)
        .unwrap();
    let out = d.drain();
    assert_eq!(out[0]["params"]["task"], json!({}), "we sent task:{{}}");
    replay.serve(&mut d, out);
    replay.finish(&mut d);
    let (tasks, _, errors) = task_events(&mut d);
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(tasks[0].ttl, None);
    assert_eq!(tasks[0].poll_interval, Some(500));
    assert_eq!(
        seen(&tasks),
        [
            (TaskStatus::Working, String::new()),
            (TaskStatus::Working, "开始执行...".into())
        ]
    );
}

/// The seed writes `"execution":{"task_support":"optional"}`: the spec key is `taskSupport`, so
/// our client reads the tool as forbidden (the default), yet a task call made anyway runs the
/// whole recorded flow (microsecond timestamps, polls every 500 ms) to its result.
#[test]
fn python_server_task_support_key_reads_as_forbidden_yet_task_call_completes() {
    let log = fixture("tsclient-seedserver-task");
    let listed = log.answer(log.request("tools/list"))["result"]["tools"].clone();
    assert_eq!(
        listed[0]["execution"],
        json!({ "task_support": "optional" })
    );
    let tools: Vec<Tool> = serde_json::from_value(listed).unwrap();
    assert_eq!(tools[0].execution.task_support, TaskSupport::Forbidden);

    let mut d = client_for(&log);
    let mut replay = ServerReplay::new(log);
    d.session
        .call_tool_as_task(d.now, TOOL, json!({}), Some(60_000))
        .unwrap();
    let out = d.drain();
    replay.serve(&mut d, out);
    run_to_result(&mut d, &mut replay, 500, 40);
    let (tasks, results, errors) = task_events(&mut d);
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(
        seen(&tasks),
        [
            (TaskStatus::Working, String::new()),
            (TaskStatus::Working, "开始执行...".into()),
            (TaskStatus::Working, "处理步骤 1...".into()),
            (TaskStatus::Working, "处理步骤 2...".into()),
            (TaskStatus::Completed, "处理步骤 2...".into()),
        ]
    );
    let result = results[0].as_ref().expect("a result");
    assert_eq!(result["content"][0]["text"], "任务完成！");
    assert_eq!(result["isError"], false);
}

/// Timestamps with microseconds (`…56.872240Z`) parse, so a stale update is recognised as
/// older and dropped rather than shown as a change.
#[test]
fn python_microsecond_timestamps_order_status_updates() {
    let log = fixture("tsclient-seedserver-task");
    let updates = log.with_method("notifications/tasks/status");
    let stamp = updates[1]["params"]["lastUpdatedAt"].as_str().unwrap();
    assert_eq!(stamp.len(), "2026-11-30T05:31:57.879245Z".len(), "{stamp}");
    assert!(Millis::parse_rfc3339(stamp).is_some(), "{stamp}");

    let mut d = client_for(&log);
    let mut replay = ServerReplay::new(log.clone());
    d.session
        .call_tool_as_task(d.now, TOOL, json!({}), Some(60_000))
        .unwrap();
    let out = d.drain();
    replay.serve(&mut d, out);
    d.feed_json(updates[2].clone()); // 处理步骤 2..., the newer one
    d.take_events();
    d.feed_json(updates[1].clone()); // 处理步骤 1..., older by its lastUpdatedAt
    let (tasks, _, errors) = task_events(&mut d);
    assert!(tasks.is_empty(), "a stale update was shown: {tasks:?}");
    assert!(errors.is_empty(), "{errors:?}");
}

/// The Python SDK client declares `"capabilities":{}` and still sends task-augmented calls; our
/// server (which declared `tasks.requests.tools.call`) runs them as tasks.
#[test]
fn python_client_without_tasks_capability_still_gets_a_task() {
    let log = fixture("seedclient-seedserver-task");
    let init = log.request("initialize");
    assert_eq!(init["params"]["capabilities"], json!({}));
    let mut d = server();
    d.feed_json(init.clone());
    d.feed_json(json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }));
    let call = log.request("tools/call");
    assert_eq!(call["params"]["task"], json!({ "ttl": 60_000 }));
    let out = d.feed_json(call.clone());
    let task = &answer_to(&out, call)["result"]["task"];
    assert_eq!(task["status"], "working");
    assert_eq!(task["ttl"], 60_000);
    let tool_call = d.take_events().into_iter().find_map(|e| match e {
        Event::ToolCall { task, .. } => task,
        _ => None,
    });
    assert_eq!(tool_call.as_deref(), task["taskId"].as_str());
}

// ---- TypeScript SDK 1.32.2 (ts_server, server-everything, ts_client) ---------------------------

/// `callToolStream` copies its `task` option into `tasks/get` and `tasks/result`; our server
/// ignores it there (`taskId` is authoritative) and answers as usual.
#[test]
fn ts_client_task_param_inside_tasks_get_and_result_is_ignored() {
    let log = fixture("tsclient-tsserver-task");
    let mut d = server();
    d.feed_json(log.request("initialize").clone());
    d.feed_json(json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }));
    let call = log.request("tools/call");
    let out = d.feed_json(call.clone());
    let ours = answer_to(&out, call)["result"]["task"]["taskId"]
        .as_str()
        .unwrap()
        .to_owned();
    let theirs = log.answer(call)["result"]["task"]["taskId"]
        .as_str()
        .unwrap()
        .to_owned();
    let ids = HashMap::from([(theirs, ours.clone())]);

    let get = log.request("tasks/get");
    assert_eq!(get["params"]["task"], json!({ "ttl": 60_000 }));
    let out = feed_mapped(&mut d, get, &ids);
    let answer = answer_to(&out, get);
    assert_eq!(answer["result"]["taskId"], ours.as_str(), "{answer}");
    assert_eq!(answer["result"]["status"], "working");

    let fetch = log.request("tasks/result");
    assert_eq!(fetch["params"]["task"], json!({ "ttl": 60_000 }));
    let out = feed_mapped(&mut d, fetch, &ids);
    assert!(out.iter().all(|m| m["id"] != fetch["id"]), "answered early");
    d.session
        .complete_task(d.now, &ours, text_result("任务完成！"))
        .unwrap();
    let out = d.drain();
    let answer = answer_to(&out, fetch);
    assert_eq!(answer["result"]["content"][0]["text"], "任务完成！");
    assert_eq!(answer["result"]["_meta"][RELATED]["taskId"], ours.as_str());
}

/// A `notifications/tasks/status` for the new task arrives before the `CreateTaskResult`
/// (the tool starts its work synchronously). Our client keeps it, reports the task once when
/// created, and goes on to the result; `completed` keeps the last working message.
#[test]
fn ts_server_status_before_create_task_result_is_kept() {
    let log = fixture("tsclient-tsserver-task");
    let call = log.position(|l| l.msg["method"] == "tools/call").unwrap();
    let (created_at, _) = log.answer_at(call).unwrap();
    let early = &log.lines[call + 1];
    assert!(early.from == Side::Server && early.msg["method"] == "notifications/tasks/status");
    assert!(call + 1 < created_at);

    let mut d = client_for(&log);
    let mut replay = ServerReplay::new(log);
    d.session
        .call_tool_as_task(d.now, TOOL, json!({}), Some(60_000))
        .unwrap();
    let out = d.drain();
    replay.serve(&mut d, out);
    assert!(matches!(d.events.first(), Some(Event::TaskCreated { .. })));
    run_to_result(&mut d, &mut replay, 1000, 20);
    let (tasks, results, errors) = task_events(&mut d);
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(
        seen(&tasks),
        [
            (TaskStatus::Working, "开始执行...".into()),
            (TaskStatus::Working, "处理步骤 1...".into()),
            (TaskStatus::Working, "处理步骤 2...".into()),
            (TaskStatus::Completed, "处理步骤 2...".into()),
        ]
    );
    assert_eq!(
        results[0].as_ref().unwrap()["content"][0]["text"],
        "任务完成！"
    );
}

/// Cancel and list results carry `"_meta":{}`; our client reads them as plain Tasks.
#[test]
fn ts_server_empty_meta_in_cancel_and_list_results_is_accepted() {
    let log = fixture("tsclient-tsserver-cancel");
    let cancel = log.request("tasks/cancel");
    let answer = log.answer(cancel);
    assert_eq!(answer["result"]["_meta"], json!({}));
    let mut d = client_for(&log);
    let mut replay = ServerReplay::new(log);
    d.session
        .call_tool_as_task(d.now, TOOL, json!({}), Some(60_000))
        .unwrap();
    let out = d.drain();
    replay.serve(&mut d, out);
    let id = d.session.remote_task_ids()[0].to_owned();
    d.session.cancel_task(d.now, &id).unwrap();
    let out = d.drain();
    replay.serve(&mut d, out);
    let events = d.take_events();
    assert!(
        events.iter().any(|e| matches!(
            e,
            Event::TaskStatus { task } if task.status == TaskStatus::Cancelled
                && task.status_message.as_deref() == Some("Client cancelled task execution.")
        )),
        "{events:?}"
    );
    assert!(!events.iter().any(|e| matches!(e, Event::PeerError { .. })));

    let log = fixture("tsclient-tsserver-list");
    let mut d = client_for(&log);
    let mut replay = ServerReplay::new(log.clone());
    d.session.list_tasks(d.now, None).unwrap();
    let out = d.drain();
    replay.serve(&mut d, out);
    let page = d
        .take_events()
        .into_iter()
        .find_map(|e| match e {
            Event::Response { outcome, .. } => Some(outcome.unwrap()),
            _ => None,
        })
        .unwrap();
    assert_eq!(page["_meta"], json!({}));
    let tasks: Vec<Task> = serde_json::from_value(page["tasks"].clone()).unwrap();
    assert_eq!(tasks.len(), 2, "the recorded client started two tasks");
    assert!(tasks.iter().all(|t| t.status == TaskStatus::Working));
}

/// Errors for an unknown task id: `-32602` from both SDKs, the TS one with its "MCP error
/// -32602: " prefix inside the wire message. Our client passes code and message through.
#[test]
fn unknown_task_errors_pass_through_with_their_wire_message() {
    for (name, prefix) in [
        ("tsclient-tsserver-get-unknown", "MCP error -32602: "),
        ("tsclient-seedserver-get-unknown", "Task not found"),
    ] {
        let log = fixture(name);
        let mut d = client_for(&log);
        let mut replay = ServerReplay::new(log);
        for method in ["tasks/get", "tasks/result", "tasks/cancel"] {
            let id = match method {
                "tasks/get" => d.session.get_task(d.now, "taskwire-no-such-task"),
                "tasks/result" => d.session.task_result(d.now, "taskwire-no-such-task"),
                _ => d.session.cancel_task(d.now, "taskwire-no-such-task"),
            }
            .unwrap();
            let out = d.drain();
            replay.serve(&mut d, out);
            let outcome = d
                .take_events()
                .into_iter()
                .find_map(|e| match e {
                    Event::Response { request, outcome } if request == id => Some(outcome),
                    _ => None,
                })
                .unwrap_or_else(|| panic!("{name}: no answer to {method}"));
            let error = outcome.expect_err(method);
            assert_eq!(error.code, -32602, "{name} {method}");
            assert!(
                error.message.starts_with(prefix),
                "{name} {method}: {error:?}"
            );
        }
    }
}

/// A plain `tools/call` of an `optional` tool makes the TS server run an internal task and send
/// `notifications/tasks/status` for an id our client never saw. Our client ignores them (no
/// event, no error) and returns the plain result.
#[test]
fn ts_server_status_of_unseen_task_during_plain_call_is_ignored() {
    let log = fixture("tsclient-tsserver-plain");
    assert!(!log.notified_statuses().is_empty());
    let mut d = client_for(&log);
    let mut replay = ServerReplay::new(log);
    let id = d.session.call_tool(d.now, TOOL, json!({})).unwrap();
    let out = d.drain();
    replay.serve(&mut d, out);
    let events = d.take_events();
    assert!(d.session.remote_task_ids().is_empty());
    match events.as_slice() {
        [Event::Response { request, outcome }] => {
            assert_eq!(request, &id);
            assert_eq!(
                outcome.as_ref().unwrap()["content"][0]["text"],
                "任务完成！"
            );
        }
        other => panic!("expected only the plain answer, got {other:?}"),
    }
}

/// A plain call of a `required` tool: the TS server answers an `isError` result, while the spec
/// says `-32601`. Our server follows the spec.
#[test]
fn required_tool_called_plainly_gets_method_not_found_unlike_ts_server() {
    let log = fixture("tsclient-tsserver-plain-required");
    let call = log.request("tools/call");
    let theirs = log.answer(call);
    assert_eq!(theirs["result"]["isError"], true, "{theirs}");
    let mut d = server();
    d.feed_json(log.request("initialize").clone());
    d.feed_json(json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }));
    let out = d.feed_json(call.clone());
    assert_eq!(error_code(answer_to(&out, call)), Some(-32601));
}

/// server-everything asks us for sampling as a task (`"id":0`) and then polls our task with
/// `tasks/get` ids 1, 2, 3, numbers our own requests use too. Our client keeps the two id
/// spaces apart: it hosts the task, answers the server's polls and `tasks/result`, and routes
/// the server's final answer to our own `tools/call`.
#[test]
fn everything_request_ids_overlapping_ours_stay_apart() {
    let log = fixture("tsclient-everything-sampling-async");
    let mut d = client_for(&log);
    let args = json!({ "prompt": "taskwire", "maxTokens": 16 });
    let ours = d
        .session
        .call_tool(d.now, "trigger-sampling-request-async", args)
        .unwrap();
    let call = d.drain().remove(0);
    let server_ids: Vec<&Value> = log
        .from(Side::Server)
        .into_iter()
        .filter(|m| m.get("method").is_some())
        .filter_map(|m| m.get("id"))
        .collect();
    assert!(
        server_ids.contains(&&call["id"]),
        "{} vs {server_ids:?}",
        call["id"]
    );

    let sampling = log.request("sampling/createMessage");
    assert_eq!(sampling["params"]["task"], json!({ "ttl": 300_000 }));
    let out = d.feed_json(sampling.clone());
    let created = answer_to(&out, sampling)["result"]["task"].clone();
    let hosted = created["taskId"].as_str().unwrap().to_owned();
    let theirs = log.answer(sampling)["result"]["task"]["taskId"]
        .as_str()
        .unwrap()
        .to_owned();
    let ids = HashMap::from([(theirs, hosted.clone())]);
    let task = d.take_events().into_iter().find_map(|e| match e {
        Event::Request { task, .. } => task,
        _ => None,
    });
    assert_eq!(task.as_deref(), Some(hosted.as_str()));
    let completion = json!({
        "role": "assistant",
        "content": { "type": "text", "text": "taskwire fake completion of 1 message(s)" },
        "model": "taskwire-fake-model",
        "stopReason": "endTurn"
    });
    let polls = log.with_method("tasks/get");
    let out = feed_mapped(&mut d, polls[0], &ids);
    assert_eq!(answer_to(&out, polls[0])["result"]["status"], "working");
    d.session.complete_task(d.now, &hosted, completion).unwrap();
    d.drain();
    let out = feed_mapped(&mut d, polls[1], &ids);
    assert_eq!(answer_to(&out, polls[1])["result"]["status"], "completed");
    let fetch = log.request("tasks/result");
    let out = feed_mapped(&mut d, fetch, &ids);
    let payload = &answer_to(&out, fetch)["result"];
    assert_eq!(payload["model"], "taskwire-fake-model");
    assert_eq!(payload["_meta"][RELATED]["taskId"], hosted.as_str());

    let mut final_answer = log.answer(log.request("tools/call")).clone();
    final_answer["id"] = call["id"].clone();
    d.feed_json(final_answer);
    let events = d.take_events();
    match events.as_slice() {
        [Event::Response { request, outcome }] => {
            assert_eq!(request, &ours);
            let text = outcome.as_ref().unwrap()["content"][0]["text"]
                .as_str()
                .unwrap();
            assert!(
                text.starts_with("[COMPLETED] Async sampling completed!"),
                "{text}"
            );
        }
        other => panic!("expected only our tools/call answer, got {other:?}"),
    }
}

/// server-everything: on `input_required` the same status notification comes twice (once from
/// the tool, once from the SDK); the elicitation arrives while our `tasks/result` is pending,
/// tagged with the task. Our client reports `input_required` once, answers the elicitation, and
/// gets the report. The server also ignored our ttl (300000 instead of 60000).
#[test]
fn everything_input_required_twice_notified_is_reported_once() {
    let log = fixture("tsclient-everything-input-required");
    let statuses = log.notified_statuses();
    let twice = statuses.windows(2).any(|w| w == ["input_required"; 2]);
    assert!(twice, "{statuses:?}");
    let mut d = client_for(&log);
    let mut replay = ServerReplay::new(log);
    let args = json!({ "topic": "python", "ambiguous": true });
    d.session
        .call_tool_as_task(d.now, "simulate-research-query", args, Some(60_000))
        .unwrap();
    let out = d.drain();
    replay.serve(&mut d, out);
    let mut asked = None;
    for _ in 0..20 {
        let out = d.advance(1000);
        replay.serve(&mut d, out);
        asked = d.events.iter().find_map(|e| match e {
            Event::Request {
                request,
                method,
                related_task,
                ..
            } if method == "elicitation/create" => Some((request.clone(), related_task.clone())),
            _ => None,
        });
        if asked.is_some() {
            break;
        }
    }
    let (request, related) = asked.expect("the elicitation arrived");
    let task = d.session.remote_task_ids()[0].to_owned();
    assert_eq!(related.as_deref(), Some(task.as_str()));
    let answer = json!({ "action": "accept", "content": { "interpretation": "programming" } });
    d.session.respond(d.now, &request, Ok(answer)).unwrap();
    let out = d.drain();
    assert_eq!(out[0]["result"]["action"], "accept");
    replay.resume(&mut d);
    run_to_result(&mut d, &mut replay, 1000, 20);
    let (tasks, results, errors) = task_events(&mut d);
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(tasks[0].ttl, Some(300_000));
    let order: Vec<TaskStatus> = tasks.iter().map(|t| t.status).collect();
    let input = order
        .iter()
        .filter(|s| **s == TaskStatus::InputRequired)
        .count();
    assert_eq!(input, 1, "{order:?}");
    assert_eq!(order.last(), Some(&TaskStatus::Completed), "{order:?}");
    let text = results[0].as_ref().unwrap()["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        text.starts_with("# Research Report: python (programming)"),
        "{text}"
    );
}

// ---- Inspector 2.12.0 CLI ------------------------------------------------------------------------

/// The Inspector declares tasks only under `capabilities.extensions` and sends `"task":{}`. Our
/// server still runs the call as a task, and writes the `ttl` the Inspector insists on (it gives
/// up on the Python server's Task, which lacks it).
#[test]
fn inspector_tasks_under_extensions_still_get_a_task_with_ttl() {
    let nottl = fixture("inspector-seedrequired-nottl");
    let call = nottl.request("tools/call");
    assert!(nottl.answer(call)["result"]["task"].get("ttl").is_none());
    assert_eq!(
        nottl.with_method("tasks/get").len(),
        0,
        "the Inspector gave up"
    );

    let log = fixture("inspector-tsserver-required");
    let init = log.request("initialize");
    let caps = &init["params"]["capabilities"];
    assert!(caps.get("tasks").is_none(), "{caps}");
    assert!(caps["extensions"]
        .get("io.modelcontextprotocol/tasks")
        .is_some());
    let mut d = server();
    d.feed_json(init.clone());
    d.feed_json(json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }));
    let call = log.request("tools/call");
    assert_eq!(call["params"]["task"], json!({}));
    let out = d.feed_json(call.clone());
    let task = answer_to(&out, call)["result"]["task"].clone();
    assert_eq!(task["ttl"], 300_000, "{task}");
    let ours = task["taskId"].as_str().unwrap().to_owned();
    let theirs = log.answer(call)["result"]["task"]["taskId"]
        .as_str()
        .unwrap()
        .to_owned();
    let ids = HashMap::from([(theirs, ours.clone())]);

    let polls = log.with_method("tasks/get");
    let out = feed_mapped(&mut d, polls[0], &ids);
    assert_eq!(answer_to(&out, polls[0])["result"]["status"], "working");
    d.session
        .complete_task(d.now, &ours, text_result("任务完成！"))
        .unwrap();
    d.drain();
    let last = polls.last().unwrap();
    let out = feed_mapped(&mut d, last, &ids);
    assert_eq!(answer_to(&out, last)["result"]["status"], "completed");
    let fetch = log.request("tasks/result");
    let out = feed_mapped(&mut d, fetch, &ids);
    let result = &answer_to(&out, fetch)["result"];
    assert_eq!(result["content"][0]["text"], "任务完成！");
    assert_eq!(result["_meta"][RELATED]["taskId"], ours.as_str());
}
