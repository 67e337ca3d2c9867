//! Regressions: one test per fuzzer finding, each a plain engine test of what the fuzz
//! body found (which body, and what went wrong, in its doc comment).

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
    let s = h
        .open(T0, Role::Server, "alice")
        .expect("the host takes sessions");
    (h, s)
}

fn server() -> (Host, SessionId) {
    let (mut h, s) = server_with_tool();
    h.handle_message(T0, s, INIT).expect("the host takes input");
    outputs(&mut h);
    (h, s)
}

fn client() -> (Host, SessionId) {
    let config = Config {
        client_era: ClientEra::Only(taskwire_engine::Era::V2025_11_25),
        ..Config::new("c", "1")
    };
    let mut h = Host::new(config, ids("c-"), T0);
    let s = h
        .open(T0, Role::Client, "server")
        .expect("the host takes sessions");
    (h, s)
}

/// Moves messages both ways until neither side has anything to say; returns the
/// client's events.
fn pump(client: &mut (Host, SessionId), server: &mut (Host, SessionId), now: Millis) -> Vec<Event> {
    let mut events = Vec::new();
    loop {
        let (to_server, mut ev) = outputs(&mut client.0);
        events.append(&mut ev);
        for (_, line) in &to_server {
            server
                .0
                .handle_message(now, server.1, line.as_bytes())
                .expect("the host takes input");
        }
        let (to_client, _) = outputs(&mut server.0);
        for (_, line) in &to_client {
            client
                .0
                .handle_message(now, client.1, line.as_bytes())
                .expect("the host takes input");
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
    ).expect("the host takes input");
    outputs(&mut c.0);
    c.0.handle_message(
        T0,
        c.1,
        br#"{"jsonrpc":"2.0","method":"notifications/tasks/status","params":{"taskId":"stranger","status":"working","createdAt":"2026-01-15T09:00:00Z","lastUpdatedAt":"2026-01-15T09:00:00Z","ttl":null}}"#,
    ).expect("the host takes input");
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
    h.handle_timeout(Millis(T0.0 + 100))
        .expect("the host takes input");
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
    )
    .expect("the host takes input");
    assert!(h.poll_output().is_none(), "a closed session stays silent");
    h.shutdown(Millis(T0.0 + 200));
    let (sends, events) = outputs(&mut h);
    assert!(sends.is_empty());
    assert!(
        matches!(&events[..], [Event::Stop { call, reason: StopReason::Closed, .. }] if *call == other),
        "{events:?}"
    );
    assert_eq!(h.poll_timeout(), None);
    assert_eq!(
        h.handle_timeout(Millis(T0.0 + 10_000)),
        Err(UsageError::ShutDown),
        "a shut-down host takes no more input"
    );
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
    ).expect("the host takes input");
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
    c.0.handle_message(T0, c.1, newer.as_bytes())
        .expect("the host takes input");
    c.0.handle_message(T0, c.1, older.as_bytes())
        .expect("the host takes input");
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
    let s = h
        .open(T0, Role::Server, "alice")
        .expect("the host takes sessions");
    h.handle_message(T0, s, INIT).expect("the host takes input");
    h.create_task(T0, &Owner::from("alice"), "full", None)
        .unwrap();
    outputs(&mut h);
    h.handle_message(
        T0,
        s,
        br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"app","task":{}}}"#,
    )
    .expect("the host takes input");
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
    let bob = h
        .open(T0, Role::Server, "bob")
        .expect("the host takes sessions");
    h.handle_message(T0, bob, INIT)
        .expect("the host takes input");
    h.handle_message(
        T0,
        alice,
        br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"opt","task":{}}}"#,
    )
    .expect("the host takes input");
    h.create_task(T0, &Owner::from("alice"), "done", None)
        .and_then(|c| h.respond(T0, c, Ok(json!({"content": []}))))
        .unwrap();
    outputs(&mut h);
    for method in ["tasks/get", "tasks/result", "tasks/cancel"] {
        let ask = |h: &mut Host, task: &str| {
            let line = format!(
                r#"{{"jsonrpc":"2.0","id":9,"method":"{method}","params":{{"taskId":"{task}"}}}}"#
            );
            h.handle_message(T0, bob, line.as_bytes())
                .expect("the host takes input");
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
    )
    .expect("the host takes input");
    let (sends, _) = outputs(&mut h);
    assert_eq!(sends.len(), 1);
    assert!(sends[0].1.contains(r#""tasks":[]"#), "{}", sends[0].1);
    assert_eq!(h.task("task-1").unwrap().info.status.as_str(), "working");
}
