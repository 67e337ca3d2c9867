//! Settings several modules of the interop suite share.

use std::time::Duration;

/// How long one peer process may run before it is killed (with its process group).
pub const DEADLINE: Duration = Duration::from_secs(60);

/// The related-task `_meta` key of MCP 2025-11-25, spelled out (not the engine's constant).
pub const RELATED: &str = "io.modelcontextprotocol/related-task";

/// Status step of our server: shorter than the seed's second, longer than the client's poll.
pub const STEP_MS: &str = "300";
