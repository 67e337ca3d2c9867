//! The engine suite: one `taskwire-engine` host (server or client role) driven through the
//! engine-only harnesses of `taskwire-harness` (a [`Probe`](taskwire_harness::Probe) fed
//! scripted peer lines, or a [`Pair`](taskwire_harness::Pair)), with deterministic time and
//! no IO. Every line the engine writes is checked against the MCP schema.
//!
//! `cargo test -p taskwire-tests --test engine [FILTER]`. One module per area: the receiver
//! rules of MCP 2025-11-25 (`bad_input` … `tool_admission`), and the host's own contracts
//! (`host_*`: owners, quotas, the journal, addressing, pass-through methods, the 2026-07-28
//! server role), and `layers`: the layering of every product crate, read from its source.
//!
//! This binary links nothing but the harness, the engine and serde: no async runtime.

mod common;

mod bad_input;
mod cancelled_notification;
mod chunking;
mod create_task;
mod handshake;
mod host_addresses;
mod host_fleet;
mod host_journal;
mod host_owners;
mod host_passthrough;
mod host_quotas;
mod host_respond_raw;
mod host_shutdown;
mod host_sync;
mod host_task_decision;
mod host_v2026;
mod input_required;
mod layers;
mod limits;
mod logging;
mod notices;
mod progress;
mod request_meta;
mod requests_read;
mod retention;
mod status_notifications;
mod streams;
mod tasks_cancel;
mod tasks_list;
mod tasks_result;
mod time;
mod tool_admission;
