//! The end-to-end benchmark behind the `bench` binary (`tests/bench/src/bin/bench.rs`).
//!
//! A neutral load driver speaks raw JSON-RPC lines over each server's stdio: request lines
//! are built before the clock starts, replies are parsed with serde_json, and every reply is
//! checked for the right id and content (a wrong one stops the run with the reason). The
//! servers ([`servers`]): our `task-server --bench-tools` on smol and on tokio, and on smol
//! with a SQLite store (`synchronous=NORMAL` and `FULL`) and with a PostgreSQL store, the
//! TypeScript and Python SDK peers with the same two tools, an rmcp echo server, and
//! `null-server`, the do-nothing limit. The workloads are in [`workloads`]; [`rounds`] runs them in alternating
//! rounds and [`report`] prints the tables.
//!
//! - [`conn`]: one server process on raw pipes, with a watchdog.
//! - [`database`]: a fresh SQLite database per server process, and its size on disk.
//! - [`postgres_db`]: the same on the PostgreSQL server of `TASKWIRE_POSTGRES_URL`.
//! - [`http_load`]: the Streamable HTTP load of `http-bench` and `fleet-bench`.
//! - [`requests`] and [`replies`]: the lines written, and the checks on the lines read.
//! - [`procfs`]: RSS, CPU time and context switches from `/proc`.
//! - [`stats`]: medians, ranges and percentiles.
//! - [`cli`]: the command line (`--quick`, `--smoke`, `--servers`, `--workloads`, …).

pub mod cli;
pub mod conn;
pub mod database;
pub mod http_load;
pub mod postgres_db;
pub mod procfs;
pub mod replies;
pub mod report;
pub mod requests;
pub mod rounds;
pub mod servers;
pub mod stats;
pub mod workloads;
