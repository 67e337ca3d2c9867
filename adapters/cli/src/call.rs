//! `taskwire call`: the tool as a task (or plainly), followed live to its outcome; Ctrl-C
//! cancels the task, a second Ctrl-C exits at once. `taskwire wait`: the same for a task
//! made earlier.

use std::io::{self, IsTerminal};
use std::sync::Arc;

use serde_json::{json, Value};
use taskwire_driver::engine::{PlainReason, TaskInfo, TaskStatus};
use taskwire_driver::{Client, ClientBuilder, Error, Progress, TaskCall, TaskUpdate};
use tokio::signal::unix::{signal, SignalKind};

use crate::answers::{self, AnswersFile, Elicitations};
use crate::args::{AnsweringArgs, CallArgs, ServerArgs, WaitArgs};
use crate::arguments;
use crate::connect::{self, Connected};
use crate::display::Display;
use crate::exit::Exit;

/// How the followed task came to be.
#[derive(Clone, Copy)]
enum Origin {
    /// This call made it; `detach`: print its id and leave it.
    Created { detach: bool },
    /// It was made earlier (`taskwire wait`).
    Earlier,
}

/// Runs `taskwire call`.
pub async fn run(args: CallArgs, display: Display) -> Exit {
    let connected = match connect_answering(&args.answering, &args.server, &display).await {
        Ok(connected) => connected,
        Err(exit) => return exit,
    };
    let client = &connected.client;
    let tools = match client.list_tools().await {
        Ok(tools) => tools,
        Err(e) => return crate::failed(&e, &display),
    };
    let schema = match tools.iter().find(|t| t.name == args.tool) {
        Some(tool) => tool.input_schema.clone(),
        None => {
            display.event(json!({ "event": "unlisted", "tool": args.tool }), || {
                format!(
                    "the server lists no tool {:?}; calling it anyway",
                    args.tool
                )
            });
            Value::Null
        }
    };
    let arguments = match arguments::build(args.json_args.as_deref(), &args.args, &schema) {
        Ok(arguments) => arguments,
        Err(e) => return crate::usage(&e),
    };
    if args.plain {
        display.live(format!("calling {} plainly", args.tool));
        let outcome = client.call_tool(&args.tool, arguments).await;
        return finish(&display, outcome, None);
    }
    let call = match client
        .call_tool_as_task(&args.tool, arguments, args.ttl)
        .await
    {
        Ok(call) => call,
        Err(e) => return crate::failed(&e, &display),
    };
    let origin = Origin::Created {
        detach: args.detach,
    };
    follow(&connected, call, origin, &display).await
}

/// Runs `taskwire wait`.
pub async fn wait(args: WaitArgs, display: Display) -> Exit {
    let connected = match connect_answering(&args.answering, &args.server, &display).await {
        Ok(connected) => connected,
        Err(exit) => return exit,
    };
    match connected.client.follow_task(&args.task_id).await {
        Ok(call) => follow(&connected, call, Origin::Earlier, &display).await,
        Err(e) => crate::failed_on(&args.task_id, &e, &display),
    }
}

/// Connects to the server as a client that answers questions as `answering` says.
async fn connect_answering(
    answering: &AnsweringArgs,
    server: &ServerArgs,
    display: &Display,
) -> Result<Connected, Exit> {
    let file = match answering
        .answers
        .as_deref()
        .map(AnswersFile::load)
        .transpose()
    {
        Ok(file) => file.map(Arc::new),
        Err(e) => return Err(crate::usage(&e)),
    };
    let elicitations = Elicitations {
        file,
        interactive: io::stdin().is_terminal() && io::stdout().is_terminal() && !display.is_json(),
        display: display.clone(),
    };
    let mut builder = ClientBuilder::new(connect::config(server))
        .on_elicitation(move |request| elicitations.clone().answer(request));
    if let Some(command) = answering.sampling_cmd.clone() {
        let display = display.clone();
        builder = builder
            .on_sampling(move |request| answers::sample(command.clone(), display.clone(), request));
    }
    connect::connect(server, builder, display)
        .await
        .map_err(|unreached| crate::unreached(unreached, display))
}

