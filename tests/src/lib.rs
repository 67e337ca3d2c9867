//! # taskwire-tests
//!
//! Deterministic, in-memory test harness for `taskwire-engine`: no IO, no clocks, no
//! randomness. Time is a [`Millis`](taskwire_engine::Millis) the harness moves; task ids come
//! from counters.
//!
//! - [`pair::Pair`]: a client session and a server session wired together.
//! - [`driver::Driver`]: one session driven by a scripted peer.
//! - [`conformance`] and [`schema`]: every message an engine emits through either harness is
//!   checked against the MCP 2025-11-25 JSON Schema, by its specific definition where known.
//!
//! The suites live in `tests/tests/`: `engine_*.rs` (receiver rules and bad input) and
//! `client_*.rs` (the requestor role, through a `Pair`).
//!
//! [`bench`] is the end-to-end stdio benchmark behind the `bench` binary; [`scripted`] is the
//! engine-free server behind `scripted-server`, which `tests/tests/client_scripted.rs` runs
//! our clients against.

pub mod bench;
pub mod conformance;
pub mod driver;
pub mod examples;
pub mod fuzz;
pub mod msg;
pub mod pair;
pub mod peers;
pub mod procs;
pub mod schema;
pub mod scripted;
pub mod setup;
pub mod wasi;

pub use conformance::Side;
pub use driver::Driver;
pub use pair::{Pair, Seen, Sent};
