//! What `taskwire proxy` writes, tapped on both sides and validated against each side's
//! schema (its answers in front in the front client's era, its requests behind in the era of
//! the server there), for a 2025-11-25 client in front of a 2026-07-28 server and the
//! reverse: a task with its outcome, a task whose tool asks a question (answered by the
//! client in front), a plain call; and, for the 2025-11-25 client, `tasks/list` of the tasks
//! it made through the proxy. A plain 2026-07-28 call whose tool behind asks a question is
//! made again behind (MRTR in front), the first call given up. Calls with both sides in
//! 2025-11-25 are relayed (`taskwire_proxy::Relay`): under ids of the relay's own behind, with
//! their progress, questions and cancels; task calls too, their tasks the server's behind,
//! unless the front keeps tasks of its own (`--store`). A plain call of a tool that requires
//! a task behind is left to the proxy's client, which runs it as a task there: the call hears
//! the task's status messages as progress, and a front cancel cancels the task.

use std::path::PathBuf;

use serde_json::{json, Value};
use taskwire_demo::tools::{DONE_MESSAGE, REQUIRED_TOOL, RESULT_TEXT, STEPS};
use taskwire_driver::engine::era::v2025_11_25::RELATED_TASK;
use taskwire_driver::engine::{ClientEra, Era, TaskStatus};
use taskwire_driver::{CallToolResult, ClientBuilder, Config};
use taskwire_harness::conformance::Side;
use taskwire_tests::peers::wire::Log;
use taskwire_tests::peers::{self, Argv, Peers};
use taskwire_tests::procs::{self, Raw};

/// The client in front, in `era`, accepting every question with `{"confirm": true}`.
fn front_client(era: Era) -> ClientBuilder {
    let mut config = Config::new("proxy-wire", "1.0.0");
    config.client_era = ClientEra::Only(era);
    config.client.elicitation = true;
    ClientBuilder::new(config)
        .on_elicitation(|request| async move { request.accept(&json!({"confirm": true})) })
}

#[test]
fn what_the_proxy_writes_validates_on_both_sides_in_both_directions() {
    let Some(p) = peers::ready("what_the_proxy_writes_validates_on_both_sides") else {
        return;
    };
    for (front, behind) in [
        (Era::V2025_11_25, "2026-07-28"),
        (Era::V2026_07_28, "2025-11-25"),
    ] {
        let name = format!("proxy-{}-to-{behind}", front.as_str());
        let (front_log, behind_log) = (
            p.scratch(&format!("{name}-front.jsonl")),
            p.scratch(&format!("{name}-behind.jsonl")),
        );
        let server = Argv::new(procs::task_server()).args(&["--step-ms", "50", "--extra-tools"]);
        let proxy = Argv::new(procs::taskwire())
            .args(&["proxy", "--era", behind, "--"])
            .extend(&p.tap(&behind_log, &server));
        let tapped = p.tap(&front_log, &proxy);
        smol::block_on(async {
            let (client, mut child) =
                taskwire_smol::spawn_server(tapped.command(), front_client(front)).unwrap();
            let opened = client.initialize().await.unwrap();
            assert_eq!(opened.protocol_version, front.as_str(), "{name}");

            let call = client
                .call_tool_as_task("long_running_task", json!({}), None)
                .await
                .unwrap();
            let made = call.task.clone().expect("a task in front").id;
            assert_eq!(
                call.result().await.unwrap(),
                CallToolResult::text("任务完成！"),
                "{name}"
            );
            let asked = client
                .call_tool_as_task("confirm_task", json!({"question": "Ship it?"}), None)
                .await
                .unwrap();
            let answered = asked.result().await.unwrap();
            assert_eq!(
                answered.content,
                CallToolResult::text("Ship it? confirmed").content
            );
            assert_eq!(
                answered.structured_content,
                Some(json!({"action": "accept", "confirmed": true})),
                "{name}"
            );
            let plain = client
                .call_tool("long_running_task", json!({}))
                .await
                .unwrap();
            assert_eq!(plain, CallToolResult::text("任务完成！"), "{name}");
            if front == Era::V2025_11_25 {
                let listed = client.list_tasks().await.unwrap();
                let completed: Vec<&str> = listed
                    .iter()
                    .filter(|t| t.status == TaskStatus::Completed)
                    .map(|t| t.id.as_str())
                    .collect();
                assert_eq!(completed.len(), 2, "{name}: {listed:?}");
                assert!(completed.contains(&made.as_str()), "{name}: {listed:?}");
            }
            // Closing stdin ends the proxy, which ends the server behind; the taps flush.
            client.close().await;
            child.wait().await.unwrap();
        });
        let (front_log, behind_log) = (Log::read(&front_log), Log::read(&behind_log));
        front_log.check_conformance(Side::Server);
        behind_log.check_conformance(Side::Client);
        // The question crosses as its era carries it: a request in 2025-11-25, an input
        // request answered by `tasks/update` in 2026-07-28.
        let (v2025, v2026) = match front {
            Era::V2025_11_25 => (&front_log, &behind_log),
            _ => (&behind_log, &front_log),
        };
        let asked = v2025.with_method("elicitation/create");
        assert_eq!(asked.len(), 1, "{name}: {asked:?}");
        assert_eq!(asked[0]["params"]["message"], "Ship it?", "{name}");
        let updated = v2026.with_method("tasks/update");
        assert_eq!(updated.len(), 1, "{name}: {updated:?}");
        assert_eq!(sender(v2026, updated[0]), Some(Side::Client), "{name}");
    }
}

