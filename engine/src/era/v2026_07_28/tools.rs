//! `tools/list` and `tools/call` in this era: no `execution` on the wire; the request's
//! declaration of the extension and the tool's policy decide whether a call is a task. How
//! a plain call is answered, and its log messages.

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::encode;
use super::input::rounds;
use super::meta::{stateless, tasks_required, Meta, RequestMeta, Stateless};
use super::state::{self as kept, Answering};
use super::CACHE_TTL_MS;
use crate::era::kept::{Call, State};
use crate::event::{Event, ToolCall};
use crate::ids::{CallId, SessionId, TaskId};
use crate::jsonrpc::{Reject, RequestId, RpcError};
use crate::log_level::LogLevel;
use crate::model::{Era, InputKinds, TaskDecision, TaskRequest, TaskSupport};
use crate::peer_error::PeerErrorKind;
use crate::state::{Answer, Begin, PeerRequest};

/// `params` of `tools/list`.
#[derive(Deserialize)]
pub(super) struct PageParams {
    #[serde(default)]
    cursor: Option<String>,
    #[serde(rename = "_meta", default)]
    meta: Meta,
}

/// `params` of `tools/call`.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct CallParams {
    name: String,
    #[serde(default)]
    arguments: Option<Box<RawValue>>,
    /// MRTR: the answers to the input the previous round asked for.
    #[serde(default)]
    input_responses: Option<Map<String, Value>>,
    /// MRTR: the state the previous round returned, echoed.
    #[serde(default)]
    request_state: Option<String>,
    #[serde(rename = "_meta", default)]
    meta: Meta,
}

stateless!(PageParams);

impl Stateless for CallParams {
    fn meta(&mut self) -> Meta {
        std::mem::take(&mut self.meta)
    }

    fn name(&self, _method: &str) -> Option<&str> {
        Some(&self.name)
    }

    fn arguments(&self) -> Option<&RawValue> {
        self.arguments.as_deref()
    }
}

pub(super) fn on_tools_list(
    st: &mut State,
    session: SessionId,
    id: &RequestId,
    p: PageParams,
) -> Result<(), Reject> {
    let (tools, next_cursor) = st
        .tools
        .page(p.cursor.as_deref(), st.config.tools_page_size)?;
    let tools: Vec<Value> = tools
        .map(|tool| {
            let mut value = serde_json::to_value(tool).expect("tools serialize");
            if let Value::Object(map) = &mut value {
                map.remove("execution");
            }
            value
        })
        .collect();
    let mut fields = Map::new();
    fields.insert("tools".into(), Value::Array(tools));
    if let Some(cursor) = next_cursor {
        fields.insert("nextCursor".into(), cursor.into());
    }
    fields.insert("ttlMs".into(), CACHE_TTL_MS.into());
    fields.insert("cacheScope".into(), "public".into());
    let line = encode::complete_line(id, fields, &st.config.info);
    st.reply(session, id, None, line);
    Ok(())
}

/// A tool with support "forbidden" runs plainly; "optional" becomes a task when the
/// request declares the extension; "required" becomes one then and is -32021 otherwise.
/// `params.task` means nothing in this era and is ignored.
pub(super) fn on_tools_call(
    st: &mut State,
    session: SessionId,
    id: &RequestId,
    p: CallParams,
    meta: &RequestMeta,
) -> Result<(), Reject> {
    if p.arguments
        .as_ref()
        .is_some_and(|a| !a.get().starts_with('{'))
    {
        return Err(Reject::peer(
            PeerErrorKind::InvalidParams {
                field: Some("arguments".into()),
            },
            RpcError::invalid_params("Invalid params: `arguments` must be an object"),
        ));
    }
    let (support, decision, _) = st
        .tools
        .policy(&p.name)
        .ok_or_else(|| RpcError::invalid_params(format!("Unknown tool: {}", p.name)))?;
    let declared = meta.declares_tasks() && st.config.tasks.enabled;
    if support == TaskSupport::Required && !declared {
        return Err(tasks_required());
    }
    let wants_task = declared && support != TaskSupport::Forbidden;
    let token = meta.progress_token.clone();
    let kinds = meta.input_kinds();
    let request = wants_task
        .then(|| st.task_request(&p.name, p.arguments.as_deref(), meta.raw.as_deref()))
        .flatten();
    let (call, task, task_offered) = if wants_task && decision == TaskDecision::Policy {
        let (task, call) = begin_task(st, session, id, token, kinds, request)?;
        (call, Some(task), false)
    } else {
        let mut state = Call::plain(Era::V2026_07_28, session, id.clone(), token);
        state.input_kinds = kinds;
        state.offer = wants_task.then_some(None);
        state.request = request;
        let kept = kept::of_call(&mut state);
        kept.log_level = meta.log_level;
        kept.rounds = rounds(p.request_state.as_deref(), p.input_responses)?;
        let call = st.add_call(state);
        if let Some(s) = st.session_mut(session) {
            s.requests.insert(id.clone(), PeerRequest::Call(call));
        }
        (call, None, wants_task)
    };
    st.event(Event::ToolCall(ToolCall {
        call,
        session,
        request: id.clone(),
        name: p.name,
        arguments: p.arguments,
        meta: meta.raw.clone(),
        task,
        task_offered,
    }));
    Ok(())
}

