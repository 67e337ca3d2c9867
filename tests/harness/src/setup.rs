//! Fixed starting points: time, id sources, configurations, tools and payloads.

use serde_json::{json, Value};
use taskwire_engine::{ClientEra, ClientFeatures, Config, Millis, TaskIdSource, TaskSupport, Tool};

/// 2026-01-15T09:00:00Z, the start of every test clock.
pub const T0: Millis = Millis(1_768_467_600_000);

/// `T0 + ms` as the RFC 3339 text the engine writes.
pub fn stamp(ms: u64) -> String {
    T0.plus(ms).to_rfc3339()
}

/// Deterministic task ids: `{prefix}1`, `{prefix}2`, …
pub fn counter_ids(prefix: &str) -> TaskIdSource {
    let prefix = prefix.to_owned();
    let mut n = 0u64;
    Box::new(move || {
        n += 1;
        format!("{prefix}{n}")
    })
}

/// A server configuration with the engine's defaults.
pub fn server_config() -> Config {
    Config::new("test-server", "1.0.0")
}

/// A 2025-11-25 client configuration that answers sampling and elicitation (and so hosts
/// those tasks).
pub fn client_config() -> Config {
    let mut config = Config::new("test-client", "1.0.0");
    config.client_era = ClientEra::Only(taskwire_engine::Era::V2025_11_25);
    config.client = ClientFeatures {
        sampling: true,
        elicitation: true,
        roots: false,
    };
    config
}

/// [`client_config`] opening in 2026-07-28 (`server/discover`, no fallback).
pub fn v2026_client_config() -> Config {
    Config {
        client_era: ClientEra::Only(taskwire_engine::Era::V2026_07_28),
        ..client_config()
    }
}

/// A tool with an empty object schema.
pub fn tool(name: &str, support: TaskSupport) -> Tool {
    Tool::new(name, support)
}

/// A `CallToolResult` holding one text block.
pub fn text_result(text: &str) -> Value {
    json!({ "content": [{ "type": "text", "text": text }] })
}

/// A `CallToolResult` with `isError: true`.
pub fn error_result(text: &str) -> Value {
    json!({ "content": [{ "type": "text", "text": text }], "isError": true })
}

/// The first text block of a `CallToolResult`.
pub fn first_text(result: &Value) -> Option<&str> {
    result["content"][0]["text"].as_str()
}

/// `initialize` params for `version` with the given client capabilities.
pub fn initialize_params(version: &str, capabilities: Value) -> Value {
    json!({
        "protocolVersion": version,
        "capabilities": capabilities,
        "clientInfo": { "name": "scripted-client", "version": "0.0.1" }
    })
}

/// Client capabilities that declare elicitation, sampling and their tasks.
pub fn full_client_capabilities() -> Value {
    json!({
        "sampling": {},
        "elicitation": { "form": {} },
        "tasks": {
            "list": {}, "cancel": {},
            "requests": { "sampling": { "createMessage": {} }, "elicitation": { "create": {} } }
        }
    })
}
