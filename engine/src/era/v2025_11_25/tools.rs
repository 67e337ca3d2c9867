//! `tools/list` and `tools/call` in this era: the tool's `taskSupport` and the request's
//! `params.task` decide whether a call becomes a task.

use std::sync::Arc;

use serde_json::value::RawValue;
use serde_json::Value;

use super::types::{declares, CallToolParams, ListToolsResult, PageParams};
use super::{encode, handshake};
use crate::era::kept::{Call, State};
use crate::event::{Event, ToolCall};
use crate::ids::{CallId, SessionId, TaskId};
use crate::jsonrpc::{self, code, Reject, RequestId, RpcError};
use crate::model::{Era, InputKinds, TaskDecision, TaskRequest, TaskSupport};
use crate::peer_error::PeerErrorKind;
use crate::state::{Begin, PeerRequest};

pub(super) fn on_tools_list(
    st: &mut State,
    session: SessionId,
    id: &RequestId,
    params: Option<&RawValue>,
) -> Result<(), Reject> {
    let p: PageParams = jsonrpc::params(params)?;
    let (tools, next_cursor) = st
        .tools
        .page(p.cursor.as_deref(), st.config.tools_page_size)?;
    let tools = tools.cloned().collect();
    let line = jsonrpc::result_line(id, &ListToolsResult { tools, next_cursor });
    st.reply(session, id, None, line);
    Ok(())
}

pub(super) fn on_tools_call(
    st: &mut State,
    session: SessionId,
    id: &RequestId,
    params: Option<&RawValue>,
) -> Result<(), Reject> {
    let p: CallToolParams<'_> = jsonrpc::params(params)?;
    if p.arguments.is_some_and(|a| !a.get().starts_with('{')) {
        return Err(Reject::peer(
            PeerErrorKind::InvalidParams {
                field: Some("arguments".into()),
            },
            RpcError::invalid_params("Invalid params: `arguments` must be an object"),
        ));
    }
    let (support, decision, immediate) = st
        .tools
        .policy(&p.name)
        .map(|(support, decision, immediate)| (support, decision, immediate.map(str::to_owned)))
        .ok_or_else(|| RpcError::invalid_params(format!("Unknown tool: {}", p.name)))?;
    let hosts_tasks = handshake::hosts_tasks(st, session);
    let task = p.task_metadata(hosts_tasks)?;
    let not_found =
        |why: &str| RpcError::new(code::METHOD_NOT_FOUND, format!("Tool '{}' {why}", p.name));
    match (&task, support) {
        (Some(_), TaskSupport::Forbidden) => {
            return Err(not_found("does not support task-augmented execution").into())
        }
        (None, TaskSupport::Required) if hosts_tasks => {
            return Err(not_found("requires task-augmented execution").into())
        }
        _ => {}
    }
    let progress_token = p.progress_token()?;
    let arguments = p.arguments.map(ToOwned::to_owned);
    let request = task
        .as_ref()
        .and_then(|_| st.task_request(&p.name, arguments.as_deref(), p.meta));
    let (call, task, task_offered) = match task {
        Some(metadata) if decision == TaskDecision::Policy => {
            let (task, call) = begin_task(
                st,
                session,
                id,
                metadata.ttl,
                progress_token,
                immediate.as_deref(),
                request,
            )?;
            (call, Some(task), false)
        }
        offer => {
            let mut state = Call::plain(Era::V2025_11_25, session, id.clone(), progress_token);
            state.offer = offer.map(|m| m.ttl);
            state.request = request;
            let offered = state.offer.is_some();
            let call = st.add_call(state);
            if let Some(s) = st.session_mut(session) {
                s.requests.insert(id.clone(), PeerRequest::Call(call));
            }
            (call, None, offered)
        }
    };
    st.event(Event::ToolCall(ToolCall {
        call,
        session,
        request: id.clone(),
        name: p.name,
        arguments,
        meta: p.meta.map(|meta| Arc::from(meta.to_owned())),
        task,
        task_offered,
    }));
    Ok(())
}

/// Creates the task of a task-augmented request and answers with its `CreateTaskResult`;
/// the creating session follows it.
pub(super) fn begin_task(
    st: &mut State,
    session: SessionId,
    id: &RequestId,
    ttl: Option<u64>,
    progress_token: Option<Value>,
    immediate_response: Option<&str>,
    request: Option<Box<TaskRequest>>,
) -> Result<(TaskId, CallId), Reject> {
    let caps = st
        .session(session)
        .map_or(&Value::Null, |s| &s.peer_capabilities);
    let input_kinds = InputKinds {
        elicitation: declares(caps, &["elicitation"]),
        sampling: declares(caps, &["sampling"]),
        roots: declares(caps, &["roots"]),
    };
    let (task, call) = st.begin_task(Begin {
        session,
        era: Era::V2025_11_25,
        requested_ttl: ttl,
        progress_token,
        input_kinds,
        follow: true,
        request,
    })?;
    if let Some(record) = st.tasks.get(&task) {
        let line = encode::create_task_result(id, record, immediate_response);
        st.reply_created(session, id, &task, line);
    }
    Ok((task, call))
}
