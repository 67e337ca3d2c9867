//! `task-server`'s stdio ends, over raw pipes, under each server runtime: a reader that goes
//! away (broken stdout) and SIGTERM both end the server with exit 0 and nothing on stderr,
//! while its stdin stays open; every line written before is whole.

use std::time::{Duration, Instant};

use serde_json::Value;
use taskwire_demo::tools::{STEPS, TOOL};
use taskwire_tests::procs::{self, Raw, Rt};

/// Outer bound on anything that should be prompt: a hang fails the test instead of blocking.
const HANG: Duration = Duration::from_secs(10);

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

/// The server ended by itself (stdin still open) with exit 0 and a silent stderr.
fn ends_quietly(raw: &mut Raw) -> Duration {
    let start = Instant::now();
    let status = raw.wait(HANG);
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

/// The reader goes away before the server answers anything: its first write fails, and it
/// ends although stdin stays open.
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
    raw.send(&procs::request(1, "ping", serde_json::json!({})))
        .expect("ping is written");
    ends_quietly(&mut raw);
}

/// The reader goes away mid-task (after the first status): the next write fails, the work
/// is dropped, and the server ends although stdin stays open.
fn broken_pipe_mid_task(runtime: Rt) {
    let mut raw = task_in_progress(runtime, Some(first_status));
    assert_eq!(raw.next_line(HANG), None, "the reader has closed its end");
    raw.send(&procs::request(2, "tasks/list", serde_json::json!({})))
        .expect("tasks/list is written");
    ends_quietly(&mut raw);
}

/// SIGTERM mid-task: intake stops (stdin stays open), the work is dropped, output is
/// flushed as whole lines, exit 0 within a second.
#[cfg(unix)]
fn sigterm_mid_task(runtime: Rt) {
    let mut raw = task_in_progress(runtime, None);
    procs::sigterm(raw.id());
    let took = ends_quietly(&mut raw);
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
