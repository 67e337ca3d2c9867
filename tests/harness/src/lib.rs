//! # taskwire-harness
//!
//! Deterministic, in-memory test harnesses for `taskwire-engine`: no IO, no clocks, no
//! randomness, no async runtime. Time is a [`Millis`](taskwire_engine::Millis) the harness
//! moves; task ids come from counters. Its only dependencies are the engine, serde,
//! serde_json and jsonschema, so the fuzz targets (`fuzz/`) and the engine and client
//! suites build without tokio or smol.
//!
//! - [`pair::Pair`]: a client session and a server session wired together.
//! - [`probe::Probe`]: one host driven by scripted peer lines.
//! - [`conformance`] and [`schema`]: every message an engine emits through either harness is
//!   checked against the MCP 2025-11-25 JSON Schema, by its specific definition where known.
//! - [`msg`] and [`setup`]: reading messages, and the configurations and tools the suites
//!   share.
//! - [`fuzz`]: the fuzz bodies, shared by the cargo-fuzz targets and the seeded loop in
//!   `cargo test` (`tests/tests/fuzz/`).
//!
//! The suites that use it live in `taskwire-tests` (`tests/tests/`): `engine/` (receiver
//! rules, bad input, the host) and `client/` (the requestor role, through a `Pair`) use
//! nothing else.

pub mod conformance;
pub mod fuzz;
pub mod msg;
pub mod pair;
pub mod probe;
pub mod schema;
pub mod setup;

pub use conformance::Side;
pub use pair::{Pair, Seen, Sent};
pub use probe::Probe;
