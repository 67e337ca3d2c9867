//! Elicitation forms: the restricted JSON Schema of `elicitation/create` (a flat object whose
//! fields are strings, numbers, integers, booleans, or enums of strings, single or multiple)
//! and the answers that fit one. The client checks its answer against the server's form; the
//! server (feature `schemars`) makes a form from a Rust type and checks the answer it gets.

use serde_json::{Map, Value};

/// Whether `fields` fit the form `schema`: every required field given, no field the form
/// lacks, each of the type its property names, within its enum and bounds. What this does
/// not read (an unknown type, a keyword it does not know) passes: the check is lenient where
/// the server may know better. `Err` says which field is wrong and why.
pub(crate) fn check(schema: &Value, fields: &Map<String, Value>) -> Result<(), String> {
    let properties = schema.get("properties").and_then(Value::as_object);
    let required = schema.get("required").and_then(Value::as_array);
    for name in required.into_iter().flatten().filter_map(Value::as_str) {
        if fields.get(name).is_none_or(Value::is_null) {
            return Err(format!("the required field {name:?} is missing"));
        }
    }
    let Some(properties) = properties else {
        return Ok(());
    };
    for (name, value) in fields {
        let property = properties
            .get(name)
            .ok_or_else(|| format!("the form has no field {name:?}"))?;
        check_field(property, value).map_err(|why| format!("the field {name:?} {why}"))?;
    }
    Ok(())
}

/// One field's value against its property schema.
fn check_field(property: &Value, value: &Value) -> Result<(), String> {
    let number = |key: &str| property.get(key).and_then(Value::as_f64);
    match property.get("type").and_then(Value::as_str) {
        Some("string") => {
            let text = value.as_str().ok_or_else(|| is_not("a string", value))?;
            if !allowed(property).is_none_or(|options| options.contains(&text)) {
                return Err(format!("is {text:?}, not one of the form's options"));
            }
            let length = text.chars().count() as f64;
            within(
                length,
                number("minLength"),
                number("maxLength"),
                "characters long",
            )
        }
        Some("number") => {
            let n = value.as_f64().ok_or_else(|| is_not("a number", value))?;
            within(n, number("minimum"), number("maximum"), "")
        }
        Some("integer") => {
            let n = value
                .as_f64()
                .filter(|n| n.fract() == 0.0)
                .ok_or_else(|| is_not("an integer", value))?;
            within(n, number("minimum"), number("maximum"), "")
        }
        Some("boolean") => value
            .as_bool()
            .map(|_| ())
            .ok_or_else(|| is_not("a boolean", value)),
        Some("array") => {
            let items = value.as_array().ok_or_else(|| is_not("an array", value))?;
            let options = property.get("items").and_then(allowed);
            for item in items {
                let text = item
                    .as_str()
                    .ok_or_else(|| is_not("an array of strings", value))?;
                if !options.as_ref().is_none_or(|o| o.contains(&text)) {
                    return Err(format!("holds {text:?}, not one of the form's options"));
                }
            }
            let count = items.len() as f64;
            within(count, number("minItems"), number("maxItems"), "items long")
        }
        _ => Ok(()),
    }
}

/// The values an enum property allows (`enum`, or the `const` of each `oneOf` / `anyOf`
/// entry), if it is one.
fn allowed(property: &Value) -> Option<Vec<&str>> {
    if let Some(options) = property.get("enum").and_then(Value::as_array) {
        return Some(options.iter().filter_map(Value::as_str).collect());
    }
    let entries = ["oneOf", "anyOf"]
        .iter()
        .find_map(|key| property.get(key).and_then(Value::as_array))?;
    Some(
        entries
            .iter()
            .filter_map(|e| e.get("const")?.as_str())
            .collect(),
    )
}

fn within(n: f64, min: Option<f64>, max: Option<f64>, unit: &str) -> Result<(), String> {
    let unit = if unit.is_empty() {
        String::new()
    } else {
        format!(" {unit}")
    };
    if let Some(min) = min.filter(|min| n < *min) {
        return Err(format!("is {n}{unit}, less than the form's minimum {min}"));
    }
    if let Some(max) = max.filter(|max| n > *max) {
        return Err(format!("is {n}{unit}, more than the form's maximum {max}"));
    }
    Ok(())
}

fn is_not(kind: &str, value: &Value) -> String {
    format!("must be {kind}, not {value}")
}

