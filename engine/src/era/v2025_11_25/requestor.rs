//! The requestor role in this era: our requests to the peer and their answers, local
//! timeouts, and what a closing session fails. Following the tasks the peer hosts for us is
//! in `following`; whether a call goes as a task, in `negotiation`.

use serde::Deserialize;
use serde_json::{json, Map, Value};

use super::following;
use super::handshake;
use super::negotiation::{PeerTools, Plan};
use super::receiver;
use super::relay;
use super::serving;
use super::state::{self as kept, Asked, PlainCall};
use super::types::{
    CallToolRequest, CreateTaskResult, ListTasksResult, PageParams, Task, TaskIdParams,
    TaskMetadata,
};
use crate::era::kept::{Purpose, Sent, State};
use crate::error::UsageError;
use crate::event::Event;
use crate::ids::{SessionId, TaskId};
use crate::jsonrpc::{code, RequestId, RpcError};
use crate::model::{Era, PlainReason, TaskPage, ToolPage};
use crate::peer_error::PeerErrorKind;
use crate::state::{progress_meta, Source};

/// `tools/call` arguments: an object, or `null` for none (then the member is left out).
fn tool_arguments(arguments: &Value) -> Result<Option<&Value>, UsageError> {
    match arguments {
        Value::Null => Ok(None),
        Value::Object(_) => Ok(Some(arguments)),
        _ => Err(UsageError::NotAnObject("tool arguments")),
    }
}

/// Sends a request of this era for `asked`.
fn send(
    st: &mut State,
    session: SessionId,
    method: &str,
    params: Option<impl serde::Serialize>,
    asked: Asked,
) -> Option<RequestId> {
    let times_out = asked.times_out();
    let sent = Sent::Era(asked.into());
    st.send_request(session, None, method, params, sent, times_out, None)
}

// ---- the application's requests -------------------------------------------------------------

pub(super) fn app_request(
    st: &mut State,
    session: SessionId,
    method: &str,
    params: Option<Value>,
) -> Option<RequestId> {
    st.send_request(session, None, method, params, Sent::App, true, None)
}

pub(super) fn list_tools(
    st: &mut State,
    session: SessionId,
    cursor: Option<String>,
) -> Option<RequestId> {
    let params = Some(json!(PageParams { cursor }));
    send(st, session, "tools/list", params, Asked::ToolsList)
}

/// A `tools/call`: plainly, or as a task when the server and the tool allow it (else
/// plainly, with `Event::RanPlainly` saying why).
pub(super) fn call_tool(
    st: &mut State,
    session: SessionId,
    name: &str,
    arguments: Value,
    task: Option<Option<u64>>,
) -> Result<RequestId, UsageError> {
    let args = tool_arguments(&arguments)?;
    let Some(ttl) = task else {
        let params = CallToolRequest {
            name,
            arguments: args,
            task: None,
            meta: None,
        };
        return app_request(st, session, "tools/call", Some(json!(params)))
            .ok_or(UsageError::UnknownSession(session));
    };
    check_tasks_negotiated(st, session)?;
    // The call's progress goes to the task call the application holds, plain or not.
    let meta = st.next_request_id(session).map(|id| progress_meta(&id));
    let s = st.ready(session)?;
    let plan = match s.kept.v2025_11_25.as_deref() {
        Some(kept) => kept.peer_tools.plan(&s.peer_capabilities, name),
        None => PeerTools::default().plan(&s.peer_capabilities, name),
    };
    let fallback = match plan {
        Plan::Plain(reason) => {
            let params = CallToolRequest {
                name,
                arguments: args,
                task: None,
                meta,
            };
            let request = app_request(st, session, "tools/call", Some(json!(params)))
                .ok_or(UsageError::UnknownSession(session))?;
            st.event(Event::RanPlainly {
                session,
                request: request.clone(),
                reason,
            });
            return Ok(request);
        }
        Plan::Task { fallback } => fallback.then(|| {
            Box::new(PlainCall {
                name: name.to_owned(),
                arguments: arguments.clone(),
            })
        }),
    };
    let params = CallToolRequest {
        name,
        arguments: args,
        task: Some(TaskMetadata { ttl }),
        meta,
    };
    send(
        st,
        session,
        "tools/call",
        Some(params),
        Asked::TaskRequest { fallback },
    )
    .ok_or(UsageError::UnknownSession(session))
}

