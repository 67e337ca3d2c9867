//! The client API as a user reads it, in both eras against one in-process server: the same
//! typed result for the same tool, structured content decoded into a struct, a tool error
//! told from a protocol error, progress and log messages among a task call's updates where
//! the era carries them, and status updates saying what changed; errors that say what to do
//! (the field of a wrong argument, the handler a question needs, a tool that runs only as
//! a task).

use crate::in_process;
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::json;
use taskwire_driver::engine::{ClientEra, Era, PlainReason, TaskStatus};
use taskwire_driver::{
    CallToolResult, Client, ClientBuilder, Config, ElicitationAnswer, ElicitationMode,
    ElicitationRequest, Elicited, Error, LogLevel, Progress, Runtime, Server, TaskSupport,
    TaskUpdate, Tool,
};

#[derive(Debug, PartialEq, Serialize, Deserialize)]
struct Report {
    steps: u32,
    summary: String,
}

/// What `ship` asks the user for.
#[derive(Debug, Serialize, Deserialize, schemars::JsonSchema)]
struct Shipping {
    /// Where to send it.
    address: String,
    speed: Speed,
    gift: Option<bool>,
}

#[derive(Debug, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Speed {
    Slow,
    Express,
}

/// What `fetch` takes.
#[derive(Deserialize)]
struct Fetch {
    url: String,
    #[serde(default)]
    retry: Option<Retry>,
}

#[derive(Deserialize)]
struct Retry {
    delays_ms: Vec<u64>,
}

/// `steps` (a task when asked) and `steps_plain` (never a task): each of three steps
/// reports progress, logs and sets the status message; the result is a [`Report`].
/// `ship` asks for a [`Shipping`] form with the `message` it is given. `broken` is a tool
/// error. `fetch` reads its arguments as a [`Fetch`]; `only_task` runs only as a task.
fn server() -> Server {
    let steps = |ctx: taskwire_driver::ToolContext, _: serde_json::Value| async move {
        for step in 1..=3u32 {
            let message = format!("step {step}");
            ctx.progress(f64::from(step), Some(3.0), Some(message.clone()))
                .await;
            ctx.log(LogLevel::Info, Some("steps"), json!(message))
                .await?;
            ctx.set_status(message).await;
            ctx.sleep(Duration::from_millis(40)).await;
        }
        CallToolResult::json(Report {
            steps: 3,
            summary: "all done".into(),
        })
    };
    let config = Config {
        logging: true,
        ..Config::new("typed", "1.0")
    };
    Server::new(config)
        .tool(Tool::new("steps", TaskSupport::Optional), steps)
        .tool(Tool::new("steps_plain", TaskSupport::Forbidden), steps)
        .tool(
            Tool::new("ship", TaskSupport::Optional),
            |ctx, args: serde_json::Value| async move {
                let message = args["message"].as_str().unwrap_or_default();
                Ok(match ctx.elicit_form::<Shipping>(message).await? {
                    Elicited::Accepted(to) => CallToolResult::text(format!("{to:?}")),
                    Elicited::Declined => CallToolResult::text("declined"),
                    Elicited::Cancelled => CallToolResult::text("cancelled"),
                })
            },
        )
        .tool(
            Tool::new("broken", TaskSupport::Optional),
            |_, _: serde_json::Value| async move { Ok(CallToolResult::error("it broke")) },
        )
        .tool(
            Tool::new("fetch", TaskSupport::Forbidden),
            |_, args: Fetch| async move {
                let delays = args.retry.map(|r| r.delays_ms).unwrap_or_default();
                Ok(CallToolResult::text(format!(
                    "{} after {delays:?}",
                    args.url
                )))
            },
        )
        .tool(
            Tool::new("only_task", TaskSupport::Required),
            |_, _: serde_json::Value| async move { Ok(CallToolResult::text("done")) },
        )
}

/// A client of `era` connected to a fresh server over a socket pair; runs `body`.
fn with_client(era: Era, body: impl AsyncFnOnce(Client)) {
    with_client_built(era, ClientBuilder::new, body)
}

