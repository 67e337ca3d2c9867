//! `task-server`'s stdio ends, over raw pipes, under each server runtime: a reader that goes
//! away (broken stdout) and SIGTERM both end the server with exit 0 and nothing on stderr,
//! while its stdin stays open; every line written before is whole.

use std::time::{Duration, Instant};

use serde_json::{json, Value};
use taskwire_demo::tools::{STEPS, TOOL};
use taskwire_tests::procs::{self, Raw, Rt};

use crate::common::HANG;

/// A server whose steps take a minute, with a task that has reported its first status.
fn task_in_progress(runtime: Rt, last: Option<fn(&Value) -> bool>) -> Raw {
    let mut raw = Raw::spawn(
        &procs::task_server(),
        &procs::server_args(runtime, 60_000),
        last,
    );
    raw.handshake();
    raw.send(&procs::call_as_task(1, TOOL)).expect("tools/call");
    let created = raw.expect(HANG, "CreateTaskResult", |m| m["id"] == 1);
    assert_eq!(created["result"]["task"]["status"], "working", "{created}");
    raw.expect(HANG, "the first status", first_status);
    raw
}

fn first_status(message: &Value) -> bool {
    message["method"] == "notifications/tasks/status"
        && message["params"]["statusMessage"] == STEPS[0]
}

/// The server ends by itself (stdin still open) with exit 0 and a silent stderr. With
/// `poke`, that request is written every 50 ms meanwhile: a write just after our end closed
/// can still land while a child forked by a parallel test briefly holds a copy of the read
/// end, so the server gets more writes to fail on.
fn ends_quietly(raw: &mut Raw, poke: Option<&str>) -> Duration {
    let start = Instant::now();
    let mut id = 100;
    let status = loop {
        if let Some(method) = poke {
            // Fails (EPIPE) once the server is gone: that is fine.
            let _ = raw.send(&procs::request(id, method, json!({})));
            id += 1;
        }
        let status = raw.wait(Duration::from_millis(50));
        if status.is_some() || start.elapsed() >= HANG {
            break status;
        }
    };
    let took = start.elapsed();
    let stderr = raw.stderr();
    let status = status.unwrap_or_else(|| panic!("still running after {HANG:?}; {stderr}"));
    assert!(status.success(), "exit {status}; stderr: {stderr}");
    assert_eq!(stderr, "", "nothing on stderr (no panic)");
    took
}

/// Whatever is left on stdout: whole lines of JSON.
fn rest_is_whole_lines(raw: &Raw) {
    while let Some(line) = raw.next_line(HANG) {
        assert!(line.ends_with('\n'), "a half-written line: {line:?}");
        serde_json::from_str::<Value>(&line).expect("a JSON line");
    }
}

/// The reader goes away after the initialize answer: the server's next write (a ping's
/// answer) fails, and it ends although stdin stays open.
fn broken_pipe_at_handshake(runtime: Rt) {
    let mut raw = Raw::spawn(
        &procs::task_server(),
        &procs::server_args(runtime, 60_000),
        Some(|_| true),
    );
    raw.send(&procs::request(0, "initialize", procs::initialize_params()))
        .expect("initialize is written");
    let answer = raw.next_line(HANG).expect("the initialize answer");
    assert!(answer.contains("\"protocolVersion\""), "{answer}");
    assert_eq!(raw.next_line(HANG), None, "the reader has closed its end");
    ends_quietly(&mut raw, Some("ping"));
}

/// The reader goes away mid-task (after the first status): the next write fails, the work
/// is dropped, and the server ends although stdin stays open.
fn broken_pipe_mid_task(runtime: Rt) {
    let mut raw = task_in_progress(runtime, Some(first_status));
    assert_eq!(raw.next_line(HANG), None, "the reader has closed its end");
    ends_quietly(&mut raw, Some("tasks/list"));
}

/// SIGTERM mid-task: intake stops (stdin stays open), the work is dropped, output is
/// flushed as whole lines, exit 0 within a second.
#[cfg(unix)]
fn sigterm_mid_task(runtime: Rt) {
    let mut raw = task_in_progress(runtime, None);
    procs::sigterm(raw.id());
    let took = ends_quietly(&mut raw, None);
    assert!(took < Duration::from_secs(1), "exit took {took:?}");
    rest_is_whole_lines(&raw);
}

#[test]
fn broken_pipe_at_handshake_smol_server() {
    broken_pipe_at_handshake(Rt::Smol);
}

#[test]
fn broken_pipe_at_handshake_tokio_server() {
    broken_pipe_at_handshake(Rt::Tokio);
}

#[test]
fn broken_pipe_mid_task_smol_server() {
    broken_pipe_mid_task(Rt::Smol);
}

#[test]
fn broken_pipe_mid_task_tokio_server() {
    broken_pipe_mid_task(Rt::Tokio);
}

#[cfg(unix)]
#[test]
fn sigterm_mid_task_smol_server() {
    sigterm_mid_task(Rt::Smol);
}

#[cfg(unix)]
#[test]
fn sigterm_mid_task_tokio_server() {
    sigterm_mid_task(Rt::Tokio);
}