pub(super) fn request_as_task(
    st: &mut State,
    session: SessionId,
    method: &str,
    mut params: Map<String, Value>,
    ttl: Option<u64>,
) -> Result<RequestId, UsageError> {
    params.insert("task".into(), json!(TaskMetadata { ttl }));
    check_tasks_negotiated(st, session)?;
    let asked = Asked::TaskRequest { fallback: None };
    send(st, session, method, Some(params), asked).ok_or(UsageError::UnknownSession(session))
}

pub(super) fn get_task(st: &mut State, session: SessionId, task: &str) -> Option<RequestId> {
    let asked = Asked::TaskGet {
        task: TaskId::from(task),
        auto: false,
    };
    let params = Some(TaskIdParams::new(task));
    send(st, session, "tasks/get", params, asked)
}

/// `tasks/get` starting to follow a task made earlier.
pub(super) fn follow_task(st: &mut State, session: SessionId, task: &str) -> Option<RequestId> {
    let asked = Asked::Follow {
        task: TaskId::from(task),
    };
    let params = Some(TaskIdParams::new(task));
    send(st, session, "tasks/get", params, asked)
}

pub(super) fn task_result(
    st: &mut State,
    session: SessionId,
    task: &str,
) -> Result<RequestId, UsageError> {
    let asked = Asked::TaskResult {
        task: TaskId::from(task),
        auto: false,
    };
    send(
        st,
        session,
        "tasks/result",
        Some(TaskIdParams::new(task)),
        asked,
    )
    .ok_or(UsageError::UnknownSession(session))
}

pub(super) fn cancel_task(st: &mut State, session: SessionId, task: &str) -> Option<RequestId> {
    let asked = Asked::TaskCancel {
        task: TaskId::from(task),
    };
    send(
        st,
        session,
        "tasks/cancel",
        Some(TaskIdParams::new(task)),
        asked,
    )
}

pub(super) fn list_tasks(
    st: &mut State,
    session: SessionId,
    cursor: Option<String>,
) -> Result<RequestId, UsageError> {
    let params = Some(PageParams { cursor });
    send(st, session, "tasks/list", params, Asked::TaskList)
        .ok_or(UsageError::UnknownSession(session))
}

/// Task-augmented requests need a negotiated version that has tasks.
fn check_tasks_negotiated(st: &State, session: SessionId) -> Result<(), UsageError> {
    match st.ready(session)?.version() {
        Some(v) if super::version_has_tasks(v) => Ok(()),
        _ => Err(UsageError::NotNegotiated(
            "tasks (the negotiated protocol version has none)",
        )),
    }
}

// ---- answers --------------------------------------------------------------------------------