/// The form for `T` (feature `schemars`): `T`'s JSON Schema, each field narrowed to what a
/// form may hold (`type`, `title`, `description`, `default`, `enum`, bounds, a string's
/// `format`); an `Option` field is not required. `Err` names a field a form cannot hold (a
/// nested type, a list of anything but enum values, a map).
#[cfg(feature = "schemars")]
pub(crate) fn schema_of<T: schemars::JsonSchema>() -> Result<Value, String> {
    let schema = crate::schema_for::<T>();
    if schema.get("type").and_then(Value::as_str) != Some("object") {
        return Err(format!(
            "{} is not a struct of fields: a form is an object",
            T::schema_name()
        ));
    }
    let mut properties = Map::new();
    for (name, property) in schema["properties"].as_object().into_iter().flatten() {
        let field =
            form_field(&schema, property).map_err(|why| format!("the field {name:?} {why}"))?;
        properties.insert(name.clone(), field);
    }
    let mut form = Map::new();
    form.insert("type".into(), "object".into());
    form.insert("properties".into(), Value::Object(properties));
    if let Some(required) = schema
        .get("required")
        .filter(|r| r.as_array().is_some_and(|r| !r.is_empty()))
    {
        form.insert("required".into(), required.clone());
    }
    Ok(Value::Object(form))
}

