//! The benchmarks in their `--smoke` modes, so that they never rot: `bench` (`stdio`),
//! `http-bench` (`http`) and `fleet-bench` (`fleet`) run every workload briefly with every
//! answer checked, and each binary says what it takes (`usage`).
//!
//! `cargo test -p taskwire-bench [FILTER]`.

mod fleet;
mod http;
mod stdio;
mod usage;
