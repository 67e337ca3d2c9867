//! `taskwire tasks list|get|result|cancel`.

use serde_json::json;
use taskwire_driver::engine::{TaskInfo, TaskStatus};
use taskwire_driver::{CallToolResult, ClientBuilder, Error, TaskCall, TaskUpdate};

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
            Err(e) => crate::failed_on(task, &e, &display),
        },
        TasksCommand::Cancel { .. } => match client.cancel_task(task).await {
            Ok(info) => {
                show(&display, &info);
                Exit::of_status(info.status)
            }
            Err(e) => crate::failed_on(task, &e, &display),
        },
        TasksCommand::Result { .. } => {
            let (outcome, status) = match client.follow_task(task).await {
                Ok(call) => outcome_of(call).await,
                Err(e) => return crate::failed_on(task, &e, &display),
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

/// A followed task's outcome, with the status it ended in.
async fn outcome_of(call: TaskCall) -> (Result<CallToolResult, Error>, Option<TaskStatus>) {
    let mut last = call.task.as_ref().map(|t| t.status);
    while let Ok(update) = call.updates.recv().await {
        match update {
            TaskUpdate::Status(info) => last = Some(info.status),
            TaskUpdate::Result(outcome) => return (outcome, last),
            _ => {}
        }
    }
    (Err(Error::Closed), last)
}
