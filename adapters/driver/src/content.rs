//! Content blocks (`ContentBlock`): what a tool result, a prompt or a sampling message
//! carries, shared by the server side (tool results) and the client side (sampling answers,
//! tool results read).

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One content block: of a tool result, or of a sampling message (text, image, audio).
/// Read leniently: a block of another type, or one missing what its type needs, is kept
/// whole as [`Content::Other`]; annotations and `_meta` of a block are not kept.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Content {
    /// Text.
    Text {
        /// The text.
        text: String,
    },
    /// An image, base64-encoded.
    Image {
        /// The base64 data.
        data: String,
        /// Its MIME type, e.g. `image/png`.
        #[serde(rename = "mimeType")]
        mime_type: String,
    },
    /// Audio, base64-encoded.
    Audio {
        /// The base64 data.
        data: String,
        /// Its MIME type, e.g. `audio/wav`.
        #[serde(rename = "mimeType")]
        mime_type: String,
    },
    /// A link to a resource the client can read.
    ResourceLink {
        /// The resource's URI.
        uri: String,
        /// Its name.
        name: String,
        /// Its MIME type, if known.
        #[serde(rename = "mimeType", skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
    },
    /// A resource embedded whole (`EmbeddedResource`).
    Resource {
        /// What the resource holds.
        resource: ResourceContents,
    },
    /// A block this library does not model, as sent (or to send).
    #[serde(untagged)]
    Other(Value),
}

/// The contents of one resource, as embedded in a result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ResourceContents {
    /// The resource's URI.
    pub uri: String,
    /// Its MIME type, if known.
    #[serde(rename = "mimeType", skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Its text or its bytes.
    #[serde(flatten)]
    pub body: ResourceBody,
}

/// What a resource holds: text, or bytes as base64 (`blob`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ResourceBody {
    /// Text.
    Text(String),
    /// Base64-encoded bytes.
    Blob(String),
}

impl Content {
    /// A block as a peer sent it: [`Content::Other`] when it is not one this library models.
    pub(crate) fn read(block: Value) -> Self {
        Content::deserialize(&block).unwrap_or(Content::Other(block))
    }

    /// The text of a text block.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Content::Text { text } => Some(text),
            _ => None,
        }
    }

    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        Content::Text { text: text.into() }
    }

    /// An image block (`data` is base64).
    pub fn image(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        Content::Image {
            data: data.into(),
            mime_type: mime_type.into(),
        }
    }

    /// An audio block (`data` is base64).
    pub fn audio(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        Content::Audio {
            data: data.into(),
            mime_type: mime_type.into(),
        }
    }

    /// An embedded resource holding `body` (text, or base64 bytes).
    pub fn embedded(
        uri: impl Into<String>,
        mime_type: impl Into<String>,
        body: ResourceBody,
    ) -> Self {
        Content::Resource {
            resource: ResourceContents {
                uri: uri.into(),
                mime_type: Some(mime_type.into()),
                body,
            },
        }
    }

    /// A resource link.
    pub fn resource_link(uri: impl Into<String>, name: impl Into<String>) -> Self {
        Content::ResourceLink {
            uri: uri.into(),
            name: name.into(),
            mime_type: None,
        }
    }
}
