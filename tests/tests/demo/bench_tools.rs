//! `task-server --bench-tools`, the benchmark fixture, over raw pipes under each server
//! runtime: `echo` and `instant_task` answer exactly, the seed's tool list is unchanged
//! without the flag, and the server holds more tasks than the default caps allow.

use std::time::Duration;

use serde_json::{json, Value};
use taskwire_demo::bench_tools::{BENCH_TTL_MS, ECHO, INSTANT_TASK, INSTANT_TEXT};
use taskwire_demo::tools::{DEMO_TASK, TOOL};
use taskwire_tests::procs::{self, Raw, Rt};

/// Outer bound on each reply: a hang fails the test instead of blocking.
const LIMIT: Duration = Duration::from_secs(20);
/// More than both the engine's default task cap (1024) and its default per-requestor cap.
const MANY_TASKS: u64 = 10_500;

fn start(runtime: Rt, bench_tools: bool) -> Raw {
    let mut args = vec!["--runtime".to_owned(), runtime.name().to_owned()];
    if bench_tools {
        args.push("--bench-tools".into());
    }
    let mut raw = Raw::spawn(&procs::task_server(), &args, None);
    raw.handshake();
    raw
}

/// Sends a request and returns its reply (notifications on the way are skipped).
fn call(raw: &mut Raw, id: u64, method: &str, params: Value) -> Value {
    raw.send(&procs::request(id, method, params))
        .expect("the request is written");
    raw.expect(LIMIT, method, |m| {
        m["id"] == id && m.get("method").is_none()
    })
}

fn text(text: &str) -> Value {
    json!({ "content": [{ "type": "text", "text": text }] })
}

/// The task support of each listed tool, by name, in order.
fn tools(raw: &mut Raw) -> Vec<(String, Value)> {
    let listed = call(raw, 1, "tools/list", json!({}));
    let tools = listed["result"]["tools"].as_array().expect("tools");
    tools
        .iter()
        .map(|t| {
            (
                t["name"].as_str().unwrap().to_owned(),
                t["execution"]["taskSupport"].clone(),
            )
        })
        .collect()
}

/// With the flag, `echo` (forbidden, `text` required) and `instant_task` (optional) join the
/// seed's tool; without it, the list is the seed's alone.
fn tools_listed(runtime: Rt) {
    let mut raw = start(runtime, true);
    let listed = call(&mut raw, 2, "tools/list", json!({}));
    let echo = listed["result"]["tools"]
        .as_array()
        .and_then(|tools| tools.iter().find(|t| t["name"] == ECHO))
        .cloned()
        .expect("echo is listed");
    assert_eq!(echo["inputSchema"]["required"], json!(["text"]), "{echo}");
    assert_eq!(echo["inputSchema"]["properties"]["text"]["type"], "string");
    assert_eq!(
        tools(&mut raw),
        [
            (TOOL.to_owned(), json!("optional")),
            (ECHO.to_owned(), json!("forbidden")),
            (INSTANT_TASK.to_owned(), json!("optional")),
        ]
    );
    let mut seed = start(runtime, false);
    assert_eq!(tools(&mut seed), [(TOOL.to_owned(), json!("optional"))]);
}

/// `echo` returns its text as one text block; without `text` it is -32602, as a task -32601.
fn echo_answers(runtime: Rt) {
    let mut raw = start(runtime, true);
    let said = "héllo \"quoted\" 任务\n";
    let answer = call(
        &mut raw,
        1,
        "tools/call",
        json!({ "name": ECHO, "arguments": { "text": said } }),
    );
    assert_eq!(answer["result"], text(said), "{answer}");
    let missing = call(
        &mut raw,
        2,
        "tools/call",
        json!({ "name": ECHO, "arguments": {} }),
    );
    assert_eq!(missing["error"]["code"], -32602, "{missing}");
    let as_task = procs::call_as_task(3, ECHO);
    raw.send(&as_task).expect("written");
    let refused = raw.expect(LIMIT, "the refusal", |m| m["id"] == 3);
    assert_eq!(refused["error"]["code"], -32601, "{refused}");
}

