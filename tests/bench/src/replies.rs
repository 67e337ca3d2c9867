//! Reading what a server wrote: one JSON-RPC message per line, parsed with serde_json, and the
//! checks every reply must pass (right id, right content). A failed check is an `Err` naming
//! what was expected and showing what came.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::value::RawValue;

/// A reply to one of our requests.
#[derive(Debug)]
pub struct Reply {
    /// The request id it answers.
    pub id: u64,
    /// The whole line, for messages.
    line: String,
    /// `result` (raw JSON), or `None` for an error reply.
    result: Option<Box<RawValue>>,
}

/// One line from the server.
#[derive(Debug)]
pub enum Incoming {
    /// A reply to a request.
    Reply(Reply),
    /// A notification (e.g. `notifications/tasks/status`); the benchmark reads and drops them.
    Notification,
}

#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(borrow, default)]
    id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    method: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    result: Option<&'a RawValue>,
    #[serde(borrow, default)]
    error: Option<&'a RawValue>,
}

/// Parses one line (without its newline).
pub fn parse(line: &[u8]) -> Result<Incoming, String> {
    let text = std::str::from_utf8(line)
        .map_err(|_| format!("a line that is not UTF-8: {}", preview_bytes(line)))?;
    let envelope: Envelope = serde_json::from_str(text).map_err(|e| {
        format!(
            "a line that is not a JSON-RPC message ({e}): {}",
            preview(text)
        )
    })?;
    match (envelope.method, envelope.id) {
        (Some(_), None) => return Ok(Incoming::Notification),
        (Some(method), Some(_)) => {
            return Err(format!(
                "a request from the server ({method}), which the benchmark does not answer: {}",
                preview(text)
            ))
        }
        (None, None) => {
            return Err(format!(
                "a message with neither id nor method: {}",
                preview(text)
            ))
        }
        (None, Some(_)) => {}
    }
    let id = envelope
        .id
        .and_then(|raw| raw.get().parse::<u64>().ok())
        .ok_or_else(|| format!("a reply whose id is not one of ours: {}", preview(text)))?;
    let result = match (envelope.result, envelope.error) {
        (Some(result), None) => Some(result.to_owned()),
        (None, Some(_)) => None,
        _ => {
            return Err(format!(
                "a reply with both or neither of result and error: {}",
                preview(text)
            ))
        }
    };
    Ok(Incoming::Reply(Reply {
        id,
        line: text.to_owned(),
        result,
    }))
}

/// The state of a task, as `CreateTaskResult`, `tasks/get` and `tasks/list` show it.
#[derive(Debug, Deserialize)]
pub struct TaskState {
    /// The task id.
    #[serde(rename = "taskId")]
    pub task_id: String,
    /// `working`, `completed`, …
    pub status: String,
}

impl TaskState {
    /// Whether the task completed; `Err` for the other terminal statuses.
    pub fn completed(&self) -> Result<bool, String> {
        match self.status.as_str() {
            "completed" => Ok(true),
            "failed" | "cancelled" => Err(format!("task {} ended {}", self.task_id, self.status)),
            _ => Ok(false),
        }
    }
}

/// One page of `tasks/list`.
#[derive(Debug, Deserialize)]
pub struct ListPage {
    /// The tasks on it.
    pub tasks: Vec<TaskState>,
    /// Where the next page starts, if there is one.
    #[serde(rename = "nextCursor", default)]
    pub next_cursor: Option<String>,
}

#[derive(Deserialize)]
struct CreateTaskResult {
    task: TaskState,
}

#[derive(Deserialize)]
struct CallToolResult<'a> {
    #[serde(borrow)]
    content: Vec<ContentBlock<'a>>,
    #[serde(rename = "isError", default)]
    is_error: Option<bool>,
}

#[derive(Deserialize)]
struct ContentBlock<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    #[serde(borrow, default)]
    text: Option<Cow<'a, str>>,
}

impl Reply {
    /// `Err` unless this answers request `id`.
    pub fn expect_id(&self, id: u64) -> Result<(), String> {
        if self.id == id {
            Ok(())
        } else {
            Err(format!(
                "a reply to request {id} was due, got: {}",
                preview(&self.line)
            ))
        }
    }

    /// `Err` unless the result is a `CallToolResult` of exactly one text block `text`, not an error.
    pub fn expect_text(&self, text: &str) -> Result<(), String> {
        let result: CallToolResult = self.result_as("a CallToolResult")?;
        let [block] = result.content.as_slice() else {
            return Err(self.unexpected(&format!("one text block {text:?}")));
        };
        if block.kind == "text"
            && block.text.as_deref() == Some(text)
            && result.is_error != Some(true)
        {
            Ok(())
        } else {
            Err(self.unexpected(&format!("one text block {text:?}")))
        }
    }

