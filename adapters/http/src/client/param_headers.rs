//! Tool parameters mirrored into headers (2026-07-28, SEP-2243): each `tools/call` of a tool
//! whose input schema marks properties `x-mcp-header` carries those arguments in
//! `Mcp-Param-*` headers too, so that a gateway can route on them without reading the body
//! (the marks: [`crate::tool_params`]). A tool whose marks are invalid is left out of the
//! listing the application sees: calling it could only fail.

use std::collections::HashMap;
use std::sync::Mutex;

use axum::http::{HeaderName, HeaderValue};
use serde_json::Value;

use crate::header_value::encode;
use crate::tool_params::{marks, Mark};

/// The marked parameters of every listed tool, by tool name.
#[derive(Debug, Default)]
pub(super) struct ParamHeaders {
    tools: Mutex<HashMap<String, Vec<Mark>>>,
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
            .filter_map(|mark| {
                let value = header_value(mark.argument(arguments)?)?;
                Some((mark.header().clone(), HeaderValue::from_str(&value).ok()?))
            })
            .collect()
    }
}

/// A primitive argument as a header value: integers and booleans as JSON writes them, a
/// string as [`encode`] writes it.
fn header_value(value: &Value) -> Option<String> {
    match value {
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        Value::String(s) => Some(encode(s)),
        _ => None,
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
    fn marked_arguments_become_headers_encoded_by_kind_at_any_depth() {
        let headers = ParamHeaders::default();
        let marked = tool(
            "t",
            json!({
                "region": {"type": "string", "x-mcp-header": "Region"},
                "n": {"type": "integer", "x-mcp-header": "N"},
                "on": {"type": "boolean", "x-mcp-header": "On"},
                "odd": {"type": "string", "x-mcp-header": "Odd"},
                "gone": {"type": "string", "x-mcp-header": "Gone"},
                "plain": {"type": "string"},
                "where": {"type": "object", "properties": {
                    "zone": {"type": "string", "x-mcp-header": "Zone"}}}
            }),
        );
        assert_eq!(headers.learn(&listing(json!([marked]))), None);
        let sent = headers.for_call(
            "t",
            &json!({"region": "us west 1", "n": 42, "on": false, "odd": " 世界", "gone": null,
                    "plain": "x", "where": {"zone": "b"}}),
        );
        let mut sent: Vec<(String, String)> = sent
            .into_iter()
            .map(|(n, v)| (n.to_string(), v.to_str().unwrap().to_owned()))
            .collect();
        sent.sort();
        assert_eq!(
            sent,
            [
                ("mcp-param-n".into(), "42".into()),
                ("mcp-param-odd".into(), "=?base64?IOS4lueVjA==?=".into()),
                ("mcp-param-on".into(), "false".into()),
                ("mcp-param-region".into(), "us west 1".into()),
                ("mcp-param-zone".into(), "b".into()),
            ]
        );
    }

    #[test]
    fn tools_with_invalid_marks_are_left_out() {
        let headers = ParamHeaders::default();
        let tools = json!([
            tool("bad", json!({"a": {"type": "number", "x-mcp-header": "A"}})),
            tool(
                "good",
                json!({"a": {"type": "string", "x-mcp-header": "A"}})
            ),
        ]);
        let kept: Value = serde_json::from_str(&headers.learn(&listing(tools)).unwrap()).unwrap();
        assert_eq!(kept["result"]["tools"].as_array().unwrap().len(), 1);
        assert_eq!(kept["result"]["tools"][0]["name"], "good");
    }
}
