//! Who is on the other end, and what it reports: implementations, progress, and why a call
//! went out plainly.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::log_level::LogLevel;

/// Name and version of a client or server.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Implementation {
    /// Programmatic name.
    pub name: String,
    /// Version string.
    pub version: String,
    /// Optional human-readable name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
}

impl Implementation {
    /// An implementation with a name and version.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        Implementation {
            name: name.into(),
            version: version.into(),
            title: None,
        }
    }
}

/// `params` of `notifications/progress` (the same in every era).
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProgressParams {
    /// The token from the request's `_meta.progressToken`.
    pub progress_token: Value,
    /// Progress so far; increases with each notification.
    pub progress: f64,
    /// Total, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<f64>,
    /// Optional human-readable progress.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Related-task metadata for task progress.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Value>,
}

/// A log message (`notifications/message`): one the peer sent, or one a server sends of its
/// own accord with [`Notice::Log`](crate::Notice::Log).
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct LogMessage {
    /// How severe it is.
    pub level: LogLevel,
    /// What it comes from, when the peer named it.
    #[serde(default)]
    pub logger: Option<String>,
    /// The message: any JSON (a string, an object…); `null` when missing.
    #[serde(default)]
    pub data: Value,
}

/// Why a call the application wanted as a task went out plainly.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum PlainReason {
    /// The server did not declare task support for `tools/call` (2025-11-25:
    /// `tasks.requests.tools.call`; 2026-07-28: the tasks extension).
    NoTaskCapability,
    /// The tool's `execution.taskSupport` is `"forbidden"` (or the tool has no `execution`).
    ToolForbidsTasks,
    /// The tool's task support could not be read, the task-augmented call was refused with
    /// -32601, and it was sent again plainly.
    TaskRefused,
}

/// Which end of the connection a session is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// Answers the client's requests, hosts `tools/call` tasks, polls client-hosted tasks.
    Server,
    /// Opens the session, polls `tools/call` tasks, hosts sampling/elicitation tasks.
    Client,
}
