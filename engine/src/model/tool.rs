//! Tools: their definitions as listed, whether they run as tasks, and who decides.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::jsonrpc::RpcError;

/// Whether a tool may be, or must be, called as a task.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TaskSupport {
    /// Never as a task (the default when absent).
    #[default]
    Forbidden,
    /// Either way.
    Optional,
    /// Only as a task.
    Required,
}

impl TaskSupport {
    /// The support a wire name spells (`"forbidden"`, `"optional"`, `"required"`).
    pub fn from_name(name: &str) -> Option<TaskSupport> {
        match name {
            "forbidden" => Some(TaskSupport::Forbidden),
            "optional" => Some(TaskSupport::Optional),
            "required" => Some(TaskSupport::Required),
            _ => None,
        }
    }
}

/// `Tool.execution`.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolExecution {
    /// Task support; always written as `taskSupport`. Read from `taskSupport`, or from
    /// `task_support` when that is absent (the Python SDK's servers write it so);
    /// `Forbidden` when neither is there.
    pub task_support: TaskSupport,
}

/// The `execution.taskSupport` of a listed tool: `Some(None)` when it has none, `None` when
/// it has one this cannot read (an unknown value).
pub(crate) fn listed_support(execution: &Value) -> Option<Option<TaskSupport>> {
    let named = |key| execution.get(key).filter(|v| !v.is_null());
    match named("taskSupport").or_else(|| named("task_support")) {
        None => Some(None),
        Some(value) => value.as_str().and_then(TaskSupport::from_name).map(Some),
    }
}

impl<'de> Deserialize<'de> for ToolExecution {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let execution = Value::deserialize(deserializer)?;
        match listed_support(&execution) {
            Some(support) => Ok(ToolExecution {
                task_support: support.unwrap_or_default(),
            }),
            None => Err(serde::de::Error::custom(format!(
                "unknown taskSupport in execution {execution}"
            ))),
        }
    }
}

/// A tool definition as `tools/list` lists it (2025-11-25 shape: `execution` always
/// written; 2026-07-28 lists it without `execution`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Tool {
    /// Unique name.
    pub name: String,
    /// Optional display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Optional description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// JSON Schema of the arguments (an object schema).
    pub input_schema: Value,
    /// Optional JSON Schema of `structuredContent`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
    /// Optional behaviour hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Value>,
    /// Execution properties; always written.
    #[serde(default)]
    pub execution: ToolExecution,
}

impl Tool {
    /// A tool with the given task support whose `inputSchema` takes any object
    /// (`{"type":"object","properties":{}}`) until [`Tool::with_input_schema`] says more.
    pub fn new(name: impl Into<String>, task_support: TaskSupport) -> Self {
        Tool {
            name: name.into(),
            title: None,
            description: None,
            input_schema: serde_json::json!({ "type": "object", "properties": {} }),
            output_schema: None,
            annotations: None,
            execution: ToolExecution { task_support },
        }
    }

    /// Whether its `inputSchema` is still [`Tool::new`]'s, which takes any object.
    pub fn takes_any_object(&self) -> bool {
        self.input_schema == serde_json::json!({ "type": "object", "properties": {} })
    }

    /// The same tool with a description.
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// The same tool with this `inputSchema` (an object schema; the default takes any
    /// object).
    pub fn with_input_schema(mut self, schema: Value) -> Self {
        self.input_schema = schema;
        self
    }

    /// The same tool with this `outputSchema`, the schema of its `structuredContent`.
    pub fn with_output_schema(mut self, schema: Value) -> Self {
        self.output_schema = Some(schema);
        self
    }
}

/// Who decides whether a call the requestor asked to run as a task becomes one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TaskDecision {
    /// The engine, by the tool's `taskSupport`: the task exists before the application
    /// hears of the call.
    #[default]
    Policy,
    /// The application: the call arrives with
    /// [`ToolCall::task_offered`](crate::ToolCall::task_offered), and the application calls
    /// [`Host::start_task`](crate::Host::start_task) or answers plainly.
    App,
}

/// A tool the server offers, and how it answers task-augmented calls.
#[derive(Clone, Debug)]
pub struct ToolDef {
    /// The definition listed by `tools/list`.
    pub tool: Tool,
    /// Optional interim text put in the `CreateTaskResult` `_meta` for the model
    /// (2025-11-25's model-immediate-response).
    pub immediate_response: Option<String>,
    /// Who decides about a requested task. Default: [`TaskDecision::Policy`].
    pub decision: TaskDecision,
}

impl From<Tool> for ToolDef {
    fn from(tool: Tool) -> Self {
        ToolDef {
            tool,
            immediate_response: None,
            decision: TaskDecision::Policy,
        }
    }
}

/// One page of a peer's `tools/list`, as [`Event::ToolPage`](crate::Event::ToolPage) reports
/// it.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolPage {
    /// The tools on this page. A tool whose `execution` cannot be read (e.g.
    /// `"taskSupport": 1`) is listed without it, like an unknown spelling: the engine still
    /// tries such a tool as a task, and calls it plainly if the task is refused.
    pub tools: Vec<Tool>,
    /// The cursor of the next page (ask again with it); `None` on the last page.
    pub next_cursor: Option<String>,
}

impl ToolPage {
    /// A `tools/list` result (either era's); an internal error (-32603) naming the tool
    /// that cannot be read.
    pub(crate) fn read(page: &Value) -> Result<ToolPage, RpcError> {
        let invalid = |e: serde_json::Error| {
            RpcError::internal(format!("Invalid response: malformed tool: {e}"))
        };
        let listed = page.get("tools").and_then(Value::as_array);
        let tools = listed.into_iter().flatten().map(|item| {
            Tool::deserialize(item).or_else(|e| match item {
                Value::Object(fields) if fields.contains_key("execution") => {
                    let mut fields = fields.clone();
                    fields.remove("execution");
                    Tool::deserialize(Value::Object(fields)).map_err(invalid)
                }
                _ => Err(invalid(e)),
            })
        });
        Ok(ToolPage {
            tools: tools.collect::<Result<_, _>>()?,
            next_cursor: page
                .get("nextCursor")
                .and_then(Value::as_str)
                .map(str::to_owned),
        })
    }
}