/// `instant_task` as a task is created with the asked ttl, completes, and its result is
/// "done"; called plainly it answers "done" at once.
fn instant_task_completes(runtime: Rt) {
    let mut raw = start(runtime, true);
    let params = json!({ "name": INSTANT_TASK, "arguments": {}, "task": { "ttl": BENCH_TTL_MS } });
    let created = call(&mut raw, 1, "tools/call", params);
    let task = &created["result"]["task"];
    assert_eq!(task["ttl"], BENCH_TTL_MS, "{created}");
    let id = task["taskId"].as_str().expect("a task id").to_owned();
    let mut status = task["status"].clone();
    for request in 2.. {
        if status == "completed" {
            break;
        }
        assert!(request < 1000, "still {status} after 1000 tasks/get");
        let got = call(&mut raw, request, "tasks/get", json!({ "taskId": id }));
        status = got["result"]["status"].clone();
    }
    let result = call(&mut raw, 2000, "tasks/result", json!({ "taskId": id }));
    assert_eq!(
        result["result"]["content"],
        text(INSTANT_TEXT)["content"],
        "{result}"
    );
    let plain = call(
        &mut raw,
        2001,
        "tools/call",
        json!({ "name": INSTANT_TASK, "arguments": {} }),
    );
    assert_eq!(plain["result"], text(INSTANT_TEXT), "{plain}");
}

/// [`MANY_TASKS`] retained tasks are all accepted and all listed, beside `demo-task`.
fn holds_many_tasks(runtime: Rt) {
    let mut raw = start(runtime, true);
    let params = json!({ "name": INSTANT_TASK, "arguments": {}, "task": { "ttl": BENCH_TTL_MS } });
    for id in 1..=MANY_TASKS {
        raw.send(&procs::request(id, "tools/call", params.clone()))
            .expect("written");
    }
    let mut created = 0;
    while created < MANY_TASKS {
        let line = raw.next_line(LIMIT).expect("a reply");
        let message: Value = serde_json::from_str(&line).expect("JSON");
        if message.get("method").is_some() {
            continue;
        }
        assert!(message["result"]["task"]["taskId"].is_string(), "{message}");
        created += 1;
    }
    let mut listed = Vec::new();
    let mut cursor = Value::Null;
    for id in MANY_TASKS + 1.. {
        let params = match &cursor {
            Value::Null => json!({}),
            cursor => json!({ "cursor": cursor }),
        };
        let page = call(&mut raw, id, "tasks/list", params);
        let tasks = page["result"]["tasks"].as_array().expect("tasks").clone();
        listed.extend(tasks.into_iter().map(|t| t["taskId"].clone()));
        cursor = page["result"]["nextCursor"].clone();
        if cursor.is_null() {
            break;
        }
    }
    assert_eq!(listed.len() as u64, MANY_TASKS + 1);
    assert!(listed.contains(&json!(DEMO_TASK)));
}

#[test]
fn tools_listed_smol_server() {
    tools_listed(Rt::Smol);
}

#[test]
fn tools_listed_tokio_server() {
    tools_listed(Rt::Tokio);
}

#[test]
fn echo_answers_smol_server() {
    echo_answers(Rt::Smol);
}

#[test]
fn echo_answers_tokio_server() {
    echo_answers(Rt::Tokio);
}

#[test]
fn instant_task_completes_smol_server() {
    instant_task_completes(Rt::Smol);
}

#[test]
fn instant_task_completes_tokio_server() {
    instant_task_completes(Rt::Tokio);
}

#[test]
fn holds_many_tasks_smol_server() {
    holds_many_tasks(Rt::Smol);
}

#[test]
fn holds_many_tasks_tokio_server() {
    holds_many_tasks(Rt::Tokio);
}
