//! What `taskwire proxy` writes, tapped on both sides and validated against each side's
//! schema (its answers in front in the front client's era, its requests behind in the era of
//! the server there), for a 2025-11-25 client in front of a 2026-07-28 server and the
//! reverse: a task with its outcome, a task whose tool asks a question (answered by the
//! client in front), a plain call; and, for the 2025-11-25 client, `tasks/list` of the tasks
//! it made through the proxy. A plain 2026-07-28 call whose tool behind asks a question is
//! made again behind (MRTR in front), the first call given up.

use serde_json::{json, Value};
use taskwire_driver::engine::{ClientEra, Era, TaskStatus};
use taskwire_driver::{CallToolResult, ClientBuilder, Config};
use taskwire_harness::conformance::Side;
use taskwire_tests::peers::wire::Log;
use taskwire_tests::peers::{self, Argv};
use taskwire_tests::procs;

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
