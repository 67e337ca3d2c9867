//! Settings several modules of the interop suite share.

use std::time::Duration;

use taskwire_driver::engine::TaskStatus;
use taskwire_driver::{Client, RpcError};

/// How long one peer process may run before it is killed (with its process group).
pub const DEADLINE: Duration = Duration::from_secs(60);

/// The related-task `_meta` key of MCP 2025-11-25, spelled out (not the engine's constant).
pub const RELATED: &str = "io.modelcontextprotocol/related-task";

/// Status step of our server: shorter than the seed's second, longer than the client's poll.
pub const STEP_MS: &str = "300";

/// Cancels the running task `id` of the TypeScript SDK's server (`ts_server.mjs`, stdio or
/// HTTP), then checks its answers: the cancelled task with the SDK's message, -32602 with the
/// SDK's prefix for a second cancel, -32602 for an unknown id.
pub async fn cancel_on_ts_server(client: &Client, id: &str) {
    let cancelled = client.cancel_task(id).await.unwrap();
    assert_eq!(cancelled.status, TaskStatus::Cancelled);
    assert_eq!(
        cancelled.status_message.as_deref(),
        Some("Client cancelled task execution.")
    );
    let again = client
        .cancel_task(id)
        .await
        .map_err(RpcError::from)
        .unwrap_err();
    assert_eq!(again.code, -32602);
    assert_eq!(
        again.message,
        "MCP error -32602: Cannot cancel task in terminal status: cancelled"
    );
    let unknown = client
        .get_task("taskwire-no-such-task")
        .await
        .map_err(RpcError::from)
        .unwrap_err();
    assert_eq!(unknown.code, -32602, "{unknown:?}");
}
