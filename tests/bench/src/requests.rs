//! The request lines the load driver writes: compact JSON-RPC, one per line, built before the
//! clock starts where the content is known in advance.

/// The protocol version asked for in `initialize` (every server here answers with it).
pub const PROTOCOL_VERSION: &str = "2025-11-25";
/// The retention asked for every task (10 minutes).
pub const TASK_TTL_MS: u64 = 600_000;
/// `notifications/initialized`.
pub const INITIALIZED: &str = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n";

/// `initialize` with no client capabilities.
pub fn initialize(id: u64) -> String {
    format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"initialize\",\"params\":{{\
         \"protocolVersion\":\"{PROTOCOL_VERSION}\",\"capabilities\":{{}},\
         \"clientInfo\":{{\"name\":\"taskwire-bench\",\"version\":\"0.1.0\"}}}}}}\n"
    )
}

/// `ping`.
pub fn ping(id: u64) -> String {
    format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"ping\"}}\n")
}

/// The text the `echo` call with request id `id` sends (and must get back).
pub fn echo_text(id: u64) -> String {
    format!("bench-{id}")
}

/// A plain `tools/call` of `echo` with [`echo_text`]`(id)`.
pub fn echo(id: u64) -> String {
    let text = echo_text(id);
    format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"tools/call\",\"params\":{{\
         \"name\":\"echo\",\"arguments\":{{\"text\":\"{text}\"}}}}}}\n"
    )
}

/// `tools/call` of `instant_task` as a task with a [`TASK_TTL_MS`] retention.
pub fn instant_task(id: u64) -> String {
    format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"tools/call\",\"params\":{{\
         \"name\":\"instant_task\",\"arguments\":{{}},\"task\":{{\"ttl\":{TASK_TTL_MS}}}}}}}\n"
    )
}

/// `tasks/get` of `task`.
pub fn get_task(id: u64, task: &str) -> String {
    task_request(id, "tasks/get", task)
}

/// `tasks/result` of `task`.
pub fn task_result(id: u64, task: &str) -> String {
    task_request(id, "tasks/result", task)
}

/// `tasks/list`, from the start or after `cursor`.
pub fn list_tasks(id: u64, cursor: Option<&str>) -> String {
    match cursor {
        None => format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"tasks/list\"}}\n"),
        Some(cursor) => format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"tasks/list\",\"params\":{{\"cursor\":{}}}}}\n",
            json_string(cursor)
        ),
    }
}

fn task_request(id: u64, method: &str, task: &str) -> String {
    format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"{method}\",\"params\":{{\"taskId\":{}}}}}\n",
        json_string(task)
    )
}

/// `text` as a JSON string literal (ids and cursors come from the server).
fn json_string(text: &str) -> String {
    serde_json::Value::from(text).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    fn parse(line: &str) -> Value {
        assert!(line.ends_with('\n') && !line[..line.len() - 1].contains('\n'));
        serde_json::from_str(line).unwrap()
    }

    #[test]
    fn lines_are_the_requests_they_name() {
        assert_eq!(
            parse(&initialize(0))["params"]["protocolVersion"],
            PROTOCOL_VERSION
        );
        assert_eq!(parse(INITIALIZED)["method"], "notifications/initialized");
        assert_eq!(
            parse(&echo(7))["params"],
            json!({ "name": "echo", "arguments": { "text": "bench-7" } })
        );
        let call = parse(&instant_task(8));
        assert_eq!(call["id"], 8);
        assert_eq!(call["params"]["task"], json!({ "ttl": 600_000 }));
        let get = parse(&get_task(9, "a\"b"));
        assert_eq!(
            (get["method"].clone(), get["params"]["taskId"].clone()),
            (json!("tasks/get"), json!("a\"b"))
        );
        assert_eq!(parse(&task_result(10, "t"))["method"], "tasks/result");
        assert_eq!(parse(&list_tasks(11, None)).get("params"), None);
        assert_eq!(parse(&list_tasks(12, Some("c")))["params"]["cursor"], "c");
        assert_eq!(parse(&ping(13))["method"], "ping");
    }
}
