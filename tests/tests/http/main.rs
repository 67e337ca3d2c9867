//! The Streamable HTTP suite: `taskwire-http` serving the demo server (with its extra tools)
//! in process, driven by a real HTTP client (reqwest) the way MCP clients use it, and by our
//! own client over HTTP (`client`): 2025-11-25 sessions (`sessions`), 2026-07-28 stateless
//! requests (`stateless`), what every request passes first and the faults a network brings
//! (`guard`, `faults`), the CORS policy for clients in web pages (`cors`), the task dashboard
//! beside the endpoint (`dashboard`), what `task-server --metrics` shows after real traffic
//! over HTTP, stdio and a PostgreSQL fleet (`metrics`), floods that would lock others out (`floods`), many
//! sessions at once (`load`), and the crate's examples run as users run them (`example`: the
//! mounted greeter, the server with a SQLite store and bearer authentication, the client). The HTTP benchmark's smoke run is in `tests/bench/`.
//!
//! `cargo test -p taskwire-tests --test http [FILTER]`.

mod common;

mod client;
mod cors;
mod dashboard;
mod example;
mod faults;
mod fleet;
mod floods;
mod guard;
mod load;
mod metrics;
mod oauth;
mod replicas;
mod sessions;
mod stateless;
mod traces;
