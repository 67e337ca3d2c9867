//! Server tools: the registry, `tools/list` pages, and `tools/call` admission.

use std::collections::HashMap;

use serde_json::value::RawValue;

use super::types::{CallToolParams, ListToolsResult, PageParams, TaskSupport, Tool};
use crate::error::PeerErrorKind;
use crate::event::{Event, ToolCall};
use crate::host::{Call, Host};
use crate::ids::SessionId;
use crate::jsonrpc::{self, code, Reject, RequestId, RpcError};
use crate::session::Inbound;
use crate::task::{Era, InputKinds};

/// Who decides whether a call the requestor asked to run as a task becomes one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TaskDecision {
    /// The engine, by the tool's `taskSupport`: the task exists before the application
    /// hears of the call.
    #[default]
    Policy,
    /// The application: the call arrives with [`ToolCall::task_offered`], and the
    /// application calls [`Host::start_task`] or answers plainly.
    App,
}

/// A tool the server offers, and how it answers task-augmented calls.
#[derive(Clone, Debug)]
pub struct ToolDef {
    /// The definition listed by `tools/list`.
    pub tool: Tool,
    /// Optional interim text put in the `CreateTaskResult` `_meta` for the model.
    pub immediate_response: Option<String>,
    /// Who decides about a requested task. Default: [`TaskDecision::Policy`].
    pub decision: TaskDecision,
}

impl From<Tool> for ToolDef {
    fn from(tool: Tool) -> Self {
        ToolDef {
            tool,
            immediate_response: None,
            decision: TaskDecision::Policy,
        }
    }
}

/// The tools a host serves.
#[derive(Debug, Default)]
pub(crate) struct Tools {
    defs: Vec<ToolDef>,
    by_name: HashMap<String, usize>,
    accept_unknown: bool,
}

impl Tools {
    /// One `tools/list` page from `cursor` (`tools:<index>`), and the next page's cursor.
    pub(crate) fn page(
        &self,
        cursor: Option<&str>,
        size: usize,
    ) -> Result<(impl Iterator<Item = &Tool>, Option<String>), RpcError> {
        let defs = &self.defs;
        let start = match cursor {
            None => 0,
            Some(c) => c
                .strip_prefix("tools:")
                .and_then(|n| n.parse::<usize>().ok())
                .filter(|&n| n <= defs.len())
                .ok_or_else(|| RpcError::invalid_params("Invalid cursor"))?,
        };
        let end = (start + size.max(1)).min(defs.len());
        let next_cursor = (end < defs.len()).then(|| format!("tools:{end}"));
        Ok((defs[start..end].iter().map(|d| &d.tool), next_cursor))
    }

    /// How a tool answers task requests: its task support and who decides; `None` for an
    /// unknown tool (unless unknown tools are accepted, as "optional").
    pub(crate) fn policy(&self, name: &str) -> Option<(TaskSupport, TaskDecision)> {
        match self.by_name.get(name) {
            Some(&i) => {
                let def = &self.defs[i];
                Some((def.tool.execution.task_support, def.decision))
            }
            None if self.accept_unknown => Some((TaskSupport::Optional, TaskDecision::Policy)),
            None => None,
        }
    }
}

impl Host {
    /// Adds (or replaces) a tool.
    pub fn add_tool(&mut self, def: impl Into<ToolDef>) {
        let def = def.into();
        let tools = &mut self.tools;
        match tools.by_name.get(&def.tool.name) {
            Some(&i) => tools.defs[i] = def,
            None => {
                tools
                    .by_name
                    .insert(def.tool.name.clone(), tools.defs.len());
                tools.defs.push(def);
            }
        }
    }

    /// When set, calls to unregistered tool names reach the application (as if their
    /// task support were "optional") instead of getting -32602.
    pub fn accept_unknown_tools(&mut self, accept: bool) {
        self.tools.accept_unknown = accept;
    }

    pub(super) fn on_tools_list(
        &mut self,
        session: SessionId,
        id: &RequestId,
        params: Option<&RawValue>,
    ) -> Result<(), Reject> {
        let p: PageParams = jsonrpc::params(params)?;
        let (tools, next_cursor) = self
            .tools
            .page(p.cursor.as_deref(), self.config.tools_page_size)?;
        let tools = tools.cloned().collect();
        let line = jsonrpc::result_line(id, &ListToolsResult { tools, next_cursor });
        self.reply(session, id, None, line);
        Ok(())
    }

    pub(super) fn on_tools_call(
        &mut self,
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
        let (support, immediate, decision) = match self.tools.by_name.get(&p.name) {
            Some(&i) => {
                let def = &self.tools.defs[i];
                (
                    def.tool.execution.task_support,
                    def.immediate_response.clone(),
                    def.decision,
                )
            }
            None if self.tools.accept_unknown => {
                (TaskSupport::Optional, None, TaskDecision::Policy)
            }
            None => {
                return Err(RpcError::invalid_params(format!("Unknown tool: {}", p.name)).into())
            }
        };
        let hosts_tasks = self.hosts_tasks(session);
        let task = p.common.task_metadata(hosts_tasks)?;
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
        let progress_token = p.common.meta.and_then(|m| m.progress_token);
        let arguments = p.arguments.map(ToOwned::to_owned);
        let (call, task, task_offered) = match task {
            Some(metadata) if decision == TaskDecision::Policy => {
                let (task, call) = self.legacy_begin_task(
                    session,
                    id,
                    metadata.ttl,
                    progress_token,
                    immediate.as_deref(),
                )?;
                (call, Some(task), false)
            }
            offer => {
                let mut state = Call::plain(session, id.clone(), progress_token);
                state.offer = offer.map(|m| m.ttl);
                let call = self.add_call(state);
                if let Some(s) = self.session_mut(session) {
                    s.inbound.insert(id.clone(), Inbound::App(call));
                }
                let offered = self.call(call).is_some_and(|c| c.offer.is_some());
                (call, None, offered)
            }
        };
        self.event(Event::ToolCall(ToolCall {
            call,
            session,
            request: id.clone(),
            name: p.name,
            arguments,
            task,
            task_offered,
        }));
        Ok(())
    }

    /// Creates the task of a task-augmented request on a legacy session and answers with
    /// its `CreateTaskResult`.
    pub(super) fn legacy_begin_task(
        &mut self,
        session: SessionId,
        id: &RequestId,
        ttl: Option<u64>,
        progress_token: Option<serde_json::Value>,
        immediate_response: Option<&str>,
    ) -> Result<(crate::TaskId, crate::CallId), Reject> {
        let caps = self.peer_capabilities(session);
        let inputs = InputKinds {
            elicitation: super::declares(caps, &["elicitation"]),
            sampling: super::declares(caps, &["sampling"]),
            roots: super::declares(caps, &["roots"]),
        };
        let (task, call) =
            self.begin_task(session, ttl, progress_token, Era::V2025_11_25, inputs)?;
        self.send_create_task_result(session, id, &task, immediate_response);
        Ok((task, call))
    }
}
