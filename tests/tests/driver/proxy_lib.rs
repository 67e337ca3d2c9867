//! The proxy (the library, `taskwire-proxy`) between a driver server behind and clients in
//! front, all in this process over socket pairs:
//! - the tools of the server behind (of either era) change while the proxy serves: the
//!   proxy lists them again, serves them as listed (a tool removed behind is unknown in front, a tool added is
//!   callable), and tells its clients with `notifications/tools/list_changed` (a 2025-11-25
//!   client as it is, a 2026-07-28 client on the listen stream that asked for it);
//! - a task cancelled behind by its own tool (`ToolContext::cancel_task`) ends cancelled in
//!   front too, in both front eras; a status message cleared behind is cleared in front;
//! - the resources front clients of both eras subscribe to are subscribed to behind (a
//!   server of either era), each once while any front client wants it, and its updates
//!   reach them;
//! - a tool that requires a task behind (2025-11-25) is `optional` in front, and a plain
//!   front call of it runs as a task behind: its result answers the call, its question
//!   reaches the front client in that client's era, its status messages reach the call as
//!   progress under the call's token, and a front cancel of the call cancels the task, even
//!   one sent before the task behind was made.

use std::sync::Arc;
use std::time::Duration;

use futures::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, FutureExt, StreamExt};
use serde_json::{json, Value};
use taskwire_driver::engine::{ClientEra, Config, Era, TaskSupport};
use taskwire_driver::{
    CallToolResult, ClientBuilder, NoArgs, Notice, RpcError, Runtime, Server, ServerHandle, Tool,
    ToolContext, ToolOutcome,
};
use taskwire_proxy::{AsTask, Proxy};

use crate::in_process;

/// A tool that answers with its own name.
async fn own_name(ctx: ToolContext, _: NoArgs) -> ToolOutcome {
    Ok(CallToolResult::text(ctx.tool_name()))
}

/// A tool of `name` that runs plainly.
fn tool(name: &str) -> Tool {
    Tool::new(name, TaskSupport::Forbidden)
}

/// `behind`, served in `era`, with the proxy's front server started before it.
async fn in_front(runtime: &Arc<dyn Runtime>, behind: Server, era: Era) -> ServerHandle {
    in_front_of(runtime, &behind.start(runtime.clone()), era).await
}

/// The proxy's front server before `behind` (started already), which it speaks to in `era`.
async fn in_front_of(runtime: &Arc<dyn Runtime>, behind: &ServerHandle, era: Era) -> ServerHandle {
    let era = ClientEra::Only(era);
    let proxy = Proxy::new(
        runtime.clone(),
        AsTask::None,
        Config {
            client_era: era,
            ..Config::new("proxy", "0")
        },
    );
    let client = in_process::connect_to(runtime, behind, era, |_| proxy.client_builder());
    let opened = client.initialize().await.unwrap();
    let front = proxy.server(client, &opened, Config::new("proxy", "0"));
    front.await.unwrap().start(runtime.clone())
}

const V2025: ClientEra = ClientEra::Only(Era::V2025_11_25);

#[test]
fn tools_changed_behind_are_served_and_announced_in_front() {
    for era in [Era::V2025_11_25, Era::V2026_07_28] {
        tools_changed_behind(era);
    }
}

