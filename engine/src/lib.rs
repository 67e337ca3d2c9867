//! # taskwire-engine
//!
//! A sans-IO state machine for MCP tasks: it consumes and emits JSON-RPC messages and
//! tracks task lifecycles, with no sockets, files, threads, clocks or randomness of its
//! own. Time and task ids come from the caller.
//!
//! ## Host and sessions
//!
//! A [`Host`] owns every hosted task (records, outcomes, expiry, quotas, the journal for a
//! durable store) and every session. A session is one connection (stdio) or one HTTP
//! session: it holds only protocol state, its handshake, the requests in flight either way
//! and its parked `tasks/result` calls. Sessions are opened for an [`Owner`], the principal
//! the adapter names (stdio: one per process; HTTP: the authenticated subject). A task
//! belongs to its owner: other owners get "not found" for it, and any session of the same
//! owner can read it, wait for it, or cancel it, which is how a reconnecting client picks
//! its tasks up again. One host serves many sessions in one thread with no locks; the
//! adapter passes each input with the session it came from, and every message drained
//! names the session it goes to.
//!
//! ## The run loop
//! 1. Feed input with the current time: [`Host::handle_bytes`] (stdio),
//!    [`Host::handle_message`] (framed transports), [`Host::handle_timeout`].
//! 2. Issue application commands ([`Host::respond`], [`Host::call_tool_as_task`], …).
//! 3. After every `&mut` call, drain [`Host::poll_output`] to `None`: each
//!    [`Output::Send`] is one JSON-RPC message for a session's peer, each
//!    [`Output::Event`] is for the application, each [`Output::Journal`] is a task change
//!    for a durable store.
//! 4. Sleep until [`Host::poll_timeout`] (or new input), then go to 1.
//!
//! Time is milliseconds since the Unix epoch ([`Millis`]); time that goes backwards is
//! clamped. Task ids come from the caller through a [`TaskIdSource`].
//!
//! Peer bytes never make the engine panic or fail: bad input becomes a JSON-RPC error
//! reply plus an [`Event::PeerError`]. Only misuse of this API returns [`UsageError`], and
//! then nothing changed.
//!
//! ## Example: one host, two sessions
//!
//! ```
//! use taskwire_engine::{Config, Event, Host, Millis, Output, Role, TaskSupport, Tool};
//!
//! # fn main() -> Result<(), taskwire_engine::UsageError> {
//! let now = Millis(1_768_467_600_000);
//! let mut n = 0;
//! let ids = Box::new(move || { n += 1; format!("task-{n}") });
//! let mut host = Host::new(Config::new("example", "1.0"), ids, now);
//! host.add_tool(Tool::new("slow", TaskSupport::Optional));
//!
//! // Two connections of the same client ("alice"), e.g. before and after a reconnect.
//! let first = host.open(now, Role::Server, "alice")?;
//! let second = host.open(now, Role::Server, "alice")?;
//! let init = br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#;
//! for session in [first, second] {
//!     host.handle_message(now, session, init)?;
//! }
//!
//! // The first connection starts a task, then goes away.
//! host.handle_message(now, first, br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","task":{}}}"#)?;
//! let mut work = None;
//! while let Some(out) = host.poll_output() {
//!     if let Output::Event(Event::ToolCall(call)) = out {
//!         work = Some(call.call);
//!     }
//! }
//! host.close(now, first);
//!
//! // The second connection waits for the result; the work finishes; the answer goes there.
//! host.handle_message(now, second, br#"{"jsonrpc":"2.0","id":2,"method":"tasks/result","params":{"taskId":"task-1"}}"#)?;
//! let text = serde_json::json!({ "content": [{ "type": "text", "text": "done" }] });
//! host.respond(now, work.expect("the tool was called"), Ok(text))?;
//! let mut answered = false;
//! while let Some(out) = host.poll_output() {
//!     if let Output::Send(t) = out {
//!         assert_eq!(t.session, second);
//!         answered |= t.message.contains(r#""id":2,"result":{"content""#);
//!     }
//! }
//! assert!(answered);
//! # Ok(())
//! # }
//! ```
//!
//! ## Layers
//!
//! The crate's modules form layers, each importing only those below it: the vocabulary
//! (tools, tasks, ids, [`status`], [`time`], [`jsonrpc`], [`framing`], [`Config`],
//! [`Event`], errors); the era-neutral state and its mechanisms (`state/`:
//! tasks, calls, sessions, deadlines, the journal); the protocol eras ([`era`]), each
//! behind one trait and neither importing the other; and the [`Host`] façade on top, which
//! picks the era of each request, session and call once and hands it over.
//!
//! ## Protocol eras
//!
//! The host and its task table are era-neutral; each protocol era's module owns its
//! decoding, encoding and rules: [`era::v2025_11_25`] (core tasks, `initialize`) and
//! [`era::v2026_07_28`] (stateless requests with the `io.modelcontextprotocol/tasks`
//! extension), both roles. A server session serves both at once: a request that carries
//! `_meta["io.modelcontextprotocol/protocolVersion"]` (and `server/discover`) is read as
//! 2026-07-28, anything else as 2025-11-25. A client session opens in the era
//! [`Config::client_era`] picks: by default `server/discover`, falling back to `initialize`
//! for a server that does not speak 2026-07-28; the application's calls, handlers and events
//! are the same in both. [`era`] describes where an era plugs in.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod config;
mod envelope;
pub mod era;
mod error;
mod event;
pub mod framing;
mod host;
mod ids;
mod json;
pub mod jsonrpc;
mod lenient;
mod log_level;
mod method;
mod model;
mod peer_error;
mod routed;
mod scan;
mod state;
pub mod status;
pub mod time;

pub use config::{ClientEra, ClientFeatures, Config, Durability, Limits, PollConfig, TaskConfig};
pub use envelope::Envelope;
pub use error::{Quota, UsageError};
pub use event::{
    AppRequest, Change, Event, JournalEntry, MessageKind, Output, RequestRead, StopReason,
    ToolCall, Transmit,
};
pub use host::{Footprint, Host};
pub use ids::{CallId, InputId, Owner, SessionId, TaskId};
pub use jsonrpc::{RequestId, RpcError};
pub use log_level::LogLevel;
pub use method::Method;
pub use model::{
    Era, Implementation, InputKinds, LogMessage, Notice, Outcome, PlainReason, ProgressParams,
    Request, Role, StoredInput, TaskBrief, TaskDecision, TaskInfo, TaskPage, TaskProgress,
    TaskRequest, TaskSnapshot, TaskSupport, Tool, ToolDef, ToolExecution, ToolPage,
};
pub use peer_error::PeerErrorKind;
pub use routed::{Check, Routed};
pub use state::TaskIdSource;
pub use status::TaskStatus;
pub use time::Millis;
