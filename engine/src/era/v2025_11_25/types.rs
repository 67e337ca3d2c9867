//! The JSON shapes of MCP 2025-11-25 that serde reads and writes.
//!
//! Output is spec-exact (`ttl` and `taskSupport` always written); input is lenient
//! (missing `ttl`, explicit nulls, numbers given as floats).

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::jsonrpc::{self, lenient_ms, Member, Reject, RpcError};
use crate::model::{Implementation, Tool};
use crate::peer_error::PeerErrorKind;
use crate::status::TaskStatus;

/// The newest protocol version we speak: the one with tasks.
pub const LATEST_VERSION: &str = "2025-11-25";
/// Every version we negotiate, newest first.
pub const SUPPORTED_VERSIONS: [&str; 4] = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];
/// `_meta` key that ties a message to a task.
pub const RELATED_TASK: &str = "io.modelcontextprotocol/related-task";
/// `_meta` key of the optional interim text in a `CreateTaskResult` for `tools/call`.
pub const MODEL_IMMEDIATE_RESPONSE: &str = "io.modelcontextprotocol/model-immediate-response";

/// Whether a negotiated protocol version has tasks.
pub fn version_has_tasks(version: &str) -> bool {
    version == LATEST_VERSION
}

/// `{"taskId": id}` as the value of the related-task `_meta` key.
pub fn related_task_meta(task_id: &str) -> Value {
    let mut meta = Map::new();
    meta.insert(
        RELATED_TASK.to_owned(),
        serde_json::json!({ "taskId": task_id }),
    );
    Value::Object(meta)
}

/// `params` of `initialize`.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeParams {
    /// The version the client asks for.
    pub protocol_version: String,
    /// The client's capabilities.
    #[serde(default)]
    pub capabilities: Value,
    /// The client.
    pub client_info: Implementation,
}

/// `result` of `initialize`.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeResult {
    /// The negotiated version.
    pub protocol_version: String,
    /// The server's capabilities.
    #[serde(default)]
    pub capabilities: Value,
    /// The server.
    pub server_info: Implementation,
    /// Optional usage hints for the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
}

/// `params.task` of a task-augmented request.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TaskMetadata {
    /// Requested retention in ms from creation.
    #[serde(
        default,
        deserialize_with = "lenient_ms",
        skip_serializing_if = "Option::is_none"
    )]
    pub ttl: Option<u64>,
}

/// A task as it travels on the wire (flat in `tasks/get`, `tasks/cancel`, status notifications).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Task {
    /// Opaque id chosen by the receiver.
    pub task_id: String,
    /// Current status.
    pub status: TaskStatus,
    /// Optional human-readable status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_message: Option<String>,
    /// RFC 3339 creation time.
    pub created_at: String,
    /// RFC 3339 time of the last change.
    pub last_updated_at: String,
    /// Retention in ms from creation; `null` means unlimited. Always written. Read from
    /// 2026-07-28's `ttlMs` too (lenient input).
    #[serde(default, deserialize_with = "lenient_ms", alias = "ttlMs")]
    pub ttl: Option<u64>,
    /// Suggested ms between polls. Read from 2026-07-28's `pollIntervalMs` too.
    #[serde(
        default,
        deserialize_with = "lenient_ms",
        skip_serializing_if = "Option::is_none",
        alias = "pollIntervalMs"
    )]
    pub poll_interval: Option<u64>,
}

impl Task {
    /// The era-neutral view of a task object as sent (`Ok(None)`: a timestamp that is not
    /// RFC 3339).
    pub(crate) fn info_of(value: &Value) -> Result<Option<crate::TaskInfo>, serde_json::Error> {
        Task::deserialize(value).map(|view| view.to_info())
    }

    /// The era-neutral view; `None` when a timestamp is not RFC 3339.
    pub fn to_info(&self) -> Option<crate::TaskInfo> {
        Some(crate::TaskInfo {
            id: crate::TaskId::from(self.task_id.as_str()),
            status: self.status,
            status_message: self.status_message.clone(),
            created_at: crate::Millis::parse_rfc3339(&self.created_at)?,
            last_updated_at: crate::Millis::parse_rfc3339(&self.last_updated_at)?,
            ttl_ms: self.ttl,
            poll_interval_ms: self.poll_interval,
        })
    }
}

/// The immediate answer to a task-augmented request.
#[derive(Debug, Serialize, Deserialize)]
pub struct CreateTaskResult {
    /// The new task, status `working`.
    pub task: Task,
    /// Optional metadata (e.g. the model-immediate-response text).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Value>,
}

/// `params` of `tasks/get`, `tasks/result` and `tasks/cancel`.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskIdParams {
    /// The task.
    pub task_id: String,
}