/// The test above, with a server behind in `era` (a 2026-07-28 one tells of its tool
/// changes only on the listen stream the proxy's client opens).
fn tools_changed_behind(era: Era) {
    let runtime: Arc<dyn Runtime> = Arc::new(taskwire_smol::Smol::default());
    smol::block_on(async {
        let mut config = Config::new("behind", "0");
        config.tools_list_changed = true;
        let behind = Server::new(config).tool(tool("first"), own_name);
        let (live, notifier) = (behind.live_tools(), behind.notifier());

        let front = in_front(&runtime, behind, era).await;
        let (heard, notices) = async_channel::unbounded();
        let hearing = |config| {
            ClientBuilder::new(config).on_notification(move |method, _| {
                let _ = heard.try_send(method.to_owned());
            })
        };
        let client = in_process::connect_to(&runtime, &front, V2025, hearing);
        // A 2026-07-28 client hears of it on its listen stream.
        let (lines, mut raw) = in_process::socket(&runtime, &front).split();
        let mut lines = futures::io::BufReader::new(lines).lines();
        let listen = json!({ "jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen",
            "params": { "notifications": { "toolsListChanged": true },
                "_meta": { "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                           "io.modelcontextprotocol/clientCapabilities": {} } } });
        raw.write_all(format!("{listen}\n").as_bytes())
            .await
            .unwrap();
        let ack: Value = serde_json::from_str(&lines.next().await.unwrap().unwrap()).unwrap();
        assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
        assert_eq!(
            ack["params"]["notifications"],
            json!({ "toolsListChanged": true })
        );
        let opened = client.initialize().await.unwrap();
        assert_eq!(opened.capabilities["tools"]["listChanged"], true);
        let names = |tools: Vec<Tool>| tools.into_iter().map(|t| t.name).collect::<Vec<_>>();
        assert_eq!(names(client.list_tools().await.unwrap()), ["first"]);

        live.remove("first");
        live.add(tool("second"), own_name);
        notifier.notify(Notice::ToolsListChanged);
        let announced = notices.recv().fuse();
        let late = FutureExt::fuse(smol::Timer::after(Duration::from_secs(10)));
        futures::pin_mut!(announced, late);
        futures::select! {
            method = announced => assert_eq!(method.unwrap(), "notifications/tools/list_changed"),
            _ = late => panic!("{era:?}: no notifications/tools/list_changed in front within 10 s"),
        }
        let heard: Value = serde_json::from_str(&lines.next().await.unwrap().unwrap()).unwrap();
        assert_eq!(
            heard,
            json!({ "jsonrpc": "2.0", "method": "notifications/tools/list_changed",
                    "params": { "_meta": { "io.modelcontextprotocol/subscriptionId": 1 } } })
        );
        assert_eq!(names(client.list_tools().await.unwrap()), ["second"]);
        let second = client.call_tool("second", json!({})).await.unwrap();
        assert_eq!(second.all_text(), "second");
        let first = client.call_tool("first", json!({})).await;
        let first = first.map_err(taskwire_driver::RpcError::from).unwrap_err();
        assert_eq!(first.code, -32602, "{first:?}");
        client.close().await;
    });
}

/// A task that its own tool cancels after a first status message.
async fn cancels_itself(ctx: ToolContext, _: NoArgs) -> ToolOutcome {
    ctx.set_status("started").await;
    ctx.sleep(Duration::from_millis(100)).await;
    let cancelled = ctx.cancel_task(Some("cancelled behind".into())).await;
    Err(RpcError::internal(format!("not cancelled: {cancelled:?}")))
}

#[test]
fn a_task_cancelled_behind_ends_cancelled_in_front_in_both_eras() {
    let runtime: Arc<dyn Runtime> = Arc::new(taskwire_smol::Smol::default());
    smol::block_on(async {
        let job = Tool::new("job", TaskSupport::Optional);
        let behind = Server::new(Config::new("behind", "0")).tool(job, cancels_itself);
        let front = in_front(&runtime, behind, Era::V2025_11_25).await;
        for era in [Era::V2025_11_25, Era::V2026_07_28] {
            let only = ClientEra::Only(era);
            let client = in_process::connect_to(&runtime, &front, only, ClientBuilder::new);
            client.initialize().await.unwrap();
            let call = client.call_tool_as_task("job", json!({}), None).await;
            let call = call.unwrap();
            let task = call.task.clone().expect("a task in front");
            let outcome = call.result().await.map_err(RpcError::from);
            let error = outcome.expect_err("a cancelled task has no result");
            assert_eq!(error.code, -32602, "{era:?}: {error:?}");
            assert_eq!(error.message, "Task was cancelled", "{era:?}");
            let shown = client.get_task(task.id.as_str()).await.unwrap();
            assert_eq!(shown.status.to_string(), "cancelled", "{era:?}");
            assert_eq!(
                shown.status_message.as_deref(),
                Some("cancelled behind"),
                "{era:?}"
            );
            client.close().await;
        }
    });
}

/// A task whose message it clears before it completes (`ToolContext::clear_status`).
async fn clears_its_message(ctx: ToolContext, _: NoArgs) -> ToolOutcome {
    ctx.set_status("step 1").await;
    ctx.sleep(Duration::from_millis(100)).await;
    ctx.clear_status().await;
    Ok(CallToolResult::text("done"))
}

#[test]
fn a_message_cleared_behind_is_cleared_in_front_in_every_pair_of_eras() {
    let runtime: Arc<dyn Runtime> = Arc::new(taskwire_smol::Smol::default());
    smol::block_on(async {
        let eras = [Era::V2025_11_25, Era::V2026_07_28];
        for pair in eras
            .into_iter()
            .flat_map(|behind| eras.map(|front| (behind, front)))
        {
            let job = Tool::new("job", TaskSupport::Optional);
            let behind = Server::new(Config::new("behind", "0")).tool(job, clears_its_message);
            let front = in_front(&runtime, behind, pair.0).await;
            let only = ClientEra::Only(pair.1);
            let client = in_process::connect_to(&runtime, &front, only, ClientBuilder::new);
            client.initialize().await.unwrap();
            let call = client.call_tool_as_task("job", json!({}), None).await;
            let call = call.unwrap();
            let task = call.task.clone().expect("a task in front");
            let result = call.result().await.unwrap();
            assert_eq!(result.all_text(), "done", "{pair:?}");
            let shown = client.get_task(task.id.as_str()).await.unwrap();
            assert_eq!(shown.status.to_string(), "completed", "{pair:?}");
            assert_eq!(shown.status_message, None, "{pair:?} (behind, front)");
            client.close().await;
        }
    });
}

/// The resources front clients of either era subscribe to are asked behind as one set, each
/// once; an update reaches only the clients subscribed to it; a client gone wants nothing.
#[test]
fn resources_subscribed_in_front_are_subscribed_behind_while_wanted() {
    for era in [Era::V2025_11_25, Era::V2026_07_28] {
        resources_subscribed(era);
    }
}

/// The test above, with a server behind in `era` (a 2025-11-25 one takes
/// `resources/subscribe`, a 2026-07-28 one a listen stream's `resourceSubscriptions`).
fn resources_subscribed(era: Era) {
    use std::collections::BTreeSet;
    use std::sync::Mutex;
    let runtime: Arc<dyn Runtime> = Arc::new(taskwire_smol::Smol::default());
    smol::block_on(async {
        // What the server behind is subscribed to, as it sees it.
        let subscribed: Arc<Mutex<BTreeSet<String>>> = Arc::default();
        let told = subscribed.clone();
        let behind = Server::new(Config::new("behind", "0"))
            .capability("resources", json!({ "subscribe": true }))
            .on_resource_subscriptions(move |uris| {
                *told.lock().unwrap() = uris.into_iter().collect();
            });
        let notifier = behind.notifier();
        let front = in_front(&runtime, behind, era).await;
        let behind_has = |want: &[&str]| {
            let subscribed = subscribed.clone();
            let want: BTreeSet<String> = want.iter().map(|u| u.to_string()).collect();
            async move {
                for _ in 0..500 {
                    if *subscribed.lock().unwrap() == want {
                        return;
                    }
                    smol::Timer::after(Duration::from_millis(20)).await;
                }
                let has = subscribed.lock().unwrap().clone();
                panic!("{era:?}: behind is subscribed to {has:?}, not {want:?}");
            }
        };
        let client_of = |front_era: Era| {
            let (heard, updates) = async_channel::unbounded();
            let hearing = move |config| {
                ClientBuilder::new(config).on_notification(move |method, params| {
                    assert_eq!(method, "notifications/resources/updated");
                    let _ = heard.try_send(params.unwrap()["uri"].as_str().unwrap().to_owned());
                })
            };
            let only = ClientEra::Only(front_era);
            (
                in_process::connect_to(&runtime, &front, only, hearing),
                updates,
            )
        };
        let (old, old_updates) = client_of(Era::V2025_11_25);
        let (new, new_updates) = client_of(Era::V2026_07_28);
        old.initialize().await.unwrap();
        new.initialize().await.unwrap();
        let (a, b) = ("test://a".to_owned(), "test://b".to_owned());

        old.subscribe_resources(vec![a.clone()]).await.unwrap();
        behind_has(&["test://a"]).await;
        new.subscribe_resources(vec![a.clone(), b.clone()])
            .await
            .unwrap();
        behind_has(&["test://a", "test://b"]).await;
        // `b`'s update first: the 2025-11-25 client, not subscribed to it, hears `a` first.
        for uri in [&b, &a] {
            notifier.notify(Notice::ResourceUpdated { uri: uri.clone() });
        }
        let within = |updates: async_channel::Receiver<String>| async move {
            let next = updates.recv().fuse();
            let late = FutureExt::fuse(smol::Timer::after(Duration::from_secs(10)));
            futures::pin_mut!(next, late);
            futures::select! {
                uri = next => uri.unwrap(),
                _ = late => panic!("{era:?}: no resource update in front within 10 s"),
            }
        };
        assert_eq!(within(old_updates.clone()).await, a, "{era:?}");
        assert_eq!(within(new_updates.clone()).await, b, "{era:?}");
        assert_eq!(within(new_updates.clone()).await, a, "{era:?}");

        // The 2025-11-25 client still wants `a`: only `b` goes behind.
        new.subscribe_resources(Vec::new()).await.unwrap();
        behind_has(&["test://a"]).await;
        old.subscribe_resources(vec![b.clone()]).await.unwrap();
        behind_has(&["test://b"]).await;
        // A client gone wants nothing more.
        old.close().await;
        behind_has(&[]).await;
        new.close().await;
    });
}

/// A tool that runs only as a task: two status messages, then "done".
async fn in_steps(ctx: ToolContext, _: NoArgs) -> ToolOutcome {
    for step in ["one", "two"] {
        ctx.set_status(step).await;
        ctx.sleep(Duration::from_millis(50)).await;
    }
    Ok(CallToolResult::text("done"))
}

/// A tool that runs only as a task and asks whether to go on; answers the action taken.
async fn asks(ctx: ToolContext, _: NoArgs) -> ToolOutcome {
    let question = json!({ "mode": "form", "message": "Go on?",
        "requestedSchema": { "type": "object", "properties": { "go": { "type": "boolean" } } } });
    let answer = ctx.elicit(question).await?;
    let go = answer["action"] == "accept" && answer["content"]["go"] == true;
    Ok(CallToolResult::text(if go { "went on" } else { "stopped" }))
}

/// A tool that runs only as a task and holds until cancelled.
async fn holds(ctx: ToolContext, _: NoArgs) -> ToolOutcome {
    ctx.set_status("holding").await;
    ctx.sleep(Duration::from_secs(60)).await;
    Ok(CallToolResult::text("held"))
}

/// A 2025-11-25 server whose tools `steps`, `asks` and `holds` require a task.
fn task_only_server() -> Server {
    let required = |name| Tool::new(name, TaskSupport::Required);
    Server::new(Config::new("behind", "0"))
        .tool(required("steps"), in_steps)
        .tool(required("asks"), asks)
        .tool(required("holds"), holds)
}

#[test]
fn a_plain_call_of_a_tool_that_requires_a_task_behind_runs_as_one_in_both_front_eras() {
    let runtime: Arc<dyn Runtime> = Arc::new(taskwire_smol::Smol::default());
    smol::block_on(async {
        let behind = task_only_server().start(runtime.clone());
        let front = in_front_of(&runtime, &behind, Era::V2025_11_25).await;
        for era in [Era::V2025_11_25, Era::V2026_07_28] {
            let answering = |mut config: Config| {
                config.client.elicitation = true;
                ClientBuilder::new(config)
                    .on_elicitation(|request| async move { request.accept(&json!({"go": true})) })
            };
            let only = ClientEra::Only(era);
            let client = in_process::connect_to(&runtime, &front, only, answering);
            client.initialize().await.unwrap();
            if era == Era::V2025_11_25 {
                let tools = client.list_tools().await.unwrap();
                let support: Vec<_> = tools.iter().map(|t| t.execution.task_support).collect();
                assert_eq!(
                    support,
                    [TaskSupport::Optional; 3],
                    "callable plainly in front"
                );
            }
            let done = client.call_tool("steps", json!({})).await;
            assert_eq!(done.unwrap().all_text(), "done", "{era:?}");
            let asked = client.call_tool("asks", json!({})).await;
            assert_eq!(asked.unwrap().all_text(), "went on", "{era:?}");
            client.close().await;
        }
        // Each call ran as a task behind; the 2026-07-28 client's question went by MRTR, so
        // its call was made again, and its first task cancelled.
        let observer = in_process::connect_to(&runtime, &behind, V2025, ClientBuilder::new);
        observer.initialize().await.unwrap();
        let tasks = observer.list_tasks().await.unwrap();
        let statuses: Vec<String> = tasks.iter().map(|t| t.status.to_string()).collect();
        let count = |status: &str| statuses.iter().filter(|s| *s == status).count();
        assert_eq!(
            (count("completed"), count("cancelled")),
            (4, 1),
            "{tasks:?}"
        );
        observer.close().await;
    });
}

#[test]
fn a_plain_call_run_as_a_task_behind_hears_its_status_messages_as_progress() {
    let runtime: Arc<dyn Runtime> = Arc::new(taskwire_smol::Smol::default());
    smol::block_on(async {
        let front = in_front(&runtime, task_only_server(), Era::V2025_11_25).await;
        let (lines, mut raw) = in_process::socket(&runtime, &front).split();
        let mut lines = futures::io::BufReader::new(lines).lines();
        let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"}}});
        send(&mut raw, initialize).await;
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        send(&mut raw, initialized).await;
        let call = |id: u64, meta: Value| {
            json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                   "params": {"name": "steps", "arguments": {}, "_meta": meta}})
        };
        send(&mut raw, call(1, json!({"progressToken": "p-1"}))).await;
        send(&mut raw, call(2, json!({}))).await;
        let (mut progress, mut answered) = (Vec::new(), 0);
        while answered < 2 {
            let line = lines.next().await.expect("a line").unwrap();
            let message: Value = serde_json::from_str(&line).unwrap();
            if message["method"] == "notifications/progress" {
                progress.push(message["params"].clone());
            } else if message["id"] == 1 || message["id"] == 2 {
                assert_eq!(message["result"]["content"][0]["text"], "done", "{message}");
                answered += 1;
            }
        }
        assert_eq!(
            progress,
            [
                json!({"progressToken": "p-1", "progress": 1.0, "message": "one"}),
                json!({"progressToken": "p-1", "progress": 2.0, "message": "two"}),
            ],
            "the call without a token hears none"
        );
    });
}

/// Writes `message` as one line.
async fn send(raw: &mut (impl AsyncWriteExt + Unpin), message: Value) {
    let line = format!("{message}\n");
    raw.write_all(line.as_bytes()).await.unwrap();
}

#[test]
fn a_front_cancel_of_a_plain_call_cancels_its_task_behind_in_both_front_eras() {
    let runtime: Arc<dyn Runtime> = Arc::new(taskwire_smol::Smol::default());
    smol::block_on(async {
        let behind = task_only_server().start(runtime.clone());
        let front = in_front_of(&runtime, &behind, Era::V2025_11_25).await;
        let observer = in_process::connect_to(&runtime, &behind, V2025, ClientBuilder::new);
        observer.initialize().await.unwrap();
        for era in [Era::V2025_11_25, Era::V2026_07_28] {
            let only = ClientEra::Only(era);
            let client = in_process::connect_to(&runtime, &front, only, ClientBuilder::new);
            client.initialize().await.unwrap();
            let before: Vec<_> = observer.list_tasks().await.unwrap();
            let mut call = Box::pin(client.call_tool("holds", json!({})).fuse());
            // The call runs until its task holds behind; then it is given up (cancelled).
            let held = async {
                loop {
                    let tasks = observer.list_tasks().await.unwrap();
                    let new = tasks
                        .into_iter()
                        .find(|t| !before.iter().any(|b| b.id == t.id));
                    if let Some(task) =
                        new.filter(|t| t.status_message.as_deref() == Some("holding"))
                    {
                        return task;
                    }
                    smol::Timer::after(Duration::from_millis(20)).await;
                }
            };
            let task = futures::select! {
                _ = call.as_mut() => panic!("{era:?}: the call ended before it was cancelled"),
                task = FutureExt::fuse(Box::pin(held)) => task,
            };
            drop(call);
            let mut status = String::new();
            for _ in 0..500 {
                status = observer
                    .get_task(task.id.as_str())
                    .await
                    .unwrap()
                    .status
                    .to_string();
                if status == "cancelled" {
                    break;
                }
                smol::Timer::after(Duration::from_millis(20)).await;
            }
            assert_eq!(status, "cancelled", "{era:?}: the task behind");
            client.close().await;
        }
        observer.close().await;
    });
}

/// A front cancel that comes before the server behind's answer (its `CreateTaskResult`,
/// delayed here on its way to the proxy) still cancels the task, once made: the call behind
/// cannot be given up by `notifications/cancelled`, which a task call may not be.
#[test]
fn a_front_cancel_before_the_task_behind_is_made_cancels_it_once_made() {
    let runtime: Arc<dyn Runtime> = Arc::new(taskwire_smol::Smol::default());
    smol::block_on(async {
        let behind = task_only_server().start(runtime.clone());
        let (from_behind, to_behind) = in_process::socket(&runtime, &behind).split();
        let (late, later) = std::os::unix::net::UnixStream::pair().unwrap();
        let (late, later) = (
            smol::Async::new(late).unwrap(),
            smol::Async::new(later).unwrap(),
        );
        runtime.spawn(Box::pin(delayed(from_behind, later)));
        let config = Config {
            client_era: V2025,
            ..Config::new("proxy", "0")
        };
        let proxy = Proxy::new(runtime.clone(), AsTask::None, config);
        let client =
            proxy
                .client_builder()
                .connect(runtime.clone(), Box::pin(late), Box::pin(to_behind));
        let opened = client.initialize().await.unwrap();
        let front = proxy.server(client, &opened, Config::new("proxy", "0"));
        let front = front.await.unwrap().start(runtime.clone());
        let observer = in_process::connect_to(&runtime, &behind, V2025, ClientBuilder::new);
        observer.initialize().await.unwrap();
        let caller = in_process::connect_to(&runtime, &front, V2025, ClientBuilder::new);
        caller.initialize().await.unwrap();

        let call = Box::pin(caller.call_tool("holds", json!({})));
        let made = async {
            loop {
                if let Some(task) = observer.list_tasks().await.unwrap().pop() {
                    return task;
                }
                smol::Timer::after(Duration::from_millis(10)).await;
            }
        };
        let task = futures::select! {
            _ = FutureExt::fuse(call) => panic!("the call ended"),
            task = FutureExt::fuse(Box::pin(made)) => task,
        };
        // The call is given up (cancelled in front) before the proxy hears of its task.
        let mut status = String::new();
        for _ in 0..500 {
            let shown = observer.get_task(task.id.as_str()).await.unwrap();
            status = shown.status.to_string();
            if status == "cancelled" {
                break;
            }
            smol::Timer::after(Duration::from_millis(20)).await;
        }
        assert_eq!(status, "cancelled", "the task behind");
        caller.close().await;
        observer.close().await;
    });
}

/// Copies `from` to `to`, each chunk 300 ms late.
async fn delayed(mut from: impl AsyncReadExt + Unpin, mut to: impl AsyncWriteExt + Unpin) {
    let mut buf = vec![0; 64 * 1024];
    while let Ok(n @ 1..) = from.read(&mut buf).await {
        smol::Timer::after(Duration::from_millis(300)).await;
        if to.write_all(&buf[..n]).await.is_err() {
            return;
        }
    }
}
