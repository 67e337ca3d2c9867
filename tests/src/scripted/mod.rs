//! `scripted-server`: a stdio MCP server written without the taskwire engine (serde_json
//! lines over blocking std IO), so that our client meets an independent peer. It plays one
//! named [`Scenario`] of [`SCENARIOS`] and logs every message it receives and sends, with a
//! monotonic time in ms, as JSON lines (`--log FILE`) that tests read with [`Log`].
//!
//! - [`scenarios`]: the table (capabilities, the tool's `execution`, `pollInterval`, the task's
//!   timeline, how `tasks/get` and `tasks/result` are answered, where the server exits).
//! - `peer`: the state machine that plays a scenario; `wire`: the messages it writes.
//! - [`log`]: reading a log back in a test.
//! - [`clients`]: running `task-client` and the library client against a scenario.
//!
//! The server hosts one tool, `long_running_task` (the seed's name, which `task-client`
//! calls), and at most one task, `task-1`.

pub mod clients;
pub mod log;
mod peer;
pub mod scenarios;
mod wire;

use std::process::ExitCode;

pub use log::{Entry, Log};
pub use scenarios::{Exit, Gets, Scenario, Step, SCENARIOS};

/// The task id the server gives its task.
pub const TASK_ID: &str = "task-1";
/// The tool it offers.
pub const TOOL: &str = "long_running_task";
/// The text of a plain call's result.
pub const PLAIN_TEXT: &str = "plain call";
/// The id of the server's one request to the client, `elicitation/create`.
pub const ELICIT_ID: &str = "elicit-1";
/// The text of a task's result when no input was asked for.
pub const DONE_TEXT: &str = "task done";

/// `scripted-server SCENARIO [--log FILE]`.
pub fn main(args: impl IntoIterator<Item = String>) -> ExitCode {
    let mut args = args.into_iter();
    let (mut name, mut log) = (None, None);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--log" => log = args.next(),
            _ if name.is_none() => name = Some(arg),
            _ => return usage(&format!("unexpected argument {arg:?}")),
        }
    }
    let Some(scenario) = name.as_deref().and_then(Scenario::named) else {
        return usage(&format!("unknown scenario {name:?}"));
    };
    match peer::Peer::new(scenario, log.as_deref()) {
        Ok(peer) => peer.run(),
        Err(e) => {
            eprintln!("scripted-server: cannot open the log: {e}");
            ExitCode::FAILURE
        }
    }
}

fn usage(why: &str) -> ExitCode {
    let names: Vec<&str> = SCENARIOS.iter().map(|s| s.name).collect();
    eprintln!(
        "scripted-server: {why}\nusage: scripted-server SCENARIO [--log FILE]\nscenarios: {}",
        names.join(", ")
    );
    ExitCode::from(2)
}
