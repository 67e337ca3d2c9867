//! The demo suite: the release `task-server` and `task-client` (and this crate's
//! `test-server`) as real processes, driven through our client API under smol and tokio or
//! over raw pipes, in both eras; the adapters' examples.
//!
//! `cargo test -p taskwire-tests --test demo [FILTER]`; e.g. `--test demo examples`. The demo
//! binaries are built once per test process (`cargo build --release -p taskwire-demo`).

mod common;

mod bench_tools;
mod calls;
mod cancel;
mod examples;
mod flow;
mod panic;
mod progress;
mod shutdown;
mod stdio;
mod store;
mod v2026;
mod v2026_client;