/// Follows a task call to its outcome, showing each update.
async fn follow(connected: &Connected, call: TaskCall, origin: Origin, display: &Display) -> Exit {
    let mut last = None;
    match &call.task {
        Some(task) => {
            display.event(
                json!({ "event": "task", "task": task_json(task) }),
                || match origin {
                    Origin::Created { .. } => format!("task created: {}", task.id),
                    Origin::Earlier => format!("following task {}", task.id),
                },
            );
            if let Origin::Created { detach: true } = origin {
                display.text(task.id.as_str());
                return Exit::Completed;
            }
            last = Some(task.status);
            display.live(live_text(task));
        }
        None => {
            let why = plain_reason(call.plain);
            display.event(json!({ "event": "plain", "reason": why }), || {
                format!("calling it without a task: {why}")
            });
            display.live("running".into());
        }
    }
    let task = call.task.as_ref().map(|t| t.id.to_string());
    let mut interrupts = signal(SignalKind::interrupt()).ok();
    let mut cancelling = false;
    loop {
        tokio::select! {
            update = call.updates.recv() => match update {
                Ok(TaskUpdate::Status(info)) => {
                    last = Some(info.status);
                    status(display, "status", &info);
                }
                Ok(TaskUpdate::Message(info)) => status(display, "message", &info),
                Ok(TaskUpdate::Progress(p)) => progress(display, &p),
                Ok(TaskUpdate::Log(m)) => {
                    let event = json!({ "event": "log", "level": m.level.as_str(),
                                        "logger": m.logger, "data": m.data });
                    display.event(event, || format!("log {}: {}", m.level.as_str(), m.data));
                }
                Ok(TaskUpdate::Result(outcome)) => return finish(display, outcome, last),
                Ok(_) => {}
                Err(_) => return crate::failed(&Error::Closed, display),
            },
            Some(()) = next_interrupt(&mut interrupts) => {
                let Some(id) = task.clone().filter(|_| !cancelling) else {
                    display.live_end();
                    display.event(json!({ "event": "interrupted" }), || "interrupted".into());
                    return Exit::Cancelled;
                };
                cancelling = true;
                display.event(json!({ "event": "cancelling", "taskId": id }), || {
                    "cancelling the task (Ctrl-C again exits at once)".into()
                });
                cancel(connected.client.clone(), id, display.clone());
            }
        }
    }
}

/// The next Ctrl-C, or never when none can be caught.
async fn next_interrupt(interrupts: &mut Option<tokio::signal::unix::Signal>) -> Option<()> {
    match interrupts {
        Some(signals) => signals.recv().await,
        None => std::future::pending().await,
    }
}

/// Sends `tasks/cancel` in the background; the task's updates show what it did.
fn cancel(client: Client, id: String, display: Display) {
    tokio::spawn(async move {
        if let Err(e) = client.cancel_task(&id).await {
            display.event(
                json!({ "event": "cancel-failed", "error": crate::display::error_json(&e) }),
                || format!("the cancel failed: {}", crate::display::say(&e)),
            );
        }
    });
}

/// The outcome: printed, and its exit code.
fn finish(
    display: &Display,
    outcome: Result<taskwire_driver::CallToolResult, Error>,
    last: Option<TaskStatus>,
) -> Exit {
    let exit = Exit::of_outcome(&outcome, last);
    display.outcome(&outcome, exit.word(), exit as u8);
    exit
}

fn status(display: &Display, event: &str, task: &TaskInfo) {
    display.event(json!({ "event": event, "task": task_json(task) }), || {
        format!(
            "status: {} - {}",
            task.status,
            task.status_message.as_deref().unwrap_or("")
        )
    });
    display.live_message(live_text(task));
}

fn progress(display: &Display, p: &Progress) {
    if display.is_json() {
        let event = json!({ "event": "progress", "progress": p.progress, "total": p.total,
                            "message": p.message });
        return display.event(event, String::new);
    }
    display.live_progress(p.progress, p.total);
    if let Some(message) = &p.message {
        display.live_message(message.clone());
    }
}

/// `working · MESSAGE`: the live line's text for a task.
fn live_text(task: &TaskInfo) -> String {
    match &task.status_message {
        Some(message) => format!("{} · {message}", task.status),
        None => task.status.to_string(),
    }
}

/// A task as JSON, in the 2025-11-25 wire names.
pub fn task_json(task: &TaskInfo) -> Value {
    json!({
        "taskId": task.id.as_str(),
        "status": task.status.to_string(),
        "statusMessage": task.status_message,
        "createdAt": task.created_at.to_rfc3339(),
        "lastUpdatedAt": task.last_updated_at.to_rfc3339(),
        "ttl": task.ttl_ms,
        "pollInterval": task.poll_interval_ms,
    })
}

fn plain_reason(reason: Option<PlainReason>) -> &'static str {
    match reason {
        Some(PlainReason::NoTaskCapability) => "the server offers no tool tasks",
        Some(PlainReason::ToolForbidsTasks) => "the tool does not run as a task",
        Some(PlainReason::TaskRefused) => "the server refused a task for it",
        _ => "the server answered without one",
    }
}
