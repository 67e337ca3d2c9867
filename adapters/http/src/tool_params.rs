//! `Mcp-Param-*` headers (2026-07-28, SEP-2243): a tool's input schema may mark a string,
//! integer or boolean property, at any depth under `properties`, with
//! `"x-mcp-header": "Name"`; a call of the tool then carries that argument in
//! `Mcp-Param-Name` too, for intermediaries to route on. The client writes them
//! ([`Mark::argument`], [`crate::header_value::encode`]); a server that reads the body checks
//! each against the arguments, decoded ([`check`]): a marked argument with a value needs its
//! header, the header must say that value (integers compare as numbers), and a header whose
//! argument is absent or null is refused as well, since nothing backs what an intermediary
//! read.

use axum::http::{HeaderMap, HeaderName};
use serde_json::Value;

use crate::header_value::decode;

/// One marked property: where its value sits in the arguments, and its header.
#[derive(Debug, PartialEq)]
pub(crate) struct Mark {
    path: Vec<String>,
    header: HeaderName,
    /// `Mcp-Param-{x-mcp-header}`, as the schema spells it, for messages.
    shown: String,
}

impl Mark {
    /// The header it is carried in.
    pub fn header(&self) -> &HeaderName {
        &self.header
    }

    /// Its argument in `arguments`, unless absent or null (which has no header).
    pub fn argument<'a>(&self, arguments: &'a Value) -> Option<&'a Value> {
        self.path
            .iter()
            .try_fold(arguments, |at, key| at.get(key))
            .filter(|v| !v.is_null())
    }
}

/// The marks of an input schema, at any depth, or why they are invalid (a name that is no
/// HTTP token, one on a property that is no string, integer or boolean, two names equal but
/// for case): a client leaves such a tool out of its listing, since calling it could only
/// fail, and a server checks no header of it.
pub(crate) fn marks(input_schema: &Value) -> Result<Vec<Mark>, &'static str> {
    let mut marks = Vec::new();
    collect(input_schema, &mut Vec::new(), &mut marks)?;
    Ok(marks)
}

fn collect(
    schema: &Value,
    path: &mut Vec<String>,
    marks: &mut Vec<Mark>,
) -> Result<(), &'static str> {
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return Ok(());
    };
    for (key, property) in properties {
        path.push(key.clone());
        if let Some(name) = property.get("x-mcp-header") {
            let mark = mark(name, property, path)?;
            if marks.iter().any(|m| m.header == mark.header) {
                return Err("x-mcp-header repeats another (header names ignore case)");
            }
            marks.push(mark);
        }
        collect(property, path, marks)?;
        path.pop();
    }
    Ok(())
}

fn mark(name: &Value, property: &Value, path: &[String]) -> Result<Mark, &'static str> {
    let name = name.as_str().ok_or("x-mcp-header is not a string")?;
    if name.is_empty() {
        return Err("x-mcp-header is empty");
    }
    if !name.bytes().all(is_token_byte) {
        return Err("x-mcp-header is not an HTTP token");
    }
    if !matches!(
        property.get("type").and_then(Value::as_str),
        Some("string" | "integer" | "boolean")
    ) {
        return Err("x-mcp-header marks a property that is no string, integer or boolean");
    }
    let shown = format!("Mcp-Param-{name}");
    let header = HeaderName::from_bytes(shown.as_bytes())
        .map_err(|_| "x-mcp-header is not an HTTP token")?;
    Ok(Mark {
        path: path.to_vec(),
        header,
        shown,
    })
}

/// RFC 9110 `tchar`.
fn is_token_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// Each mark's header against `arguments`; `Err` says the first that does not agree.
pub(crate) fn check(headers: &HeaderMap, marks: &[Mark], arguments: &Value) -> Result<(), String> {
    for mark in marks {
        let value = mark.argument(arguments);
        let argument = mark.path.join(".");
        let shown = &mark.shown;
        match (headers.get(&mark.header), value) {
            (None, None) => {}
            (None, Some(_)) => {
                return Err(format!(
                    "the {shown} header is missing for argument {argument:?}"
                ))
            }
            (Some(_), None) => {
                return Err(format!(
                    "{shown} is given but argument {argument:?} has no value"
                ))
            }
            (Some(header), Some(value)) => {
                let said = decode(header).map_err(|why| format!("{shown} is refused: {why}"))?;
                if !says(&said, value) {
                    return Err(format!(
                        "{shown} is {said:?} but argument {argument:?} is {value}"
                    ));
                }
            }
        }
    }
    Ok(())
}