impl TaskIdParams {
    /// The params naming `task`.
    pub(crate) fn new(task: &str) -> Self {
        Self {
            task_id: task.to_owned(),
        }
    }
}

/// `params` of `tasks/get`, `tasks/result` and `tasks/cancel`, borrowing the id.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct TaskIdRef<'a> {
    #[serde(borrow)]
    pub task_id: std::borrow::Cow<'a, str>,
}

impl<'a> TaskIdRef<'a> {
    /// Reads `params`: `{"taskId":"…"}` exactly (the usual shape) without a general parse,
    /// anything else through serde.
    pub fn read(params: Option<&'a RawValue>) -> Result<Self, Reject> {
        let plain = params
            .and_then(|p| p.get().strip_prefix(r#"{"taskId":"#))
            .and_then(crate::jsonrpc::plain_string)
            .filter(|(_, rest)| *rest == "}");
        match plain {
            Some((id, _)) => Ok(TaskIdRef {
                task_id: std::borrow::Cow::Borrowed(id),
            }),
            None => crate::jsonrpc::params(params),
        }
    }
}

/// `params` of paginated requests.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct PageParams {
    /// Opaque cursor from a previous page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
}

/// `result` of `tasks/list`.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListTasksResult {
    /// One page of tasks.
    pub tasks: Vec<Task>,
    /// Present when more tasks remain.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

/// `result` of `tools/list`.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListToolsResult {
    /// One page of tools.
    pub tools: Vec<Tool>,
    /// Present when more tools remain.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

/// `params._meta` of a request, as far as the engine reads it.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CommonMeta {
    #[serde(default)]
    pub progress_token: Option<Value>,
    #[serde(default, rename = "io.modelcontextprotocol/related-task")]
    pub related_task: Option<TaskIdParams>,
}

/// `params` of an inbound request, as far as the engine reads it: the task-augmentation
/// and `_meta` common to `tools/call`, `sampling/createMessage` and `elicitation/create`.
#[derive(Debug, Deserialize)]
pub(crate) struct AugmentableParams {
    #[serde(default)]
    task: Member<Value>,
    #[serde(default, rename = "_meta")]
    pub meta: Option<CommonMeta>,
}

impl AugmentableParams {
    /// The requested task metadata, when task augmentation applies to this request.
    pub fn task_metadata(&self, applies: bool) -> Result<Option<TaskMetadata>, Reject> {
        task_metadata(&self.task, applies)
    }
}

/// The requested task metadata, when task augmentation applies to the request. When it does
/// not, `params.task` is ignored, even malformed (spec §2.1 rule 10).
fn task_metadata(task: &Member<Value>, applies: bool) -> Result<Option<TaskMetadata>, Reject> {
    match task {
        Member::Present(task) if applies => {
            TaskMetadata::deserialize(task).map(Some).map_err(|e| {
                Reject::peer(
                    PeerErrorKind::InvalidParams {
                        field: Some("task".into()),
                    },
                    RpcError::invalid_params(format!("Invalid params: task: {e}")),
                )
            })
        }
        _ => Ok(None),
    }
}

/// `params` of an inbound `tools/call`: the augmentation of [`AugmentableParams`], with its
/// `_meta` kept as sent for the application.
#[derive(Debug, Deserialize)]
pub(crate) struct CallToolParams<'a> {
    pub name: String,
    #[serde(default, borrow)]
    pub arguments: Option<&'a RawValue>,
    #[serde(default)]
    task: Member<Value>,
    #[serde(default, rename = "_meta", borrow)]
    pub meta: Option<&'a RawValue>,
}

impl CallToolParams<'_> {
    /// The requested task metadata, when task augmentation applies to this call.
    pub fn task_metadata(&self, applies: bool) -> Result<Option<TaskMetadata>, Reject> {
        task_metadata(&self.task, applies)
    }

    /// The progress token in `_meta`, if any; -32602 when `_meta` is no object.
    pub fn progress_token(&self) -> Result<Option<Value>, Reject> {
        let meta: Option<CommonMeta> = self.meta.map(|m| jsonrpc::params(Some(m))).transpose()?;
        Ok(meta.and_then(|m| m.progress_token))
    }
}

/// `params` of an outbound `tools/call`.
#[derive(Debug, Serialize)]
pub(crate) struct CallToolRequest<'a> {
    pub name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub arguments: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task: Option<TaskMetadata>,
    /// `{"progressToken": …}` when the application wants the call's progress.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Value>,
}

/// Whether a capability is declared at `path` (an object, or `true` as some peers write).
pub(crate) fn declares(capabilities: &Value, path: &[&str]) -> bool {
    let mut v = capabilities;
    for key in path {
        match v.get(key) {
            Some(next) => v = next,
            None => return false,
        }
    }
    v.is_object() || v == &Value::Bool(true)
}
