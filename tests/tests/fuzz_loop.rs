//! The fuzz bodies on stable: a seeded loop over pseudo-random inputs plus the checked-in
//! seed corpus (`fuzz/corpus/<target>/`), and one regression test per fuzzer finding.
//!
//! The iteration counts keep the whole file near ten seconds in a debug build on two cores.
//! `TASKWIRE_FUZZ_ITERS=<n>` multiplies them; `TASKWIRE_FUZZ_SEED=<n>` picks another seed.

use std::path::PathBuf;

use taskwire_harness::fuzz::check::Schema;
use taskwire_harness::fuzz::{
    framing, modern_client, modern_ops, pair_faults, server_ops, Record, Rng,
};

/// The oracle of the seeded loop and of replays: every message validated, every input
/// run twice.
const FULL: Schema = Schema::Full;

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
        if let Err(panic) = std::panic::catch_unwind(|| body(&data)) {
            eprintln!(
                "{target}: corpus file {} fails (replay: TASKWIRE_FUZZ_REPLAY={target}:{0} \
                 cargo test --test fuzz_loop replay -- --nocapture)",
                file.display()
            );
            std::panic::resume_unwind(panic);
        }
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
        "framing" => framing::run_with(&data, FULL),
        "server_ops" => server_ops::run_with(&data, FULL),
        "pair_faults" => pair_faults::run_with(&data, FULL),
        "modern_ops" => modern_ops::run_with(&data, FULL),
        "modern_client" => modern_client::run_with(&data, FULL),
        other => panic!("no target {other}"),
    }
}

#[test]
fn framing_seeded() {
    seeded("framing", 1, 800, 600, |d| framing::run_with(d, FULL));
}

#[test]
fn server_ops_seeded() {
    seeded("server_ops", 2, 350, 1500, |d| {
        server_ops::run_with(d, FULL)
    });
    // The multi-session invariants were reached, not only defined.
    let s = server_ops::stats();
    eprintln!("server_ops: {s:?}");
    for (what, n) in [
        ("another owner's task asked for", s.foreign),
        (
            "exact per-owner tasks/list with another owner's tasks",
            s.lists,
        ),
        ("reconnects", s.reconnects),
        (
            "status changes heard by a non-creating session",
            s.notified_elsewhere,
        ),
        (
            "parked results answered on a non-creating session",
            s.parked_elsewhere,
        ),
        ("log messages sent", s.logged),
    ] {
        assert!(n >= 5, "the seeded loop reached {what} only {n} times");
    }
}

#[test]
fn modern_ops_seeded() {
    seeded("modern_ops", 4, 200, 600, |d| modern_ops::run_with(d, FULL));
    let s = modern_ops::stats();
    eprintln!("modern_ops: {s:?}");
    for (what, n) in [
        ("2026 tasks created", s.created),
        ("inputRequests shown", s.asked),
        ("outcomes inline", s.outcomes),
        ("2025-11-25 tasks read in 2026", s.legacy_read),
        ("task notifications on listen streams", s.streamed),
    ] {
        assert!(n >= 5, "the seeded loop reached {what} only {n} times");
    }
}

#[test]
fn modern_client_seeded() {
    seeded("modern_client", 5, 300, 500, |d| {
        modern_client::run_with(d, FULL)
    });
    let s = modern_client::stats();
    eprintln!("modern_client: {s:?}");
    for (what, n) in [
        ("sessions opened in 2026-07-28", s.opened),
        ("tasks followed", s.created),
        ("task outcomes", s.outcomes),
        ("input requests handed to the application", s.asked),
        ("tasks/update sent", s.updates),
    ] {
        assert!(n >= 5, "the seeded loop reached {what} only {n} times");
    }
}

#[test]
fn pair_faults_seeded() {
    seeded("pair_faults", 3, 150, 1200, |d| {
        pair_faults::run_with(d, FULL)
    });
}