/// Creates the task of a `tools/call` of this era and answers with the flat
/// `CreateTaskResult` (held, like every reply about a task, until the journal confirms).
/// Only a listen stream hears of its changes: this era sends nothing unasked.
pub(super) fn begin_task(
    st: &mut State,
    session: SessionId,
    id: &RequestId,
    progress_token: Option<Value>,
    input_kinds: InputKinds,
    request: Option<Box<TaskRequest>>,
) -> Result<(TaskId, CallId), Reject> {
    let (task, call) = st.begin_task(Begin {
        session,
        era: Era::V2026_07_28,
        requested_ttl: None,
        progress_token,
        input_kinds,
        follow: false,
        request,
    })?;
    if let Some(record) = st.tasks.get(&task) {
        let line = encode::create_task_result(id, record, &st.info_json);
        st.reply_created(session, id, &task, line);
    }
    Ok((task, call))
}

/// The application answered a plain call: its reply (with `resultType`), or, in the client
/// role, the answer to one of the server's input requests.
pub(super) fn answer(st: &mut State, call: CallId, outcome: Answer) {
    let answering = st
        .call_mut(call)
        .and_then(|c| c.kept.v2026_07_28.as_deref_mut())
        .and_then(|k| k.answering.take());
    if let Some(answering) = answering {
        return answer_server_input(st, call, answering, outcome);
    }
    let Some(state) = st.remove_call(call) else {
        return;
    };
    let (Some(session), Some(request)) = (state.session, state.reply_to) else {
        return;
    };
    let Some(s) = st.session_mut(session) else {
        return;
    };
    s.requests.remove(&request);
    match outcome {
        Ok(result) => {
            let line = encode::plain_reply(&request, &result);
            st.reply(session, &request, None, line);
        }
        Err(error) => st.reply_error(session, Some(&request), &error),
    }
}

/// The application answered one of the server's input requests.
fn answer_server_input(st: &mut State, call: CallId, answering: Answering, outcome: Answer) {
    let Some(session) = st.remove_call(call).and_then(|c| c.session) else {
        return;
    };
    let outcome = outcome
        .map(|raw| serde_json::from_str::<Value>(raw.get()).expect("answers are JSON objects"));
    match answering {
        Answering::Retry { original, key } => {
            super::requestor::answer_retry_input(st, session, original, key, outcome)
        }
        Answering::Task { task, key } => {
            super::following::answer_task_input(st, session, task, key, outcome)
        }
    }
}

/// Log messages go only to a plain call whose request named a level, from that level up;
/// a task never gets them (spec §1.1, §1.7 r6).
pub(super) fn log(
    st: &mut State,
    call: CallId,
    level: LogLevel,
    logger: Option<&str>,
    data: &Value,
) {
    let Some(state) = st.call(call) else {
        return;
    };
    let minimum = state.kept.v2026_07_28.as_deref().and_then(|k| k.log_level);
    let (Some(session), None) = (state.session, &state.task) else {
        return;
    };
    if minimum.is_some_and(|min| level >= min) {
        let stream = st.call_stream(call);
        st.send_log(session, stream, None, level, logger, data, None);
    }
}
