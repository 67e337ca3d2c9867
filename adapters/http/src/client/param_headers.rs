//! Tool parameters mirrored into headers (2026-07-28, SEP-2243): a tool's input schema may
//! mark a primitive property with `"x-mcp-header": "Name"`, and each `tools/call` of that
//! tool then carries the argument's value in `Mcp-Param-Name` too, so that a gateway can
//! route on it without reading the body. A tool whose marks are invalid (empty, not a
//! token, repeated, or on a property that is no string, integer or boolean) is
//! left out of the listing the application sees: calling it could only fail.

use std::collections::HashMap;
use std::sync::Mutex;

use axum::http::{HeaderName, HeaderValue};
use base64::Engine;
use serde_json::Value;

/// The marked parameters of every listed tool: tool name → (argument, header name).
#[derive(Debug, Default)]
pub(super) struct ParamHeaders {
    tools: Mutex<HashMap<String, Vec<(String, HeaderName)>>>,
}

impl ParamHeaders {
    /// Reads a `tools/list` answer: remembers each tool's marked parameters, and returns the
    /// answer without the tools whose marks are invalid (`None`: nothing to change).
    pub fn learn(&self, answer: &str) -> Option<String> {
        let mut reply: Value = serde_json::from_str(answer).ok()?;
        let tools = reply.get_mut("result")?.get_mut("tools")?.as_array_mut()?;
        let before = tools.len();
        let mut known = self.tools.lock().expect("not poisoned");
        tools.retain(|tool| {
            let name = tool["name"].as_str().unwrap_or_default();
            match marks(&tool["inputSchema"]) {
                Ok(marked) => {
                    known.insert(name.to_owned(), marked);
                    true
                }
                Err(why) => {
                    tracing::warn!(
                        tool = name,
                        why,
                        "a tool with an invalid x-mcp-header is left out"
                    );
                    false
                }
            }
        });
        (tools.len() != before).then(|| reply.to_string())
    }

    /// Whether `tool` has parameters marked `x-mcp-header` (its calls carry headers).
    pub fn marks(&self, tool: &str) -> bool {
        let known = self.tools.lock().expect("not poisoned");
        known.get(tool).is_some_and(|marked| !marked.is_empty())
    }

    /// The `Mcp-Param-*` headers of a call of `tool` with `arguments` (a null or missing
    /// argument has none).
    pub fn for_call(&self, tool: &str, arguments: &Value) -> Vec<(HeaderName, HeaderValue)> {
        let known = self.tools.lock().expect("not poisoned");
        let Some(marked) = known.get(tool) else {
            return Vec::new();
        };
        marked
            .iter()
            .filter_map(|(argument, header)| {
                let value = encode(arguments.get(argument)?)?;
                Some((header.clone(), HeaderValue::from_str(&value).ok()?))
            })
            .collect()
    }
}

/// The marked properties of an input schema, or why its marks are invalid.
fn marks(schema: &Value) -> Result<Vec<(String, HeaderName)>, &'static str> {
    let mut marked: Vec<(String, HeaderName)> = Vec::new();
    let Some(properties) = schema["properties"].as_object() else {
        return Ok(marked);
    };
    for (argument, property) in properties {
        let Some(mark) = property.get("x-mcp-header") else {
            continue;
        };
        let name = mark.as_str().ok_or("x-mcp-header is not a string")?;
        if name.is_empty() {
            return Err("x-mcp-header is empty");
        }
        if !name.bytes().all(is_token_byte) {
            return Err("x-mcp-header is not an HTTP token");
        }
        if !matches!(
            property["type"].as_str(),
            Some("string" | "integer" | "boolean")
        ) {
            return Err("x-mcp-header marks a property that is no string, integer or boolean");
        }
        let header = HeaderName::from_bytes(format!("mcp-param-{name}").as_bytes())
            .map_err(|_| "x-mcp-header is not an HTTP token")?;
        if marked.iter().any(|(_, seen)| *seen == header) {
            return Err("x-mcp-header repeats another (header names ignore case)");
        }
        marked.push((argument.clone(), header));
    }
    Ok(marked)
}

/// RFC 9110 `tchar`.
fn is_token_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// A primitive argument as a header value: integers and booleans as JSON writes them, a
/// string as [`header_text`] writes it.
fn encode(value: &Value) -> Option<String> {
    match value {
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        Value::String(s) => Some(header_text(s)),
        _ => None,
    }
}

