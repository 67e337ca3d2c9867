//! The tools a server serves: the registry, `tools/list` pages, and each tool's task policy.

use std::collections::HashMap;
use std::hash::BuildHasherDefault;

use super::tasks::IdHasher;
use crate::jsonrpc::RpcError;
use crate::model::{TaskDecision, TaskSupport, Tool, ToolDef};

/// The tools a host serves, in the order they were added.
#[derive(Debug, Default)]
pub(crate) struct ToolRegistry {
    defs: Vec<ToolDef>,
    /// Names are the server's (a peer's call only looks one up): hashed cheaply.
    by_name: HashMap<String, usize, BuildHasherDefault<IdHasher>>,
    /// Calls to unregistered names reach the application (as if "optional").
    pub accept_unknown: bool,
}

impl ToolRegistry {
    /// Adds (or replaces) a tool.
    pub fn add(&mut self, def: ToolDef) {
        match self.by_name.get(&def.tool.name) {
            Some(&i) => self.defs[i] = def,
            None => {
                self.by_name.insert(def.tool.name.clone(), self.defs.len());
                self.defs.push(def);
            }
        }
    }

    /// Removes a tool; whether it was there.
    pub fn remove(&mut self, name: &str) -> bool {
        let Some(i) = self.by_name.remove(name) else {
            return false;
        };
        self.defs.remove(i);
        for index in self.by_name.values_mut().filter(|index| **index > i) {
            *index -= 1;
        }
        true
    }

    /// Every tool, as listed, in order.
    pub fn iter(&self) -> impl Iterator<Item = &Tool> {
        self.defs.iter().map(|d| &d.tool)
    }

    /// The tool `name`, as listed.
    pub fn get(&self, name: &str) -> Option<&Tool> {
        self.by_name.get(name).map(|&i| &self.defs[i].tool)
    }

    /// One `tools/list` page from `cursor` (`tools:<index>`), and the next page's cursor.
    pub fn page(
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

    /// How a tool answers task requests: its task support, who decides, and its interim
    /// text; `None` for an unknown tool (unless unknown tools are accepted, as "optional").
    pub fn policy(&self, name: &str) -> Option<(TaskSupport, TaskDecision, Option<&str>)> {
        match self.by_name.get(name) {
            Some(&i) => {
                let def = &self.defs[i];
                Some((
                    def.tool.execution.task_support,
                    def.decision,
                    def.immediate_response.as_deref(),
                ))
            }
            None if self.accept_unknown => {
                Some((TaskSupport::Optional, TaskDecision::Policy, None))
            }
            None => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_removed_tool_leaves_the_others_found_by_name() {
        let mut tools = ToolRegistry::default();
        let supports = [
            ("a", TaskSupport::Optional),
            ("b", TaskSupport::Required),
            ("c", TaskSupport::Forbidden),
        ];
        for (name, support) in supports {
            tools.add(ToolDef::from(Tool::new(name, support)));
        }
        assert!(tools.remove("a"));
        assert!(!tools.remove("a"));
        let support = |name| tools.policy(name).map(|(support, _, _)| support);
        assert_eq!(support("a"), None);
        assert_eq!(support("b"), Some(TaskSupport::Required));
        assert_eq!(support("c"), Some(TaskSupport::Forbidden));
    }
}
