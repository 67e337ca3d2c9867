//! The conformance suite: the official suite itself against `conformance-server --http`
//! (`official_suite`) and its client scenarios against `conformance-client`
//! (`official_clients`), and `conformance-server` over real stdio, driven the way the suite
//! drives a server: its 0.1.16 core scenarios (`core_scenarios`) and its tasks scenarios
//! (`tasks_scenarios`), with their requests and assertions (all but the HTTP header checks).
//!
//! `cargo test -p taskwire-tests --test conformance [FILTER]`.

mod common;

mod core_scenarios;
mod official_clients;
mod official_suite;
mod tasks_scenarios;
