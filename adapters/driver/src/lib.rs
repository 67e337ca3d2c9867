//! # taskwire-driver
//!
//! Runs a [`taskwire_engine::Session`] on any async runtime. One driver task owns the
//! session: it feeds it transport bytes and wall-clock time, sleeps until the engine's next
//! deadline, and runs tools (server) or request handlers (client) as spawned futures that
//! talk back over channels. No mutex guards the engine.
//!
//! A runtime adapter supplies the [`Runtime`] (spawn + sleep) and moves bytes between the
//! transport and two channels: [`Input`] in, one JSON-RPC message per `String` out.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod client;
mod command;
mod driver;
pub mod pump;
mod runtime;
mod server;

pub use client::{Client, ClientBuilder, Handler, TaskCall, TaskUpdate};
pub use command::Initialized;
pub use driver::Input;
pub use runtime::{now, random_task_id, BoxFuture, Runtime};
pub use server::{Server, ToolContext, ToolFn, STDIO_OWNER};
pub use taskwire_engine as engine;
