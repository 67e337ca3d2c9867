//! Our two clients run against `scripted-server` (`tests/tests/driver/client_scripted.rs`): the demo
//! `task-client` as a process ([`cli`]), and the library client on smol ([`library`]), each
//! through the seed's steps (initialize, list tools, call `long_running_task` as a task,
//! follow it to its outcome). Both return what the client saw and the server's [`Log`].

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use taskwire_driver::engine::{Config, PlainReason, RpcError, TaskInfo};
use taskwire_driver::{
    CallToolResult, Client, ClientBuilder, ElicitationAnswer, Error, TaskUpdate,
};

use super::{Log, TOOL};
use crate::peers::{self, Argv, Run};
use crate::procs::{self, Rt};

/// Longest a client run may take before the test fails as a hang.
pub const LIMIT: Duration = Duration::from_secs(20);

/// What the library client answers to `elicitation/create`.
pub fn accept() -> ElicitationAnswer {
    ElicitationAnswer::accept(&json!({ "confirm": true })).expect("an object")
}

/// A fresh log path for one run of `scenario` by `who`.
fn log_path(scenario: &str, who: &str) -> PathBuf {
    let dir = peers::target_dir().join("tmp").join("scripted");
    std::fs::create_dir_all(&dir).expect("create the scripted-server log directory");
    let path = dir.join(format!("{scenario}-{who}-{}.jsonl", std::process::id()));
    let _ = std::fs::remove_file(&path);
    path
}

/// `task-client ARGS -- SERVER SCENARIO --log FILE`, run to its end (killed at [`LIMIT`]).
pub fn cli(server: &Path, scenario: &str, args: &[&str]) -> (Run, Log) {
    let log = log_path(scenario, "cli");
    let argv = Argv::new(procs::task_client())
        .args(args)
        .arg("--")
        .arg(server)
        .args(&[scenario, "--log"])
        .arg(&log);
    let run = peers::run(&argv, LIMIT);
    assert!(!run.timed_out, "task-client hung\n{run}");
    (run, Log::read(&log))
}

/// What the library client saw.
#[derive(Debug, Default)]
pub struct Seen {
    /// The step that failed (`initialize`, `tools/list`, `tools/call`) and its error.
    pub failed: Option<(&'static str, RpcError)>,
    /// The task as created.
    pub task: Option<TaskInfo>,
    /// Why the call ran plainly, when the client decided so.
    pub plain: Option<PlainReason>,
    /// Every update as [`procs::describe`] writes it, the outcome last.
    pub updates: Vec<String>,
    /// The call's outcome.
    pub outcome: Option<Result<CallToolResult, Error>>,
    /// From the call to its outcome (or failure).
    pub elapsed: Duration,
    /// The params of each `elicitation/create` the handler answered.
    pub asked: Vec<Value>,
}

impl Seen {
    /// The outcome's text; panics (showing everything) unless it is a result.
    pub fn text(&self, log: &Log) -> String {
        match &self.outcome {
            Some(Ok(result)) => result.all_text(),
            other => panic!("no result: {other:?}\n{self:#?}\n{log}"),
        }
    }

    /// The outcome's error; panics unless the call ended with one.
    pub fn failure(&self, log: &Log) -> &Error {
        match &self.outcome {
            Some(Err(e)) => e,
            other => panic!("no error outcome: {other:?}\n{self:#?}\n{log}"),
        }
    }

    /// The outcome's error as JSON-RPC puts it; panics unless the call ended with one.
    pub fn error(&self, log: &Log) -> RpcError {
        self.failure(log).clone().into()
    }
}

/// The library client (request timeout `timeout_ms` if given, elicitation answered with
/// [`accept`]) through the seed's steps against `scenario`.
pub fn library(server: &Path, scenario: &str, timeout_ms: Option<u64>) -> (Seen, Log) {
    let log = log_path(scenario, "lib");
    let asked = Arc::new(Mutex::new(Vec::new()));
    let mut seen = Rt::Smol.block_on(LIMIT, async {
        let mut config = Config::new("client-scripted", "0");
        config.request_timeout_ms = timeout_ms.or(config.request_timeout_ms);
        let handler_asked = asked.clone();
        let builder = ClientBuilder::new(config).on_elicitation(move |request| {
            handler_asked.lock().expect("asked").push(request.params);
            async { Ok(accept()) }
        });
        let mut command = std::process::Command::new(server);
        command.args([scenario, "--log"]).arg(&log);
        let (client, mut child) =
            taskwire_smol::spawn_server(command, builder).expect("scripted-server starts");
        let mut seen = Seen::default();
        if let Err(failed) = steps(&client, &mut seen).await {
            seen.failed = Some(failed);
        }
        client.close().await;
        let exited = Rt::Smol.timeout(Duration::from_secs(5), child.wait()).await;
        assert!(exited.is_some(), "scripted-server did not exit after close");
        seen
    });
    seen.asked = std::mem::take(&mut *asked.lock().expect("asked"));
    (seen, Log::read(&log))
}

async fn steps(client: &Client, seen: &mut Seen) -> Result<(), (&'static str, RpcError)> {
    client
        .initialize()
        .await
        .map_err(|e| ("initialize", e.into()))?;
    client
        .list_tools()
        .await
        .map_err(|e| ("tools/list", e.into()))?;
    let start = Instant::now();
    let call = client
        .call_tool_as_task(TOOL, json!({}), Some(60_000))
        .await;
    seen.elapsed = start.elapsed();
    let call = call.map_err(|e| ("tools/call", e.into()))?;
    seen.task = call.task.clone();
    seen.plain = call.plain;
    while let Ok(update) = call.updates.recv().await {
        seen.updates.push(procs::describe(&update));
        if let TaskUpdate::Result(outcome) = update {
            seen.outcome = Some(outcome);
            break;
        }
    }
    seen.elapsed = start.elapsed();
    Ok(())
}
