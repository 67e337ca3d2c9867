//! `CallToolResult`, typed: what a tool returns (a handler returns this type, so a result
//! that is not a JSON object cannot compile), and what a caller reads, the same in both
//! eras.

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use taskwire_engine::era::v2025_11_25::RELATED_TASK;
use taskwire_engine::RpcError;

use crate::content::Content;
use crate::error::Error;

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

    /// Reads the result of a `tools/call` as a server sent it, the same in both eras: the
    /// 2026-07-28 `resultType` and the 2025-11-25 related-task `_meta` are left out (the
    /// task is the one the call made), any other `_meta` is kept in [`CallToolResult::meta`].
    /// Lenient: missing or `null` members are empty, a block it does not model is
    /// [`Content::Other`]; [`Error::Malformed`] when `value` is no object, `content` no
    /// array or `isError` no boolean.
    pub fn from_value(value: Value) -> Result<Self, Error> {
        let Value::Object(mut result) = value else {
            return Err(Error::malformed(format!(
                "a tool result must be an object, not {}",
                kind(&value)
            )));
        };
        let content = match result.remove("content") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(blocks)) => blocks.into_iter().map(Content::read).collect(),
            Some(other) => {
                return Err(Error::malformed(format!(
                    "a tool result's content must be an array, not {}",
                    kind(&other)
                )))
            }
        };
        let is_error = match result.remove("isError") {
            None | Some(Value::Null) => false,
            Some(Value::Bool(is_error)) => is_error,
            Some(other) => {
                return Err(Error::malformed(format!(
                    "a tool result's isError must be a boolean, not {}",
                    kind(&other)
                )))
            }
        };
        let meta = match result.remove("_meta") {
            Some(Value::Object(mut meta)) => {
                meta.remove(RELATED_TASK);
                Some(meta).filter(|m| !m.is_empty())
            }
            _ => None,
        };
        Ok(CallToolResult {
            content,
            structured_content: result.remove("structuredContent").filter(|v| !v.is_null()),
            is_error,
            meta,
        })
    }

    /// The text of its text blocks, one after another, each on its own line.
    pub fn all_text(&self) -> String {
        let texts: Vec<&str> = self.content.iter().filter_map(Content::as_text).collect();
        texts.join("\n")
    }

    /// Its `structuredContent` decoded as a `T`; [`Error::Malformed`] when there is none
    /// or it does not fit `T` (saying why).
    ///
    /// ```
    /// use taskwire_driver::serde_json::json;
    /// use taskwire_driver::CallToolResult;
    ///
    /// #[derive(serde::Deserialize)]
    /// struct Weather {
    ///     celsius: f64,
    /// }
    ///
    /// // A 2026-07-28 answer, as a server sends it.
    /// let sent = json!({
    ///     "resultType": "complete",
    ///     "content": [{ "type": "text", "text": "{\"celsius\":21.5}" }],
    ///     "structuredContent": { "celsius": 21.5 }
    /// });
    /// let result = CallToolResult::from_value(sent)?;
    /// assert!(!result.is_error);
    /// assert_eq!(result.structured::<Weather>()?.celsius, 21.5);
    /// # Ok::<(), taskwire_driver::Error>(())
    /// ```
    pub fn structured<T: DeserializeOwned>(&self) -> Result<T, Error> {
        let value = self
            .structured_content
            .as_ref()
            .ok_or_else(|| Error::malformed("the tool result has no structuredContent"))?;
        crate::error::decode(value)
            .map_err(|why| Error::malformed(format!("structuredContent: {why}")))
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
    RpcError::internal(format!(
        "Internal error: the tool's structuredContent is {}, not a JSON object",
        kind(value)
    ))
}

/// What kind of JSON value `value` is, for errors.
fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::content::{ResourceBody, ResourceContents};
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

    #[test]
    fn a_result_reads_the_same_in_both_eras() {
        let blocks = json!([
            { "type": "text", "text": "a", "annotations": { "audience": ["user"] } },
            { "type": "image", "data": "AAAA", "mimeType": "image/png" },
            { "type": "resource", "resource": { "uri": "test://t", "text": "t", "_meta": {} } },
            { "type": "resource_link", "uri": "file:///x", "name": "x" },
            { "type": "video", "url": "https://example.com/v" },
            { "type": "text" },
            { "type": "text", "text": "b" }
        ]);
        let v2025 = json!({
            "content": blocks,
            "structuredContent": { "n": 1 },
            "_meta": { RELATED_TASK: { "taskId": "t-1" }, "app": 1 }
        });
        let v2026 = json!({
            "resultType": "complete",
            "content": blocks,
            "structuredContent": { "n": 1 },
            "isError": null,
            "_meta": { "app": 1 }
        });
        let read = CallToolResult::from_value(v2025).unwrap();
        assert_eq!(read, CallToolResult::from_value(v2026).unwrap());
        assert_eq!(
            read.content,
            [
                Content::text("a"),
                Content::image("AAAA", "image/png"),
                Content::Resource {
                    resource: ResourceContents {
                        uri: "test://t".into(),
                        mime_type: None,
                        body: ResourceBody::Text("t".into()),
                    }
                },
                Content::resource_link("file:///x", "x"),
                Content::Other(json!({ "type": "video", "url": "https://example.com/v" })),
                Content::Other(json!({ "type": "text" })),
                Content::text("b"),
            ]
        );
        assert_eq!(read.all_text(), "a\nb");
        assert_eq!(
            read.meta,
            Some(json!({ "app": 1 }).as_object().unwrap().clone())
        );
        assert!(!read.is_error);
        #[derive(Debug, PartialEq, serde::Deserialize)]
        struct N {
            n: u8,
        }
        assert_eq!(read.structured::<N>().unwrap(), N { n: 1 });
        // What was read goes out again as it came (less what the era wrapped it in).
        let again = parsed(read.into_raw().unwrap());
        assert_eq!(
            again["content"][4],
            json!({ "type": "video", "url": "https://example.com/v" })
        );
        assert_eq!(again["_meta"], json!({ "app": 1 }));
    }

    #[test]
    fn a_result_that_is_not_one_is_malformed() {
        let empty = CallToolResult::from_value(json!({})).unwrap();
        assert_eq!(empty, CallToolResult::default());
        for (bad, says) in [
            (json!([]), "a tool result must be an object, not an array"),
            (
                json!({ "content": "hi" }),
                "content must be an array, not a string",
            ),
            (
                json!({ "isError": "yes" }),
                "isError must be a boolean, not a string",
            ),
        ] {
            match CallToolResult::from_value(bad) {
                Err(Error::Malformed(why)) => assert!(why.contains(says), "{why}"),
                other => panic!("{other:?}"),
            }
        }
    }
}
