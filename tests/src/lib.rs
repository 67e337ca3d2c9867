//! # taskwire-tests
//!
//! The suites that need more than the engine: real processes, the async driver under smol
//! and tokio, the official SDKs as interop peers, WASI runtimes (the benchmarks, which use
//! these peers, are the `taskwire-bench` crate in `tests/bench/`). The engine-only
//! harnesses (`Pair`, `Probe`, the schema oracle, the fuzz bodies) are in
//! [`taskwire_harness`] (`tests/harness/`), which builds without an async runtime.
//!
//! The suites live in `tests/tests/`, one test binary per area (a directory with a `main.rs`
//! and one module per former file).
//!
//! - [`procs`]: the demo binaries and this crate's `test-server` as real processes, driven
//!   through the client API under smol or tokio.
//! - [`peers`]: the pinned official SDK peers (installed on first use) and recorded traffic.
//! - [`wasi`]: the `wasm32-wasip1` build under real WASI runtimes.
//! - [`examples`]: the adapters' example binaries.
//! - [`fleet`]: `task-server` processes sharing one PostgreSQL database (replicas, fronts,
//!   workers) and HAProxy in front of them.
//! - [`postgres`]: the PostgreSQL server of the PostgreSQL task-store tests
//!   (`TASKWIRE_POSTGRES_URL`, a private cluster that `tests/postgres.sh` starts).
//! - [`skip`]: tests switched off by `TASKWIRE_SKIP_INTEROP=1`, `TASKWIRE_SKIP_WASI=1` or
//!   `TASKWIRE_SKIP_POSTGRES=1` report themselves, so that `tests/run-all.sh` counts them.
//!
//! [`scripted`] is the engine-free server behind `scripted-server`, which the driver suite's `client_scripted`
//! module runs our clients against.

pub mod examples;
pub mod fleet;
pub mod oauth;
pub mod otlp;
pub mod peers;
pub mod postgres;
pub mod procs;
pub mod scripted;
pub mod skip;
pub mod wasi;

/// The READMEs' Rust examples, compiled by `cargo test --doc` (a server is compiled, not
/// run: it would serve the test's stdin; a fragment is marked `ignore` and names the example
/// file that runs in full).
#[cfg(doctest)]
mod readmes {
    #[doc = include_str!("../../README.md")]
    struct Root;
    #[doc = include_str!("../../engine/README.md")]
    struct Engine;
    #[doc = include_str!("../../adapters/cli/README.md")]
    struct Cli;
    #[doc = include_str!("../../adapters/demo/README.md")]
    struct Demo;
    #[doc = include_str!("../../adapters/driver/README.md")]
    struct Driver;
    #[doc = include_str!("../../adapters/http/README.md")]
    struct Http;
    #[doc = include_str!("../../adapters/postgres/README.md")]
    struct Postgres;
    #[doc = include_str!("../../adapters/proxy/README.md")]
    struct Proxy;
    #[doc = include_str!("../../adapters/smol/README.md")]
    struct Smol;
    #[doc = include_str!("../../adapters/sqlite/README.md")]
    struct Sqlite;
    #[doc = include_str!("../../adapters/tokio/README.md")]
    struct Tokio;
    #[doc = include_str!("../../adapters/wasi/README.md")]
    struct Wasi;
}
