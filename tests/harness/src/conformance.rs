//! Watches the traffic of a test and checks every engine-emitted message against the schema:
//! first as a `JSONRPCMessage`, then as the specific definition its method (or, for a
//! response, the method of the request it answers) calls for.
//!
//! Responses are typed by remembering each request in flight per direction. An augmented
//! request answered with `{"task":…}` is a `CreateTaskResult` (the 2025-11-25 schema leaves it
//! out of the result unions), and a later `tasks/result` for that task is checked against the
//! original method's result type too.

use std::collections::HashMap;

use serde_json::Value;

use crate::schema;

const RELATED_TASK: &str = "io.modelcontextprotocol/related-task";
const V2026_VERSION_KEY: &str = "io.modelcontextprotocol/protocolVersion";

/// The two ends of a connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Side {
    /// The client session (or a scripted client).
    Client,
    /// The server session (or a scripted server).
    Server,
}

impl Side {
    /// The other end.
    pub fn peer(self) -> Side {
        match self {
            Side::Client => Side::Server,
            Side::Server => Side::Client,
        }
    }
}

/// A request still waiting for its answer.
#[derive(Clone, Debug)]
struct Asked {
    method: Option<String>,
    augmented: bool,
    task_id: Option<String>,
    /// It carried the 2026-07-28 per-request `_meta`: its answer is checked against that
    /// era's schemas.
    v2026: bool,
}

/// Traffic seen so far, in both directions.
#[derive(Debug, Default)]
pub struct Conformance {
    /// Requests each side sent and that still await an answer, by id (as JSON text).
    pending: HashMap<(Side, String), Vec<Asked>>,
    /// The request method that created each task, keyed by the hosting side.
    task_methods: HashMap<(Side, String), String>,
}

/// A JSON-RPC id as a map key (`7` and `"7"` stay distinct).
fn id_key(id: &Value) -> Option<String> {
    (id.is_string() || id.is_i64() || id.is_u64()).then(|| id.to_string())
}

fn related_task(v: &Value) -> Option<&Value> {
    v.get("_meta")?.get(RELATED_TASK)
}

impl Conformance {
    /// Records a message `from` sent. With `strict`, it must also be schema-valid (every
    /// message an engine emits); scripted peer input is only recorded, as far as it parses.
    pub fn observe(&mut self, from: Side, line: &str, strict: bool) {
        let parsed = serde_json::from_str::<Value>(line);
        if !strict {
            if let Some(v) = parsed.ok().or_else(|| loose_envelope(line)) {
                self.track(from, &v);
            }
            return;
        }
        let fail =
            |why: String| panic!("{from:?} emitted an invalid message: {why}\n  line: {line}");
        if line.contains('\n') {
            fail("it contains a newline".into());
        }
        let v = parsed.unwrap_or_else(|e| fail(format!("not JSON ({e})")));
        if let Err(e) = schema::check("JSONRPCMessage", &v) {
            fail(e);
        }
        // The schema lets a notification carry any extra key; JSON-RPC does not allow a null id.
        if v.get("id").is_some_and(|id| id_key(id).is_none()) {
            fail("its id is neither a string nor an integer".into());
        }
        if let Err(e) = self.check_typed(from, &v) {
            fail(e);
        }
    }

    /// Remembers requests and forgets answered ones, without judging anything.
    fn track(&mut self, from: Side, v: &Value) {
        let Some(id) = v.get("id").and_then(id_key) else {
            return;
        };
        let answer = v.get("result").is_some() || v.get("error").is_some();
        if v.get("method").is_some() || !answer {
            self.pending.entry((from, id)).or_default().push(asked(v));
        } else {
            self.take(from.peer(), &id, v.get("error").is_some());
        }
    }

    fn take(&mut self, asker: Side, id: &str, error: bool) -> Option<Asked> {
        let key = (asker, id.to_owned());
        let list = self.pending.get_mut(&key)?;
        // A duplicate id is refused at once with an error; the original is answered later.
        let asked = if error {
            list.pop()
        } else {
            Some(list.remove(0))
        };
        if list.is_empty() {
            self.pending.remove(&key);
        }
        asked
    }

