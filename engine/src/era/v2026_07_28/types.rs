//! The JSON shapes of this era that serde reads (what we write is in `encode.rs`). Input is
//! lenient: missing `ttlMs`, explicit nulls, numbers given as floats, and the 2025-11-25
//! spellings `ttl` and `pollInterval`.

use serde::Deserialize;
use serde_json::Value;

use crate::ids::TaskId;
use crate::jsonrpc::lenient_ms;
use crate::model::TaskInfo;
use crate::status::TaskStatus;
use crate::time::Millis;

/// A task as the server shows it (the fields of a `CreateTaskResult`, a `DetailedTask`,
/// `notifications/tasks`); the outcome and input requests beside it are read separately.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Task {
    pub task_id: String,
    pub status: TaskStatus,
    #[serde(default)]
    pub status_message: Option<String>,
    pub created_at: String,
    pub last_updated_at: String,
    #[serde(default, deserialize_with = "lenient_ms", alias = "ttl")]
    pub ttl_ms: Option<u64>,
    #[serde(default, deserialize_with = "lenient_ms", alias = "pollInterval")]
    pub poll_interval_ms: Option<u64>,
}

impl Task {
    /// The era-neutral view of a task object as sent (`Ok(None)`: a timestamp that is not
    /// RFC 3339).
    pub(crate) fn info_of(value: &Value) -> Result<Option<TaskInfo>, serde_json::Error> {
        Task::deserialize(value).map(|view| view.to_info())
    }

    /// The era-neutral view; `None` when a timestamp is not RFC 3339.
    pub fn to_info(&self) -> Option<TaskInfo> {
        Some(TaskInfo {
            id: TaskId::from(self.task_id.as_str()),
            status: self.status,
            status_message: self.status_message.clone(),
            created_at: Millis::parse_rfc3339(&self.created_at)?,
            last_updated_at: Millis::parse_rfc3339(&self.last_updated_at)?,
            ttl_ms: self.ttl_ms,
            poll_interval_ms: self.poll_interval_ms,
        })
    }
}

/// One entry of `inputRequests`.
#[derive(Deserialize)]
pub(super) struct InputRequest {
    pub method: String,
    #[serde(default)]
    pub params: Option<Value>,
}