/// A property of the type's schema `root` as a form field.
#[cfg(feature = "schemars")]
fn form_field(root: &Value, property: &Value) -> Result<Value, String> {
    /// What a form field keeps of its schema, besides `type`.
    const KEPT: [&str; 9] = [
        "title",
        "description",
        "default",
        "minimum",
        "maximum",
        "minLength",
        "maxLength",
        "minItems",
        "maxItems",
    ];
    const STRING_FORMATS: [&str; 4] = ["email", "uri", "date", "date-time"];
    let nested = || {
        "is a nested type: a form's fields are strings, numbers, integers, booleans or enums"
            .to_owned()
    };
    // A named type (an enum of strings, for a form) is a reference to its definition: the
    // definition, with what the property says beside the reference.
    let resolved;
    let property = match property.get("$ref").and_then(Value::as_str) {
        Some(reference) => {
            let name = reference.strip_prefix("#/$defs/").ok_or_else(nested)?;
            let mut definition = root["$defs"][name]
                .as_object()
                .cloned()
                .ok_or_else(nested)?;
            for (key, value) in property.as_object().into_iter().flatten() {
                if key != "$ref" {
                    definition.insert(key.clone(), value.clone());
                }
            }
            resolved = Value::Object(definition);
            &resolved
        }
        None => property,
    };
    if allowed(property).is_none()
        && ["allOf", "oneOf", "anyOf", "properties"]
            .iter()
            .any(|k| property.get(k).is_some())
    {
        return Err(nested());
    }
    // `Option<T>` is `"type": ["T", "null"]`.
    let kind = match property.get("type") {
        Some(Value::String(kind)) => kind.as_str(),
        Some(Value::Array(kinds)) => {
            match kinds.iter().filter(|k| *k != "null").collect::<Vec<_>>()[..] {
                [Value::String(kind)] => kind.as_str(),
                _ => {
                    return Err(format!(
                        "has several types ({property}): a form field has one"
                    ))
                }
            }
        }
        _ if allowed(property).is_some() => "string",
        _ => return Err(format!("has no type a form can hold ({property})")),
    };
    let mut field = Map::new();
    match kind {
        "string" | "number" | "integer" | "boolean" => {}
        "array" => {
            let items = property.get("items").ok_or("is a list of anything")?;
            if allowed(items).is_none() {
                return Err(
                    "is a list of something other than enum values: a form's lists \
                            are multiple choices"
                        .into(),
                );
            }
            field.insert("items".into(), items.clone());
        }
        other => {
            return Err(format!(
                "is {other}: a form's fields are strings, numbers, integers, booleans or enums"
            ))
        }
    }
    field.insert("type".into(), kind.into());
    if let (true, Some(options)) = (kind == "string", allowed(property)) {
        field.insert("enum".into(), options.into());
    }
    for key in KEPT {
        if let Some(value) = property.get(key) {
            field.insert(key.into(), value.clone());
        }
    }
    if let Some(format) = property
        .get("format")
        .filter(|f| f.as_str().is_some_and(|f| STRING_FORMATS.contains(&f)))
    {
        field.insert("format".into(), format.clone());
    }
    Ok(Value::Object(field))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn fields(value: Value) -> Map<String, Value> {
        value.as_object().unwrap().clone()
    }

    #[test]
    fn answers_are_checked_against_the_form() {
        let form = json!({
            "type": "object",
            "required": ["name", "size"],
            "properties": {
                "name": { "type": "string", "minLength": 2, "maxLength": 5 },
                "size": { "type": "string", "enum": ["s", "m"] },
                "count": { "type": "integer", "minimum": 1, "maximum": 3 },
                "ratio": { "type": "number" },
                "ok": { "type": "boolean" },
                "color": { "type": "string", "oneOf": [{ "const": "red", "title": "Red" }] },
                "tags": { "type": "array", "items": { "enum": ["a", "b"] }, "maxItems": 2 },
                "later": { "type": "date-ish" }
            }
        });
        let good = json!({ "name": "ann", "size": "m", "count": 2, "ratio": 0.5, "ok": true,
                           "color": "red", "tags": ["a"], "later": [1] });
        assert_eq!(check(&form, &fields(good)), Ok(()));
        for (answer, says) in [
            (
                json!({ "name": "ann" }),
                r#"the required field "size" is missing"#,
            ),
            (
                json!({ "name": "ann", "size": null }),
                r#"the required field "size" is missing"#,
            ),
            (
                json!({ "name": "ann", "size": "m", "extra": 1 }),
                r#"the form has no field "extra""#,
            ),
            (
                json!({ "name": 5, "size": "m" }),
                r#"the field "name" must be a string, not 5"#,
            ),
            (
                json!({ "name": "a", "size": "m" }),
                "is 1 characters long, less than the form's minimum 2",
            ),
            (
                json!({ "name": "ann", "size": "xl" }),
                r#"is "xl", not one of the form's options"#,
            ),
            (
                json!({ "name": "ann", "size": "m", "count": 1.5 }),
                "must be an integer, not 1.5",
            ),
            (
                json!({ "name": "ann", "size": "m", "count": 4 }),
                "is 4, more than the form's maximum 3",
            ),
            (
                json!({ "name": "ann", "size": "m", "ok": "yes" }),
                r#"must be a boolean, not "yes""#,
            ),
            (
                json!({ "name": "ann", "size": "m", "color": "blue" }),
                r#"is "blue", not one"#,
            ),
            (
                json!({ "name": "ann", "size": "m", "tags": ["c"] }),
                r#"holds "c", not one"#,
            ),
            (
                json!({ "name": "ann", "size": "m", "tags": ["a", "b", "a"] }),
                "3 items long, more",
            ),
        ] {
            let why = check(&form, &fields(answer.clone())).expect_err(&answer.to_string());
            assert!(why.contains(says), "{answer}: {why}");
        }
        // A form without properties checks only what it requires.
        assert_eq!(check(&json!({}), &fields(json!({ "any": 1 }))), Ok(()));
    }

    #[cfg(feature = "schemars")]
    #[test]
    fn a_struct_becomes_a_form_and_a_nested_one_does_not() {
        #[derive(schemars::JsonSchema)]
        #[allow(dead_code)]
        enum Size {
            #[serde(rename = "s")]
            Small,
            #[serde(rename = "m")]
            Medium,
        }
        /// An order.
        #[derive(schemars::JsonSchema)]
        #[allow(dead_code)]
        struct Order {
            /// Who orders.
            name: String,
            size: Size,
            count: Option<u8>,
            gift: bool,
        }
        let form = schema_of::<Order>().unwrap();
        assert_eq!(form["type"], "object");
        assert_eq!(form["required"], json!(["name", "size", "gift"]));
        assert_eq!(
            form["properties"]["name"],
            json!({ "type": "string", "description": "Who orders." })
        );
        assert_eq!(
            form["properties"]["size"],
            json!({ "type": "string", "enum": ["s", "m"] })
        );
        assert_eq!(form["properties"]["count"]["type"], "integer");
        assert_eq!(form["properties"]["gift"], json!({ "type": "boolean" }));
        let answer = fields(json!({ "name": "ann", "size": "s", "count": 2, "gift": false }));
        assert_eq!(check(&form, &answer), Ok(()));

        #[derive(schemars::JsonSchema)]
        #[allow(dead_code)]
        struct Nested {
            order: Order,
        }
        let why = schema_of::<Nested>().unwrap_err();
        assert!(
            why.starts_with(r#"the field "order" is a nested type"#),
            "{why}"
        );
        #[derive(schemars::JsonSchema)]
        #[allow(dead_code)]
        struct Listed {
            names: Vec<String>,
        }
        let why = schema_of::<Listed>().unwrap_err();
        assert!(
            why.contains("a list of something other than enum values"),
            "{why}"
        );
    }
}