    fn check_typed(&mut self, from: Side, v: &Value) -> Result<(), String> {
        if let Some(method) = v.get("method").and_then(Value::as_str) {
            let v2026 = match v.get("id") {
                Some(_) if is_v2026(v) => schema::v2026_request_definition(method),
                None => schema::v2026_notification_definition(method),
                Some(_) => None,
            };
            if let Some((file, definition)) = v2026 {
                schema::check_in(file, definition, v)?;
                self.track(from, v);
                return Ok(());
            }
            let definition = match v.get("id") {
                Some(_) => schema::request_definition(method),
                None => schema::notification_definition(method),
            };
            if let Some(definition) = definition {
                schema::check(definition, v)?;
            }
            if method == "notifications/tasks/status" && related_task(&v["params"]).is_some() {
                return Err("a status notification carries related-task _meta".into());
            }
            self.track(from, v);
            return Ok(());
        }
        let Some(id) = v.get("id").and_then(id_key) else {
            return Ok(()); // an error about unreadable input
        };
        if let Some(error) = v.get("error") {
            let asked = self
                .take(from.peer(), &id, true)
                .ok_or_else(|| format!("error response to id {id}, which was never asked"))?;
            return match asked.v2026 {
                true => schema::check_in(schema::CORE_2026, "Error", error),
                false => schema::check("Error", error),
            };
        }
        let asked = self
            .take(from.peer(), &id, false)
            .ok_or_else(|| format!("response to id {id}, which was never asked"))?;
        if asked.v2026 {
            let method = asked.method.as_deref().unwrap_or_default();
            return match schema::v2026_result_definition(method, &v["result"]) {
                Some((file, definition)) => schema::check_in(file, definition, &v["result"]),
                None => Ok(()),
            };
        }
        self.check_result(from, &asked, &v["result"])
    }

    fn check_result(&mut self, from: Side, asked: &Asked, result: &Value) -> Result<(), String> {
        let Some(method) = asked.method.as_deref() else {
            return Err("a result answers a request that had no method".into());
        };
        if asked.augmented && result.get("task").is_some() {
            schema::check("CreateTaskResult", result)?;
            let task = result["task"]["taskId"].as_str().unwrap_or_default();
            self.task_methods
                .insert((from, task.to_owned()), method.to_owned());
            return Ok(());
        }
        if let Some(definition) = schema::result_definition(method) {
            schema::check(definition, result)?;
        }
        match method {
            "tasks/get" | "tasks/cancel" | "tasks/list" if related_task(result).is_some() => {
                Err(format!("a {method} result carries related-task _meta"))
            }
            "tasks/result" => {
                let task = asked.task_id.as_deref().unwrap_or_default();
                let tag = related_task(result).and_then(|t| t.get("taskId"));
                if tag.and_then(Value::as_str) != Some(task) {
                    return Err(format!(
                        "tasks/result for {task:?} lacks related-task _meta naming it"
                    ));
                }
                match self.task_methods.get(&(from, task.to_owned())) {
                    Some(original) => match schema::result_definition(original) {
                        Some(definition) => schema::check(definition, result),
                        None => Ok(()),
                    },
                    None => Ok(()),
                }
            }
            _ => Ok(()),
        }
    }
}

/// The envelope of a line whose body does not parse as a `Value` (e.g. a lone surrogate
/// escape in a string), read the way the engine reads it: members kept as raw text.
fn loose_envelope(line: &str) -> Option<Value> {
    #[derive(serde::Deserialize)]
    struct Loose<'a> {
        id: Option<Value>,
        #[serde(borrow)]
        method: Option<&'a serde_json::value::RawValue>,
        #[serde(borrow)]
        result: Option<&'a serde_json::value::RawValue>,
        #[serde(borrow)]
        error: Option<&'a serde_json::value::RawValue>,
    }
    let loose: Loose<'_> = serde_json::from_str(line).ok()?;
    let mut v = serde_json::json!({ "id": loose.id? });
    for (key, member) in [
        ("method", loose.method),
        ("result", loose.result),
        ("error", loose.error),
    ] {
        if let Some(raw) = member {
            v[key] = serde_json::from_str(raw.get()).unwrap_or(Value::Null);
        }
    }
    Some(v)
}