/// Rewrites the checked-in seed corpus (`fuzz/corpus/<target>/`):
/// `cargo test --test fuzz_loop write_seed_corpus -- --ignored`.
///
/// - framing: the client side of each recorded interop transcript
///   (`tests/fixtures/recorded/*.jsonl`) behind a header byte, plus a few hand-made streams;
/// - server_ops, modern_ops, modern_client and pair_faults: from 20 000 seeded inputs, the
///   few that together reach the most protocol features (task created, input_required,
///   completed, failed, cancelled, parked result, expiry, restart, inputRequests, MRTR,
///   listen streams, tasks/update, fallback, …), chosen greedily.
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
        "TaskFinished",
        "InputResponse",
        "already used",
        "close ",
        "open ",
        "Task not found",
        "Task limit reached",
        "start_task -> Ok",
        "remove_task -> Ok",
        "shutdown",
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
        "(foreign=true) -> Ok",
        "bob call_tool_as_task -> Ok",
        "outcomes checked 1 (dir 2)",
    ];
    let pick = |salt: u64, max_len: usize, drive: fn(&[u8]) -> String, features: &[&str]| {
        let mut rng = Rng::new(salt);
        let mut candidates = Vec::new();
        for _ in 0..20_000 {
            let len = 64 + rng.below(max_len as u64) as usize;
            let data = rng.bytes(len);
            let t = match std::panic::catch_unwind(|| drive(&data)) {
                Ok(t) => t,
                Err(panic) => {
                    let path = std::env::temp_dir().join("taskwire-fuzz-corpus-writer.bin");
                    std::fs::write(&path, &data).unwrap();
                    eprintln!("failing input saved to {}", path.display());
                    std::panic::resume_unwind(panic);
                }
            };
            let hits: Vec<bool> = features.iter().map(|f| t.contains(f)).collect();
            candidates.push((data, hits));
        }
        let mut covered = vec![false; features.len()];
        let mut chosen = Vec::new();
        for _ in 0..8 {
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
        |d| server_ops::drive(d, Schema::Structural, Record::Text).into_text(),
        features_server,
    )
    .iter()
    .enumerate()
    {
        std::fs::write(so_dir.join(format!("seed-{i}")), d).unwrap();
    }
    let features_modern: &[&str] = &[
        "\"resultType\":\"task\"",
        "\"inputRequests\":{\"",
        "\"resultType\":\"input_required\"",
        "\"status\":\"completed\"",
        "\"status\":\"failed\"",
        "\"status\":\"cancelled\"",
        "notifications/subscriptions/acknowledged",
        "\"method\":\"notifications/tasks\"",
        "-32021",
        "-32022",
        "\"taskIds\":[\"",
    ];
    let mo_dir = dir("modern_ops");
    for (i, d) in pick(
        23,
        600,
        |d| modern_ops::drive(d, Schema::Structural, Record::Text).into_text(),
        features_modern,
    )
    .iter()
    .enumerate()
    {
        std::fs::write(mo_dir.join(format!("seed-{i}")), d).unwrap();
    }
    let features_client: &[&str] = &[
        "TaskCreated",
        "TaskResult",
        "Request(AppRequest",
        "\"method\":\"tasks/update\"",
        "\"method\":\"tasks/cancel\"",
        "\"resultType\":\"input_required\"",
        "\"method\":\"notifications/tasks\"",
        "\"method\":\"initialize\"",
        "InitializeFailed",
        "TimedOut",
    ];
    let mc_dir = dir("modern_client");
    for (i, d) in pick(
        24,
        500,
        |d| modern_client::drive(d, Record::Text).into_text(),
        features_client,
    )
    .iter()
    .enumerate()
    {
        std::fs::write(mc_dir.join(format!("seed-{i}")), d).unwrap();
    }
    let pf_dir = dir("pair_faults");
    for (i, d) in pick(
        22,
        1200,
        |d| pair_faults::drive(d, Schema::Structural, Record::Text).into_text(),
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
        ClientEra, Config, Event, Host, Millis, Output, Owner, Role, SessionId, StopReason,
        TaskSupport, Tool, UsageError,
    };

    const T0: Millis = Millis(1_768_467_600_000);

    fn ids(prefix: &'static str) -> taskwire_engine::TaskIdSource {
        let mut n = 0;
        Box::new(move || {
            n += 1;
            format!("{prefix}{n}")
        })
    }

    fn outputs(h: &mut Host) -> (Vec<(SessionId, String)>, Vec<Event>) {
        let (mut sends, mut events) = (Vec::new(), Vec::new());
        while let Some(o) = h.poll_output() {
            match o {
                Output::Send(t) => sends.push((t.session, t.message)),
                Output::Event(e) => events.push(e),
                other => panic!("unexpected {other:?}"),
            }
        }
        (sends, events)
    }

    const INIT: &[u8] = br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#;

    fn server_with_tool() -> (Host, SessionId) {
        let mut h = Host::new(Config::new("s", "1"), ids("task-"), T0);
        h.add_tool(Tool::new("opt", TaskSupport::Optional));
        let s = h.open(T0, Role::Server, "alice");
        (h, s)
    }

    fn server() -> (Host, SessionId) {
        let (mut h, s) = server_with_tool();
        h.handle_message(T0, s, INIT);
        outputs(&mut h);
        (h, s)
    }

    fn client() -> (Host, SessionId) {
        let config = Config {
            client_era: ClientEra::Legacy,
            ..Config::new("c", "1")
        };
        let mut h = Host::new(config, ids("c-"), T0);
        let s = h.open(T0, Role::Client, "server");
        (h, s)
    }

    /// Moves messages both ways until neither side has anything to say; returns the
    /// client's events.
    fn pump(
        client: &mut (Host, SessionId),
        server: &mut (Host, SessionId),
        now: Millis,
    ) -> Vec<Event> {
        let mut events = Vec::new();
        loop {
            let (to_server, mut ev) = outputs(&mut client.0);
            events.append(&mut ev);
            for (_, line) in &to_server {
                server.0.handle_message(now, server.1, line.as_bytes());
            }
            let (to_client, _) = outputs(&mut server.0);
            for (_, line) in &to_client {
                client.0.handle_message(now, client.1, line.as_bytes());
            }
            if to_server.is_empty() && to_client.is_empty() {
                let (_, mut ev) = outputs(&mut client.0);
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
        let mut c = client();
        let mut s = server();
        c.0.initialize(T0, c.1).unwrap();
        // The server's handshake was already done above; answer the client's by hand.
        let (init, _) = outputs(&mut c.0);
        assert_eq!(init.len(), 1);
        c.0.handle_message(
            T0,
            c.1,
            br#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tasks":{"requests":{"tools":{"call":{}}}}},"serverInfo":{"name":"s","version":"1"}}}"#,
        );
        outputs(&mut c.0);
        c.0.handle_message(
            T0,
            c.1,
            br#"{"jsonrpc":"2.0","method":"notifications/tasks/status","params":{"taskId":"stranger","status":"working","createdAt":"2026-01-15T09:00:00Z","lastUpdatedAt":"2026-01-15T09:00:00Z","ttl":null}}"#,
        );
        c.0.call_tool_as_task(T0, c.1, "opt", json!({}), None)
            .unwrap();
        let events = pump(&mut c, &mut s, T0);
        assert!(events
            .iter()
            .any(|e| matches!(e, Event::TaskCreated { .. })));
        c.0.close(T0, c.1);
        let (_, events) = outputs(&mut c.0);
        assert_eq!(results_for(&events, "stranger"), 0, "{events:?}");
        assert_eq!(results_for(&events, "task-1"), 1, "{events:?}");
    }

    /// server_ops: after `close`, a task's expiry raised a second `Stop` for work already
    /// stopped. Closing a session no longer stops its tasks (issue 11): the task lives on,
    /// its expiry stops the work exactly once, and nothing is sent to the closed session;
    /// after `shutdown` nothing is scheduled and everything is silent.
    #[test]
    fn a_closed_session_says_nothing_when_tasks_expire() {
        let (mut h, s) = server();
        let owner = Owner::from("alice");
        let work = h.create_task(T0, &owner, "a", Some(10)).unwrap();
        let other = h.create_task(T0, &owner, "b", Some(1000)).unwrap();
        h.close(T0, s);
        let (sends, events) = outputs(&mut h);
        assert!(sends.is_empty());
        assert!(
            matches!(&events[..], [Event::Closed { session }] if *session == s),
            "only Closed: {events:?}"
        );
        assert_eq!(h.task_count(), 2, "the tasks live on");
        h.handle_timeout(Millis(T0.0 + 100));
        let (sends, events) = outputs(&mut h);
        assert!(sends.is_empty());
        assert!(
            matches!(&events[..], [Event::Stop { call, reason: StopReason::Expired, .. }] if *call == work),
            "{events:?}"
        );
        h.handle_message(
            Millis(T0.0 + 200),
            s,
            br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
        );
        assert!(h.poll_output().is_none(), "a closed session stays silent");
        h.shutdown(Millis(T0.0 + 200));
        let (sends, events) = outputs(&mut h);
        assert!(sends.is_empty());
        assert!(
            matches!(&events[..], [Event::Stop { call, reason: StopReason::Closed, .. }] if *call == other),
            "{events:?}"
        );
        assert_eq!(h.poll_timeout(), None);
        h.handle_timeout(Millis(T0.0 + 10_000));
        assert!(h.poll_output().is_none(), "a shut-down host stays silent");
    }

    /// server_ops: `notify_progress` with a NaN or infinite progress sent
    /// `"progress":null`, which the schema rejects; it is refused.
    #[test]
    fn progress_must_be_a_finite_number() {
        let (mut h, s) = server();
        h.handle_message(
            T0,
            s,
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"opt","task":{},"_meta":{"progressToken":"p"}}}"#,
        );
        outputs(&mut h);
        let work = h.task_call("task-1").expect("the task's work");
        for (progress, total) in [
            (f64::NAN, None),
            (f64::INFINITY, None),
            (1.0, Some(f64::NAN)),
        ] {
            let refused = h.notify_progress(T0, work, progress, total, None);
            assert_eq!(refused, Err(UsageError::NonFiniteProgress));
            assert!(h.poll_output().is_none());
        }
        h.notify_progress(T0, work, 1.0, Some(2.0), None).unwrap();
        let (sends, _) = outputs(&mut h);
        assert_eq!(sends.len(), 1);
        assert!(sends[0].1.contains(r#""progress":1.0"#), "{}", sends[0].1);
    }

    /// pair_faults (reordering): a status notification older than the view the client
    /// already had, but with a different status, replaced it, so `lastUpdatedAt` went back
    /// and the client showed `working` after `input_required`.
    #[test]
    fn a_late_older_status_does_not_replace_a_newer_view() {
        let mut c = client();
        let mut s = server_with_tool();
        c.0.initialize(T0, c.1).unwrap();
        pump(&mut c, &mut s, T0);
        c.0.call_tool_as_task(T0, c.1, "opt", json!({}), None)
            .unwrap();
        pump(&mut c, &mut s, T0);
        let task = |status: &str, updated: &str| {
            format!(
                r#"{{"jsonrpc":"2.0","method":"notifications/tasks/status","params":{{"taskId":"task-1","status":"{status}","createdAt":"2026-01-15T09:00:00.000Z","lastUpdatedAt":"{updated}","ttl":300000,"pollInterval":500}}}}"#
            )
        };
        let newer = task("input_required", "2026-01-15T09:00:05.367Z");
        let older = task("working", "2026-01-15T09:00:05.315Z");
        c.0.handle_message(T0, c.1, newer.as_bytes());
        c.0.handle_message(T0, c.1, older.as_bytes());
        let view = c.0.remote_task(c.1, "task-1").unwrap();
        assert_eq!(view.status.as_str(), "input_required");
        assert_eq!(view.last_updated_at, T0.plus(5367));
    }

    /// pair_faults: once a finished task was forgotten, an application `tasks/get` re-learned
    /// it and an application `tasks/result` then raised a second `TaskResult`.
    #[test]
    fn task_result_is_reported_once_even_after_the_task_is_forgotten() {
        let mut c = client();
        let mut s = server_with_tool();
        c.0.initialize(T0, c.1).unwrap();
        pump(&mut c, &mut s, T0);
        c.0.call_tool_as_task(T0, c.1, "opt", json!({}), None)
            .unwrap();
        let mut events = pump(&mut c, &mut s, T0);
        let work = s.0.task_call("task-1").expect("the task's work");
        s.0.respond(T0, work, Ok(json!({"content": []}))).unwrap();
        events.extend(pump(&mut c, &mut s, T0));
        assert_eq!(results_for(&events, "task-1"), 1, "{events:?}");
        assert!(
            c.0.remote_task_ids(c.1).is_empty(),
            "the finished task is forgotten"
        );
        c.0.get_task(T0, c.1, "task-1").unwrap();
        events.extend(pump(&mut c, &mut s, T0));
        c.0.task_result(T0, c.1, "task-1").unwrap();
        events.extend(pump(&mut c, &mut s, T0));
        assert_eq!(results_for(&events, "task-1"), 1, "{events:?}");
    }

    /// server_ops: `start_task` on an offered call, when the task cannot be created (over a
    /// quota, or the id source repeating), answered the request with the error and
    /// returned `Err(UnknownCall)`, yet kept the call: a later `respond` on it sent a
    /// second answer to the same request id. Expected: the refusal is the call's one
    /// answer (the call is over, `respond` gives `UnknownCall`), or `start_task` refuses
    /// with nothing sent and the call stays answerable; never two answers.
    #[test]
    fn a_refused_start_task_answers_the_request_once() {
        let mut config = Config::new("s", "1");
        config.tasks.max_tasks = 1;
        let mut h = Host::new(config, ids("task-"), T0);
        h.add_tool(taskwire_engine::ToolDef {
            tool: Tool::new("app", TaskSupport::Optional),
            immediate_response: None,
            decision: taskwire_engine::TaskDecision::App,
        });
        let s = h.open(T0, Role::Server, "alice");
        h.handle_message(T0, s, INIT);
        h.create_task(T0, &Owner::from("alice"), "full", None)
            .unwrap();
        outputs(&mut h);
        h.handle_message(
            T0,
            s,
            br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"app","task":{}}}"#,
        );
        let (_, events) = outputs(&mut h);
        let call = events
            .iter()
            .find_map(|e| match e {
                Event::ToolCall(c) if c.task_offered => Some(c.call),
                _ => None,
            })
            .expect("an offered call");
        let refused = h.start_task(T0, call);
        let (mut sends, _) = outputs(&mut h);
        assert!(
            matches!(refused, Err(UsageError::TaskRefused { call: c, .. }) if c == call),
            "{refused:?}"
        );
        let late = h.respond(T0, call, Ok(json!({"content": []})));
        sends.extend(outputs(&mut h).0);
        let answers = sends
            .iter()
            .filter(|(_, l)| l.contains(r#""id":7"#))
            .count();
        assert_eq!(
            answers, 1,
            "request 7 answered {answers} times ({late:?}): {sends:?}"
        );
        assert_eq!(late, Err(UsageError::UnknownCall(call)));
    }

    /// server_ops (isolation, found while porting to the host): another owner's
    /// `tasks/get|result|cancel` of a live and of a finished task answer exactly like an
    /// unknown id, and `tasks/list` shows it nothing.
    #[test]
    fn another_owner_sees_not_found_like_an_unknown_id() {
        let (mut h, alice) = server();
        let bob = h.open(T0, Role::Server, "bob");
        h.handle_message(T0, bob, INIT);
        h.handle_message(
            T0,
            alice,
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"opt","task":{}}}"#,
        );
        h.create_task(T0, &Owner::from("alice"), "done", None)
            .and_then(|c| h.respond(T0, c, Ok(json!({"content": []}))))
            .unwrap();
        outputs(&mut h);
        for method in ["tasks/get", "tasks/result", "tasks/cancel"] {
            let ask = |h: &mut Host, task: &str| {
                let line = format!(
                    r#"{{"jsonrpc":"2.0","id":9,"method":"{method}","params":{{"taskId":"{task}"}}}}"#
                );
                h.handle_message(T0, bob, line.as_bytes());
                let (sends, _) = outputs(h);
                assert!(sends.iter().all(|(s, _)| *s == bob), "{sends:?}");
                sends.into_iter().map(|(_, l)| l).collect::<Vec<_>>()
            };
            let unknown = ask(&mut h, "nope");
            assert_eq!(ask(&mut h, "task-1"), unknown, "{method} of a live task");
            assert_eq!(ask(&mut h, "done"), unknown, "{method} of a finished task");
        }
        h.handle_message(
            T0,
            bob,
            br#"{"jsonrpc":"2.0","id":10,"method":"tasks/list"}"#,
        );
        let (sends, _) = outputs(&mut h);
        assert_eq!(sends.len(), 1);
        assert!(sends[0].1.contains(r#""tasks":[]"#), "{}", sends[0].1);
        assert_eq!(h.task("task-1").unwrap().info.status.as_str(), "working");
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
        let t = pair_faults::drive(&rng.bytes(n), Schema::Structural, Record::Text).into_text();
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

/// Executions per second of each body as the libFuzzer targets run them (sampled oracle),
/// over the seed corpus and seeded inputs:
/// `cargo test --release --test fuzz_loop throughput -- --ignored --nocapture`
/// (`TASKWIRE_FUZZ_TARGET=<target>` runs one, `TASKWIRE_FUZZ_FILES=<dir>` runs the
/// inputs in a directory, e.g. a libFuzzer corpus, instead of seeded ones).
#[test]
#[ignore]
fn throughput() {
    type Target = (&'static str, u64, usize, fn(&[u8]));
    let targets: [Target; 4] = [
        ("framing", 1, 600, framing::run),
        ("server_ops", 2, 1500, server_ops::run),
        ("pair_faults", 3, 1200, pair_faults::run),
        ("modern_ops", 4, 600, modern_ops::run),
    ];
    let only = std::env::var("TASKWIRE_FUZZ_TARGET").ok();
    for (target, salt, max_len, body) in targets {
        if only.as_deref().is_some_and(|o| o != target) {
            continue;
        }
        let mut rng = Rng::new(seed() ^ salt);
        let inputs: Vec<Vec<u8>> = match std::env::var_os("TASKWIRE_FUZZ_FILES") {
            // A directory of inputs, e.g. a libFuzzer corpus.
            Some(dir) => {
                let mut files: Vec<_> = std::fs::read_dir(dir)
                    .expect("a directory")
                    .flatten()
                    .map(|e| e.path())
                    .collect();
                files.sort();
                files
                    .iter()
                    .map(|f| std::fs::read(f).expect("an input"))
                    .collect()
            }
            None => (0..300 * scale())
                .map(|_| {
                    let len = rng.below(max_len as u64) as usize;
                    rng.bytes(len)
                })
                .collect(),
        };
        let start = std::time::Instant::now();
        for data in &inputs {
            body(data);
        }
        let secs = start.elapsed().as_secs_f64();
        eprintln!("{target}: {:.0} execs/s", inputs.len() as f64 / secs);
    }
}
