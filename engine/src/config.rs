//! Host configuration: who we are, how tasks are hosted and polled, and every limit.
//! Each field's documentation gives its default.

use serde_json::{Map, Value};

use crate::framing::DEFAULT_MAX_LINE;
use crate::model::{Era, Implementation};

/// Everything a [`Host`](crate::Host) is configured with; [`Config::new`] gives the defaults.
#[derive(Clone, Debug)]
pub struct Config {
    /// Our name and version (`serverInfo` or `clientInfo`).
    pub info: Implementation,
    /// Server only: `instructions` in the `initialize` result. Default: none.
    pub instructions: Option<String>,
    /// How this side hosts tasks (the receiver role).
    pub tasks: TaskConfig,
    /// How this side polls the peer's tasks (the requestor role).
    pub polling: PollConfig,
    /// Client only: the server-to-client requests the application answers. Default: none.
    pub client: ClientFeatures,
    /// Client only: which protocol era [`Host::initialize`](crate::Host::initialize) opens.
    /// Default: [`ClientEra::Auto`].
    pub client_era: ClientEra,
    /// Client only: how long `server/discover` may go unanswered before the server is taken
    /// for a 2025-11-25 one ([`ClientEra::Auto`]) or the opening fails
    /// ([`ClientEra::Only`]). Default: 5 000 ms.
    pub discover_timeout_ms: u64,
    /// Local timeout for our plain requests; `None` waits forever. Parked `tasks/result`
    /// calls and input requests never time out. Default: 60 000 ms.
    pub request_timeout_ms: Option<u64>,
    /// Tools per `tools/list` page. Default: 100.
    pub tools_page_size: usize,
    /// What a peer may send at most.
    pub limits: Limits,
    /// Requests the application answers itself (`Event::Request`) besides those the engine
    /// owns: exact method names, or a prefix ending in `*` (`"resources/*"`). The engine
    /// always owns the handshake, `ping`, `tools/*` and `tasks/*` (and `logging/setLevel`
    /// with [`Config::logging`], `resources/subscribe` and `resources/unsubscribe` when
    /// [`Config::app_capabilities`] declares `resources.subscribe`); other methods not
    /// listed here get -32601. Default: none.
    pub app_methods: Vec<String>,
    /// Capabilities the application serves (e.g. `{"resources": {}}`), merged into those the
    /// engine declares in the handshake; the engine's own keys win. With `resources`
    /// declaring `"subscribe": true` the engine keeps each session's subscriptions (in both
    /// eras) and reports them as [`Event::ResourceSubscriptions`](crate::Event). Default:
    /// none.
    pub app_capabilities: Map<String, Value>,
    /// Server only: the application sends log messages ([`Host::log`](crate::Host::log)).
    /// The engine then declares the `logging` capability (in the handshake and in
    /// `server/discover`) and answers 2025-11-25's `logging/setLevel`, whose level filters
    /// that session's messages from then on. Default: `false` ([`Host::log`] is then a
    /// usage error).
    ///
    /// [`Host::log`]: crate::Host::log
    pub logging: bool,
    /// Server only: the application's tools change while it serves
    /// ([`Host::add_tool`](crate::Host::add_tool), [`Host::remove_tool`](crate::Host::remove_tool)),
    /// and it says so with [`Notice::ToolsListChanged`](crate::Notice::ToolsListChanged).
    /// The engine then declares `tools.listChanged` in the 2025-11-25 handshake. Default:
    /// `false` (that notice is then a usage error).
    pub tools_list_changed: bool,
    /// Whether task changes are reported for a durable store, and whether replies wait for
    /// its confirmation. Default: [`Durability::Volatile`].
    pub durability: Durability,
}

/// Bounds on what a peer can make the engine hold or parse.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Longest accepted line on a byte stream; a longer one gets -32600 and the stream
    /// resumes at the next newline. Default: 4 MiB.
    pub max_line_bytes: usize,
    /// Deepest accepted nesting of arrays and objects in one message; deeper ones get
    /// -32600 before anything reads them. Default: 128 (serde_json's own recursion limit).
    pub max_depth: usize,
    /// Most requests of one session awaiting our answer at once (plain calls, parked
    /// `tasks/result`); over it, a request that could wait gets -32603 at once. Default: 4096.
    pub max_pending_requests: usize,
}

