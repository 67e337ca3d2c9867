//! Message links (`ServerHandle::open`, the connection kind Streamable HTTP uses): messages in
//! one at a time, messages out each naming its stream, a slow reader disconnected, and tasks
//! that outlive the session that made them.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};
use taskwire_driver::engine::{MessageKind, RequestId};
use taskwire_driver::{
    CallToolResult, Config, MessageSession, Outgoing, Runtime, Server, ServerHandle, TaskSupport,
    Tool,
};

/// `wait`: sleeps `ms`, reporting progress first.
fn server() -> Server {
    Server::new(Config::new("messages", "1.0")).tool(
        Tool::new("wait", TaskSupport::Optional),
        |ctx, args: Value| async move {
            ctx.progress(1.0, Some(2.0), None).await;
            ctx.sleep(Duration::from_millis(args["ms"].as_u64().unwrap_or(20)))
                .await;
            Ok(CallToolResult::text("waited"))
        },
    )
}

fn with_server(body: impl AsyncFnOnce(ServerHandle)) {
    let runtime: Arc<dyn Runtime> = Arc::new(taskwire_smol::Smol::default());
    let handle = server().start(runtime);
    crate::links::within_20s(handle, body);
}

fn send(session: &MessageSession, message: Value) {
    session.send(message.to_string()).expect("the server runs");
}

async fn next(session: &MessageSession) -> (Outgoing, Value) {
    let out = session.recv().await.expect("a message");
    let value = serde_json::from_str(&out.message).expect("JSON");
    (out, value)
}

/// Reads until the reply to `id`, returning what came before it and the reply.
async fn until_reply(session: &MessageSession, id: i64) -> (Vec<Outgoing>, Value) {
    let mut before = Vec::new();
    loop {
        let (out, value) = next(session).await;
        if matches!(&out.kind, MessageKind::Reply { to: Some(to), .. } if *to == RequestId::Number(id))
        {
            return (before, value);
        }
        before.push(out);
    }
}

async fn initialize_2025(session: &MessageSession) {
    send(
        session,
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}}),
    );
    let (before, reply) = until_reply(session, 1).await;
    assert!(before.is_empty());
    assert_eq!(reply["result"]["protocolVersion"], "2025-11-25");
    send(
        session,
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    );
}

#[test]
fn a_plain_calls_progress_rides_its_request_and_its_reply_ends_it() {
    with_server(async |handle| {
        let session = handle.open("alice", 64).await.expect("open");
        initialize_2025(&session).await;
        send(
            &session,
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
                "name": "wait", "arguments": {"ms": 1}, "_meta": {"progressToken": "p"}}}),
        );
        let (before, reply) = until_reply(&session, 2).await;
        assert_eq!(reply["result"]["content"][0]["text"], "waited");
        assert_eq!(before.len(), 1, "one progress notification");
        assert_eq!(before[0].kind.stream(), Some(&RequestId::Number(2)));
    });
}

#[test]
fn a_task_outlives_its_session_and_another_session_of_the_owner_reads_it() {
    with_server(async |handle| {
        let first = handle.open("alice", 64).await.expect("open");
        initialize_2025(&first).await;
        send(
            &first,
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
                "name": "wait", "arguments": {"ms": 200}, "task": {"ttl": 60000}}}),
        );
        let (_, created) = until_reply(&first, 2).await;
        let task = created["result"]["task"]["taskId"]
            .as_str()
            .expect("a task id")
            .to_owned();
        drop(first);

        let second = handle.open("alice", 64).await.expect("open");
        initialize_2025(&second).await;
        send(
            &second,
            json!({"jsonrpc": "2.0", "id": 2, "method": "tasks/result", "params": {"taskId": task}}),
        );
        let (before, result) = until_reply(&second, 2).await;
        assert_eq!(result["result"]["content"][0]["text"], "waited");
        // Its status notification belongs to the session (2025-11-25), not to a request.
        assert_eq!(before.len(), 1, "{before:?}");
        assert!(matches!(
            &before[0].kind,
            MessageKind::Notification {
                method: "notifications/tasks/status",
                stream: None,
                ..
            }
        ));

        let stranger = handle.open("bob", 64).await.expect("open");
        initialize_2025(&stranger).await;
        send(
            &stranger,
            json!({"jsonrpc": "2.0", "id": 2, "method": "tasks/get", "params": {"taskId": task}}),
        );
        let (_, hidden) = until_reply(&stranger, 2).await;
        assert_eq!(hidden["error"]["code"], -32602);
    });
}

#[test]
fn a_stateless_2026_request_is_one_short_session() {
    with_server(async |handle| {
        let session = handle.open("anyone", 8).await.expect("open");
        send(
            &session,
            json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
                "name": "wait", "arguments": {"ms": 1}, "_meta": {
                    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                    "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
                    "io.modelcontextprotocol/clientCapabilities": {}}}}),
        );
        let (_, reply) = until_reply(&session, 7).await;
        assert_eq!(reply["result"]["resultType"], "complete");
        session.close();
        assert!(
            session.recv().await.is_none(),
            "the closed session's channel ends"
        );
    });
}

