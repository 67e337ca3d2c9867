//! The client suite: the requestor role of `taskwire-engine` between two engines wired
//! together in memory (a [`Pair`](taskwire_harness::Pair)), with deterministic time: task
//! calls, following a task made earlier, polling, status notifications, input requests,
//! cancel, expiry, timeouts, close, and what the client tolerates from servers that bend
//! the schema, in both eras.
//!
//! `cargo test -p taskwire-tests --test client [FILTER]`. The client tests that need the
//! async driver or real processes are in the `driver` suite.
//!
//! This binary links nothing but the harness, the engine and serde: no async runtime.

mod common;

mod cancel;
mod close;
mod early_status;
mod elicitation;
mod errors;
mod expiry;
mod fallback;
mod follow;
mod give_up;
mod lenient;
mod polling;
mod progress;
mod requests;
mod sampling_task;
mod seed_flow;
mod timeouts;
mod v2026;
