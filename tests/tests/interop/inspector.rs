//! Interop with the MCP Inspector 2.12 CLI (`inspector --cli SERVER... --method ...`) against our
//! `task-server --required-tool`. The Inspector declares tasks only under
//! `capabilities.extensions`, runs a `taskSupport:"required"` tool as a full task (`"task":{}`,
//! `tasks/get` polls, `tasks/result`) and an `optional` one plainly, and rejects a Task without
//! `ttl`. Our server's traffic is recorded with `tap.py` and checked against the schema.
//!
//! Test names: `inspector_cli_to_task_server_<case>`.

use serde_json::{json, Value};
use taskwire_harness::Side;
use taskwire_tests::peers::demo::{binary, RESULT};
use taskwire_tests::peers::wire::Log;
use taskwire_tests::peers::{self, run, Argv, Run};

use crate::common::{DEADLINE, RELATED};

/// Runs the Inspector CLI with `args` against our server; returns the run, its stdout as one
/// JSON document, and our server's traffic.
fn inspector(test: &str, runtime: &str, args: &[&str]) -> Option<(Run, Value, Log)> {
    let p = peers::ready(test)?;
    let log = p.scratch(&format!("{test}.jsonl"));
    let server = Argv::new(binary("task-server")).args(&[
        "--runtime",
        runtime,
        "--required-tool",
        "--step-ms",
        "300",
    ]);
    let out = run(&p.inspector(&p.tap(&log, &server), args), DEADLINE);
    out.assert_exit(0);
    let printed = serde_json::from_str(&out.stdout)
        .unwrap_or_else(|e| panic!("the Inspector printed no JSON ({e})\n{out}"));
    let wire = Log::read(&log);
    wire.check_conformance(Side::Server);
    let caps = &wire.request("initialize")["params"]["capabilities"];
    assert!(caps.get("tasks").is_none(), "{caps}");
    assert!(
        caps["extensions"]["io.modelcontextprotocol/tasks"].is_object(),
        "{caps}"
    );
    Some((out, printed, wire))
}

fn required_tool_runs_as_task(test: &str, runtime: &str) {
    let args = [
        "--method",
        "tools/call",
        "--tool-name",
        "long_running_task_required",
    ];
    let Some((out, printed, wire)) = inspector(test, runtime, &args) else {
        return;
    };
    let call = wire.request("tools/call");
    assert_eq!(call["params"]["task"], json!({}));
    let task = &wire.answer(call)["result"]["task"];
    assert_eq!(task["status"], "working");
    assert_eq!(task["ttl"], 300_000, "the Inspector needs ttl: {task}");
    let id = task["taskId"].as_str().unwrap();
    let polled: Vec<&str> = wire
        .with_method("tasks/get")
        .into_iter()
        .map(|get| wire.answer(get)["result"]["status"].as_str().unwrap_or("?"))
        .collect();
    assert!(!polled.is_empty(), "no tasks/get");
    assert_eq!(polled.last(), Some(&"completed"), "{polled:?}");
    assert!(polled[..polled.len() - 1].iter().all(|s| *s == "working"));
    assert_eq!(wire.with_method("tasks/result").len(), 1);
    assert_eq!(printed["content"][0]["text"], RESULT, "{out}");
    assert_eq!(printed["_meta"][RELATED]["taskId"], id, "{out}");
}

#[test]
fn inspector_cli_to_task_server_required_tool_runs_as_task() {
    required_tool_runs_as_task(
        "inspector_cli_to_task_server_required_tool_runs_as_task",
        "smol",
    );
}

#[test]
fn inspector_cli_to_task_server_tokio_required_tool_runs_as_task() {
    required_tool_runs_as_task(
        "inspector_cli_to_task_server_tokio_required_tool_runs_as_task",
        "tokio",
    );
}

#[test]
fn inspector_cli_to_task_server_optional_tool_runs_plain() {
    let test = "inspector_cli_to_task_server_optional_tool_runs_plain";
    let args = ["--method", "tools/call", "--tool-name", "long_running_task"];
    let Some((out, printed, wire)) = inspector(test, "smol", &args) else {
        return;
    };
    assert!(wire.request("tools/call")["params"].get("task").is_none());
    assert!(wire.with_method("tasks/get").is_empty());
    assert_eq!(
        printed,
        json!({ "content": [{ "type": "text", "text": RESULT }] }),
        "{out}"
    );
}

#[test]
fn inspector_cli_to_task_server_tools_list_shows_task_support() {
    let test = "inspector_cli_to_task_server_tools_list_shows_task_support";
    let Some((out, printed, _)) = inspector(test, "smol", &["--method", "tools/list"]) else {
        return;
    };
    let support: Vec<(&str, &str)> = printed["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("no tools\n{out}"))
        .iter()
        .map(|t| {
            let name = t["name"].as_str().unwrap_or_default();
            (name, t["execution"]["taskSupport"].as_str().unwrap_or("?"))
        })
        .collect();
    assert_eq!(
        support,
        [
            ("long_running_task", "optional"),
            ("long_running_task_required", "required")
        ]
    );
}
