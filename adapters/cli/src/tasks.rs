//! `taskwire tasks list|get|result|cancel`.

use std::time::Duration;

use serde_json::json;
use taskwire_driver::engine::{TaskInfo, TaskStatus};
use taskwire_driver::{CallToolResult, Client, ClientBuilder, Error, RpcError};

use crate::args::TasksCommand;
use crate::call::task_json;
use crate::connect;
use crate::display::Display;
use crate::exit::Exit;

/// Runs `taskwire tasks …`.
pub async fn run(command: TasksCommand, display: Display) -> Exit {
    let (server, task) = match &command {
        TasksCommand::List { server } => (server, None),
        TasksCommand::Get { task_id, server }
        | TasksCommand::Result { task_id, server }
        | TasksCommand::Cancel { task_id, server } => (server, Some(task_id.as_str())),
    };
    let builder = ClientBuilder::new(connect::config(server));
    let connected = match connect::connect(server, builder, &display).await {
        Ok(connected) => connected,
        Err(unreached) => return crate::unreached(unreached, &display),
    };
    let client = &connected.client;
    let task = task.unwrap_or_default();
    match &command {
        TasksCommand::List { .. } if connected.server.protocol_version == "2026-07-28" => {
            let message = "2026-07-28 has no tasks/list: a server of that era lists no tasks \
                           (--era 2025-11-25 asks one that speaks both)";
            let error = json!({ "kind": "era", "message": message });
            display.fatal(error, message, Exit::Failed as u8);
            Exit::Failed
        }
        TasksCommand::List { .. } => match client.list_tasks().await {
            Ok(tasks) => {
                for task in &tasks {
                    show(&display, task);
                }
                Exit::Completed
            }
            Err(e) => crate::failed(&e, &display),
        },
        TasksCommand::Get { .. } => match client.get_task(task).await {
            Ok(info) => {
                show(&display, &info);
                Exit::of_status(info.status)
            }
            Err(e) => crate::failed(&e, &display),
        },
        TasksCommand::Cancel { .. } => match client.cancel_task(task).await {
            Ok(info) => {
                show(&display, &info);
                Exit::of_status(info.status)
            }
            Err(e) => crate::failed(&e, &display),
        },
        TasksCommand::Result { .. } => {
            let (outcome, status) = match connected.server.protocol_version.as_str() {
                "2026-07-28" => inline_outcome(client, task).await,
                _ => (client.task_result(task).await, None),
            };
            let exit = Exit::of_outcome(&outcome, status);
            display.outcome(&outcome, exit.word(), exit as u8);
            exit
        }
    }
}

/// One task: a JSON event, or a line.
fn show(display: &Display, task: &TaskInfo) {
    display.event(json!({ "event": "task", "task": task_json(task) }), || {
        format!(
            "{}  {}  {}",
            task.id,
            task.status,
            task.status_message.as_deref().unwrap_or("")
        )
    });
}

/// A 2026-07-28 task's outcome: `tasks/get` until the task is terminal, its `result` or
/// `error` inline; with the status it ended in.
async fn inline_outcome(
    client: &Client,
    task: &str,
) -> (Result<CallToolResult, Error>, Option<TaskStatus>) {
    loop {
        let got = match client
            .request("tasks/get", Some(json!({ "taskId": task })))
            .await
        {
            Ok(got) => got,
            Err(e) => return (Err(e), None),
        };
        let status = serde_json::from_value::<TaskStatus>(got["status"].clone()).ok();
        match status {
            Some(status) if status.is_terminal() => {
                let outcome = match got.get("error") {
                    Some(error) => match serde_json::from_value::<RpcError>(error.clone()) {
                        Ok(error) => Err(Error::Rpc(error)),
                        Err(e) => Err(Error::Malformed(format!("the task's error: {e}"))),
                    },
                    None => CallToolResult::from_value(got["result"].clone()),
                };
                return (outcome, Some(status));
            }
            Some(_) => {
                let wait = got["pollInterval"]
                    .as_u64()
                    .unwrap_or(1_000)
                    .clamp(50, 5_000);
                tokio::time::sleep(Duration::from_millis(wait)).await;
            }
            None => {
                return (
                    Err(Error::Malformed(format!("tasks/get answered {got}"))),
                    None,
                )
            }
        }
    }
}
