//! One server, many connections (`Server::start` + `ServerHandle::connect`), in process over
//! Unix socket pairs, and the typed tool API as callers meet it: arguments decoded before the
//! tool runs, results that cannot be sent becoming -32603.

use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use futures::AsyncReadExt;
use serde::Deserialize;
use serde_json::json;
use smol::Async;
use taskwire_driver::engine::jsonrpc::code;
use taskwire_driver::engine::{ClientEra, TaskStatus};
use taskwire_driver::{
    CallToolResult, Client, ClientBuilder, Config, RpcError, Runtime, Server, ServerHandle,
    TaskSupport, Tool,
};

#[derive(Deserialize)]
struct AddArgs {
    a: i64,
    b: i64,
}

/// `add` (counts its runs in `runs`), `wait` (a task that sleeps `ms`) and `bad_structured`
/// (structured content that is not an object).
fn server(runs: Arc<AtomicUsize>) -> Server {
    Server::new(Config::new("connections", "1.0"))
        .tool(
            Tool::new("add", TaskSupport::Optional),
            move |_, args: AddArgs| {
                runs.fetch_add(1, Ordering::SeqCst);
                async move { Ok(CallToolResult::text((args.a + args.b).to_string())) }
            },
        )
        .tool(
            Tool::new("wait", TaskSupport::Optional),
            |ctx, args: serde_json::Value| async move {
                let ms = args["ms"].as_u64().unwrap_or(50);
                ctx.sleep(Duration::from_millis(ms)).await;
                Ok(CallToolResult::text("waited"))
            },
        )
        .tool(
            Tool::new("ask", TaskSupport::Optional),
            |ctx, _: serde_json::Value| async move {
                let answer = ctx
                    .elicit(json!({ "message": "ok?", "requestedSchema": { "type": "object" } }))
                    .await?;
                Ok(CallToolResult::text(answer.to_string()))
            },
        )
        .tool(
            Tool::new("bad_structured", TaskSupport::Optional),
            |_, _: serde_json::Value| async move {
                Ok(CallToolResult {
                    structured_content: Some(json!(5)),
                    ..CallToolResult::text("five")
                })
            },
        )
}

/// A client connected to `handle` as `owner` over a fresh socket pair.
fn connect(runtime: &Arc<dyn Runtime>, handle: &ServerHandle, owner: &str) -> Client {
    connect_with(runtime, handle, owner, ClientBuilder::new(v2025_client()))
}

fn connect_with(
    runtime: &Arc<dyn Runtime>,
    handle: &ServerHandle,
    owner: &str,
    builder: ClientBuilder,
) -> Client {
    let (ours, theirs) = UnixStream::pair().expect("a socket pair");
    let (server_in, server_out) = Async::new(theirs).expect("non-blocking").split();
    let handle = handle.clone();
    let owner = owner.to_owned();
    runtime.spawn(Box::pin(async move {
        handle
            .connect(owner, Box::pin(server_in), Box::pin(server_out))
            .await;
    }));
    let (client_in, client_out) = Async::new(ours).expect("non-blocking").split();
    builder.connect(runtime.clone(), Box::pin(client_in), Box::pin(client_out))
}

fn with_server(body: impl AsyncFnOnce(Arc<dyn Runtime>, ServerHandle, Arc<AtomicUsize>)) {
    let runs = Arc::new(AtomicUsize::new(0));
    let runtime: Arc<dyn Runtime> = Arc::new(taskwire_smol::Smol::default());
    let handle = server(runs.clone()).start(runtime.clone());
    smol::block_on(async {
        let limit = smol::Timer::after(Duration::from_secs(20));
        let body = body(runtime, handle, runs);
        futures::pin_mut!(body);
        if let futures::future::Either::Right(_) = futures::future::select(body, limit).await {
            panic!("the test body did not finish within 20 s");
        }
    });
}

