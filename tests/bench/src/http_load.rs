//! The HTTP load the benchmarks send (reqwest, HTTP/1.1 keep-alive): one JSON-RPC request per
//! POST, its answer read from a JSON body or an SSE stream, and the 2026-07-28 task lifecycle.

use std::time::Duration;

use serde_json::{json, Value};

/// One POST of `body` to `url` with `headers`: the answer's JSON-RPC message (from a JSON body
/// or an SSE stream; `null` for a `202`), with the `Mcp-Session-Id` it named as `"session"`.
pub async fn post(
    http: &reqwest::Client,
    url: &str,
    headers: &[(&str, &str)],
    body: &Value,
) -> Result<Value, String> {
    let mut request = http
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream");
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = request
        .body(body.to_string())
        .send()
        .await
        .map_err(|e| e.to_string())?;
    let header = |name: &str| {
        response
            .headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    };
    let session = header("mcp-session-id");
    let sse = header("content-type").is_some_and(|t| t.starts_with("text/event-stream"));
    let status = response.status();
    let text = response.text().await.map_err(|e| e.to_string())?;
    if !status.is_success() {
        return Err(format!("HTTP {status}: {text}"));
    }
    let mut value = if sse {
        answer_in_sse(&text)?
    } else if text.is_empty() {
        return Ok(Value::Null);
    } else {
        serde_json::from_str(&text).map_err(|e| format!("{e}: {text}"))?
    };
    if let Some(session) = session {
        value["session"] = json!(session);
    }
    Ok(value)
}

/// The JSON-RPC answer (a message with `result` or `error`) in an SSE body.
fn answer_in_sse(text: &str) -> Result<Value, String> {
    text.replace("\r\n", "\n")
        .split("\n\n")
        .filter_map(|event| {
            let data: Vec<&str> = event
                .lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .map(str::trim_start)
                .collect();
            serde_json::from_str::<Value>(&data.join("\n")).ok()
        })
        .find(|m| m.get("result").is_some() || m.get("error").is_some())
        .ok_or_else(|| format!("no answer in the SSE stream: {text}"))
}

/// The `_meta` of a 2026-07-28 request declaring the tasks extension.
pub fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "taskwire-bench", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}},
    })
}

/// A 2026-07-28 task lifecycle on `url`: `instant_task` as a task, then `tasks/get` (each
/// `poll` apart; back to back without) until it is completed with the tool's result
/// (`checked`; unchecked, one `tasks/get` ends it, for a server that answers anything).
pub async fn lifecycle_2026(
    http: &reqwest::Client,
    url: &str,
    n: u64,
    checked: bool,
    poll: Option<Duration>,
) -> Result<(), String> {
    let body = json!({"jsonrpc": "2.0", "id": n, "method": "tools/call",
        "params": {"name": "instant_task", "arguments": {}, "_meta": meta()}});
    let headers = [
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "tools/call"),
        ("mcp-name", "instant_task"),
    ];
    let created = post(http, url, &headers, &body).await?;
    let task = created["result"]["taskId"]
        .as_str()
        .unwrap_or("x")
        .to_owned();
    loop {
        let body = json!({"jsonrpc": "2.0", "id": n, "method": "tasks/get",
            "params": {"taskId": task, "_meta": meta()}});
        let headers = [
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tasks/get"),
            ("mcp-name", task.as_str()),
        ];
        let got = post(http, url, &headers, &body).await?;
        if !checked {
            return Ok(());
        }
        match got["result"]["status"].as_str() {
            Some("completed") if got["result"]["result"]["content"][0]["text"] == "done" => {
                return Ok(())
            }
            Some("working") => {
                if let Some(poll) = poll {
                    tokio::time::sleep(poll).await;
                }
            }
            _ => return Err(format!("unexpected: {got}")),
        }
    }
}
