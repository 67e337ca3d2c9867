//! `tools/list` and `tools/call` in this era: no `execution` on the wire; the request's
//! declaration of the extension and the tool's policy decide whether a call is a task.

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::encode;
use super::meta::{tasks_required, RequestMeta};
use super::CACHE_TTL_MS;
use crate::era::v2025_11_25::{PageParams, TaskDecision, TaskSupport};
use crate::error::PeerErrorKind;
use crate::event::{Event, ToolCall};
use crate::host::{Call, Host};
use crate::ids::{CallId, SessionId, TaskId};
use crate::jsonrpc::{self, Reject, RequestId, RpcError};
use crate::session::Inbound;
use crate::task::{Era, InputKinds};

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct CallParams<'a> {
    name: String,
    #[serde(default, borrow)]
    arguments: Option<&'a RawValue>,
    /// MRTR: the answers to the input the previous round asked for.
    #[serde(default)]
    input_responses: Option<Map<String, Value>>,
    /// MRTR: the state the previous round returned, echoed.
    #[serde(default)]
    request_state: Option<String>,
}

impl Host {
    pub(super) fn modern_tools_list(
        &mut self,
        session: SessionId,
        id: &RequestId,
        params: Option<&RawValue>,
    ) -> Result<(), Reject> {
        let p: PageParams = jsonrpc::params(params)?;
        let (tools, next_cursor) = self
            .tools
            .page(p.cursor.as_deref(), self.config.tools_page_size)?;
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
        let line = encode::complete_line(id, fields, &self.config.info);
        self.reply(session, id, None, line);
        Ok(())
    }

    /// A tool with support "forbidden" runs plainly; "optional" becomes a task when the
    /// request declares the extension; "required" becomes one then and is -32021 otherwise.
    /// `params.task` means nothing in this era and is ignored.
    pub(super) fn modern_tools_call(
        &mut self,
        session: SessionId,
        id: &RequestId,
        params: Option<&RawValue>,
        meta: &RequestMeta,
    ) -> Result<(), Reject> {
        let p: CallParams<'_> = jsonrpc::params(params)?;
        if p.arguments.is_some_and(|a| !a.get().starts_with('{')) {
            return Err(Reject::peer(
                PeerErrorKind::InvalidParams {
                    field: Some("arguments".into()),
                },
                RpcError::invalid_params("Invalid params: `arguments` must be an object"),
            ));
        }
        let (support, decision) = self
            .tools
            .policy(&p.name)
            .ok_or_else(|| RpcError::invalid_params(format!("Unknown tool: {}", p.name)))?;
        let declared = meta.declares_tasks() && self.config.tasks.enabled;
        if support == TaskSupport::Required && !declared {
            return Err(tasks_required());
        }
        let wants_task = declared && support != TaskSupport::Forbidden;
        let token = meta.progress_token.clone();
        let kinds = meta.input_kinds();
        let (call, task, task_offered) = if wants_task && decision == TaskDecision::Policy {
            let (task, call) = self.modern_begin_task(session, id, token, kinds)?;
            (call, Some(task), false)
        } else {
            let mut state = Call::plain(session, id.clone(), token);
            state.era = Era::V2026_07_28;
            state.input_kinds = kinds;
            state.log_level = meta.log_level;
            state.rounds = Some(Box::new(super::input::rounds(
                p.request_state.as_deref(),
                p.input_responses.clone(),
            )?));
            state.offer = wants_task.then_some(None);
            let call = self.add_call(state);
            if let Some(s) = self.session_mut(session) {
                s.inbound.insert(id.clone(), Inbound::App(call));
            }
            (call, None, wants_task)
        };
        self.event(Event::ToolCall(ToolCall {
            call,
            session,
            request: id.clone(),
            name: p.name,
            arguments: p.arguments.map(ToOwned::to_owned),
            task,
            task_offered,
        }));
        Ok(())
    }

    /// Creates the task of a `tools/call` of this era and answers with the flat
    /// `CreateTaskResult` (held, like every reply about a task, until the journal confirms).
    pub(crate) fn modern_begin_task(
        &mut self,
        session: SessionId,
        id: &RequestId,
        progress_token: Option<Value>,
        kinds: InputKinds,
    ) -> Result<(TaskId, CallId), Reject> {
        let (task, call) =
            self.begin_task(session, None, progress_token, Era::V2026_07_28, kinds)?;
        if let Some(record) = self.tasks.get(&task) {
            let line = encode::create_task_result(id, record, &self.info_json);
            self.reply(session, id, Some(&task), line);
        }
        Ok((task, call))
    }
}
