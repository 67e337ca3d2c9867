//! Interop with `@modelcontextprotocol/server-everything` (2026.8.31, on sdk 1.32.2) through
//! our client API:
//!
//! - `simulate-research-query`: a task that goes to `input_required` and asks us for an
//!   elicitation through `tasks/result`, answered by our handler;
//! - `trigger-sampling-request-async` / `trigger-elicitation-request-async`: the server sends us
//!   task-augmented sampling and elicitation requests; our client hosts those tasks and the
//!   server polls them (`tasks/get`, `tasks/result`). It registers these tools only when the
//!   client declares `capabilities.tasks.requests.*`, which our client derives from its handlers.
//!
//! Test names: `client_api[_runtime]_to_everything_<case>`.

use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};
use taskwire_driver::engine::{Config, TaskStatus, TaskSupport};
use taskwire_driver::{CallToolResult, RpcError};
use taskwire_driver::{
    Client, ClientBuilder, ElicitationAnswer, ElicitationMode, SamplingAnswer, TaskUpdate,
};
use taskwire_tests::peers;

use crate::common::{DEADLINE, RELATED};

const SAMPLING_TOOL: &str = "trigger-sampling-request-async";
const ELICITATION_TOOL: &str = "trigger-elicitation-request-async";

fn builder() -> ClientBuilder {
    ClientBuilder::new(Config::new("taskwire-interop", "0.1.0"))
}

/// Runs `body` on smol against `mcp-server-everything stdio`, connected with `builder`.
fn with_everything<Fut>(test: &str, builder: ClientBuilder, body: impl FnOnce(Client) -> Fut)
where
    Fut: Future<Output = ()>,
{
    let Some(p) = peers::ready(test) else { return };
    let stderr = p.scratch(&format!("{test}.stderr"));
    let server = p.everything().stderr_to(&stderr);
    smol::block_on(async {
        let command = server.command();
        let (client, mut child) = taskwire_smol::spawn_server(command, builder).unwrap();
        let init = client.initialize().await.unwrap();
        assert_eq!(init.protocol_version, "2025-11-25");
        assert!(init.capabilities["tasks"]["requests"]["tools"]["call"].is_object());
        let timeout = async {
            smol::Timer::after(DEADLINE).await;
            panic!("{test} timed out; server stderr in {}", stderr.display());
        };
        smol::future::or(body(client.clone()), timeout).await;
        client.close().await;
        let _ = child.kill();
        let _ = child.wait().await;
    });
}

/// Status changes, then the outcome, of a task call.
async fn follow(updates: async_channel::Receiver<TaskUpdate>) -> (Vec<TaskStatus>, CallToolResult) {
    let mut statuses = Vec::new();
    while let Ok(update) = updates.recv().await {
        match update {
            TaskUpdate::Status(task) => statuses.push(task.status),
            TaskUpdate::Result(outcome) => return (statuses, outcome.expect("a result")),
            _ => {}
        }
    }
    panic!("the updates ended without a result; statuses {statuses:?}");
}

