//! `CallToolResult`, typed: what a tool returns. A handler returns this type, so a result
//! that is not a JSON object cannot compile.

use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use taskwire_engine::RpcError;

use crate::content::Content;

/// The result of a tool call (`CallToolResult`).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CallToolResult {
    /// The content blocks, in order.
    pub content: Vec<Content>,
    /// Structured output, matching the tool's `outputSchema` when it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    /// A tool-level error (the call itself worked; the tool reports a failure).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub is_error: bool,
    /// Optional metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

impl CallToolResult {
    /// One text block.
    pub fn text(text: impl Into<String>) -> Self {
        CallToolResult {
            content: vec![Content::text(text)],
            ..CallToolResult::default()
        }
    }

    /// Structured output (for a tool with an `outputSchema`), with its JSON text as a text
    /// block too, as the spec advises for clients that read only text.
    /// Errs (-32603) when `value` does not serialize to a JSON object.
    pub fn json(value: impl Serialize) -> Result<Self, RpcError> {
        let value = serde_json::to_value(value)
            .map_err(|e| RpcError::internal(format!("Internal error: structured content: {e}")))?;
        if !value.is_object() {
            return Err(not_an_object(&value));
        }
        Ok(CallToolResult {
            content: vec![Content::text(value.to_string())],
            structured_content: Some(value),
            ..CallToolResult::default()
        })
    }

    /// A tool-level error: `isError: true` with the message as text.
    pub fn error(message: impl Into<String>) -> Self {
        CallToolResult {
            is_error: true,
            ..CallToolResult::text(message)
        }
    }

    /// The same result with one more content block.
    pub fn with(mut self, content: Content) -> Self {
        self.content.push(content);
        self
    }

    /// The result as the JSON object that goes on the wire; -32603 when its
    /// `structuredContent` is not an object (the spec allows only objects there).
    pub(crate) fn into_raw(self) -> Result<Box<RawValue>, RpcError> {
        if let Some(other) = self.structured_content.as_ref().filter(|v| !v.is_object()) {
            return Err(not_an_object(other));
        }
        Ok(serde_json::value::to_raw_value(&self).expect("a CallToolResult serializes"))
    }
}

/// The error for structured content that is not a JSON object.
fn not_an_object(value: &Value) -> RpcError {
    let kind = match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    };
    RpcError::internal(format!(
        "Internal error: the tool's structuredContent is {kind}, not a JSON object"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::content::ResourceBody;
    use serde_json::json;

    #[allow(clippy::boxed_local)] // the shape `into_raw` gives
    fn parsed(raw: Box<RawValue>) -> Value {
        serde_json::from_str(raw.get()).unwrap()
    }

    #[test]
    fn builders_write_the_wire_shape() {
        assert_eq!(
            CallToolResult::text("hi").into_raw().map(parsed).unwrap(),
            json!({ "content": [{ "type": "text", "text": "hi" }] })
        );
        assert_eq!(
            CallToolResult::error("no").into_raw().map(parsed).unwrap(),
            json!({ "content": [{ "type": "text", "text": "no" }], "isError": true })
        );
        assert_eq!(
            CallToolResult::json(json!({ "n": 1 }))
                .unwrap()
                .into_raw()
                .map(parsed)
                .unwrap(),
            json!({ "content": [{ "type": "text", "text": "{\"n\":1}" }], "structuredContent": { "n": 1 } })
        );
        assert_eq!(
            CallToolResult::text("a")
                .with(Content::image("AAAA", "image/png"))
                .with(Content::resource_link("file:///x", "x"))
                .into_raw()
                .map(parsed)
                .unwrap()["content"],
            json!([
                { "type": "text", "text": "a" },
                { "type": "image", "data": "AAAA", "mimeType": "image/png" },
                { "type": "resource_link", "uri": "file:///x", "name": "x" }
            ])
        );
        assert_eq!(
            CallToolResult::text("b")
                .with(Content::audio("UklG", "audio/wav"))
                .with(Content::embedded(
                    "test://t",
                    "text/plain",
                    ResourceBody::Text("t".into())
                ))
                .with(Content::embedded(
                    "test://b",
                    "image/png",
                    ResourceBody::Blob("AA==".into())
                ))
                .into_raw()
                .map(parsed)
                .unwrap()["content"],
            json!([
                { "type": "text", "text": "b" },
                { "type": "audio", "data": "UklG", "mimeType": "audio/wav" },
                { "type": "resource", "resource": { "uri": "test://t", "mimeType": "text/plain", "text": "t" } },
                { "type": "resource", "resource": { "uri": "test://b", "mimeType": "image/png", "blob": "AA==" } }
            ])
        );
    }

    #[test]
    fn structured_content_must_be_an_object() {
        let error = CallToolResult::json(5).unwrap_err();
        assert_eq!(error.code, -32603);
        assert!(
            error.message.contains("a number, not a JSON object"),
            "{error}"
        );
        let direct = CallToolResult {
            structured_content: Some(json!(["a"])),
            ..CallToolResult::text("a")
        };
        let error = direct.into_raw().unwrap_err();
        assert!(
            error.message.contains("an array, not a JSON object"),
            "{error}"
        );
    }
}
