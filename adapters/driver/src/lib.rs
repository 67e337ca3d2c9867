//! # taskwire-driver
//!
//! Runs a [`taskwire_engine::Host`] on any async runtime. One future owns the host and does
//! everything in turns: it reads each connection, takes the commands of running tools and
//! client handles, fires the engine's next deadline, routes the outputs and writes. No
//! mutex guards the engine, and on stdio no thread sits between the peer and the engine.
//!
//! - Servers: [`Server`] holds the host and tools as typed async functions
//!   ([`Server::tool`]: arguments decoded into any `Deserialize` type, a [`CallToolResult`]
//!   back). [`serve_stdio`] serves this process's stdio; [`Server::start`] serves many
//!   connections over one host ([`ServerHandle::connect`]), sharing tools and tasks.
//! - Clients: [`ClientBuilder`] and [`Client`], an async API over a client session
//!   ([`spawn_server`] starts a server as a child process).
//! - Connections are byte streams (stdio, child processes: [`ServerHandle::connect`]) or
//!   message links, whose transport frames each message and routes what goes back by the
//!   stream it names (Streamable HTTP: [`ServerHandle::open`], [`MessageSession`]).
//! - A runtime adapter implements [`Runtime`] (spawn, a timer, stdio, child processes, the
//!   termination signal): `taskwire-smol`, `taskwire-tokio` and `taskwire-wasi` are that and
//!   little else.
//! - The engine's types that this API takes or hands out are re-exported here, so a program
//!   needs no `taskwire-engine` dependency of its own: configuration ([`Config`], with
//!   [`ClientEra`] and [`Era`], [`TaskConfig`], [`PollConfig`], [`Limits`], [`Durability`]),
//!   tasks ([`TaskInfo`], [`TaskStatus`], [`TaskId`], [`Millis`], [`PlainReason`]), tools
//!   ([`Tool`], [`TaskSupport`]), errors ([`RpcError`] and its [`code`]s, [`UsageError`]),
//!   and what stores and transports handle ([`TaskSnapshot`], [`JournalEntry`],
//!   [`MessageKind`], [`Owner`], [`SessionId`]). The whole engine is [`engine`].
//!
//! A tool that finishes without waiting completes inline, in the driver's turn; one that
//! waits runs as a spawned future and reports back over a channel. Each turn takes a
//! bounded amount from every source, so a tool flooding status updates cannot starve peer
//! input, timers or `tasks/cancel`.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod client;
mod content;
mod driver;
mod error;
mod form;
mod handler;
mod ids;
mod observe;
mod runtime;
mod server;
pub mod stdio;
mod store;
#[cfg(feature = "opentelemetry")]
pub mod telemetry;
mod tool_result;

pub use client::{
    spawn_server, Client, ClientBuilder, ElicitationAnswer, ElicitationMode, ElicitationRequest,
    Initialized, MessageRole, Progress, SamplingAnswer, SamplingMessage, SamplingRequest, TaskCall,
    TaskUpdate,
};
pub use content::{Content, ResourceBody, ResourceContents};
pub use driver::{MessageSession, Outgoing};
pub use error::Error;
pub use handler::Handler;
pub use ids::{new_task_id, random_uuid};
pub use observe::{TaskChange, TaskFeed, TaskRow};
pub use runtime::{now, BoxFuture, Child, ChildProcess, Reader, Runtime, Stdio, Timer, Writer};
#[cfg(feature = "schemars")]
pub use server::Elicited;
pub use server::{
    serve_stdio, LiveTools, NoArgs, Notifier, Server, ServerHandle, ToolContext, ToolOutcome,
    STDIO_OWNER,
};
pub use store::{
    ask as ask_store_thread, refused_entries, Answers, NetBatch, NetChange, Refused, Reply,
    RoleError, ServerRole, StoreError, StoreJob, StoreNews, TaskStore,
};
pub use tool_result::CallToolResult;

/// prometheus-client, whose registry [`Server::metrics`] registers its metrics in.
pub use prometheus_client;
/// serde_json, for building arguments and results.
pub use serde_json;
/// The engine, whole.
pub use taskwire_engine as engine;
// The engine's types that this crate's API takes or hands out, each with the engine's own
// documentation (a doc comment here would be prepended to every one of them).
pub use taskwire_engine::{
    jsonrpc::code, ClientEra, ClientFeatures, Config, Durability, Era, Host, Implementation,
    JournalEntry, Limits, LogLevel, LogMessage, MessageKind, Millis, Notice, Owner, PlainReason,
    PollConfig, RpcError, SessionId, StopReason, TaskConfig, TaskId, TaskInfo, TaskProgress,
    TaskSnapshot, TaskStatus, TaskSupport, Tool, ToolExecution, UsageError,
};

/// The JSON Schema of `T`, for a tool's `inputSchema` or `outputSchema` (feature `schemars`).
#[cfg(feature = "schemars")]
pub fn schema_for<T: schemars::JsonSchema>() -> serde_json::Value {
    serde_json::to_value(schemars::schema_for!(T)).expect("schemas serialize")
}
