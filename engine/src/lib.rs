//! # taskwire-engine
//!
//! A sans-IO state machine for MCP tasks (protocol 2025-11-25): it consumes and emits
//! JSON-RPC messages and tracks task lifecycles, with no sockets, files, threads, clocks
//! or randomness of its own.
//!
//! ## The run loop
//! 1. Feed input with the current time: [`Session::handle_bytes`] (stdio),
//!    [`Session::handle_message`] (framed transports), [`Session::handle_timeout`].
//! 2. Issue application commands (`respond`, `complete_task`, `call_tool_as_task`, …).
//! 3. After every `&mut` call, drain [`Session::poll_output`] to `None`: each
//!    [`Output::Send`] is one JSON-RPC message to write, each [`Output::Event`] is for the app.
//! 4. Sleep until [`Session::poll_timeout`] (or new input), then go to 1.
//!
//! Time is milliseconds since the Unix epoch ([`Millis`]); time that goes backwards is
//! clamped. Task ids come from the caller through a [`TaskIdSource`].
//!
//! Peer bytes never make the engine panic or fail: bad input becomes a JSON-RPC error
//! reply plus an [`Event::PeerError`]. Only misuse of this API returns [`UsageError`].
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod config;
mod deadlines;
mod error;
mod event;
pub mod framing;
pub mod jsonrpc;
mod session;
pub mod status;
pub mod store;
pub mod time;
pub mod wire;

pub use config::{ClientFeatures, Config, PollConfig, TaskConfig};
pub use error::UsageError;
pub use event::{Event, Output, StopReason};
pub use jsonrpc::{RequestId, RpcError};
pub use session::{ProgressTarget, Role, Session, TaskIdSource, ToolDef};
pub use status::TaskStatus;
pub use time::Millis;
pub use wire::v2025_11_25::{Implementation, Task, TaskSupport, Tool};