/// The peer answered our request `id`, sent for `asked`.
pub(super) fn answered(
    st: &mut State,
    session: SessionId,
    id: RequestId,
    asked: Asked,
    outcome: Result<Value, RpcError>,
) {
    let respond = |st: &mut State, request, outcome| {
        st.event(Event::Response {
            session,
            request,
            outcome,
        })
    };
    match asked {
        Asked::Initialize => handshake::on_initialize_response(st, session, outcome),
        Asked::TaskRequest { fallback } => match (fallback, &outcome) {
            (Some(plain), Err(e)) if e.code == code::METHOD_NOT_FOUND => {
                retry_plainly(st, session, id, *plain)
            }
            _ => on_task_created(st, session, id, outcome),
        },
        Asked::Withdrawn => cancel_withdrawn(st, session, outcome),
        Asked::PlainRetry { original } => respond(st, original, outcome),
        Asked::ToolsList => {
            if let (Ok(page), Some(s)) = (&outcome, kept::session_mut(st, session)) {
                s.peer_tools.learn(page);
            }
            st.event(Event::ToolPage {
                session,
                request: id,
                outcome: outcome.and_then(|page| ToolPage::read(&page)),
            })
        }
        Asked::TaskGet { task, auto } => {
            match &outcome {
                Ok(v) => match Task::deserialize(v) {
                    Ok(view) if view.task_id == task.as_str() => {
                        serving::observe(st, session, view, Source::Answer)
                    }
                    _ => st.on_malformed_task_answer(session, &task, &id),
                },
                Err(e) if e.code == code::INVALID_PARAMS => st.give_up(session, &task, e.clone()),
                Err(_) => {}
            }
            if !auto {
                st.answer_task(session, id, &task, outcome, Task::info_of);
            }
            st.after_poll(session, &task);
        }
        Asked::Follow { task } => following::on_followed(st, session, id, &task, outcome),
        Asked::TaskCancel { task } => {
            if let Ok(v) = &outcome {
                match Task::deserialize(v) {
                    Ok(view) if view.task_id == task.as_str() => {
                        serving::observe(st, session, view, Source::Answer)
                    }
                    _ => st.peer_error(
                        session,
                        PeerErrorKind::Malformed,
                        format!("malformed task in answer to {id}"),
                    ),
                }
            }
            st.answer_task(session, id, &task, outcome, Task::info_of);
        }
        Asked::TaskList => st.event(Event::TaskPage {
            session,
            request: id,
            outcome: outcome.and_then(task_page),
        }),
        Asked::TaskResult { task, auto } => {
            st.on_remote_result(session, &task, outcome.clone());
            if !auto {
                respond(st, id, outcome);
            }
        }
        Asked::Input { call, input } => receiver::on_input_response(st, call, input, outcome),
        Asked::Relayed { task, key } => relay::on_answer(st, &task, &key, outcome, true),
    }
}

/// A `tasks/list` answer as a page of tasks.
fn task_page(page: Value) -> Result<TaskPage, RpcError> {
    let invalid = |what: String| RpcError::internal(format!("Invalid response: {what}"));
    let page = ListTasksResult::deserialize(page)
        .map_err(|e| invalid(format!("malformed tasks/list result: {e}")))?;
    let tasks = page.tasks.iter().map(|task| {
        task.to_info()
            .ok_or_else(|| invalid(format!("a time of task {:?} is not RFC 3339", task.task_id)))
    });
    Ok(TaskPage {
        tasks: tasks.collect::<Result<_, _>>()?,
        next_cursor: page.next_cursor,
    })
}

fn on_task_created(
    st: &mut State,
    session: SessionId,
    request: RequestId,
    outcome: Result<Value, RpcError>,
) {
    let created = match outcome {
        Ok(v) if v.get("task").is_some_and(Value::is_object) => {
            serde_json::from_value::<CreateTaskResult>(v)
                .map_err(|e| RpcError::internal(format!("malformed CreateTaskResult: {e}")))
                .and_then(|c| {
                    c.task.to_info().ok_or_else(|| {
                        RpcError::internal("malformed CreateTaskResult: a time is not RFC 3339")
                    })
                })
        }
        // The peer ran the request plainly (or refused it): pass the answer on.
        other => {
            return st.event(Event::Response {
                session,
                request,
                outcome: other,
            })
        }
    };
    match created {
        Ok(task) => st.track_created(session, Era::V2025_11_25, request, task),
        Err(error) => st.event(Event::Response {
            session,
            request,
            outcome: Err(error),
        }),
    }
}

/// The server refused a task-augmented call (-32601) whose tool's support we could not
/// read: it goes again plainly, answering as the original request.
fn retry_plainly(st: &mut State, session: SessionId, original: RequestId, plain: PlainCall) {
    let params = CallToolRequest {
        name: &plain.name,
        arguments: tool_arguments(&plain.arguments).ok().flatten(),
        task: None,
        meta: Some(progress_meta(&original)),
    };
    st.event(Event::RanPlainly {
        session,
        request: original.clone(),
        reason: PlainReason::TaskRefused,
    });
    send(
        st,
        session,
        "tools/call",
        Some(params),
        Asked::PlainRetry { original },
    );
}

// ---- timeouts and closing -------------------------------------------------------------------

