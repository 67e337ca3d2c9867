//! Ends of a session over real processes, every (server, client) runtime pair: the client's
//! EOF or a SIGTERM mid-task stops the server within a second (exit 0); a server that crashes
//! or never starts gives the client an error, not a hang.

use std::time::{Duration, Instant};

use serde_json::json;
use taskwire_demo::tools::{STEPS, TOOL};
use taskwire_driver::engine::jsonrpc::code;
use taskwire_driver::engine::RpcError;
use taskwire_driver::{Client, TaskCall};
use taskwire_tests::matrix;
use taskwire_tests::procs::{self, Proc, Rt};

use crate::common::{HANG, LIMIT};

#[cfg(unix)]
matrix!(sigterm_mid_task);
matrix!(
    eof_mid_task,
    server_crash_mid_task,
    server_exits_before_handshake
);

/// A server whose steps take a minute, and a task on it that has reported its first status.
async fn task_in_progress(server: Rt, client: Rt) -> (Client, Proc, TaskCall) {
    let (c, child) = client.spawn(&procs::task_server(), &procs::server_args(server, 60_000));
    c.initialize().await.expect("initialize");
    let call = c
        .call_tool_as_task(TOOL, json!({}), None)
        .await
        .expect("the call is accepted");
    let first = call.updates.recv().await.expect("a first update");
    assert_eq!(procs::describe(&first), format!("working: {}", STEPS[0]));
    (c, child, call)
}

/// Waits (at most [`HANG`]) for the server to exit; returns how long it took.
async fn exits_cleanly(child: &mut Proc, client: Rt) -> Duration {
    let start = Instant::now();
    let status = child.wait(client, HANG).await;
    let took = start.elapsed();
    let status = status.unwrap_or_else(|| panic!("the server still runs after {HANG:?}"));
    assert!(status.success(), "the server exited with {status}");
    took
}

fn assert_closed(outcome: Result<impl std::fmt::Debug, taskwire_driver::Error>, what: &str) {
    let error = RpcError::from(outcome.expect_err(what));
    assert_eq!(
        (error.code, error.message.as_str()),
        (code::CONNECTION_CLOSED, "Connection closed"),
        "{what}"
    );
}

/// The client closes (its EOF) while a task runs: the server cancels the work and exits 0
/// within a second; the client's task call ends with "Connection closed".
fn eof_mid_task(server: Rt, client: Rt) {
    client.block_on(LIMIT, async {
        let (c, mut child, call) = task_in_progress(server, client).await;
        c.close().await;
        let took = exits_cleanly(&mut child, client).await;
        assert!(took < Duration::from_secs(1), "exit took {took:?}");
        assert_eq!(
            procs::updates(&call).await,
            ["error -32000: Connection closed"]
        );
        assert_closed(c.list_tasks().await, "tasks/list after close");
    });
}

/// SIGTERM mid-task behaves like EOF: the server stops, exits 0 within a second, and the
/// client's pending call fails with "Connection closed".
#[cfg(unix)]
fn sigterm_mid_task(server: Rt, client: Rt) {
    client.block_on(LIMIT, async {
        let (c, mut child, call) = task_in_progress(server, client).await;
        procs::sigterm(child.id());
        let took = exits_cleanly(&mut child, client).await;
        assert!(took < Duration::from_secs(1), "exit took {took:?}");
        let outcome = client.timeout(HANG, call.result()).await;
        assert_closed(outcome.expect("the call ends"), "the running task");
        assert_closed(c.list_tasks().await, "tasks/list after the exit");
    });
}

/// The server is killed mid-task: the pending call, and every call after, fail with
/// "Connection closed" instead of hanging.
fn server_crash_mid_task(server: Rt, client: Rt) {
    client.block_on(LIMIT, async {
        let (c, mut child, call) = task_in_progress(server, client).await;
        let pending = c.clone();
        let id = call.task.as_ref().expect("a task").id.to_string();
        child.kill();
        let outcome = client.timeout(HANG, call.result()).await;
        assert_closed(outcome.expect("the call ends"), "the running task");
        let outcome = client.timeout(HANG, pending.get_task(&id)).await;
        assert_closed(
            outcome.expect("tasks/get ends"),
            "tasks/get after the crash",
        );
        let status = child.wait(client, HANG).await.expect("the server is gone");
        assert!(!status.success(), "killed, yet {status}");
    });
}

/// A server that exits before answering (here: a bad argument, exit code 2): `initialize`
/// fails with "Connection closed".
fn server_exits_before_handshake(server: Rt, client: Rt) {
    client.block_on(LIMIT, async {
        let args = ["--runtime".into(), server.name().into(), "--bogus".into()];
        let (c, mut child) = client.spawn(&procs::task_server(), &args);
        let outcome = client.timeout(HANG, c.initialize()).await;
        assert_closed(outcome.expect("initialize ends"), "initialize");
        let status = child.wait(client, HANG).await.expect("the server is gone");
        assert_eq!(status.code(), Some(2));
    });
}
