//! Notifications a server sends of its own accord: about what it serves, and log messages
//! about no call.

use serde_json::{json, Map, Value};

use super::LogMessage;

/// A server's notification about its tools, resources or prompts, or a log message about no
/// call, sent with [`Host::notify`](crate::Host::notify).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Notice {
    /// `notifications/tools/list_changed` (with
    /// [`Config::tools_list_changed`](crate::Config::tools_list_changed)).
    ToolsListChanged,
    /// `notifications/resources/list_changed` (for a server declaring
    /// `resources.listChanged`).
    ResourcesListChanged,
    /// `notifications/resources/updated`: the resource at `uri`, which the client
    /// subscribed to, changed.
    ResourceUpdated {
        /// The resource.
        uri: String,
    },
    /// `notifications/prompts/list_changed` (for a server declaring `prompts.listChanged`).
    PromptsListChanged,
    /// `notifications/message` about no call (for a server declaring `logging`), sent when
    /// the session wants its level.
    Log(LogMessage),
}

impl Notice {
    /// The notification a peer sent as `method` with `params`, if it is one of these.
    pub fn from_notification(method: &str, params: Option<&Value>) -> Option<Notice> {
        match method {
            "notifications/tools/list_changed" => Some(Notice::ToolsListChanged),
            "notifications/resources/list_changed" => Some(Notice::ResourcesListChanged),
            "notifications/prompts/list_changed" => Some(Notice::PromptsListChanged),
            "notifications/resources/updated" => {
                let uri = params?.get("uri")?.as_str()?;
                Some(Notice::ResourceUpdated {
                    uri: uri.to_owned(),
                })
            }
            "notifications/message" => serde_json::from_value(params?.clone())
                .ok()
                .map(Notice::Log),
            _ => None,
        }
    }

    /// Its method.
    pub fn method(&self) -> &'static str {
        match self {
            Notice::ToolsListChanged => "notifications/tools/list_changed",
            Notice::ResourcesListChanged => "notifications/resources/list_changed",
            Notice::ResourceUpdated { .. } => "notifications/resources/updated",
            Notice::PromptsListChanged => "notifications/prompts/list_changed",
            Notice::Log(_) => "notifications/message",
        }
    }

    /// Its params (none for a list change).
    pub fn params(&self) -> Option<Value> {
        match self {
            Notice::ResourceUpdated { uri } => Some(json!({ "uri": uri })),
            Notice::Log(message) => {
                let mut params = Map::new();
                params.insert("level".into(), json!(message.level));
                if let Some(logger) = &message.logger {
                    params.insert("logger".into(), json!(logger));
                }
                params.insert("data".into(), message.data.clone());
                Some(Value::Object(params))
            }
            _ => None,
        }
    }
}