/// Text as an `Mcp-Name` or `Mcp-Param-*` value (SEP-2243): as is when it is printable ASCII
/// without surrounding whitespace and does not look like the encoded form, otherwise
/// `=?base64?…?=` of its UTF-8 (so any tool name, URI or task id can be sent).
pub(super) fn header_text(text: &str) -> String {
    let printable = text.bytes().all(|b| (0x20..=0x7e).contains(&b)) && text.trim() == text;
    let looks_encoded = text.starts_with("=?base64?") && text.ends_with("?=");
    match printable && !looks_encoded {
        true => text.to_owned(),
        false => format!(
            "=?base64?{}?=",
            base64::engine::general_purpose::STANDARD.encode(text)
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn listing(tools: Value) -> String {
        json!({"jsonrpc": "2.0", "id": 1, "result": {"tools": tools}}).to_string()
    }

    fn tool(name: &str, properties: Value) -> Value {
        json!({"name": name, "inputSchema": {"type": "object", "properties": properties}})
    }

    #[test]
    fn marked_arguments_become_headers_encoded_by_kind() {
        let headers = ParamHeaders::default();
        let marked = tool(
            "t",
            json!({
                "region": {"type": "string", "x-mcp-header": "Region"},
                "n": {"type": "integer", "x-mcp-header": "N"},
                "on": {"type": "boolean", "x-mcp-header": "On"},
                "odd": {"type": "string", "x-mcp-header": "Odd"},
                "gone": {"type": "string", "x-mcp-header": "Gone"},
                "plain": {"type": "string"}
            }),
        );
        assert_eq!(headers.learn(&listing(json!([marked]))), None);
        let sent = headers.for_call(
            "t",
            &json!({"region": "us west 1", "n": 42, "on": false, "odd": " 世界", "gone": null,
                    "plain": "x"}),
        );
        let sent: Vec<(String, String)> = sent
            .into_iter()
            .map(|(n, v)| (n.to_string(), v.to_str().unwrap().to_owned()))
            .collect();
        assert_eq!(
            sent,
            [
                ("mcp-param-n".into(), "42".into()),
                ("mcp-param-odd".into(), "=?base64?IOS4lueVjA==?=".into()),
                ("mcp-param-on".into(), "false".into()),
                ("mcp-param-region".into(), "us west 1".into()),
            ]
        );
    }

    #[test]
    fn text_that_is_no_plain_header_value_or_looks_encoded_is_base64() {
        for (text, sent) in [
            ("task-1", "task-1"),
            ("a b", "a b"),
            ("bad\nid", "=?base64?YmFkCmlk?="),
            (" padded", "=?base64?IHBhZGRlZA==?="),
            ("日本", "=?base64?5pel5pys?="),
            ("=?base64?SGk=?=", "=?base64?PT9iYXNlNjQ/U0drPT89?="),
            ("=?base64?", "=?base64?"),
        ] {
            assert_eq!(header_text(text), sent, "{text:?}");
        }
    }

    #[test]
    fn tools_with_invalid_marks_are_left_out() {
        let headers = ParamHeaders::default();
        let invalid = [
            json!({"a": {"type": "string", "x-mcp-header": ""}}),
            json!({"a": {"type": "object", "x-mcp-header": "A"}}),
            json!({"a": {"type": "number", "x-mcp-header": "A"}}),
            json!({"a": {"type": "string", "x-mcp-header": 7}}),
            json!({"a": {"type": "string", "x-mcp-header": "A b"}}),
            json!({"a": {"type": "string", "x-mcp-header": "A:b"}}),
            json!({"a": {"type": "string", "x-mcp-header": "Ä"}}),
            json!({"a": {"type": "string", "x-mcp-header": "A"},
                   "b": {"type": "string", "x-mcp-header": "a"}}),
        ];
        let mut tools: Vec<Value> = invalid.into_iter().map(|p| tool("bad", p)).collect();
        tools.push(tool(
            "good",
            json!({"a": {"type": "string", "x-mcp-header": "A"}}),
        ));
        let kept: Value =
            serde_json::from_str(&headers.learn(&listing(json!(tools))).unwrap()).unwrap();
        assert_eq!(kept["result"]["tools"].as_array().unwrap().len(), 1);
        assert_eq!(kept["result"]["tools"][0]["name"], "good");
    }
}