/// The task moves `working` → `input_required` → `working` → `completed`; the elicitation it
/// asks for carries the task's related-task `_meta` and is answered with a choice of ours.
#[test]
fn client_api_to_everything_input_required_elicitation() {
    let (asked_tx, asked) = async_channel::unbounded::<Value>();
    let client = builder().on_elicitation(move |request| {
        let asked_tx = asked_tx.clone();
        async move {
            let ElicitationMode::Form { requested_schema } = &request.mode else {
                panic!("a form, not {:?}", request.mode);
            };
            let choices = requested_schema["properties"]["interpretation"]["oneOf"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            let last = choices
                .last()
                .map(|c| c["const"].clone())
                .unwrap_or_default();
            let _ = asked_tx.send(request.params).await;
            ElicitationAnswer::accept(&json!({ "interpretation": last }))
        }
    });
    with_everything(
        "client_api_to_everything_input_required_elicitation",
        client,
        |client| async move {
            let tools = client.list_tools().await.unwrap();
            let research = tools.iter().find(|t| t.name == "simulate-research-query");
            assert_eq!(
                research.map(|t| t.execution.task_support),
                Some(TaskSupport::Required)
            );
            let args = json!({ "topic": "python", "ambiguous": true });
            let call = client
                .call_tool_as_task("simulate-research-query", args, Some(60_000))
                .await
                .unwrap();
            let task = call.task.clone().unwrap();
            assert_eq!(
                task.ttl_ms,
                Some(300_000),
                "server-everything ignores the requested ttl"
            );
            let (statuses, result) = follow(call.updates).await;
            let input = statuses
                .iter()
                .position(|s| *s == TaskStatus::InputRequired)
                .unwrap_or_else(|| panic!("never input_required: {statuses:?}"));
            let times = statuses.iter().filter(|s| **s == TaskStatus::InputRequired);
            assert_eq!(
                times.count(),
                1,
                "notified twice, reported once: {statuses:?}"
            );
            assert!(
                statuses[input + 1..].contains(&TaskStatus::Working),
                "{statuses:?}"
            );
            assert_eq!(
                statuses.last(),
                Some(&TaskStatus::Completed),
                "{statuses:?}"
            );

            let params = asked.try_recv().expect("one elicitation");
            assert!(asked.try_recv().is_err(), "more than one elicitation");
            assert_eq!(params["_meta"][RELATED]["taskId"], task.id.as_str());
            let choices = params["requestedSchema"]["properties"]["interpretation"]["oneOf"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            assert_eq!(choices.len(), 3, "{params}");
            let chosen = choices[2]["const"].as_str().unwrap();
            let report = result.all_text();
            let title = format!("# Research Report: python ({chosen})");
            assert!(report.starts_with(&title), "{report}");
            // The related-task `_meta` names the call's own task: left out of the result.
            assert!(result.meta.is_none_or(|m| !m.contains_key(RELATED)));
        },
    );
}

/// The server asks us for sampling as a task (`"task":{"ttl":300000}`); our handler takes two
/// seconds, so the server's polls (one a second) see our task `working`, then `completed`, and
/// it reads our result through `tasks/result`.
#[test]
fn client_api_to_everything_sampling_task_hosted_by_us() {
    let client = builder()
        .on_sampling(|request| async move {
            smol::Timer::after(Duration::from_millis(2000)).await;
            let n = request.messages.len();
            let text = format!("taskwire completion of {n}");
            Ok(SamplingAnswer::text("taskwire-model", text))
        })
        .on_elicitation(|_| async { Ok(ElicitationAnswer::Decline) });
    with_everything(
        "client_api_to_everything_sampling_task_hosted_by_us",
        client,
        |client| async move {
            let tools = client.list_tools().await.unwrap();
            assert!(
                tools.iter().any(|t| t.name == SAMPLING_TOOL),
                "not registered"
            );
            let args = json!({ "prompt": "taskwire", "maxTokens": 16 });
            let result = client.call_tool(SAMPLING_TOOL, args).await.unwrap();
            let text = result.all_text();
            assert!(
                text.starts_with("[COMPLETED] Async sampling completed!"),
                "{text}"
            );
            assert!(text.contains("Poll 1: working"), "{text}");
            assert!(text.contains(": completed"), "{text}");
            assert!(text.contains("taskwire completion of 1"), "{text}");
            assert!(
                text.contains(RELATED),
                "our tasks/result lacks related-task: {text}"
            );
        },
    );
}

/// The server asks us for an elicitation as a task (`"task":{"ttl":600000}`), on tokio.
#[test]
fn client_api_tokio_to_everything_elicitation_task_hosted_by_us() {
    let test = "client_api_tokio_to_everything_elicitation_task_hosted_by_us";
    let Some(p) = peers::ready(test) else { return };
    let stderr = p.scratch(&format!("{test}.stderr"));
    let server = p.everything().stderr_to(&stderr);
    let builder = builder()
        .on_sampling(|_| async { Err(taskwire_driver::engine::RpcError::new(-32600, "no")) })
        .on_elicitation(|request| async move {
            tokio::time::sleep(Duration::from_millis(1200)).await;
            assert!(request.params["requestedSchema"]["properties"]["name"].is_object());
            ElicitationAnswer::accept(&json!({
                "name": "taskwire", "favoriteColor": "Green", "agreeToTerms": true
            }))
        });
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let command = server.command();
        let (client, mut child) = taskwire_tokio::spawn_server(command, builder).unwrap();
        let body = async {
            client.initialize().await.unwrap();
            let result = client.call_tool(ELICITATION_TOOL, json!({})).await.unwrap();
            let text = result.all_text();
            assert!(
                text.starts_with("[COMPLETED] User provided the requested information!"),
                "{text}"
            );
            assert!(text.contains("Name: taskwire"), "{text}");
            assert!(text.contains("Green"), "{text}");
        };
        if tokio::time::timeout(DEADLINE, body).await.is_err() {
            panic!("{test} timed out; server stderr in {}", stderr.display());
        }
        client.close().await;
        let _ = child.kill();
        let _ = child.wait().await;
    });
}

