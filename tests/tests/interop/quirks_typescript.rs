//! The TypeScript SDK's (`@modelcontextprotocol/sdk@1.32.2`: `ts_server.mjs`, `ts_client.mjs`,
//! server-everything) departures from the 2025-11-25 spec, pinned deterministically: its side of
//! a recorded conversation (`tests/fixtures/recorded/`) is fed to our engine, which tolerates it
//! on input while every line it sends stays schema-valid (the harness checks each one). Live
//! counterparts are in `typescript.rs` and `everything.rs`.
//!
//! Test names: `<peer>_<quirk>_<what our side does>`.

use std::collections::HashMap;

use serde_json::{json, Value};
use taskwire_engine::{AppRequest, Event, TaskStatus};
use taskwire_harness::msg::error_code;
use taskwire_harness::setup::text_result;
use taskwire_harness::Side;
use taskwire_tests::peers::fed::{
    answer_to, call_as_task, client_for, demo_server_for, feed_mapped, run_to_result, task_id,
    unknown_task_errors, TaskEvents, RELATED, TOOL,
};
use taskwire_tests::peers::replay::ServerReplay;
use taskwire_tests::peers::wire::fixture;

/// `callToolStream` copies its `task` option into `tasks/get` and `tasks/result`; our server
/// ignores it there (`taskId` is authoritative) and answers as usual.
#[test]
fn ts_client_task_param_inside_tasks_get_and_result_is_ignored() {
    let log = fixture("tsclient-tsserver-task");
    let mut d = demo_server_for(&log);
    let call = log.request("tools/call");
    let out = d.feed_json(call.clone());
    let ours = task_id(answer_to(&out, call));
    let ids = HashMap::from([(task_id(log.answer(call)), ours.clone())]);

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
    let work = d.work(&ours);
    d.host
        .respond(d.now, work, Ok(text_result("任务完成！")))
        .unwrap();
    let out = d.drain();
    let answer = answer_to(&out, fetch);
    assert_eq!(answer["result"]["content"][0]["text"], "任务完成！");
    assert_eq!(answer["result"]["_meta"][RELATED]["taskId"], ours.as_str());
}

/// A plain call of a `required` tool: the TS server answers an `isError` result, while the spec
/// says `-32601`. Our server follows the spec.
#[test]
fn ts_server_plain_call_of_required_tool_our_server_answers_method_not_found() {
    let log = fixture("tsclient-tsserver-plain-required");
    let call = log.request("tools/call");
    let theirs = log.answer(call);
    assert_eq!(theirs["result"]["isError"], true, "{theirs}");
    let mut d = demo_server_for(&log);
    let out = d.feed_json(call.clone());
    assert_eq!(error_code(answer_to(&out, call)), Some(-32601));
}

/// A `notifications/tasks/status` for the new task arrives before the `CreateTaskResult` (the
/// tool starts its work synchronously). Our client keeps it, reports the task once when created,
/// and goes on to the result; `completed` keeps the last working message.
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
    call_as_task(&mut d, &mut replay, TOOL, json!({}), Some(60_000));
    assert!(matches!(d.events.first(), Some(Event::TaskCreated { .. })));
    run_to_result(&mut d, &mut replay, 1000, 20);
    let seen = TaskEvents::take(&mut d);
    assert!(seen.errors.is_empty(), "{:?}", seen.errors);
    assert_eq!(
        seen.seen(),
        [
            (TaskStatus::Working, "开始执行...".into()),
            (TaskStatus::Working, "处理步骤 1...".into()),
            (TaskStatus::Working, "处理步骤 2...".into()),
            (TaskStatus::Completed, "处理步骤 2...".into()),
        ]
    );
    assert_eq!(seen.result()["content"][0]["text"], "任务完成！");
}

/// Cancel and list results carry `"_meta":{}`; our client reads them as plain Tasks.
#[test]
fn ts_server_empty_meta_in_cancel_and_list_results_is_accepted() {
    let log = fixture("tsclient-tsserver-cancel");
    assert_eq!(
        log.answer(log.request("tasks/cancel"))["result"]["_meta"],
        json!({})
    );
    let mut d = client_for(&log);
    let mut replay = ServerReplay::new(log);
    call_as_task(&mut d, &mut replay, TOOL, json!({}), Some(60_000));
    let id = d.host.remote_task_ids(d.session)[0].to_owned();
    d.host.cancel_task(d.now, d.session, &id).unwrap();
    let out = d.drain();
    replay.serve(&mut d, out);
    let seen = TaskEvents::take(&mut d);
    assert!(seen.errors.is_empty(), "{:?}", seen.errors);
    let last = seen.tasks.last().expect("a cancelled view");
    assert_eq!(last.status, TaskStatus::Cancelled);
    assert_eq!(
        last.status_message.as_deref(),
        Some("Client cancelled task execution.")
    );

    let log = fixture("tsclient-tsserver-list");
    let mut d = client_for(&log);
    let mut replay = ServerReplay::new(log);
    d.host.list_tasks(d.now, d.session, None).unwrap();
    let out = d.drain();
    replay.serve(&mut d, out);
    // The TypeScript server's page carries an empty `_meta`: read past.
    let page = d.take_events().into_iter().find_map(|e| match e {
        Event::TaskPage { outcome, .. } => Some(outcome.unwrap()),
        _ => None,
    });
    let page = page.expect("the list answer");
    assert_eq!(page.tasks.len(), 2, "the recorded client started two tasks");
    assert!(page.tasks.iter().all(|t| t.status == TaskStatus::Working));
}