/// A request of ours timed out locally.
pub(super) fn timed_out(st: &mut State, session: SessionId, id: RequestId, asked: Asked) {
    match asked {
        Asked::Initialize => {
            // A client MUST NOT cancel initialize: without a handshake the session is over.
            let error = RpcError::new(code::REQUEST_TIMEOUT, "initialize timed out");
            st.event(Event::InitializeFailed { session, error });
            st.close_session(session);
        }
        Asked::TaskResult { task, auto: true } => {
            st.abandoned(session, None, &id, "Task given up");
            following::result_timed_out(st, session, &task);
        }
        Asked::TaskRequest { .. } => {
            // Not `notifications/cancelled` (checklist §2.16 r1): a task it makes is
            // cancelled once it exists.
            st.repurpose_request(session, id.clone(), withdrawn());
            st.event(Event::TimedOut {
                session,
                request: id,
            });
        }
        asked => {
            st.abandoned(session, None, &id, "Request timed out");
            // The engine's own polls are not the application's business.
            if !matches!(asked, Asked::TaskGet { auto: true, .. }) {
                let request = match &asked {
                    Asked::PlainRetry { original } => original.clone(),
                    _ => id,
                };
                st.event(Event::TimedOut { session, request });
            }
            if let Asked::TaskGet { task, .. } = asked {
                st.after_poll(session, &task);
            }
        }
    }
}

fn withdrawn() -> Sent {
    Sent::Era(Asked::Withdrawn.into())
}

/// Gives up our task request `request` while its answer is pending: it stays pending (no
/// `notifications/cancelled`, which must not cancel a task request) and the task it makes,
/// if any, is cancelled once it exists. `false` when it is no pending task request.
pub(super) fn withdraw_task_request(
    st: &mut State,
    session: SessionId,
    request: &RequestId,
) -> bool {
    let pending = st.pending_request(session, request);
    let is_task_request = matches!(
        pending,
        Some(Sent::Era(Purpose::V2025_11_25(Asked::TaskRequest { .. })))
    );
    if is_task_request {
        st.repurpose_request(session, request.clone(), withdrawn());
    }
    is_task_request
}

/// The answer to a withdrawn task request: the task it made is cancelled (`tasks/cancel`,
/// whose own answer ends here too); anything else is dropped.
fn cancel_withdrawn(st: &mut State, session: SessionId, outcome: Result<Value, RpcError>) {
    let task = outcome.ok().and_then(|v| {
        let id = v.get("task")?.get("taskId")?.as_str()?;
        Some(id.to_owned())
    });
    if let Some(task) = task {
        send(
            st,
            session,
            "tasks/cancel",
            Some(TaskIdParams::new(&task)),
            Asked::Withdrawn,
        );
    }
}

/// The session closed before the peer answered.
pub(super) fn closed_pending(
    st: &mut State,
    session: SessionId,
    id: RequestId,
    asked: Asked,
    error: &RpcError,
) {
    let response = |request| Event::Response {
        session,
        request,
        outcome: Err(error.clone()),
    };
    match asked {
        Asked::Initialize => st.event(Event::InitializeFailed {
            session,
            error: error.clone(),
        }),
        Asked::TaskRequest { .. } | Asked::Follow { .. } => st.event(response(id)),
        Asked::ToolsList => st.event(Event::ToolPage {
            session,
            request: id,
            outcome: Err(error.clone()),
        }),
        Asked::PlainRetry { original } => st.event(response(original)),
        Asked::TaskResult { auto: false, .. } => st.event(response(id)),
        Asked::TaskGet { auto: false, .. } | Asked::TaskCancel { .. } => {
            st.event(Event::TaskAnswer {
                session,
                request: id,
                outcome: Err(error.clone()),
            })
        }
        Asked::TaskList => st.event(Event::TaskPage {
            session,
            request: id,
            outcome: Err(error.clone()),
        }),
        Asked::TaskGet { .. } | Asked::TaskResult { .. } | Asked::Withdrawn => {}
        Asked::Input { call, input } => receiver::input_failed(st, call, input, error.clone()),
        Asked::Relayed { task, key } => {
            relay::on_answer(st, &task, &key, Err(error.clone()), false)
        }
    }
}