/// server-everything's elicitation tool, answered `decline`, then `cancel`: each comes back
/// to the tool, which says so in its result.
#[test]
fn client_api_to_everything_declined_and_cancelled_elicitation() {
    let answers = Arc::new(Mutex::new(vec![
        ElicitationAnswer::Cancel,
        ElicitationAnswer::Decline,
    ]));
    let client = builder().on_elicitation(move |_| {
        let answer = answers.lock().unwrap().pop().expect("two elicitations");
        async move { Ok(answer) }
    });
    with_everything(
        "client_api_to_everything_declined_and_cancelled_elicitation",
        client,
        |client| async move {
            for action in ["decline", "cancel"] {
                let result = client.call_tool(ELICITATION_TOOL, json!({})).await.unwrap();
                let text = result.all_text().to_lowercase();
                assert!(text.contains(action), "{action}: {text}");
            }
        },
    );
}

/// Without handlers we declare neither sampling nor elicitation (nor their tasks), so the
/// server does not register the tools that would send them.
#[test]
fn client_api_to_everything_without_handlers_gets_no_async_tools() {
    with_everything(
        "client_api_to_everything_without_handlers_gets_no_async_tools",
        builder(),
        |client| async move {
            let tools = client.list_tools().await.unwrap();
            let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
            assert!(names.contains(&"simulate-research-query"), "{names:?}");
            assert!(!names.contains(&SAMPLING_TOOL), "{names:?}");
            assert!(!names.contains(&ELICITATION_TOOL), "{names:?}");
        },
    );
}

/// Cancel while running, then the task's and an unknown id's errors.
#[test]
fn client_api_to_everything_cancel_and_unknown_id() {
    with_everything(
        "client_api_to_everything_cancel_and_unknown_id",
        builder(),
        |client| async move {
            let args = json!({ "topic": "rust" });
            let call = client
                .call_tool_as_task("simulate-research-query", args, None)
                .await
                .unwrap();
            let id = call.task.clone().unwrap().id;
            let cancelled = client.cancel_task(&id).await.unwrap();
            assert_eq!(cancelled.status, TaskStatus::Cancelled);
            let (statuses, outcome) = follow_to_end(call.updates).await;
            assert_eq!(
                statuses.last(),
                Some(&TaskStatus::Cancelled),
                "{statuses:?}"
            );
            // tasks/result of a cancelled task: the server has no result to give.
            assert!(matches!(outcome, Some(Err(_))), "{outcome:?}");
            let again = client
                .cancel_task(&id)
                .await
                .map_err(RpcError::from)
                .unwrap_err();
            assert_eq!(again.code, -32602, "{again:?}");
            let unknown = client
                .get_task("taskwire-no-such-task")
                .await
                .map_err(RpcError::from)
                .unwrap_err();
            assert_eq!(unknown.code, -32602, "{unknown:?}");
        },
    );
}

/// Like [`follow`], but the outcome may be an error (a cancelled task has no result).
async fn follow_to_end(
    updates: async_channel::Receiver<TaskUpdate>,
) -> (Vec<TaskStatus>, Option<Result<CallToolResult, String>>) {
    let mut statuses = Vec::new();
    let mut outcome = None;
    while let Ok(update) = updates.recv().await {
        match update {
            TaskUpdate::Status(task) => statuses.push(task.status),
            TaskUpdate::Result(r) => outcome = Some(r.map_err(|e| RpcError::from(e).message)),
            _ => {}
        }
    }
    (statuses, outcome)
}