/// Errors for an unknown task id carry the SDK's "MCP error -32602: " prefix inside the wire
/// message; our client passes code and message on unchanged.
#[test]
fn ts_server_prefixed_error_messages_pass_through() {
    let unknown = "taskwire-no-such-task";
    for (method, error) in unknown_task_errors("tsclient-tsserver-get-unknown", unknown) {
        assert_eq!(error.code, -32602, "{method}");
        assert!(
            error.message.starts_with("MCP error -32602: "),
            "{method}: {error:?}"
        );
    }
}

/// A plain `tools/call` of an `optional` tool makes the TS server run an internal task and send
/// `notifications/tasks/status` (`"ttl":null`) for an id our client never saw. Our client
/// ignores them (no event, no error) and returns the plain result.
#[test]
fn ts_server_status_of_unseen_task_during_plain_call_is_ignored() {
    let log = fixture("tsclient-tsserver-plain");
    assert!(!log.notified_statuses().is_empty());
    let mut d = client_for(&log);
    let mut replay = ServerReplay::new(log);
    let id = d.host.call_tool(d.now, d.session, TOOL, json!({})).unwrap();
    let out = d.drain();
    replay.serve(&mut d, out);
    let events = d.take_events();
    assert!(d.host.remote_task_ids(d.session).is_empty());
    match events.as_slice() {
        [Event::Response {
            request, outcome, ..
        }] => {
            assert_eq!(request, &id);
            assert_eq!(
                outcome.as_ref().unwrap()["content"][0]["text"],
                "任务完成！"
            );
        }
        other => panic!("expected only the plain answer, got {other:?}"),
    }
}

/// server-everything asks us for sampling as a task (`"id":0`) and then polls our task with
/// `tasks/get` ids 1, 2 and `tasks/result` id 3, numbers our own requests use too. Our client
/// keeps the two id spaces apart: it hosts the task, answers the server's polls and
/// `tasks/result`, and routes the server's final answer to our own `tools/call`.
#[test]
fn everything_request_ids_overlapping_ours_stay_apart() {
    let log = fixture("tsclient-everything-sampling-async");
    let mut d = client_for(&log);
    let args = json!({ "prompt": "taskwire", "maxTokens": 16 });
    let ours = d
        .host
        .call_tool(d.now, d.session, "trigger-sampling-request-async", args)
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
    let hosted = task_id(answer_to(&out, sampling));
    let ids = HashMap::from([(task_id(log.answer(sampling)), hosted.clone())]);
    let task = d.take_events().into_iter().find_map(|e| match e {
        Event::Request(r) => r.task,
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
    let work = d.work(&hosted);
    d.host.respond(d.now, work, Ok(completion)).unwrap();
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
    match d.take_events().as_slice() {
        [Event::Response {
            request, outcome, ..
        }] => {
            assert_eq!(request, &ours);
            let text = outcome.as_ref().unwrap()["content"][0]["text"]
                .as_str()
                .unwrap_or_default();
            assert!(
                text.starts_with("[COMPLETED] Async sampling completed!"),
                "{text}"
            );
        }
        other => panic!("expected only our tools/call answer, got {other:?}"),
    }
}

/// server-everything: on `input_required` the same status notification comes twice (once from the
/// tool, once from the SDK); the elicitation arrives while our `tasks/result` is pending, tagged
/// with the task. Our client reports `input_required` once, answers the elicitation, and gets the
/// report. The server also ignored our ttl (300000 instead of 60000).
#[test]
fn everything_input_required_notified_twice_is_reported_once() {
    let log = fixture("tsclient-everything-input-required");
    let statuses = log.notified_statuses();
    let twice = statuses.windows(2).any(|w| w == ["input_required"; 2]);
    assert!(twice, "{statuses:?}");
    let mut d = client_for(&log);
    let mut replay = ServerReplay::new(log);
    let args = json!({ "topic": "python", "ambiguous": true });
    call_as_task(
        &mut d,
        &mut replay,
        "simulate-research-query",
        args,
        Some(60_000),
    );
    let mut asked = None;
    for _ in 0..20 {
        let out = d.advance(1000);
        replay.serve(&mut d, out);
        asked = d.events.iter().find_map(|e| match e {
            Event::Request(AppRequest {
                call,
                method,
                related_task,
                ..
            }) if method == "elicitation/create" => Some((*call, related_task.clone())),
            _ => None,
        });
        if asked.is_some() {
            break;
        }
    }
    let (call, related) = asked.expect("the elicitation arrived");
    let task = d.host.remote_task_ids(d.session)[0].to_owned();
    assert_eq!(related.as_deref(), Some(task.as_str()));
    let answer = json!({ "action": "accept", "content": { "interpretation": "programming" } });
    d.host.respond(d.now, call, Ok(answer)).unwrap();
    let out = d.drain();
    assert_eq!(out[0]["result"]["action"], "accept");
    replay.resume(&mut d);
    run_to_result(&mut d, &mut replay, 1000, 20);
    let seen = TaskEvents::take(&mut d);
    assert!(seen.errors.is_empty(), "{:?}", seen.errors);
    assert_eq!(seen.tasks[0].ttl_ms, Some(300_000));
    let order: Vec<TaskStatus> = seen.tasks.iter().map(|t| t.status).collect();
    let input = order
        .iter()
        .filter(|s| **s == TaskStatus::InputRequired)
        .count();
    assert_eq!(input, 1, "{order:?}");
    assert_eq!(order.last(), Some(&TaskStatus::Completed), "{order:?}");
    let text = seen.result()["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(
        text.starts_with("# Research Report: python (programming)"),
        "{text}"
    );
}
