//! A tool's arguments from the command line: `--args '{…}'`, then each `--arg NAME=VALUE`
//! typed by the tool's input schema.

use serde_json::{Map, Value};

/// The arguments object: `json` (an object) with each of `pairs` on top, typed by `schema`
/// (the tool's `inputSchema`). `Err` says which argument is wrong and why.
pub fn build(json: Option<&str>, pairs: &[String], schema: &Value) -> Result<Value, String> {
    let mut arguments = match json {
        None => Map::new(),
        Some(text) => match serde_json::from_str(text) {
            Ok(Value::Object(map)) => map,
            Ok(other) => return Err(format!("--args must be a JSON object, not {other}")),
            Err(e) => return Err(format!("--args is not JSON: {e}")),
        },
    };
    for pair in pairs {
        let (name, text) = pair
            .split_once('=')
            .ok_or_else(|| format!("--arg {pair:?} is not NAME=VALUE"))?;
        let property = &schema["properties"][name];
        let value = typed(text, property).map_err(|why| format!("--arg {name}: {why}"))?;
        arguments.insert(name.to_owned(), value);
    }
    Ok(Value::Object(arguments))
}

/// `text` as the type `property` says; without a type it is JSON when it reads as JSON (a
/// number, `true`, an array…), else a string.
fn typed(text: &str, property: &Value) -> Result<Value, String> {
    let kind = match &property["type"] {
        Value::String(kind) => Some(kind.as_str()),
        // `["string", "null"]` and the like: the first that is not null.
        Value::Array(kinds) => kinds
            .iter()
            .filter_map(Value::as_str)
            .find(|k| *k != "null"),
        _ => None,
    };
    match kind {
        Some("string") => Ok(Value::String(text.to_owned())),
        Some("integer") => text
            .parse::<i64>()
            .map(Value::from)
            .map_err(|_| format!("{text:?} is not an integer")),
        Some("number") => text
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
            .map(Value::Number)
            .ok_or_else(|| format!("{text:?} is not a number")),
        Some("boolean") => match text {
            "true" => Ok(Value::Bool(true)),
            "false" => Ok(Value::Bool(false)),
            _ => Err(format!("{text:?} is not true or false")),
        },
        Some(kind @ ("array" | "object")) => {
            serde_json::from_str(text).map_err(|e| format!("{kind} expected as JSON: {e}"))
        }
        _ => Ok(serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_owned()))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn arguments_are_typed_by_the_schema() {
        let schema = json!({ "properties": {
            "name": { "type": "string" }, "n": { "type": "integer" },
            "ratio": { "type": "number" }, "go": { "type": "boolean" },
            "tags": { "type": "array" }, "maybe": { "type": ["integer", "null"] }
        }});
        let pairs: Vec<String> = [
            "name=42",
            "n=3",
            "ratio=0.5",
            "go=true",
            "tags=[\"a\"]",
            "maybe=7",
            "free=1",
            "other=hi",
        ]
        .map(String::from)
        .into();
        let built = build(Some(r#"{"name": "x", "kept": 1}"#), &pairs, &schema).unwrap();
        assert_eq!(
            built,
            json!({ "name": "42", "kept": 1, "n": 3, "ratio": 0.5, "go": true, "tags": ["a"],
                    "maybe": 7, "free": 1, "other": "hi" })
        );
    }

    #[test]
    fn bad_arguments_say_what_is_wrong() {
        let schema = json!({ "properties": { "n": { "type": "integer" },
                                             "go": { "type": "boolean" } } });
        for (json, pair, says) in [
            (None, "n", r#"--arg "n" is not NAME=VALUE"#),
            (None, "n=x", r#"--arg n: "x" is not an integer"#),
            (None, "go=yes", r#"--arg go: "yes" is not true or false"#),
            (Some("[1]"), "n=1", "--args must be a JSON object, not [1]"),
            (Some("{"), "n=1", "--args is not JSON"),
        ] {
            let error = build(json, &[pair.to_owned()], &schema).unwrap_err();
            assert!(error.starts_with(says), "{error}");
        }
    }
}