    /// The task of a `CreateTaskResult`.
    pub fn created_task(&self) -> Result<TaskState, String> {
        self.result_as::<CreateTaskResult>("a CreateTaskResult")
            .map(|r| r.task)
    }

    /// The task of a `tasks/get` result.
    pub fn task(&self) -> Result<TaskState, String> {
        self.result_as("a Task (the tasks/get result)")
    }

    /// A `tasks/list` page.
    pub fn list_page(&self) -> Result<ListPage, String> {
        self.result_as("a ListTasksResult")
    }

    /// `Err` unless the reply is a result (of any content).
    pub fn expect_result(&self) -> Result<(), String> {
        self.raw_result("a result").map(|_| ())
    }

    /// The raw `result`.
    pub fn raw_result(&self, what: &str) -> Result<&str, String> {
        self.result
            .as_deref()
            .map(RawValue::get)
            .ok_or_else(|| self.unexpected(what))
    }

    fn result_as<'a, T: Deserialize<'a>>(&'a self, what: &str) -> Result<T, String> {
        let raw = self.raw_result(what)?;
        serde_json::from_str(raw).map_err(|_| self.unexpected(what))
    }

    fn unexpected(&self, what: &str) -> String {
        format!(
            "{what} was due in the reply to request {}, got: {}",
            self.id,
            preview(&self.line)
        )
    }
}

/// At most 400 characters of `text`.
fn preview(text: &str) -> String {
    match text.char_indices().nth(400) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

fn preview_bytes(line: &[u8]) -> String {
    preview(&String::from_utf8_lossy(line))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reply(line: &str) -> Reply {
        match parse(line.as_bytes()).unwrap() {
            Incoming::Reply(reply) => reply,
            Incoming::Notification => panic!("not a reply: {line}"),
        }
    }

    #[test]
    fn classifies_lines() {
        assert!(matches!(
            parse(br#"{"jsonrpc":"2.0","method":"notifications/tasks/status","params":{}}"#),
            Ok(Incoming::Notification)
        ));
        for bad in [
            &br#"{"jsonrpc":"2.0","id":1,"method":"roots/list"}"#[..],
            br#"{"jsonrpc":"2.0","id":"x","result":{}}"#,
            br#"{"jsonrpc":"2.0","id":1}"#,
            br#"{"jsonrpc":"2.0"}"#,
            b"hello",
        ] {
            assert!(parse(bad).is_err(), "{}", String::from_utf8_lossy(bad));
        }
        assert_eq!(reply(r#"{"id":3,"result":{}}"#).id, 3);
    }

    #[test]
    fn checks_content() {
        let ok =
            reply(r#"{"id":1,"result":{"content":[{"type":"text","text":"a"}],"isError":false}}"#);
        ok.expect_id(1).unwrap();
        assert!(ok.expect_id(2).unwrap_err().contains("request 2"));
        ok.expect_text("a").unwrap();
        assert!(ok.expect_text("b").is_err());
        let flagged =
            reply(r#"{"id":1,"result":{"content":[{"type":"text","text":"a"}],"isError":true}}"#);
        assert!(flagged.expect_text("a").is_err());
        let two = reply(
            r#"{"id":1,"result":{"content":[{"type":"text","text":"a"},{"type":"text","text":"a"}]}}"#,
        );
        assert!(two.expect_text("a").is_err());
        let error = reply(r#"{"id":1,"error":{"code":-32602,"message":"no"}}"#);
        assert!(error.expect_text("a").unwrap_err().contains("-32602"));
        assert!(error.expect_result().is_err());

        let created =
            reply(r#"{"id":2,"result":{"task":{"taskId":"t1","status":"working","ttl":1}}}"#);
        let task = created.created_task().unwrap();
        assert_eq!((task.task_id.as_str(), task.completed()), ("t1", Ok(false)));
        let got = reply(r#"{"id":3,"result":{"taskId":"t1","status":"failed"}}"#);
        assert!(got.task().unwrap().completed().is_err());
        let page = reply(r#"{"id":4,"result":{"tasks":[{"taskId":"t1","status":"completed"}],"nextCursor":"c"}}"#)
            .list_page()
            .unwrap();
        assert_eq!(
            (page.tasks.len(), page.next_cursor.as_deref()),
            (1, Some("c"))
        );
    }
}
