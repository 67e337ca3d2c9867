//! `null-server`: a stdio MCP server that does as little as a server can, the round-trip floor
//! (the "limit") of the end-to-end benchmark (`bench`).
//!
//! One thread, blocking reads of whatever stdin has, one write of all the replies to that
//! input. Each line is parsed just far enough to answer it: `initialize` gets a fixed result,
//! `tools/call` of `echo` with a string `text` gets that string back as one text block (the
//! shape `task-server --bench-tools` answers), any other request an empty result, and a
//! notification nothing. Unparseable lines get a JSON-RPC parse error. It stops at the end of
//! stdin or when stdout closes.

use std::borrow::Cow;
use std::io::{self, Read, Write};
use std::process::ExitCode;

use clap::Parser;
use serde::Deserialize;
use serde_json::value::RawValue;

/// A stdio MCP server that does as little as a server can: the round-trip floor (the "limit")
/// of `bench`. It stops at the end of stdin or when stdout closes.
#[derive(Debug, Parser)]
#[command(name = "null-server", version)]
struct Args {}

/// The `initialize` result.
const INITIALIZE_RESULT: &[u8] = br#"{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"null-server","version":"0.1.0"}}"#;
/// The reply to a line that is not a JSON-RPC message.
const PARSE_ERROR: &[u8] =
    b"{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"Parse error\"}}\n";

/// A message, as far as it is read: ids and the echoed text stay raw JSON, copied verbatim.
#[derive(Deserialize)]
struct Message<'a> {
    #[serde(borrow, default)]
    id: Option<&'a RawValue>,
    #[serde(borrow)]
    method: Cow<'a, str>,
    #[serde(borrow, default)]
    params: Option<Params<'a>>,
}

#[derive(Deserialize)]
struct Params<'a> {
    #[serde(borrow, default)]
    name: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    arguments: Option<Arguments<'a>>,
}

#[derive(Deserialize)]
struct Arguments<'a> {
    #[serde(borrow, default)]
    text: Option<&'a RawValue>,
}

fn main() -> ExitCode {
    Args::parse();
    match serve(io::stdin().lock(), io::stdout().lock()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("null-server: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Answers every complete line of each read with one write, until EOF.
fn serve(mut input: impl Read, mut output: impl Write) -> io::Result<()> {
    let mut buf = vec![0u8; 1 << 16];
    let mut filled = 0;
    let mut replies = Vec::with_capacity(1 << 16);
    loop {
        if filled == buf.len() {
            buf.resize(buf.len() * 2, 0);
        }
        let read = match input.read(&mut buf[filled..]) {
            Ok(0) => return Ok(()),
            Ok(read) => read,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        filled += read;
        let mut start = 0;
        while let Some(len) = buf[start..filled].iter().position(|&b| b == b'\n') {
            answer(&buf[start..start + len], &mut replies);
            start += len + 1;
        }
        buf.copy_within(start..filled, 0);
        filled -= start;
        if !replies.is_empty() {
            output.write_all(&replies)?;
            output.flush()?;
            replies.clear();
        }
    }
}

/// Appends the reply to one line (nothing for a notification or a blank line).
fn answer(line: &[u8], replies: &mut Vec<u8>) {
    let Ok(message) = serde_json::from_slice::<Message>(line) else {
        if !line.trim_ascii().is_empty() {
            replies.extend_from_slice(PARSE_ERROR);
        }
        return;
    };
    let Some(id) = message.id else {
        return;
    };
    replies.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
    replies.extend_from_slice(id.get().as_bytes());
    replies.extend_from_slice(b",\"result\":");
    match (&*message.method, echo_text(message.params)) {
        ("initialize", _) => replies.extend_from_slice(INITIALIZE_RESULT),
        ("tools/call", Some(text)) => {
            replies.extend_from_slice(b"{\"content\":[{\"type\":\"text\",\"text\":");
            replies.extend_from_slice(text.get().as_bytes());
            replies.extend_from_slice(b"}]}");
        }
        _ => replies.extend_from_slice(b"{}"),
    }
    replies.extend_from_slice(b"}\n");
}

/// The raw JSON string `text` of an `echo` call's arguments.
fn echo_text(params: Option<Params<'_>>) -> Option<&RawValue> {
    let params = params?;
    let text = params.arguments?.text?;
    (params.name.as_deref() == Some("echo") && text.get().starts_with('"')).then_some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn replies(input: &str) -> String {
        let mut out = Vec::new();
        serve(input.as_bytes(), &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn answers_initialize_echo_and_anything_else() {
        let out = replies(concat!(
            r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}"#,
            "\n",
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            "\n",
            r#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"echo","arguments":{"text":"h\"i"}}}"#,
            "\n\n",
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":7}}}"#,
            "\n",
            r#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#,
            "\nnot json\n",
        ));
        let lines: Vec<serde_json::Value> = out
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 5, "{out}");
        assert_eq!(lines[0]["result"]["protocolVersion"], "2025-11-25");
        assert_eq!(lines[1]["id"], "a");
        assert_eq!(
            lines[1]["result"],
            serde_json::json!({ "content": [{ "type": "text", "text": "h\"i" }] })
        );
        assert_eq!(lines[2]["result"], serde_json::json!({}));
        assert_eq!(lines[3]["id"], 3);
        assert_eq!(lines[4]["error"]["code"], -32700);
    }
}