#[test]
fn a_reader_a_whole_channel_behind_loses_its_session() {
    with_server(async |handle| {
        let session = handle.open("slow", 1).await.expect("open");
        for _ in 0..10 {
            session.send("not json").expect("the server runs");
        }
        // Nothing is read until the server has answered all ten: only the first fit.
        smol::Timer::after(Duration::from_millis(200)).await;
        let (first, error) = next(&session).await;
        assert!(matches!(
            first.kind,
            MessageKind::Reply {
                to: None,
                error: Some(-32700)
            }
        ));
        assert_eq!(error["error"]["code"], -32700);
        let more = session.recv().await;
        assert!(more.is_none(), "the session was dropped, yet: {more:?}");
    });
}

#[test]
fn a_stopped_server_opens_no_sessions() {
    with_server(async |handle| {
        handle.shutdown().await;
        let refused = handle.open("late", 8).await.expect_err("stopped");
        assert_eq!(refused, taskwire_driver::Error::Closed);
    });
}

#[test]
fn a_request_is_served_as_its_session_opens() {
    with_server(async |handle| {
        let ping = json!({"jsonrpc": "2.0", "id": 5, "method": "ping"}).to_string();
        let session = handle.request("alice", 4, ping).await.expect("opens");
        let (_, reply) = until_reply(&session, 5).await;
        assert_eq!(reply["result"], json!({}));
        // A session opened for one request closes with its reply: its stream ends.
        assert!(session.recv().await.is_none(), "nothing after the reply");
        assert!(session.is_closed());
    });
}

#[test]
fn a_checked_request_is_shown_as_the_engine_reads_it() {
    use std::sync::Mutex;
    use taskwire_driver::engine::{Check, Routed, RpcError};

    /// A check that writes down what it is shown and refuses what `refuse` names.
    fn recording(seen: &Arc<Mutex<Vec<String>>>, refuse: &'static str) -> Check {
        let seen = seen.clone();
        Box::new(move |r: &Routed<'_>| {
            let tool = r.tool.map(|t| t.name.as_str());
            let arguments = r.arguments.map(|a| a.get().to_owned());
            let line = format!(
                "{} {:?} {:?} {tool:?} {arguments:?}",
                r.method, r.protocol_version, r.name
            );
            seen.lock().unwrap().push(line);
            match r.method == refuse {
                true => Err(RpcError::new(-32020, "Header mismatch: refused")),
                false => Ok(()),
            }
        })
    }
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}});
    let tasks_meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {
            "extensions": {"io.modelcontextprotocol/tasks": {}}}});
    with_server(async |handle| {
        let seen = Arc::new(Mutex::new(Vec::new()));
        // Serves `message` with a check that refuses `refuse`.
        let serve = async |message: &Value, refuse| {
            let check = recording(&seen, refuse);
            (handle
                .request_checked("alice", 4, message.to_string(), check)
                .await)
                .expect("opens")
        };
        // A 2026-07-28 call: its name, tool and arguments; refused, it is not served.
        let call = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
            "name": "wait", "arguments": {"ms": 1}, "_meta": meta}});
        let (before, reply) = until_reply(&serve(&call, "tools/call").await, 7).await;
        assert!(before.is_empty(), "no progress: the tool never ran");
        assert_eq!(reply["error"]["code"], -32020);
        assert_eq!(reply["error"]["message"], "Header mismatch: refused");
        // Let through, the same call runs.
        let (_, reply) = until_reply(&serve(&call, "none").await, 7).await;
        assert_eq!(reply["result"]["resultType"], "complete");
        // A task named, and a request of no per-request era: its method only.
        let get = json!({"jsonrpc": "2.0", "id": 8, "method": "tasks/get", "params": {
            "taskId": "t-1", "_meta": tasks_meta}});
        let (_, reply) = until_reply(&serve(&get, "none").await, 8).await;
        assert_eq!(reply["error"]["code"], -32602, "no such task: {reply}");
        let ping = json!({"jsonrpc": "2.0", "id": 9, "method": "ping"});
        let (_, reply) = until_reply(&serve(&ping, "ping").await, 9).await;
        assert_eq!(reply["error"]["code"], -32020);
        // A notification is shown nothing, and its session closes with no message.
        let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let session = serve(&note, "none").await;
        assert!(session.recv().await.is_none(), "closed with no message");
        let seen = seen.lock().unwrap();
        let call = r#"tools/call Some("2026-07-28") Some("wait") Some("wait") Some("{\"ms\":1}")"#;
        assert_eq!(
            *seen,
            [
                call,
                call,
                r#"tasks/get Some("2026-07-28") Some("t-1") None None"#,
                "ping None None None None",
            ]
        );
    });
}