/// Who sent `message` in `log`.
fn sender(log: &Log, message: &Value) -> Option<Side> {
    log.lines.iter().find(|l| &l.msg == message).map(|l| l.from)
}

/// A plain 2026-07-28 call (no task) whose tool behind asks a question: MRTR in front makes
/// the front call again with the answer, so the call behind is made again too; the first is
/// given up (its question refused, `notifications/cancelled`), the second is answered from
/// the retry, and the client is asked once.
#[test]
fn a_plain_v2026_call_whose_server_asks_is_made_again_behind_with_the_answer() {
    let test = "a_plain_v2026_call_whose_server_asks_is_made_again_behind";
    let Some(p) = peers::ready(test) else {
        return;
    };
    let behind_log = p.scratch(&format!("{test}-behind.jsonl"));
    let answers = p.scratch(&format!("{test}-answers.json"));
    std::fs::write(
        &answers,
        r#"{"action": "accept", "content": {"confirm": true}}"#,
    )
    .unwrap();
    let server = Argv::new(procs::task_server()).arg("--extra-tools");
    let proxy = Argv::new(procs::taskwire())
        .args(&["proxy", "--era", "2025-11-25", "--"])
        .extend(&p.tap(&behind_log, &server));
    let call = Argv::new(procs::taskwire())
        .args(&[
            "--json",
            "call",
            "--plain",
            "--era",
            "2026-07-28",
            "confirm_task",
        ])
        .args(&["--arg", "question=Ship it?", "--answers"])
        .arg(&answers)
        .arg("--")
        .extend(&proxy);
    let out = peers::run(&call, std::time::Duration::from_secs(60));
    assert_eq!(out.code, Some(0), "{out}");
    let events = out.json_lines();
    let asked = events.iter().filter(|e| e["event"] == "input").count();
    assert_eq!(asked, 1, "asked once in front: {out}");
    let outcome = events.last().cloned().unwrap_or_default();
    assert_eq!(
        outcome["result"]["content"][0]["text"],
        "Ship it? confirmed"
    );

    let behind = Log::read(&behind_log);
    behind.check_conformance(Side::Client);
    let calls = behind.with_method("tools/call");
    assert_eq!(calls.len(), 2, "made again behind");
    let cancelled = behind.with_method("notifications/cancelled");
    assert_eq!(cancelled.len(), 1);
    assert_eq!(cancelled[0]["params"]["requestId"], calls[0]["id"]);
    assert_eq!(
        behind.answer(calls[1])["result"]["structuredContent"]["confirmed"],
        true
    );
}

