//! The fuzz bodies on stable: a seeded loop over pseudo-random inputs plus the checked-in
//! seed corpus (`fuzz/corpus/<target>/`), and one regression test per fuzzer finding.
//!
//! The iteration counts keep the whole file near ten seconds in a debug build on two cores.
//! `TASKWIRE_FUZZ_ITERS=<n>` multiplies them; `TASKWIRE_FUZZ_SEED=<n>` picks another seed.

use std::path::PathBuf;

use taskwire_tests::fuzz::check::Schema;
use taskwire_tests::fuzz::{framing, pair_faults, server_ops, Rng};

fn scale() -> usize {
    std::env::var("TASKWIRE_FUZZ_ITERS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1)
}

fn seed() -> u64 {
    std::env::var("TASKWIRE_FUZZ_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0x7a57_c0de)
}

/// Runs `body` on every corpus file of `target`, then on `iters` random inputs.
fn seeded(target: &str, salt: u64, iters: usize, max_len: usize, body: fn(&[u8])) {
    let corpus = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../fuzz/corpus")
        .join(target);
    let mut files: Vec<_> = std::fs::read_dir(&corpus)
        .map(|dir| dir.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    files.sort();
    for file in files {
        let data = std::fs::read(&file).expect("corpus file");
        body(&data);
    }
    let mut rng = Rng::new(seed() ^ salt);
    for _ in 0..iters * scale() {
        let len = rng.below(max_len as u64) as usize;
        let data = rng.bytes(len);
        if let Err(panic) = std::panic::catch_unwind(|| body(&data)) {
            let path = std::env::temp_dir().join(format!("taskwire-fuzz-{target}.bin"));
            std::fs::write(&path, &data).expect("write the failing input");
            eprintln!(
                "{target}: failing input saved to {} (replay: TASKWIRE_FUZZ_REPLAY={target}:{0} \
                 cargo test --test fuzz_loop replay -- --nocapture)",
                path.display()
            );
            std::panic::resume_unwind(panic);
        }
    }
}

/// Replays one saved input: `TASKWIRE_FUZZ_REPLAY=<target>:<file>` (add
/// `TASKWIRE_FUZZ_TRACE=1` to print the end of the transcript on failure).
#[test]
fn replay() {
    let Some(spec) = std::env::var("TASKWIRE_FUZZ_REPLAY").ok() else {
        return;
    };
    let (target, file) = spec.split_once(':').expect("<target>:<file>");
    let data = std::fs::read(file).expect("replay input");
    match target {
        "framing" => framing::run(&data),
        "server_ops" => server_ops::run(&data),
        "pair_faults" => pair_faults::run(&data),
        other => panic!("no target {other}"),
    }
}

#[test]
fn framing_seeded() {
    seeded("framing", 1, 1500, 600, framing::run);
}

#[test]
fn server_ops_seeded() {
    seeded("server_ops", 2, 900, 1500, server_ops::run);
}

#[test]
fn pair_faults_seeded() {
    seeded("pair_faults", 3, 400, 1200, pair_faults::run);
}

/// Rewrites the checked-in seed corpus (`fuzz/corpus/<target>/`):
/// `cargo test --test fuzz_loop write_seed_corpus -- --ignored`.
///
/// - framing: the client side of each recorded interop transcript
///   (`tests/fixtures/recorded/*.jsonl`) behind a header byte, plus a few hand-made streams;
/// - server_ops and pair_faults: from 20 000 seeded inputs, the few that together reach the
///   most protocol features (task created, input_required, completed, failed, cancelled,
///   parked result, expiry, restart, …), chosen greedily.
#[test]
#[ignore]
fn write_seed_corpus() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let dir = |target: &str| {
        let d = root.join("fuzz/corpus").join(target);
        std::fs::create_dir_all(&d).unwrap();
        for old in std::fs::read_dir(&d).unwrap().flatten() {
            std::fs::remove_file(old.path()).unwrap();
        }
        d
    };

    let framing_dir = dir("framing");
    let mut recorded: Vec<_> = std::fs::read_dir(root.join("tests/fixtures/recorded"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    recorded.sort();
    for (i, path) in recorded.iter().take(6).enumerate() {
        let text = std::fs::read_to_string(path).unwrap();
        // Header: large lines, EOF at the end; then 4 bytes of split seed.
        let mut seed = vec![0b0000_1011, i as u8, 0, 0, 0];
        for l in text.lines() {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            if v["dir"] == "c2s" {
                seed.extend_from_slice(serde_json::to_string(&v["msg"]).unwrap().as_bytes());
                seed.push(b'\n');
            }
        }
        std::fs::write(framing_dir.join(format!("recorded-{i}")), seed).unwrap();
    }
    let hand: [&[u8]; 4] = [
        b"\x04\x01\x00\x00\x00{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"opt\",\"task\":{\"ttl\":1000}}}\n{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tasks/result\",\"params\":{\"taskId\":\"task-1\"}}\n{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tasks/cancel\",\"params\":{\"taskId\":\"task-1\"}}\n{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tasks/list\"}\n",
        b"\x00\x02\x00\x00\x00{\"jsonrpc\":\"2.0\",\"id\":1,\r\n\"method\":\"ping\"}\n\n   \n[1,2]\n{\"a\":\n\xff\xfe\n{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"x\"}\n",
        b"\x0c\x03\x00\x00\x00{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tasks/get\",\"params\":{\"taskId\":\"task-1\"}}",
        b"\x05\x04\x00\x00\x00{\"jsonrpc\":\"2.0\",\"method\":\"notifications/tasks/status\",\"params\":{\"taskId\":\"x\",\"status\":\"working\",\"createdAt\":\"2026-01-15T09:00:00Z\",\"lastUpdatedAt\":\"2026-01-15T09:00:00Z\",\"ttl\":null}}\n{\"jsonrpc\":\"2.0\",\"id\":\"s\",\"result\":{}}\n",
    ];
    for (i, seed) in hand.iter().enumerate() {
        std::fs::write(framing_dir.join(format!("hand-{i}")), seed).unwrap();
    }

    let features_server: &[&str] = &[
        "\"task\":{\"taskId\"",
        "\"status\":\"input_required\"",
        "\"status\":\"completed\"",
        "\"status\":\"failed\"",
        "\"status\":\"cancelled\"",
        "related-task\":{\"taskId\"",
        "reason: Expired",
        "\"nextCursor\"",
        "OutcomeDropped",
        "InputResponse",
        "already used",
        "close\n",
    ];
    let features_pair: &[&str] = &[
        "TaskCreated",
        "TaskStatus",
        "TaskResult",
        "input_required",
        "\"status\":\"cancelled\"",
        "\"status\":\"failed\"",
        "restart client=true",
        "restart client=false",
        "drop ",
        "TimedOut",
        "InputResponse",
        "Task not found",
        "ctask",
        "finish (client hosts=true) -> Ok",
        "converge 1",
        "outcomes checked 1",
    ];
    let pick = |salt: u64, max_len: usize, drive: fn(&[u8]) -> String, features: &[&str]| {
        let mut rng = Rng::new(salt);
        let mut candidates = Vec::new();
        for _ in 0..20_000 {
            let len = 64 + rng.below(max_len as u64) as usize;
            let data = rng.bytes(len);
            let t = drive(&data);
            let hits: Vec<bool> = features.iter().map(|f| t.contains(f)).collect();
            candidates.push((data, hits));
        }
        let mut covered = vec![false; features.len()];
        let mut chosen = Vec::new();
        for _ in 0..6 {
            let best = candidates
                .iter()
                .enumerate()
                .max_by_key(|(_, (d, h))| {
                    let new = h.iter().zip(&covered).filter(|(h, c)| **h && !**c).count();
                    (new, h.iter().filter(|h| **h).count(), usize::MAX - d.len())
                })
                .map(|(i, _)| i)
                .unwrap();
            let (data, hits) = candidates.swap_remove(best);
            for (c, h) in covered.iter_mut().zip(&hits) {
                *c |= *h;
            }
            chosen.push(data);
        }
        chosen
    };
    let so_dir = dir("server_ops");
    for (i, d) in pick(
        21,
        1500,
        |d| server_ops::drive(d, Schema::Structural),
        features_server,
    )
    .iter()
    .enumerate()
    {
        std::fs::write(so_dir.join(format!("seed-{i}")), d).unwrap();
    }
    let pf_dir = dir("pair_faults");
    for (i, d) in pick(
        22,
        1200,
        |d| pair_faults::drive(d, Schema::Structural),
        features_pair,
    )
    .iter()
    .enumerate()
    {
        std::fs::write(pf_dir.join(format!("seed-{i}")), d).unwrap();
    }
}

// ---- regressions: one per fuzzer finding ------------------------------------------------------

mod regressions {
    use serde_json::json;
    use taskwire_engine::{
        Config, Event, Millis, Output, ProgressTarget, Session, TaskSupport, Tool, UsageError,
    };

    const T0: Millis = Millis(1_768_467_600_000);

    fn ids(prefix: &'static str) -> taskwire_engine::TaskIdSource {
        let mut n = 0;
        Box::new(move || {
            n += 1;
            format!("{prefix}{n}")
        })
    }

    fn outputs(s: &mut Session) -> (Vec<String>, Vec<Event>) {
        let (mut sends, mut events) = (Vec::new(), Vec::new());
        while let Some(o) = s.poll_output() {
            match o {
                Output::Send(line) => sends.push(line),
                Output::Event(e) => events.push(e),
            }
        }
        (sends, events)
    }

    fn server_with_tool() -> Session {
        let mut s = Session::server(Config::new("s", "1"), ids("task-"), T0);
        s.add_tool(Tool::new("opt", TaskSupport::Optional));
        s
    }

    fn server() -> Session {
        let mut s = server_with_tool();
        s.handle_message(
            T0,
            br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#,
        );
        outputs(&mut s);
        s
    }

    /// Moves messages both ways until neither side has anything to say; returns the
    /// client's events.
    fn pump(client: &mut Session, server: &mut Session, now: Millis) -> Vec<Event> {
        let mut events = Vec::new();
        loop {
            let (to_server, mut ev) = outputs(client);
            events.append(&mut ev);
            for line in &to_server {
                server.handle_message(now, line.as_bytes());
            }
            let (to_client, _) = outputs(server);
            for line in &to_client {
                client.handle_message(now, line.as_bytes());
            }
            if to_server.is_empty() && to_client.is_empty() {
                let (_, mut ev) = outputs(client);
                events.append(&mut ev);
                return events;
            }
        }
    }

    fn results_for(events: &[Event], task: &str) -> usize {
        events
            .iter()
            .filter(|e| matches!(e, Event::TaskResult { task: t, .. } if t == task))
            .count()
    }

    /// pair_faults: `close` reported `TaskResult` (connection closed) for a task the client
    /// had only heard of through `notifications/tasks/status`, never created.
    #[test]
    fn close_reports_results_only_for_tasks_we_created() {
        let mut client = Session::client(Config::new("c", "1"), ids("c-"), T0);
        let mut server = server();
        client.initialize(T0).unwrap();
        // The server's handshake was already done above; answer the client's by hand.
        let (init, _) = outputs(&mut client);
        assert_eq!(init.len(), 1);
        client.handle_message(
            T0,
            br#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tasks":{"requests":{"tools":{"call":{}}}}},"serverInfo":{"name":"s","version":"1"}}}"#,
        );
        outputs(&mut client);
        client.handle_message(
            T0,
            br#"{"jsonrpc":"2.0","method":"notifications/tasks/status","params":{"taskId":"stranger","status":"working","createdAt":"2026-01-15T09:00:00Z","lastUpdatedAt":"2026-01-15T09:00:00Z","ttl":null}}"#,
        );
        client
            .call_tool_as_task(T0, "opt", json!({}), None)
            .unwrap();
        let events = pump(&mut client, &mut server, T0);
        assert!(events
            .iter()
            .any(|e| matches!(e, Event::TaskCreated { .. })));
        client.close(T0);
        let (_, events) = outputs(&mut client);
        assert_eq!(results_for(&events, "stranger"), 0, "{events:?}");
        assert_eq!(results_for(&events, "task-1"), 1, "{events:?}");
    }

    /// server_ops: after `close`, a task's expiry still ran and raised
    /// `StopTask { reason: Expired }` for a task already stopped with `Closed`.
    #[test]
    fn a_closed_session_says_nothing_when_tasks_expire() {
        let mut s = server();
        s.create_task(T0, "a", Some(10)).unwrap();
        s.close(T0);
        let (sends, events) = outputs(&mut s);
        assert!(sends.is_empty());
        assert_eq!(events.len(), 1, "one StopTask(Closed): {events:?}");
        assert_eq!(s.poll_timeout(), None);
        s.handle_timeout(Millis(T0.0 + 100));
        s.handle_message(
            Millis(T0.0 + 200),
            br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
        );
        assert!(s.poll_output().is_none(), "a closed session stays silent");
    }

    /// server_ops: `notify_progress` with a NaN or infinite progress sent
    /// `"progress":null`, which the schema rejects; it is now refused.
    #[test]
    fn progress_must_be_a_finite_number() {
        let mut s = server();
        s.handle_message(
            T0,
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"opt","task":{},"_meta":{"progressToken":"p"}}}"#,
        );
        outputs(&mut s);
        for (progress, total) in [
            (f64::NAN, None),
            (f64::INFINITY, None),
            (1.0, Some(f64::NAN)),
        ] {
            let refused =
                s.notify_progress(T0, ProgressTarget::Task("task-1"), progress, total, None);
            assert!(
                matches!(refused, Err(UsageError::Invalid(_))),
                "{refused:?}"
            );
            assert!(s.poll_output().is_none());
        }
        s.notify_progress(T0, ProgressTarget::Task("task-1"), 1.0, Some(2.0), None)
            .unwrap();
        let (sends, _) = outputs(&mut s);
        assert_eq!(sends.len(), 1);
        assert!(sends[0].contains(r#""progress":1.0"#), "{}", sends[0]);
    }

    /// pair_faults (reordering): a status notification older than the view the client
    /// already had, but with a different status, replaced it, so `lastUpdatedAt` went back
    /// and the client showed `working` after `input_required`.
    #[test]
    fn a_late_older_status_does_not_replace_a_newer_view() {
        let mut client = Session::client(Config::new("c", "1"), ids("c-"), T0);
        let mut server = server_with_tool();
        client.initialize(T0).unwrap();
        pump(&mut client, &mut server, T0);
        client
            .call_tool_as_task(T0, "opt", json!({}), None)
            .unwrap();
        pump(&mut client, &mut server, T0);
        let task = |status: &str, updated: &str| {
            format!(
                r#"{{"jsonrpc":"2.0","method":"notifications/tasks/status","params":{{"taskId":"task-1","status":"{status}","createdAt":"2026-01-15T09:00:00.000Z","lastUpdatedAt":"{updated}","ttl":300000,"pollInterval":500}}}}"#
            )
        };
        let newer = task("input_required", "2026-01-15T09:00:05.367Z");
        let older = task("working", "2026-01-15T09:00:05.315Z");
        client.handle_message(T0, newer.as_bytes());
        client.handle_message(T0, older.as_bytes());
        let view = client.remote_task("task-1").unwrap();
        assert_eq!(view.status.as_str(), "input_required");
        assert_eq!(view.last_updated_at, "2026-01-15T09:00:05.367Z");
    }

    /// pair_faults: once a finished task was forgotten, an application `tasks/get` re-learned
    /// it and an application `tasks/result` then raised a second `TaskResult`.
    #[test]
    fn task_result_is_reported_once_even_after_the_task_is_forgotten() {
        let mut client = Session::client(Config::new("c", "1"), ids("c-"), T0);
        let mut server = server_with_tool();
        client.initialize(T0).unwrap();
        pump(&mut client, &mut server, T0);
        client
            .call_tool_as_task(T0, "opt", json!({}), None)
            .unwrap();
        let mut events = pump(&mut client, &mut server, T0);
        server
            .complete_task(T0, "task-1", json!({"content": []}))
            .unwrap();
        events.extend(pump(&mut client, &mut server, T0));
        assert_eq!(results_for(&events, "task-1"), 1, "{events:?}");
        assert!(
            client.remote_task_ids().is_empty(),
            "the finished task is forgotten"
        );
        client.get_task(T0, "task-1").unwrap();
        events.extend(pump(&mut client, &mut server, T0));
        client.task_result(T0, "task-1").unwrap();
        events.extend(pump(&mut client, &mut server, T0));
        assert_eq!(results_for(&events, "task-1"), 1, "{events:?}");
    }
}

/// How deep the seeded pair runs go: `cargo test --release --test fuzz_loop depth -- --ignored --nocapture`.
#[test]
#[ignore]
fn depth() {
    let mut rng = Rng::new(seed() ^ 3);
    let (mut converge, mut outcomes, mut runs) = (0, 0, 0);
    for _ in 0..2000 {
        let n = rng.below(1200) as usize;
        let t = pair_faults::drive(&rng.bytes(n), Schema::Structural);
        runs += 1;
        let count = |key: &str| {
            t.lines()
                .filter_map(|l| l.strip_prefix(key))
                .filter_map(|r| r.split(' ').next()?.parse::<usize>().ok())
                .sum::<usize>()
        };
        converge += usize::from(count("converge ") > 0);
        outcomes += usize::from(count("outcomes checked ") > 0);
    }
    eprintln!("{runs} runs: {converge} compared views once quiet, {outcomes} checked outcomes");
}
