//! Our requests to a session's peer, one value per verb.

use serde_json::{Map, Value};

use crate::log_level::LogLevel;

/// A request of ours to a session's peer: [`Host::send`](crate::Host::send) sends it in
/// the era the session speaks, and answers with its request id. A verb the era lacks is
/// [`UsageError::NotInEra`](crate::UsageError::NotInEra), whose text says what to use
/// instead. The [`Host`](crate::Host) methods of the same names are shorthands for these.
///
/// ```
/// use serde_json::json;
/// use taskwire_engine::{Config, Host, Millis, Request, Role, UsageError};
///
/// let config = Config::new("my-client", "1.0.0");
/// let mut host = Host::new(config, Box::new(|| "t-1".into()), Millis(0));
/// let session = host.open(Millis(0), Role::Client, "me").unwrap();
/// let call = Request::CallToolAsTask {
///     name: "long_running_task".into(),
///     arguments: json!({ "steps": 3 }),
///     ttl_ms: Some(60_000),
/// };
/// // Nothing is sent before the handshake ([`Host::initialize`] and the server's answer).
/// assert_eq!(
///     host.send(Millis(1), session, call),
///     Err(UsageError::NotInitialized(session))
/// );
/// ```
#[non_exhaustive]
#[derive(Clone, Debug, PartialEq)]
pub enum Request {
    /// Any request; the answer arrives as [`Event::Response`](crate::Event::Response).
    Any {
        /// The method.
        method: String,
        /// Its params (our era's `_meta` is added in 2026-07-28).
        params: Option<Value>,
    },
    /// Any task-augmented request, e.g. a server's `sampling/createMessage` to a client that
    /// hosts it (2025-11-25 only); as [`Request::CallToolAsTask`] otherwise.
    AnyAsTask {
        /// The method.
        method: String,
        /// Its params.
        params: Map<String, Value>,
        /// The retention asked for.
        ttl_ms: Option<u64>,
    },
    /// `tools/list`, one page; see [`Host::list_tools`](crate::Host::list_tools).
    ListTools {
        /// The page to read (`None`: the first).
        cursor: Option<String>,
    },
    /// A plain `tools/call`; see [`Host::call_tool`](crate::Host::call_tool).
    CallTool {
        /// The tool.
        name: String,
        /// Its arguments: an object, or `null` for none.
        arguments: Value,
    },
    /// A `tools/call` as a task; see
    /// [`Host::call_tool_as_task`](crate::Host::call_tool_as_task).
    CallToolAsTask {
        /// The tool.
        name: String,
        /// Its arguments: an object, or `null` for none.
        arguments: Value,
        /// The retention asked for (2025-11-25; in 2026-07-28 the server picks it).
        ttl_ms: Option<u64>,
    },
    /// `tasks/get`; see [`Host::get_task`](crate::Host::get_task).
    GetTask {
        /// The task.
        task: String,
    },
    /// Follows a task made earlier; see [`Host::follow_task`](crate::Host::follow_task).
    FollowTask {
        /// The task.
        task: String,
    },
    /// `tasks/result` (2025-11-25 only); see
    /// [`Host::task_result`](crate::Host::task_result).
    TaskResult {
        /// The task.
        task: String,
    },
    /// `tasks/cancel`; see [`Host::cancel_task`](crate::Host::cancel_task).
    CancelTask {
        /// The task.
        task: String,
    },
    /// `tasks/list`, one page (2025-11-25 only).
    ListTasks {
        /// The page to read (`None`: the first).
        cursor: Option<String>,
    },
    /// `logging/setLevel` (2025-11-25 only): the least severe log message the server sends
    /// from now on; in 2026-07-28 each request names its own level in its `_meta`.
    SetLogLevel {
        /// The level.
        level: LogLevel,
    },
}