/// Both sides in 2025-11-25: plain calls go behind under the relay's own ids, and their
/// progress (the front's token renamed behind and back), a question of the tool (put to the
/// front client under a relay id, its answer taken back) and a front cancel cross with them;
/// a cancelled call's answer never reaches the front. Both taps validate.
#[test]
fn plain_calls_in_one_era_are_relayed_with_their_progress_questions_and_cancels() {
    let test = "plain_calls_in_one_era_are_relayed";
    let Some(p) = peers::ready(test) else {
        return;
    };
    let (mut front, front_log, behind_log, _) =
        one_era(p, test, &["--step-ms", "100", "--extra-tools"]);
    let limit = std::time::Duration::from_secs(20);

    let call = |id: Value, tool: &str, meta: Value| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
               "params": {"name": tool, "arguments": {}, "_meta": meta}})
    };
    front
        .send(&call(
            json!("c-1"),
            "progress_task",
            json!({"progressToken": "p-1"}),
        ))
        .unwrap();
    let done = front.expect(limit, "progress_task's answer", |m| m["id"] == "c-1");
    assert_eq!(
        done["result"]["content"][0]["text"], "3 steps done",
        "{done}"
    );

    front
        .send(&call(json!(2), "confirm_task", json!({})))
        .unwrap();
    let asked = front.expect(limit, "the question", |m| {
        m["method"] == "elicitation/create"
    });
    let answer = json!({"action": "accept", "content": {"confirm": true}});
    front
        .send(&json!({"jsonrpc": "2.0", "id": asked["id"], "result": answer}))
        .unwrap();
    let confirmed = front.expect(limit, "confirm_task's answer", |m| m["id"] == 2);
    assert_eq!(confirmed["result"]["structuredContent"]["confirmed"], true);

    front
        .send(&call(json!(3), "long_running_task", json!({})))
        .unwrap();
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                        "params": {"requestId": 3, "reason": "enough"}});
    front.send(&cancel).unwrap();
    // Long enough for the task behind to have ended, were it not cancelled.
    std::thread::sleep(std::time::Duration::from_millis(1500));
    front.send(&procs::request(4, "ping", json!({}))).unwrap();
    front.expect(limit, "the ping's answer", |m| {
        assert_ne!(m["id"], 3, "a cancelled call is not answered: {m}");
        m["id"] == 4
    });
    front.close_stdin();
    assert!(front.wait(limit).is_some(), "the proxy ends with its input");

    let (front_log, behind_log) = (Log::read(&front_log), Log::read(&behind_log));
    front_log.check_conformance(Side::Server);
    behind_log.check_conformance(Side::Client);
    let progress = front_log.with_method("notifications/progress");
    assert_eq!(progress.len(), 3, "{progress:?}");
    assert!(progress
        .iter()
        .all(|p| p["params"]["progressToken"] == "p-1"));
    let calls = behind_log.with_method("tools/call");
    let ids: Vec<&str> = calls.iter().filter_map(|c| c["id"].as_str()).collect();
    assert_eq!(
        ids,
        ["taskwire-relay-1", "taskwire-relay-2", "taskwire-relay-4"],
        "{calls:?}"
    );
    assert_eq!(
        calls[0]["params"]["_meta"]["progressToken"],
        "taskwire-relay-1"
    );
    let relayed_question = behind_log.with_method("elicitation/create");
    assert_eq!(relayed_question.len(), 1);
    assert_ne!(
        relayed_question[0]["id"], asked["id"],
        "asked under a relay id in front"
    );
    let cancelled = behind_log.with_method("notifications/cancelled");
    assert_eq!(
        cancelled[0]["params"],
        json!({"requestId": "taskwire-relay-4", "reason": "enough"})
    );
}

/// `taskwire proxy --era 2025-11-25` before `task-server SERVER_ARGS…`, both sides tapped, on
/// plain pipes after the handshake; the front and behind logs' paths, and the server's
/// command line.
fn one_era(p: &Peers, test: &str, server_args: &[&str]) -> (Raw, PathBuf, PathBuf, Argv) {
    let (front_log, behind_log) = (
        p.scratch(&format!("{test}-front.jsonl")),
        p.scratch(&format!("{test}-behind.jsonl")),
    );
    let server = Argv::new(procs::task_server()).args(server_args);
    let proxy = Argv::new(procs::taskwire())
        .args(&["proxy", "--era", "2025-11-25", "--"])
        .extend(&p.tap(&behind_log, &server));
    let mut front = raw(&p.tap(&front_log, &proxy));
    front.handshake();
    (front, front_log, behind_log, server)
}

/// `argv` started on plain pipes.
fn raw(argv: &Argv) -> Raw {
    let args: Vec<String> = argv.argv[1..]
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    Raw::spawn(std::path::Path::new(&argv.argv[0]), &args, None)
}