/// Whether header text `said` is the argument `value`: a string as is, a boolean as `true`
/// or `false`, a number by its value (`42.0` is `42`).
fn says(said: &str, value: &Value) -> bool {
    match value {
        Value::String(s) => said == s,
        Value::Bool(b) => said == if *b { "true" } else { "false" },
        Value::Number(n) => said
            .parse::<f64>()
            .ok()
            .zip(n.as_f64())
            .is_some_and(|(a, b)| a == b),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;
    use serde_json::json;

    fn schema() -> Value {
        json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "n": {"type": "integer", "x-mcp-header": "N"},
            "on": {"type": "boolean", "x-mcp-header": "On"},
            "ratio": {"type": "number"},
            "plain": {"type": "string"},
            "where": {"type": "object", "properties": {
                "zone": {"type": "string", "x-mcp-header": "Zone"}}}
        }})
    }

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for (name, value) in pairs {
            headers.insert(*name, HeaderValue::from_str(value).expect("a value"));
        }
        headers
    }

    #[test]
    fn marks_at_any_depth_are_read_and_invalid_ones_refused() {
        let marks = marks(&schema()).expect("valid marks");
        let mut shown: Vec<String> = marks.into_iter().map(|m| m.shown).collect();
        shown.sort();
        assert_eq!(
            shown,
            [
                "Mcp-Param-N",
                "Mcp-Param-On",
                "Mcp-Param-Region",
                "Mcp-Param-Zone"
            ]
        );
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
            json!({"a": {"type": "string", "x-mcp-header": "A"},
                   "b": {"type": "object", "properties": {
                       "c": {"type": "string", "x-mcp-header": "a"}}}}),
        ];
        for properties in invalid {
            let schema = json!({"type": "object", "properties": properties});
            assert!(super::marks(&schema).is_err(), "{schema}");
        }
    }

    #[test]
    fn headers_must_say_the_arguments_decoded() {
        let marks = marks(&schema()).expect("valid marks");
        let arguments = json!({"region": "us west", "n": 42, "on": false,
            "where": {"zone": "b"}, "plain": "x", "ratio": 0.5});
        let all = [
            ("mcp-param-region", "=?base64?dXMgd2VzdA==?="),
            ("mcp-param-n", "42.0"),
            ("mcp-param-on", "false"),
            ("mcp-param-zone", "b"),
        ];
        assert_eq!(check(&headers(&all), &marks, &arguments), Ok(()));
        // A null or missing argument needs no header.
        let none = json!({"region": null});
        assert_eq!(check(&headers(&[]), &marks, &none), Ok(()));
        let refused = [
            // A header missing, one saying another value, one without a value behind it.
            (&all[1..], &arguments, "Mcp-Param-Region header is missing"),
            (
                &[("mcp-param-region", "us-east")][..],
                &none,
                "has no value",
            ),
        ];
        for (sent, arguments, says) in refused {
            let why = check(&headers(sent), &marks, arguments).expect_err("refused");
            assert!(why.contains(says), "{why}");
        }
        let mut wrong = all;
        wrong[1] = ("mcp-param-n", "41");
        let why = check(&headers(&wrong), &marks, &arguments).expect_err("refused");
        assert!(why.contains("Mcp-Param-N is \"41\""), "{why}");
        wrong[1] = ("mcp-param-n", "42");
        wrong[0] = ("mcp-param-region", "=?base64?dXMgd2VzdA?=");
        let why = check(&headers(&wrong), &marks, &arguments).expect_err("refused");
        assert!(why.contains("does not decode"), "{why}");
    }
}
