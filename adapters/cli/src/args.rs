//! The command line: subcommands, their options, and how every command names its server.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

/// What the exit codes mean, for `--help`.
const EXIT_CODES: &str = "\
Exit codes:
  0  completed (the tool's result, not an error)
  1  failed (a tool error, a failed task, or the server's JSON-RPC error)
  2  usage (bad arguments, an unknown option)
  3  cancelled (Ctrl-C, `tasks cancel`, or the server cancelled it)
  4  expired or lost (the server no longer knows the task)
  5  connection error (the server could not be started or reached, exited, timed out,
     or refused the handshake)";

/// Runs any MCP server's tool as a task, watches it live, answers its questions, cancels it.
///
/// Name the server the same way in every command: `-- CMD ARGS…` at the end starts a stdio
/// server; `--url URL` connects over Streamable HTTP. Both protocol eras (2025-11-25 and
/// 2026-07-28 with the tasks extension) are picked from what the server speaks.
#[derive(Debug, Parser)]
#[command(name = "taskwire", version, after_long_help = EXIT_CODES, after_help = EXIT_CODES)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
    /// Machine-readable output: one JSON object per line for each event, the last one the
    /// outcome; no colours or live line.
    #[arg(long, global = true)]
    pub json: bool,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Lists the server's tools: their task support and input schema.
    Tools {
        /// The server.
        #[command(flatten)]
        server: ServerArgs,
    },
    /// Calls a tool: as a task when the server and the tool allow it (plainly otherwise,
    /// saying so), showing its status live until the outcome. Ctrl-C cancels the task
    /// (`tasks/cancel`); a second Ctrl-C exits at once.
    Call(CallArgs),
    /// Follows a task made earlier (`call --detach`, another client) live to its outcome,
    /// as `call` does: over HTTP, or a stdio server that keeps its tasks (a durable
    /// store). Ctrl-C cancels it; a second Ctrl-C exits at once.
    Wait(WaitArgs),
    /// Serves the server in front of it, in both task eras (2025-11-25 and 2026-07-28) on
    /// stdio or Streamable HTTP, speaking the server's own era behind: tasks of one era on
    /// a server of the other, and (--as-task) tasks on tools that have none. Logs go to
    /// stderr (RUST_LOG=info or debug).
    Proxy(ProxyArgs),
    /// Forgets the OAuth tokens kept for a server (the next command signs in again).
    Logout {
        /// The server's Streamable HTTP endpoint, as given to --url.
        url: String,
    },
    /// The server's tasks: list them, read one, wait for its result, cancel it.
    Tasks {
        /// What to do with them.
        #[command(subcommand)]
        command: TasksCommand,
    },
}

/// `taskwire tasks …`.
#[derive(Debug, Subcommand)]
pub enum TasksCommand {
    /// Lists the tasks the server shows this client (2025-11-25: `tasks/list`).
    List {
        /// The server.
        #[command(flatten)]
        server: ServerArgs,
    },
    /// Shows one task's status (`tasks/get`).
    Get {
        /// The task's id.
        task_id: String,
        /// The server.
        #[command(flatten)]
        server: ServerArgs,
    },
    /// Waits for a task's result and prints it (2025-11-25: `tasks/result`; 2026-07-28:
    /// `tasks/get` until the outcome comes inline).
    Result {
        /// The task's id.
        task_id: String,
        /// The server.
        #[command(flatten)]
        server: ServerArgs,
    },
    /// Cancels a task (`tasks/cancel`) and shows it as it then stands.
    Cancel {
        /// The task's id.
        task_id: String,
        /// The server.
        #[command(flatten)]
        server: ServerArgs,
    },
}

/// `taskwire call …`.
#[derive(Debug, Args)]
pub struct CallArgs {
    /// The tool to call.
    pub tool: String,
    /// One argument, NAME=VALUE, typed by the tool's input schema: a number, a boolean, or
    /// JSON (arrays, objects) where the schema says so, else a string. Repeatable.
    #[arg(long = "arg", value_name = "NAME=VALUE")]
    pub args: Vec<String>,
    /// All the arguments as one JSON object (each --arg goes on top).
    #[arg(long = "args", value_name = "JSON")]
    pub json_args: Option<String>,
    /// How long the server should keep the task's outcome, in milliseconds (2025-11-25; in
    /// 2026-07-28 the server decides).
    #[arg(long, value_name = "MS")]
    pub ttl: Option<u64>,
    /// Calls plainly, without a task.
    #[arg(long)]
    pub plain: bool,
    /// Prints the task's id as soon as the task exists, alone on stdout (the other lines go
    /// to stderr: `ID=$(taskwire call … --detach)`), and exits 0: the task goes on
    /// (`taskwire wait TASK_ID` follows it again).
    #[arg(long, conflicts_with = "plain")]
    pub detach: bool,
    /// How the server's questions are answered.
    #[command(flatten)]
    pub answering: AnsweringArgs,
    /// The server.
    #[command(flatten)]
    pub server: ServerArgs,
}

/// `taskwire wait …`.
#[derive(Debug, Args)]
pub struct WaitArgs {
    /// The task's id.
    pub task_id: String,
    /// How the server's questions are answered.
    #[command(flatten)]
    pub answering: AnsweringArgs,
    /// The server.
    #[command(flatten)]
    pub server: ServerArgs,
}

/// `taskwire proxy …`.
#[derive(Debug, Args)]
pub struct ProxyArgs {
    /// Serves Streamable HTTP at http://ADDR/mcp instead of stdio.
    #[arg(long, value_name = "ADDR")]
    pub http: Option<String>,
    /// Offers this tool of the server as a task in front although the server runs it
    /// plainly (the plain call is the task's work); `'*'` for every tool. Repeatable.
    #[arg(long = "as-task", value_name = "TOOL")]
    pub as_task: Vec<String>,
    /// Keeps the tasks made in front in this SQLite file (`sqlite:PATH`, or
    /// `sqlite:PATH?synchronous=full` to wait for the disk on every commit): their outcomes
    /// survive a restart of the proxy; a task still running behind when the proxy stopped
    /// is `failed` after it (its call behind is lost). Without it, tasks live in memory.
    #[arg(long, value_name = "sqlite:PATH")]
    pub store: Option<String>,
    /// Starts the stdio server behind again when it has exited: the next call after it
    /// went finds a new one (calls in flight when it went fail), whose tools are then
    /// listed and served.
    #[arg(long, conflicts_with = "url")]
    pub restart: bool,
    /// The most tasks the proxy holds in front at once, in every status, until they expire;
    /// over it a task call gets an error naming the limit. (Tasks relayed to a stdio server
    /// of the same era, without --store or --as-task, are that server's, under its limits.)
    #[arg(long, value_name = "N", default_value_t = 100_000)]
    pub max_tasks: usize,
    /// The most of those one client holds (so one client cannot lock out the others).
    #[arg(long, value_name = "N", default_value_t = 10_000)]
    pub max_tasks_per_client: usize,
    /// The server behind.
    #[command(flatten)]
    pub server: ServerArgs,
}

/// How the questions a task asks (`input_required`) are answered.
#[derive(Debug, Args)]
pub struct AnsweringArgs {
    /// Answers the server's questions (elicitations) from this JSON file instead of asking:
    /// an answer (`{"action": "accept", "content": {…}}`, `{"action": "decline"}`,
    /// `{"action": "cancel"}`) or an array of them, used in order (the last one repeats).
    #[arg(long, value_name = "FILE")]
    pub answers: Option<PathBuf>,
    /// Answers the server's sampling requests with this program (run by `sh -c`): it gets
    /// the request's params as JSON on stdin and writes the answer's text on stdout.
    /// Without it, this client offers no sampling.
    #[arg(long, value_name = "CMD")]
    pub sampling_cmd: Option<String>,
}

/// How a command reaches its server.
#[derive(Clone, Debug, Args)]
pub struct ServerArgs {
    /// The server's Streamable HTTP endpoint (instead of `-- CMD ARGS…`). A server that
    /// wants OAuth is signed in to in the browser (the URL is printed too); the tokens are
    /// kept per server in ~/.config/taskwire/tokens.json (TASKWIRE_TOKENS to move it),
    /// readable by you only, and refreshed when they expire.
    #[arg(long, value_name = "URL")]
    pub url: Option<String>,
    /// An HTTP header for every request, `NAME: VALUE` (with --url; repeatable), e.g.
    /// `--header 'Authorization: Bearer …'`.
    #[arg(long = "header", value_name = "NAME: VALUE", requires = "url")]
    pub headers: Vec<String>,
    /// Signs in to a server that wants OAuth as this machine client (the client-credentials
    /// grant; its secret from TASKWIRE_CLIENT_SECRET) instead of as a person in the browser.
    #[arg(long, value_name = "CLIENT_ID", requires = "url")]
    pub client_credentials: Option<String>,
    /// The protocol era: the server's (auto), or one forced.
    #[arg(long, value_name = "ERA", default_value = "auto",
          value_parser = ["auto", "2025-11-25", "2026-07-28"])]
    pub era: String,
    /// How long to wait for each answer of the server, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 30_000)]
    pub request_timeout_ms: u64,
    /// The stdio server to start, after `--`: `-- CMD ARGS…`.
    #[arg(last = true, value_name = "CMD")]
    pub command: Vec<String>,
}