/// The receiver side: accepting and serving task-augmented requests.
#[derive(Clone, Debug)]
pub struct TaskConfig {
    /// Accept task-augmented requests at all (declares `tasks.requests.*`). Default: true.
    pub enabled: bool,
    /// Serve and declare `tasks/list`. Default: true.
    pub list: bool,
    /// Serve and declare `tasks/cancel`. Default: true.
    pub cancel: bool,
    /// Retention when the request names none; `None` is unlimited. Default: 300 000 ms.
    pub default_ttl_ms: Option<u64>,
    /// Requested retentions are lowered to this; `None` allows any, including unlimited.
    /// Default: 86 400 000 ms (24 h).
    pub max_ttl_ms: Option<u64>,
    /// Requested retentions are raised to at least this (a task that expires at birth helps
    /// nobody). Default: 1 000 ms.
    pub min_ttl_ms: u64,
    /// `pollInterval` suggested in every task; `None` suggests none. Default: 500 ms.
    /// In 2026-07-28 a task polled again sooner than half its interval gets the interval
    /// doubled, up to 30 000 ms (a larger configured value is kept); the poll is answered
    /// all the same, since the era defines no error for it.
    pub poll_interval_ms: Option<u32>,
    /// Most tasks the host holds at once, in every status, until they expire or are
    /// removed; over it no task is created and the call gets -32603 naming the limit.
    /// Default: 100 000.
    pub max_tasks: usize,
    /// Most tasks one owner holds at once (so one noisy requestor cannot lock out the
    /// others); over it the call gets -32603 naming the limit. Default: 10 000.
    pub max_tasks_per_owner: usize,
    /// Send `notifications/tasks/status` on every change. Default: true.
    pub status_notifications: bool,
    /// Tasks per `tasks/list` page. Default: 50.
    pub page_size: usize,
    /// For a host sharing a durable store with other hosts, which keeps every task: hold at
    /// most this many finished tasks, letting the oldest go (nothing is journaled; the store
    /// keeps them, and the application reads one back, e.g. with
    /// [`Host::sync`](crate::Host::sync), when a request names it), so that memory follows
    /// the live tasks, not the history. A finished task whose change the store has not
    /// confirmed yet is held until it has. `None` holds every task until it expires or is
    /// removed (a host alone with its store needs them all). Default: `None`.
    pub keep_finished: Option<usize>,
    /// The status message of a task cancelled by `tasks/cancel`, in both eras (say it in
    /// your users' language). Default: "Cancelled by requestor".
    pub cancelled_message: String,
}

/// The requestor side: polling tasks hosted by the peer.
#[derive(Clone, Copy, Debug)]
pub struct PollConfig {
    /// Interval used when the peer suggests none. Default: 1 000 ms.
    pub default_interval_ms: u64,
    /// The peer's `pollInterval` is raised to at least this. Default: 100 ms.
    pub min_interval_ms: u64,
    /// The peer's `pollInterval` is lowered to at most this; `None` honours the peer up to
    /// the task's retention (less `min_interval_ms`: a later poll would only find an expired
    /// task). Default: `None`.
    pub max_interval_ms: Option<u64>,
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

/// The protocol era a client opens with.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ClientEra {
    /// The newest era the server speaks: `server/discover` first; a `DiscoverResult` naming
    /// 2026-07-28 opens that era; a 2026-07-28 error (-32022) is retried once when its
    /// `supported` lists 2026-07-28 and fails otherwise; any other error, or no answer
    /// within [`Config::discover_timeout_ms`], falls back to `initialize` (2025-11-25).
    #[default]
    Auto,
    /// This era only, with no fallback: [`Era::V2026_07_28`] opens with
    /// `server/discover`, [`Era::V2025_11_25`] with `initialize`.
    Only(Era),
}

/// What the host reports to a durable task store.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Durability {
    /// Nothing is reported; tasks live in memory only.
    #[default]
    Volatile,
    /// Every change is reported as [`Output::Journal`](crate::Output::Journal); nothing waits.
    Journal,
    /// Every change is reported, and each message about a changed task (its
    /// `CreateTaskResult`, a `tasks/cancel` answer, a status notification, …) waits until
    /// [`Host::confirm`](crate::Host::confirm) says the store holds the change.
    Confirmed,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_line_bytes: DEFAULT_MAX_LINE,
            max_depth: 128,
            max_pending_requests: 4096,
        }
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
            max_tasks: 100_000,
            max_tasks_per_owner: 10_000,
            status_notifications: true,
            page_size: 50,
            keep_finished: None,
            cancelled_message: "Cancelled by requestor".to_owned(),
        }
    }
}

impl Default for PollConfig {
    fn default() -> Self {
        PollConfig {
            default_interval_ms: 1000,
            min_interval_ms: 100,
            max_interval_ms: None,
        }
    }
}

impl Config {
    /// Defaults for a host named `name` at `version`.
    pub fn new(name: &str, version: &str) -> Self {
        Config {
            info: Implementation::new(name, version),
            instructions: None,
            tasks: TaskConfig::default(),
            polling: PollConfig::default(),
            client: ClientFeatures::default(),
            client_era: ClientEra::Auto,
            discover_timeout_ms: 5_000,
            request_timeout_ms: Some(60_000),
            tools_page_size: 100,
            limits: Limits::default(),
            app_methods: Vec::new(),
            app_capabilities: Map::new(),
            logging: false,
            tools_list_changed: false,
            durability: Durability::Volatile,
        }
    }

    /// Whether the application answers `method` itself.
    pub(crate) fn app_serves(&self, method: &str) -> bool {
        self.app_methods
            .iter()
            .any(|pattern| match pattern.strip_suffix('*') {
                Some(prefix) => method.starts_with(prefix),
                None => pattern == method,
            })
    }

    /// Whether the application's capability `capability` declares `flag` as `true` (as
    /// `resources` does `subscribe`).
    pub(crate) fn app_declares(&self, capability: &str, flag: &str) -> bool {
        let declared = self.app_capabilities.get(capability);
        declared.and_then(|c| c.get(flag)) == Some(&Value::Bool(true))
    }
}
