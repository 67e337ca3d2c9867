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

use std::ffi::OsString;
use std::process::ExitCode;

use clap::builder::{PossibleValuesParser, TypedValueParser};
use clap::Parser;

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

/// A stdio MCP server without the taskwire engine that plays one scripted scenario against a
/// client.
#[derive(Debug, Parser)]
#[command(name = "scripted-server", version)]
struct Args {
    /// The scenario to play.
    #[arg(value_parser = PossibleValuesParser::new(SCENARIOS.iter().map(|s| s.name))
        .map(|name| Scenario::named(&name).expect("a listed scenario")))]
    scenario: &'static Scenario,
    /// Logs every message received and sent, with a monotonic time in ms, as JSON lines.
    #[arg(long, value_name = "FILE")]
    log: Option<String>,
}

/// `scripted-server SCENARIO [--log FILE]`, given its command line (the program name first).
pub fn main(args: impl IntoIterator<Item = OsString>) -> ExitCode {
    let Args { scenario, log } = Args::parse_from(args);
    match peer::Peer::new(scenario, log.as_deref()) {
        Ok(peer) => peer.run(),
        Err(e) => {
            eprintln!("scripted-server: cannot open the log: {e}");
            ExitCode::FAILURE
        }
    }
}