/// [`with_client`], the client built by `build` from its configuration.
fn with_client_built(
    era: Era,
    build: impl FnOnce(Config) -> ClientBuilder,
    body: impl AsyncFnOnce(Client),
) {
    let runtime: Arc<dyn Runtime> = Arc::new(taskwire_smol::Smol::default());
    let client = in_process::connect(&runtime, server(), ClientEra::Only(era), build);
    smol::block_on(async {
        let limit = smol::Timer::after(Duration::from_secs(20));
        let body = async {
            let opened = client.initialize().await.expect("initialize");
            assert_eq!(opened.protocol_version, era.as_str());
            client.list_tools().await.expect("tools/list");
            body(client).await
        };
        futures::pin_mut!(body);
        if let futures::future::Either::Right(_) = futures::future::select(body, limit).await {
            panic!("the test body did not finish within 20 s");
        }
    });
}

/// Every update of a call, in order, the outcome last.
async fn all_updates(call: taskwire_driver::TaskCall) -> Vec<TaskUpdate> {
    let mut seen = Vec::new();
    while let Ok(update) = call.updates.recv().await {
        seen.push(update);
    }
    seen
}

fn expected_result() -> CallToolResult {
    CallToolResult::json(Report {
        steps: 3,
        summary: "all done".into(),
    })
    .unwrap()
}

fn progress_of(updates: &[TaskUpdate]) -> Vec<Progress> {
    updates
        .iter()
        .filter_map(|u| match u {
            TaskUpdate::Progress(p) => Some(p.clone()),
            _ => None,
        })
        .collect()
}

fn three_steps() -> Vec<Progress> {
    (1..=3)
        .map(|step| Progress {
            progress: f64::from(step),
            total: Some(3.0),
            message: Some(format!("step {step}")),
        })
        .collect()
}

/// The outcome, which must be the last update.
fn outcome(updates: &mut Vec<TaskUpdate>) -> Result<CallToolResult, Error> {
    match updates.pop() {
        Some(TaskUpdate::Result(outcome)) => outcome,
        other => panic!("the last update is not the outcome: {other:?}"),
    }
}

#[test]
fn a_2025_task_reports_progress_logs_and_what_changed_then_the_typed_result() {
    with_client(Era::V2025_11_25, async |client| {
        let call = client
            .call_tool_as_task("steps", json!({}), None)
            .await
            .expect("a task");
        assert_eq!(
            call.task.as_ref().map(|t| t.status),
            Some(TaskStatus::Working)
        );
        let mut updates = all_updates(call).await;
        let result = outcome(&mut updates).expect("a result");
        assert_eq!(result, expected_result());
        assert!(!result.is_error);
        assert_eq!(
            result.structured::<Report>().expect("a report"),
            Report {
                steps: 3,
                summary: "all done".into()
            }
        );
        assert_eq!(progress_of(&updates), three_steps(), "{updates:?}");
        let logs: Vec<_> = updates
            .iter()
            .filter_map(|u| match u {
                TaskUpdate::Log(m) => Some((m.level, m.logger.clone(), m.data.clone())),
                _ => None,
            })
            .collect();
        let step = |n: u32| {
            (
                LogLevel::Info,
                Some("steps".into()),
                json!(format!("step {n}")),
            )
        };
        assert_eq!(logs, [step(1), step(2), step(3)], "{updates:?}");
        // A message change is a Message update (the status stayed `working`); the status
        // change to `completed` is a Status update.
        for update in &updates {
            match update {
                TaskUpdate::Message(task) => assert_eq!(task.status, TaskStatus::Working),
                TaskUpdate::Status(task) => assert_ne!(task.status, TaskStatus::Working),
                _ => {}
            }
        }
        assert!(
            updates.iter().any(|u| matches!(u, TaskUpdate::Message(_))),
            "{updates:?}"
        );
    });
}

#[test]
fn a_2026_task_has_the_same_typed_result_and_no_task_progress_or_logs() {
    with_client(Era::V2026_07_28, async |client| {
        let call = client
            .call_tool_as_task("steps", json!({}), None)
            .await
            .expect("a task");
        assert!(call.task.is_some(), "{call:?}");
        let mut updates = all_updates(call).await;
        assert_eq!(outcome(&mut updates), Ok(expected_result()));
        assert!(
            updates
                .iter()
                .all(|u| matches!(u, TaskUpdate::Status(_) | TaskUpdate::Message(_))),
            "2026-07-28 carries neither progress nor logs on tasks: {updates:?}"
        );
        // The same tool called plainly: the same result.
        let plain = client
            .call_tool("steps", json!({}))
            .await
            .expect("a result");
        assert_eq!(plain, expected_result());
    });
}

