//! A byte stream gives the same outputs however it is cut: one chunk, byte by byte, or
//! uneven pieces (multi-byte UTF-8 characters split across reads included).

use serde_json::json;
use taskwire_engine::TaskSupport;
use taskwire_harness::setup::{server_config, text_result, tool};
use taskwire_harness::Probe;

fn transcript() -> Vec<u8> {
    let mut t = Vec::new();
    let line = |t: &mut Vec<u8>, s: &str| {
        t.extend_from_slice(s.as_bytes());
        t.push(b'\n');
    };
    line(
        &mut t,
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{"form":{}}},"clientInfo":{"name":"c","version":"1"}}}"#,
    );
    line(
        &mut t,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    );
    line(&mut t, "");
    line(&mut t, r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#);
    line(&mut t, "   ");
    line(
        &mut t,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"长任务","arguments":{"text":"开始执行…"},"task":{"ttl":60000}}}"#,
    );
    line(&mut t, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tasks/get\",\"params\":{\"taskId\":\"task-1\"}}\r");
    line(
        &mut t,
        r#"{"jsonrpc":"2.0","id":4,"method":"tasks/result","params":{"taskId":"task-1"}}"#,
    );
    line(&mut t, "not json");
    line(
        &mut t,
        &format!(
            r#"{{"jsonrpc":"2.0","id":5,"method":"ping","params":{{"pad":"{}"}}}}"#,
            "x".repeat(600)
        ),
    );
    line(&mut t, r#"[{"jsonrpc":"2.0","id":6,"method":"ping"}]"#);
    t.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":\"\xff\",\"method\":\"ping\"}\n");
    line(
        &mut t,
        r#"{"jsonrpc":"2.0","id":"八","method":"tasks/list"}"#,
    );
    t.extend_from_slice(br#"{"jsonrpc":"2.0","id":9,"method":"ping"}"#); // no final newline
    t
}

/// Feeds the transcript in the given pieces, completes the task, then ends the stream.
fn run(pieces: &[&[u8]]) -> (Vec<String>, Vec<String>) {
    let mut config = server_config();
    config.limits.max_line_bytes = 512;
    let mut d = Probe::server(config);
    d.host.add_tool(tool("长任务", TaskSupport::Optional));
    for piece in pieces {
        d.feed_bytes(piece);
    }
    let work = d.work("task-1");
    d.host
        .respond(d.now, work, Ok(text_result("任务完成！")))
        .unwrap();
    d.drain();
    d.eof();
    let events = d.events.iter().map(|e| format!("{e:?}")).collect();
    (d.lines.clone(), events)
}

#[test]
fn one_chunk_byte_by_byte_and_uneven_pieces_agree() {
    let t = transcript();
    let whole = run(&[&t]);
    let bytewise: Vec<&[u8]> = t.chunks(1).collect();
    assert_eq!(run(&bytewise), whole);
    let mut uneven = Vec::new();
    let mut rest = &t[..];
    for size in [1usize, 2, 3, 5, 7, 11, 13].iter().cycle() {
        if rest.is_empty() {
            break;
        }
        let (a, b) = rest.split_at((*size).min(rest.len()));
        uneven.push(a);
        rest = b;
    }
    assert_eq!(run(&uneven), whole);

    // And the transcript did what it says.
    let (lines, _) = whole;
    let summary: Vec<(serde_json::Value, serde_json::Value)> = lines
        .iter()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .map(|m| {
            (
                m.get("id").cloned().unwrap_or_default(),
                m["error"]["code"].clone(),
            )
        })
        .collect();
    let null = serde_json::Value::Null;
    assert_eq!(
        summary,
        [
            (json!(0), null.clone()),
            (json!(1), null.clone()),
            (json!(2), null.clone()),
            (json!(3), null.clone()),
            (null.clone(), json!(-32700)),
            (null.clone(), json!(-32600)),
            (null.clone(), json!(-32600)),
            (null.clone(), json!(-32700)),
            (json!("八"), null.clone()),
            (null.clone(), null.clone()),
            (json!(4), null.clone()),
            (json!(9), null),
        ]
    );
    assert!(lines[10].contains("任务完成！"));
}