fn asked(v: &Value) -> Asked {
    let params = v.get("params");
    Asked {
        method: v.get("method").and_then(Value::as_str).map(str::to_owned),
        augmented: params
            .and_then(|p| p.get("task"))
            .is_some_and(Value::is_object),
        task_id: params
            .and_then(|p| p.get("taskId"))
            .and_then(Value::as_str)
            .map(str::to_owned),
        v2026: is_v2026(v),
    }
}

/// A request of 2026-07-28: its params carry the per-request protocol version.
fn is_v2026(v: &Value) -> bool {
    v.get("params")
        .and_then(|p| p.get("_meta"))
        .and_then(|m| m.get(V2026_VERSION_KEY))
        .is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn observed(lines: &[(Side, &str)]) -> Result<(), String> {
        let mut c = Conformance::default();
        let lines: Vec<(Side, String)> = lines.iter().map(|(s, l)| (*s, l.to_string())).collect();
        std::panic::catch_unwind(move || {
            for (side, line) in &lines {
                c.observe(*side, line, true);
            }
        })
        .map_err(|e| {
            e.downcast_ref::<String>()
                .cloned()
                .unwrap_or_else(|| "panic".into())
        })
    }

    const TASK: &str = r#""taskId":"t1","status":"working","createdAt":"2026-01-15T09:00:00Z","lastUpdatedAt":"2026-01-15T09:00:00Z","ttl":null"#;

    #[test]
    fn types_responses_by_the_request_they_answer() {
        let call =
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","task":{}}}"#;
        let created = format!(r#"{{"jsonrpc":"2.0","id":1,"result":{{"task":{{{TASK}}}}}}}"#);
        assert!(observed(&[(Side::Client, call), (Side::Server, &created)]).is_ok());
        // The same answer to a plain call is not a CallToolResult.
        let plain = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}"#;
        let err = observed(&[(Side::Client, plain), (Side::Server, &created)]).unwrap_err();
        assert!(err.contains("CallToolResult"), "{err}");
    }

    #[test]
    fn tasks_result_needs_related_task_and_the_original_type() {
        let call =
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","task":{}}}"#;
        let created = format!(r#"{{"jsonrpc":"2.0","id":1,"result":{{"task":{{{TASK}}}}}}}"#);
        let fetch = r#"{"jsonrpc":"2.0","id":2,"method":"tasks/result","params":{"taskId":"t1"}}"#;
        let untagged = r#"{"jsonrpc":"2.0","id":2,"result":{"content":[]}}"#;
        let wrong_type = r#"{"jsonrpc":"2.0","id":2,"result":{"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"t1"}}}}"#;
        let good = r#"{"jsonrpc":"2.0","id":2,"result":{"content":[],"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"t1"}}}}"#;
        let run = |answer: &str| {
            observed(&[
                (Side::Client, call),
                (Side::Server, &created),
                (Side::Client, fetch),
                (Side::Server, answer),
            ])
        };
        assert!(run(untagged).unwrap_err().contains("related-task"));
        assert!(run(wrong_type).unwrap_err().contains("CallToolResult"));
        assert!(run(good).is_ok());
    }

    #[test]
    fn rejects_unasked_answers_and_bad_envelopes() {
        let stray = r#"{"jsonrpc":"2.0","id":9,"result":{}}"#;
        assert!(observed(&[(Side::Server, stray)])
            .unwrap_err()
            .contains("never asked"));
        let no_version = r#"{"id":1,"method":"ping"}"#;
        assert!(observed(&[(Side::Client, no_version)]).is_err());
        let null_id = r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#;
        assert!(observed(&[(Side::Client, null_id)])
            .unwrap_err()
            .contains("id"));
        let two_lines = "{\"jsonrpc\":\"2.0\",\n\"method\":\"x\"}";
        assert!(observed(&[(Side::Client, two_lines)])
            .unwrap_err()
            .contains("newline"));
    }
}
