//! The fixtures the MCP conformance suite's server scenarios call, served by the
//! `conformance-server` binary (stdio, both eras): the core scenarios' tools, resources,
//! prompts and utilities (`@modelcontextprotocol/conformance@0.1.16`, whose checklist is
//! `tests/fixtures/conformance-core-0.1.16.md`), and the tasks scenarios' tools
//! (`0.2.0-alpha.12`). Tasks suggest polls every 200 ms, the suite's own pace.

mod core_tools;
mod prompts;
mod resources;
mod tasks;

use serde_json::Value;
use taskwire_driver::engine::{Config, RpcError, TaskSupport, Tool};
use taskwire_driver::Server;

/// `pollIntervalMs` of every task (the suite polls every 200 ms whatever it says).
const POLL_INTERVAL_MS: u32 = 200;

/// The suite's image: a 1×1 PNG (70 bytes), base64.
const TEST_IMAGE_BASE64: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";

/// The conformance server, named `taskwire-conformance`, with log messages on.
pub fn server() -> Server {
    let mut config = Config::new("taskwire-conformance", env!("CARGO_PKG_VERSION"));
    config.tasks.poll_interval_ms = Some(POLL_INTERVAL_MS);
    config.logging = true;
    let server = core_tools::add(Server::new(config));
    let server = tasks::add(server);
    let server = resources::add(server);
    prompts::add(server)
}

/// Reads a request's params as `T`, or says what is wrong (-32602).
fn parse<T: serde::de::DeserializeOwned>(params: Value) -> Result<T, RpcError> {
    serde_json::from_value(params)
        .map_err(|e| RpcError::invalid_params(format!("Invalid params: {e}")))
}

/// A tool with its description and input schema.
fn tool(name: &str, support: TaskSupport, description: &str, schema: Value) -> Tool {
    Tool::new(name, support)
        .with_description(description)
        .with_input_schema(schema)
}
