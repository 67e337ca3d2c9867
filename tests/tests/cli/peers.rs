//! `taskwire --json call …` against the official peers: the TypeScript SDK's task server
//! (2025-11-25), rmcp 3.11's and turbomcp 4's (2026-07-28), and server-everything's sampling
//! tool answered by `--sampling-cmd`.

use std::time::Duration;

use serde_json::Value;
use taskwire_tests::peers::{self, run, Argv, Run};
use taskwire_tests::procs;

const LIMIT: Duration = Duration::from_secs(90);

fn call(args: &[&str], server: &Argv) -> Run {
    let argv = Argv::new(procs::taskwire())
        .args(&["--json", "call"])
        .args(args)
        .arg("--")
        .extend(server);
    run(&argv, LIMIT)
}

fn protocol_and_outcome(run: &Run) -> (String, Value) {
    let events = run.json_lines();
    let protocol = events[0]["protocol"].as_str().unwrap_or("").to_owned();
    (protocol, events.last().cloned().unwrap_or(Value::Null))
}

#[test]
fn a_task_on_the_typescript_rmcp_and_turbomcp_servers() {
    let Some(p) = peers::ready("a_task_on_the_typescript_rmcp_and_turbomcp_servers") else {
        return;
    };
    for (server, era) in [
        (p.ts_server(&["--step-ms", "200"]), "2025-11-25"),
        (p.rmcp_task_server("200"), "2026-07-28"),
        (p.turbomcp_task_server("200"), "2026-07-28"),
    ] {
        let run = call(&["long_running_task"], &server);
        assert_eq!(run.code, Some(0), "{run}");
        let (protocol, outcome) = protocol_and_outcome(&run);
        assert_eq!(protocol, era, "{run}");
        assert_eq!(outcome["outcome"], "completed", "{run}");
        assert_eq!(
            outcome["result"]["content"][0]["text"], "任务完成！",
            "{run}"
        );
        assert!(
            run.json_lines().iter().any(|e| e["event"] == "task"),
            "{run}"
        );
    }
}

#[test]
fn sampling_is_answered_by_the_sampling_command() {
    let Some(p) = peers::ready("sampling_is_answered_by_the_sampling_command") else {
        return;
    };
    let args = [
        "trigger-sampling-request-async",
        "--args",
        r#"{"prompt": "taskwire", "maxTokens": 16}"#,
        "--sampling-cmd",
        "cat > /dev/null; echo sampled by taskwire",
    ];
    let run = call(&args, &p.everything());
    assert_eq!(run.code, Some(0), "{run}");
    let events = run.json_lines();
    let asked = events
        .iter()
        .find(|e| e["event"] == "input")
        .expect("asked");
    assert_eq!(asked["method"], "sampling/createMessage", "{run}");
    let (_, outcome) = protocol_and_outcome(&run);
    let text = outcome["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or("");
    assert!(text.starts_with("[COMPLETED]"), "{run}");
    assert!(text.contains("sampled by taskwire"), "{run}");
}
