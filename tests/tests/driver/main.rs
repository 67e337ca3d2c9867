//! The driver suite: `taskwire-driver`'s `Server` and `Client` under smol and tokio, in
//! process or against real processes: many connections on one server, a server's own methods,
//! fairness under a flooding tool, a client call queued as its driver ends, our two clients
//! against `scripted-server` (a server written without the engine, issue 12), and the proxy
//! (`taskwire-proxy`) serving the tools of a server behind as they change.
//!
//! `cargo test -p taskwire-tests --test driver [FILTER]`.

mod client_queued_commands;
mod client_scripted;
mod connections;
mod durability;
mod fairness;
mod given_up;
mod in_process;
mod links;
mod messages;
mod metrics;
mod postgres;
mod proxy_lib;
mod refused;
mod replicas;
mod requests;
mod restart;
mod schema;
mod store;
mod typed_client;