#[test]
fn connections_share_tools_and_their_owners_tasks() {
    with_server(async |runtime, handle, runs| {
        let alice = connect(&runtime, &handle, "alice");
        let alice_again = connect(&runtime, &handle, "alice");
        let bob = connect(&runtime, &handle, "bob");
        for c in [&alice, &alice_again, &bob] {
            c.initialize().await.expect("initialize");
        }
        let (a, b) = futures::join!(
            alice.call_tool("add", json!({ "a": 1, "b": 2 })),
            bob.call_tool("add", json!({ "a": 3, "b": 4 })),
        );
        assert_eq!(a.expect("alice's call").all_text(), "3");
        assert_eq!(b.expect("bob's call").all_text(), "7");
        assert_eq!(runs.load(Ordering::SeqCst), 2);

        let call = alice
            .call_tool_as_task("wait", json!({ "ms": 100 }), None)
            .await
            .expect("a task");
        let id = call.task.as_ref().expect("a task").id.to_string();
        // The owner's other connection sees the task and reads its result.
        let seen = alice_again.get_task(&id).await.expect("same owner");
        assert_eq!(seen.status, TaskStatus::Working);
        let result = alice_again.task_result(&id).await.expect("the result");
        assert_eq!(result.all_text(), "waited");
        // Another owner does not.
        let hidden = bob
            .get_task(&id)
            .await
            .map_err(RpcError::from)
            .expect_err("another owner's task");
        assert_eq!(hidden.code, code::INVALID_PARAMS);
        assert!(bob.list_tasks().await.expect("bob's list").is_empty());
        assert_eq!(alice.list_tasks().await.expect("alice's list").len(), 1);

        handle.shutdown().await;
        let closed = alice.call_tool("add", json!({ "a": 1, "b": 1 })).await;
        assert!(closed.is_err(), "after shutdown: {closed:?}");
    });
}

#[test]
fn bad_arguments_are_invalid_params_before_the_tool_runs() {
    with_server(async |runtime, handle, runs| {
        let c = connect(&runtime, &handle, "alice");
        c.initialize().await.expect("initialize");
        let plain = c
            .call_tool("add", json!({ "a": "one", "b": 2 }))
            .await
            .map_err(RpcError::from)
            .expect_err("a string for an i64");
        assert_eq!(plain.code, code::INVALID_PARAMS);
        assert!(
            plain.message.contains("invalid type: string \"one\""),
            "{plain:?}"
        );
        let missing = c
            .call_tool("add", json!({ "a": 1 }))
            .await
            .map_err(RpcError::from)
            .expect_err("b is missing");
        assert!(missing.message.contains("missing field `b`"), "{missing:?}");
        // As a task: refused up front, no task made.
        let task = c
            .call_tool_as_task("add", json!({ "b": 2 }), None)
            .await
            .map_err(RpcError::from)
            .expect_err("refused before a task exists");
        assert_eq!(task.code, code::INVALID_PARAMS);
        assert!(c.list_tasks().await.expect("list").is_empty());
        assert_eq!(runs.load(Ordering::SeqCst), 0, "the tool never ran");
    });
}

#[test]
fn an_unsendable_result_is_internal_error_and_a_failed_task() {
    with_server(async |runtime, handle, _| {
        let c = connect(&runtime, &handle, "alice");
        c.initialize().await.expect("initialize");
        let plain = c
            .call_tool("bad_structured", json!({}))
            .await
            .map_err(RpcError::from)
            .expect_err("no silent hang");
        assert_eq!(plain.code, code::INTERNAL_ERROR);
        assert!(
            plain.message.contains("structuredContent is a number"),
            "{plain:?}"
        );
        let call = c
            .call_tool_as_task("bad_structured", json!({}), None)
            .await
            .expect("a task");
        let id = call.task.as_ref().expect("a task").id.to_string();
        let outcome = call
            .result()
            .await
            .map_err(RpcError::from)
            .expect_err("the task failed");
        assert_eq!(outcome.code, code::INTERNAL_ERROR);
        assert_eq!(
            c.get_task(&id).await.expect("tasks/get").status,
            TaskStatus::Failed
        );
    });
}

#[test]
fn a_client_handler_answering_a_non_object_is_internal_error() {
    with_server(async |runtime, handle, _| {
        let builder = ClientBuilder::new(v2025_client())
            .on_request("elicitation/create", |_| async { Ok(json!("yes")) });
        let c = connect_with(&runtime, &handle, "alice", builder);
        c.initialize().await.expect("initialize");
        let error = c
            .call_tool("ask", json!({}))
            .await
            .map_err(RpcError::from)
            .expect_err("the elicitation failed");
        assert_eq!(error.code, code::INTERNAL_ERROR);
        assert!(
            error
                .message
                .contains("elicitation/create handler answered \"yes\""),
            "{error:?}"
        );
    });
}

/// A 2025-11-25 client: these tests read `tasks/list` and `tasks/result`.
fn v2025_client() -> Config {
    Config {
        client_era: ClientEra::Only(taskwire_engine::Era::V2025_11_25),
        ..Config::new("client", "0")
    }
}
