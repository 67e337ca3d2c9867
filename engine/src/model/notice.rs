//! Notifications a server sends of its own accord about what it serves beside tools.

use serde_json::{json, Value};

/// A server's notification about its resources or prompts, sent with
/// [`Host::notify`](crate::Host::notify).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Notice {
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
}

impl Notice {
    /// The notification a peer sent as `method` with `params`, if it is one of these.
    pub fn from_notification(method: &str, params: Option<&Value>) -> Option<Notice> {
        match method {
            "notifications/resources/list_changed" => Some(Notice::ResourcesListChanged),
            "notifications/prompts/list_changed" => Some(Notice::PromptsListChanged),
            "notifications/resources/updated" => {
                let uri = params?.get("uri")?.as_str()?;
                Some(Notice::ResourceUpdated {
                    uri: uri.to_owned(),
                })
            }
            _ => None,
        }
    }

    /// Its method.
    pub fn method(&self) -> &'static str {
        match self {
            Notice::ResourcesListChanged => "notifications/resources/list_changed",
            Notice::ResourceUpdated { .. } => "notifications/resources/updated",
            Notice::PromptsListChanged => "notifications/prompts/list_changed",
        }
    }

    /// Its params.
    pub(crate) fn params(&self) -> Option<Value> {
        match self {
            Notice::ResourceUpdated { uri } => Some(json!({ "uri": uri })),
            _ => None,
        }
    }
}
