//! The seed's demo on taskwire: the `long_running_task` server and the client flow that
//! drives it, shared by the `task-server` and `task-client` binaries, and the benchmark
//! fixture (`task-server --bench-tools`), and the conformance suite's fixtures
//! (`conformance-server`).

pub mod bench_tools;
pub mod conformance;
pub mod extra_tools;
pub mod flow;
#[cfg(not(target_os = "wasi"))]
pub mod http;
#[cfg(not(target_os = "wasi"))]
pub mod logs;
#[cfg(not(target_os = "wasi"))]
pub mod metrics;
pub mod options;
#[cfg(not(target_os = "wasi"))]
pub mod store;
pub mod tools;