#[test]
fn a_task_call_that_runs_plainly_streams_its_progress_in_both_eras() {
    for era in [Era::V2025_11_25, Era::V2026_07_28] {
        with_client(era, async |client| {
            let call = client
                .call_tool_as_task("steps_plain", json!({}), None)
                .await
                .expect("the call");
            assert_eq!(call.task, None);
            // 2025-11-25: the client reads the tool's task support; 2026-07-28: the server
            // decides, and answers plainly.
            let plain = (era == Era::V2025_11_25).then_some(PlainReason::ToolForbidsTasks);
            assert_eq!(call.plain, plain);
            let mut updates = all_updates(call).await;
            assert_eq!(outcome(&mut updates), Ok(expected_result()), "{era:?}");
            assert_eq!(progress_of(&updates), three_steps(), "{era:?}");
        });
    }
}

#[test]
fn a_tool_error_is_a_result_and_a_wrong_type_is_malformed() {
    for era in [Era::V2025_11_25, Era::V2026_07_28] {
        with_client(era, async |client| {
            let broken = client
                .call_tool("broken", json!({}))
                .await
                .expect("a result");
            assert!(broken.is_error);
            assert_eq!(broken.all_text(), "it broke");
            assert!(matches!(
                broken.structured::<Report>(),
                Err(Error::Malformed(why)) if why.contains("no structuredContent")
            ));
            let steps = client
                .call_tool("steps", json!({}))
                .await
                .expect("a result");
            assert!(matches!(
                steps.structured::<Vec<u8>>(),
                Err(Error::Malformed(why)) if why.starts_with("structuredContent: ")
            ));
            let unknown = client.call_tool("no_such_tool", json!({})).await;
            assert!(
                matches!(unknown, Err(Error::Rpc(ref e)) if e.code == -32602),
                "{unknown:?}"
            );
        });
    }
}

/// The user of the form tests: answers by the form's message, checking the form it got.
async fn fill_in(
    request: ElicitationRequest,
) -> Result<ElicitationAnswer, taskwire_driver::RpcError> {
    let ElicitationMode::Form { requested_schema } = &request.mode else {
        panic!("a form: {request:?}");
    };
    assert_eq!(
        requested_schema,
        &json!({
            "type": "object",
            "properties": {
                "address": { "type": "string", "description": "Where to send it." },
                "speed": { "type": "string", "enum": ["slow", "express"] },
                "gift": { "type": "boolean" }
            },
            "required": ["address", "speed"]
        })
    );
    match request.message.as_str() {
        "accept" => request.accept(&json!({ "address": "1 Main St", "speed": "express" })),
        "decline" => Ok(ElicitationAnswer::Decline),
        "cancel" => Ok(ElicitationAnswer::Cancel),
        // Not what the form asks: the client does not send it.
        _ => Ok(ElicitationAnswer::Accept(
            json!({ "address": "1 Main St", "speed": "warp" })
                .as_object()
                .unwrap()
                .clone(),
        )),
    }
}