/// Both sides in 2025-11-25 and no store: a task call is relayed, so its task is the
/// server's behind (the same id on both sides), and `tasks/get`, `tasks/result`,
/// `tasks/list`, `tasks/cancel`, the status notices and the task's question cross as they
/// came. With `--store` the front keeps its own tasks: the task call behind is the proxy's
/// client's. Both taps validate.
#[test]
fn tasks_in_one_era_are_the_servers_behind_relayed_unless_the_front_stores_its_own() {
    let test = "tasks_in_one_era_are_relayed";
    let Some(p) = peers::ready(test) else {
        return;
    };
    let (mut front, front_log, behind_log, server) =
        one_era(p, test, &["--step-ms", "50", "--extra-tools"]);
    let limit = std::time::Duration::from_secs(20);
    let request = |id: u64, method: &str, params: Value| procs::request(id, method, params);
    let task_of = |front: &mut Raw, id: u64, tool: &str| {
        front.send(&procs::call_as_task(id, tool)).unwrap();
        let created = front.expect(limit, "CreateTaskResult", |m| m["id"] == id);
        created["result"]["task"]["taskId"]
            .as_str()
            .unwrap()
            .to_owned()
    };

    let long = task_of(&mut front, 1, "long_running_task");
    front
        .send(&request(2, "tasks/get", json!({"taskId": long})))
        .unwrap();
    let got = front.expect(limit, "tasks/get", |m| m["id"] == 2);
    assert_eq!(got["result"]["taskId"], long.as_str());

    let confirm = task_of(&mut front, 3, "confirm_task");
    let asked = front.expect(limit, "the question", |m| {
        m["method"] == "elicitation/create"
    });
    assert_eq!(
        asked["params"]["_meta"][RELATED_TASK]["taskId"],
        confirm.as_str()
    );
    let answer = json!({"action": "accept", "content": {"confirm": true}});
    front
        .send(&json!({"jsonrpc": "2.0", "id": asked["id"], "result": answer}))
        .unwrap();
    front
        .send(&request(4, "tasks/result", json!({"taskId": confirm})))
        .unwrap();
    let confirmed = front.expect(limit, "confirm_task's result", |m| m["id"] == 4);
    assert_eq!(confirmed["result"]["structuredContent"]["confirmed"], true);
    front
        .send(&request(5, "tasks/result", json!({"taskId": long})))
        .unwrap();
    let done = front.expect(limit, "long_running_task's result", |m| m["id"] == 5);
    assert_eq!(done["result"]["content"][0]["text"], "任务完成！");

    let cut = task_of(&mut front, 6, "long_running_task");
    front
        .send(&request(7, "tasks/cancel", json!({"taskId": cut})))
        .unwrap();
    let cancelled = front.expect(limit, "tasks/cancel", |m| m["id"] == 7);
    assert_eq!(cancelled["result"]["status"], "cancelled");
    front.send(&request(8, "tasks/list", json!({}))).unwrap();
    let listed = front.expect(limit, "tasks/list", |m| m["id"] == 8);
    let ids: Vec<&str> = listed["result"]["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["taskId"].as_str())
        .collect();
    for made in [&long, &confirm, &cut] {
        assert!(ids.contains(&made.as_str()), "{made} in {listed}");
    }
    front.close_stdin();
    assert!(front.wait(limit).is_some(), "the proxy ends with its input");

    let (front, behind) = (Log::read(&front_log), Log::read(&behind_log));
    front.check_conformance(Side::Server);
    behind.check_conformance(Side::Client);
    let made_behind: Vec<&Value> = behind.with_method("tools/call");
    assert_eq!(made_behind.len(), 3);
    assert!(
        made_behind.iter().all(|c| c["id"].as_str().is_some()),
        "relay ids"
    );
    let created = behind.answer(made_behind[0]);
    assert_eq!(
        created["result"]["task"]["taskId"],
        long.as_str(),
        "the same task"
    );
    let statuses = front.with_method("notifications/tasks/status");
    assert!(statuses
        .iter()
        .any(|s| s["params"]["taskId"] == long.as_str()));

    // With a store, the front's task is its own, made behind by the proxy's client.
    let store = p.scratch(&format!("{test}.db"));
    let _ = std::fs::remove_file(&store);
    let stored = Argv::new(procs::taskwire())
        .args(&["proxy", "--era", "2025-11-25", "--store"])
        .arg(format!("sqlite:{}", store.display()))
        .arg("--")
        .extend(&p.tap(&behind_log, &server));
    let mut front = raw(&stored);
    front.handshake();
    let own = task_of(&mut front, 1, "long_running_task");
    front
        .send(&request(2, "tasks/result", json!({"taskId": own})))
        .unwrap();
    front.expect(limit, "the stored task's result", |m| m["id"] == 2);
    front.close_stdin();
    assert!(front.wait(limit).is_some());
    let behind_log = Log::read(&behind_log);
    let call = behind_log.with_method("tools/call")[0];
    assert!(call["id"].is_number(), "the proxy's client's call: {call}");
    let created = behind_log.answer(call);
    assert_ne!(
        created["result"]["task"]["taskId"],
        own.as_str(),
        "two tasks"
    );
}

/// Both sides in 2025-11-25, and a tool behind that requires a task (`task-server
/// --required-tool`): the front lists it `optional`, and each plain call of it runs as a task
/// behind, made by the proxy's client (the relay leaves such calls to it): the task's status
/// messages reach the call as progress under its token (a call without one hears none), its
/// result answers the call, and a front `notifications/cancelled` cancels the task behind
/// (the cancelled call gets no answer). Both taps validate.
#[test]
fn a_plain_call_of_a_tool_that_requires_a_task_runs_as_one_behind_with_progress_and_cancel() {
    let test = "a_plain_call_of_a_tool_that_requires_a_task";
    let Some(p) = peers::ready(test) else {
        return;
    };
    let server_args = ["--step-ms", "300", "--required-tool"];
    let (mut front, front_log, behind_log, _) = one_era(p, test, &server_args);
    let limit = std::time::Duration::from_secs(20);
    front
        .send(&procs::request(1, "tools/list", json!({})))
        .unwrap();
    let listed = front.expect(limit, "tools/list", |m| m["id"] == 1);
    let required = (listed["result"]["tools"].as_array().unwrap().iter())
        .find(|t| t["name"] == REQUIRED_TOOL)
        .unwrap_or_else(|| panic!("no {REQUIRED_TOOL}: {listed}"));
    assert_eq!(required["execution"]["taskSupport"], "optional");

    let call = |id: u64, meta: Value| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
               "params": {"name": REQUIRED_TOOL, "arguments": {}, "_meta": meta}})
    };
    front
        .send(&call(2, json!({"progressToken": "p-2"})))
        .unwrap();
    front.send(&call(3, json!({}))).unwrap();
    for id in [2, 3] {
        let done = front.expect(limit, "the tool's answer", |m| m["id"] == id);
        assert_eq!(done["result"]["content"][0]["text"], RESULT_TEXT, "{done}");
    }

    front
        .send(&call(4, json!({"progressToken": "p-4"})))
        .unwrap();
    front.expect(limit, "a first report", |m| {
        m["params"]["progressToken"] == "p-4"
    });
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                        "params": {"requestId": 4, "reason": "enough"}});
    front.send(&cancel).unwrap();
    // Long enough for the task behind to have ended, were it not cancelled.
    std::thread::sleep(std::time::Duration::from_millis(1500));
    front.send(&procs::request(5, "ping", json!({}))).unwrap();
    front.expect(limit, "the ping's answer", |m| {
        assert_ne!(m["id"], 4, "a cancelled call is not answered: {m}");
        m["id"] == 5
    });
    front.close_stdin();
    assert!(front.wait(limit).is_some(), "the proxy ends with its input");

    let (front, behind) = (Log::read(&front_log), Log::read(&behind_log));
    front.check_conformance(Side::Server);
    behind.check_conformance(Side::Client);
    let progress = front.with_method("notifications/progress");
    let reported = |token: &str| -> Vec<(f64, String)> {
        (progress.iter())
            .filter(|p| p["params"]["progressToken"] == token)
            .map(|p| {
                let params = &p["params"];
                assert_eq!(params.get("total"), None, "no total: {params}");
                let message = params["message"].as_str().unwrap_or_default();
                (params["progress"].as_f64().unwrap(), message.to_owned())
            })
            .collect()
    };
    let expected: Vec<(f64, String)> = (STEPS.iter().chain([&DONE_MESSAGE]))
        .zip(1..)
        .map(|(message, n)| (f64::from(n), message.to_string()))
        .collect();
    assert_eq!(reported("p-2"), expected);
    assert_eq!(
        reported("p-2").len() + reported("p-4").len(),
        progress.len(),
        "the call without a token hears none: {progress:?}"
    );

    // Behind, the proxy's client made three tasks, and cancelled the last.
    let made: Vec<&Value> = behind.with_method("tools/call");
    assert_eq!(made.len(), 3, "{made:?}");
    for call in &made {
        assert!(call["id"].is_number(), "the proxy's client's: {call}");
        assert!(call["params"]["task"].is_object(), "a task call: {call}");
    }
    let last = behind.answer(made[2])["result"]["task"]["taskId"].clone();
    let cancels = behind.with_method("tasks/cancel");
    assert_eq!(cancels.len(), 1, "{cancels:?}");
    assert_eq!(cancels[0]["params"]["taskId"], last);
    assert_eq!(behind.answer(cancels[0])["result"]["status"], "cancelled");
}
