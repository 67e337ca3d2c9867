//! Session configuration: who we are, how we host tasks, how we poll the peer's tasks.

use crate::framing::DEFAULT_MAX_LINE;
use crate::wire::v2025_11_25::Implementation;

/// Everything a [`Session`](crate::Session) is configured with.
#[derive(Clone, Debug)]
pub struct Config {
    /// Our name and version (`serverInfo` or `clientInfo`).
    pub info: Implementation,
    /// Server only: `instructions` in the `initialize` result.
    pub instructions: Option<String>,
    /// How this side hosts tasks (the receiver role).
    pub tasks: TaskConfig,
    /// How this side polls the peer's tasks (the requestor role).
    pub polling: PollConfig,
    /// Client only: the server-to-client requests the application answers.
    pub client: ClientFeatures,
    /// Local timeout for our plain requests; `None` waits forever. Parked `tasks/result`
    /// calls and input requests (`elicitation/create`, `sampling/createMessage`) never time out.
    pub request_timeout_ms: Option<u64>,
    /// Longest accepted line on a byte stream.
    pub max_line_bytes: usize,
    /// Most peer requests awaiting our answer at once (plain calls, parked `tasks/result`);
    /// over it, a request that could wait gets -32603 at once. Bounds what a peer can pin.
    pub max_pending_requests: usize,
}

/// The receiver side: accepting and serving task-augmented requests.
#[derive(Clone, Debug)]
pub struct TaskConfig {
    /// Accept task-augmented requests at all (declares `tasks.requests.*`).
    pub enabled: bool,
    /// Serve and declare `tasks/list`.
    pub list: bool,
    /// Serve and declare `tasks/cancel`.
    pub cancel: bool,
    /// Retention when the request names none; `None` is unlimited.
    pub default_ttl_ms: Option<u64>,
    /// Requested retentions are clamped to this; `None` allows any, including unlimited.
    pub max_ttl_ms: Option<u64>,
    /// Requested retentions are raised to at least this (a task that expires at birth helps nobody).
    pub min_ttl_ms: u64,
    /// `pollInterval` suggested in every task.
    pub poll_interval_ms: Option<u64>,
    /// Most tasks held at once; over it a task-augmented request gets an error.
    pub max_tasks: usize,
    /// Send `notifications/tasks/status` on every change.
    pub status_notifications: bool,
    /// Tasks per `tasks/list` page (and tools per `tools/list` page).
    pub page_size: usize,
}

/// The requestor side: polling tasks hosted by the peer.
#[derive(Clone, Copy, Debug)]
pub struct PollConfig {
    /// Interval used when the peer suggests none.
    pub default_interval_ms: u64,
    /// The peer's `pollInterval` is raised to at least this.
    pub min_interval_ms: u64,
    /// The peer's `pollInterval` is lowered to at most this.
    pub max_interval_ms: u64,
}

/// Server-to-client requests a client application can answer.
#[derive(Clone, Copy, Debug, Default)]
pub struct ClientFeatures {
    /// Answers `sampling/createMessage`.
    pub sampling: bool,
    /// Answers `elicitation/create` (form mode).
    pub elicitation: bool,
    /// Answers `roots/list`.
    pub roots: bool,
}

impl ClientFeatures {
    /// Whether any task-augmentable request is answered, so tasks can be hosted.
    pub fn hosts_tasks(&self) -> bool {
        self.sampling || self.elicitation
    }
}

impl Default for TaskConfig {
    fn default() -> Self {
        TaskConfig {
            enabled: true,
            list: true,
            cancel: true,
            default_ttl_ms: Some(300_000),
            max_ttl_ms: Some(86_400_000),
            min_ttl_ms: 1_000,
            poll_interval_ms: Some(500),
            max_tasks: 1024,
            status_notifications: true,
            page_size: 50,
        }
    }
}

impl Default for PollConfig {
    fn default() -> Self {
        PollConfig {
            default_interval_ms: 1000,
            min_interval_ms: 100,
            max_interval_ms: 30_000,
        }
    }
}

impl Config {
    /// Defaults for a session named `name` at `version`.
    pub fn new(name: &str, version: &str) -> Self {
        Config {
            info: Implementation::new(name, version),
            instructions: None,
            tasks: TaskConfig::default(),
            polling: PollConfig::default(),
            client: ClientFeatures::default(),
            request_timeout_ms: Some(60_000),
            max_line_bytes: DEFAULT_MAX_LINE,
            max_pending_requests: 4096,
        }
    }
}