#[test]
fn a_typed_form_is_asked_checked_and_decoded_in_both_eras() {
    for era in [Era::V2025_11_25, Era::V2026_07_28] {
        let build = |config| ClientBuilder::new(config).on_elicitation(fill_in);
        with_client_built(era, build, async |client| {
            let ship = async |message: &str| {
                let args = json!({ "message": message });
                client.call_tool("ship", args).await
            };
            let accepted = ship("accept")
                .await
                .unwrap_or_else(|e| panic!("{era:?}: {e:?}"));
            assert_eq!(
                accepted.all_text(),
                r#"Shipping { address: "1 Main St", speed: Express, gift: None }"#,
                "{era:?}"
            );
            assert_eq!(ship("decline").await.unwrap().all_text(), "declined");
            assert_eq!(ship("cancel").await.unwrap().all_text(), "cancelled");
            // The unfit answer never reaches the tool's form: the client answers -32603.
            let unfit = ship("unfit").await;
            let Err(Error::Rpc(e)) = &unfit else {
                panic!("{era:?}: {unfit:?}");
            };
            assert!(
                e.message
                    .contains(r#"the field "speed" is "warp", not one of the form's options"#),
                "{era:?}: {e}"
            );
            // As a task: input_required, then the decoded answer.
            let call = client
                .call_tool_as_task("ship", json!({ "message": "accept" }), None)
                .await
                .expect("a task");
            let mut updates = all_updates(call).await;
            assert_eq!(outcome(&mut updates), Ok(accepted), "{era:?}");
            assert!(
                updates.iter().any(|u| matches!(u,
                    TaskUpdate::Status(t) if t.status == TaskStatus::InputRequired)),
                "{era:?}: {updates:?}"
            );
        });
    }
}

#[test]
fn arguments_or_structured_content_of_the_wrong_type_name_the_field() {
    for era in [Era::V2025_11_25, Era::V2026_07_28] {
        with_client(era, async |client| {
            let refused = async |args| match client.call_tool("fetch", args).await {
                Err(Error::Rpc(e)) if e.code == -32602 => e.message,
                other => panic!("{era:?}: -32602 expected, not {other:?}"),
            };
            assert_eq!(
                refused(json!({ "url": 5 })).await,
                "Invalid arguments for tool fetch: url: invalid type: integer `5`, expected a \
                 string"
            );
            assert_eq!(
                refused(json!({ "url": "u", "retry": { "delays_ms": [10, "x"] } })).await,
                "Invalid arguments for tool fetch: retry.delays_ms[1]: invalid type: string \
                 \"x\", expected u64"
            );
            let fetched = client
                .call_tool(
                    "fetch",
                    json!({ "url": "u", "retry": { "delays_ms": [10] } }),
                )
                .await;
            assert_eq!(fetched.expect("a result").all_text(), "u after [10]");
            // Nothing to name when the whole is wrong.
            assert_eq!(
                refused(json!({})).await,
                "Invalid arguments for tool fetch: missing field `url`"
            );
            #[derive(Debug, Deserialize)]
            #[allow(dead_code)]
            struct Misread {
                steps: String,
            }
            let steps = client
                .call_tool("steps", json!({}))
                .await
                .expect("a result");
            let misread = steps.structured::<Misread>();
            assert!(
                matches!(&misread, Err(Error::Malformed(why))
                    if why == "structuredContent: steps: invalid type: integer `3`, expected a string"),
                "{era:?}: {misread:?}"
            );
        });
    }
}

#[test]
fn a_tool_that_asks_a_client_without_a_handler_says_to_add_one_in_both_eras() {
    for era in [Era::V2025_11_25, Era::V2026_07_28] {
        with_client(era, async |client| {
            let says_what_to_add = |outcome: Result<CallToolResult, Error>| {
                let Err(e) = outcome else {
                    panic!("{era:?}: an error expected, not {outcome:?}");
                };
                assert_eq!(e.rpc().map(|e| e.code), Some(-32021), "{era:?}: {e:?}");
                assert_eq!(e.required_capabilities(), ["elicitation"], "{era:?}");
                assert!(
                    e.to_string().ends_with(
                        "; answer the server's questions with ClientBuilder::on_elicitation"
                    ),
                    "{era:?}: {e}"
                );
            };
            let asked = json!({ "message": "accept" });
            says_what_to_add(client.call_tool("ship", asked.clone()).await);
            // As a task, the task ends with that error.
            let call = client
                .call_tool_as_task("ship", asked, None)
                .await
                .expect("a task");
            assert!(call.task.is_some(), "{era:?}: {call:?}");
            says_what_to_add(call.result().await);
        });
    }
}

#[test]
fn a_plain_2026_call_of_a_tool_that_runs_only_as_a_task_says_how_to_call_it() {
    with_client(Era::V2026_07_28, async |client| {
        let plain = client.call_tool("only_task", json!({})).await;
        let Err(e) = plain else {
            panic!("-32021 expected, not {plain:?}");
        };
        assert_eq!(e.rpc().map(|e| e.code), Some(-32021), "{e:?}");
        assert_eq!(
            e.to_string(),
            "Missing required client capability (-32021); the tool runs only as a task: call it \
             with Client::call_tool_as_task"
        );
        let call = client
            .call_tool_as_task("only_task", json!({}), None)
            .await
            .expect("a task");
        assert!(call.task.is_some(), "{call:?}");
        assert_eq!(call.result().await.expect("its result").all_text(), "done");
    });
}
