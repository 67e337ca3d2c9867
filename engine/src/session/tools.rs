//! Server tools: the registry, `tools/list` pages, and `tools/call` admission.

use std::collections::HashMap;

use serde_json::value::RawValue;
use serde_json::Value;

use super::{InboundRequest, Session};
use crate::event::Event;
use crate::jsonrpc::{self, RequestId, RpcError};
use crate::wire::v2025_11_25::{CallToolParams, ListToolsResult, PageParams, TaskSupport, Tool};

/// A tool the server offers, and how it answers task-augmented calls.
#[derive(Clone, Debug)]
pub struct ToolDef {
    /// The definition listed by `tools/list`.
    pub tool: Tool,
    /// Optional interim text put in the `CreateTaskResult` `_meta` for the model.
    pub immediate_response: Option<String>,
}

impl From<Tool> for ToolDef {
    fn from(tool: Tool) -> Self {
        ToolDef {
            tool,
            immediate_response: None,
        }
    }
}

#[derive(Debug, Default)]
pub(super) struct Tools {
    defs: Vec<ToolDef>,
    by_name: HashMap<String, usize>,
    accept_unknown: bool,
}

impl Session {
    /// Adds (or replaces) a tool.
    pub fn add_tool(&mut self, def: impl Into<ToolDef>) {
        let def = def.into();
        match self.tools.by_name.get(&def.tool.name) {
            Some(&i) => self.tools.defs[i] = def,
            None => {
                self.tools
                    .by_name
                    .insert(def.tool.name.clone(), self.tools.defs.len());
                self.tools.defs.push(def);
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
        id: &RequestId,
        params: Option<&RawValue>,
    ) -> Result<(), RpcError> {
        let p: PageParams = jsonrpc::params(params)?;
        let start = match p.cursor {
            None => 0,
            Some(c) => c
                .strip_prefix("tools:")
                .and_then(|n| n.parse::<usize>().ok())
                .filter(|&n| n <= self.tools.defs.len())
                .ok_or_else(|| RpcError::invalid_params("Invalid cursor"))?,
        };
        let end = (start + self.config.tasks.page_size.max(1)).min(self.tools.defs.len());
        let tools = self.tools.defs[start..end]
            .iter()
            .map(|d| d.tool.clone())
            .collect();
        let next_cursor = (end < self.tools.defs.len()).then(|| format!("tools:{end}"));
        self.reply(id, &ListToolsResult { tools, next_cursor });
        Ok(())
    }

    pub(super) fn on_tools_call(
        &mut self,
        id: &RequestId,
        params: Option<&RawValue>,
    ) -> Result<(), RpcError> {
        let p: CallToolParams<'_> = jsonrpc::params(params)?;
        if p.arguments.is_some_and(|a| !a.get().starts_with('{')) {
            return Err(RpcError::invalid_params(
                "Invalid params: `arguments` must be an object",
            ));
        }
        let (support, immediate) = match self.tools.by_name.get(&p.name) {
            Some(&i) => {
                let def = &self.tools.defs[i];
                (
                    def.tool.execution.task_support,
                    def.immediate_response.clone(),
                )
            }
            None if self.tools.accept_unknown => (TaskSupport::Optional, None),
            None => {
                return Err(RpcError::invalid_params(format!(
                    "Unknown tool: {}",
                    p.name
                )))
            }
        };
        let hosts_tasks = self.hosts_tasks();
        let task = p.common.task_metadata(hosts_tasks)?;
        let not_found = |why: &str| {
            RpcError::new(
                jsonrpc::code::METHOD_NOT_FOUND,
                format!("Tool '{}' {why}", p.name),
            )
        };
        match (&task, support) {
            (Some(_), TaskSupport::Forbidden) => {
                return Err(not_found("does not support task-augmented execution"))
            }
            (None, TaskSupport::Required) if hosts_tasks => {
                return Err(not_found("requires task-augmented execution"))
            }
            _ => {}
        }
        let progress_token: Option<Value> = p.common.meta.and_then(|m| m.progress_token);
        let arguments = p.arguments.map(ToOwned::to_owned);
        let task = match task {
            Some(metadata) => {
                Some(self.begin_task(id, metadata, progress_token, immediate.as_deref())?)
            }
            None => {
                self.inbound.insert(
                    id.clone(),
                    InboundRequest::App {
                        progress_token,
                        related_task: None,
                    },
                );
                None
            }
        };
        self.event(Event::ToolCall {
            request: id.clone(),
            name: p.name,
            arguments,
            task,
        });
        Ok(())
    }
}
