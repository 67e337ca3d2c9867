//! The tools the server behind runs only as tasks (`taskSupport: required`), as last listed:
//! the front serves them as `optional`, and a plain front call of one runs as a task behind
//! through the proxy's client, so the relay leaves such calls to it.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use taskwire_driver::engine::TaskSupport;
use taskwire_driver::Tool;

/// The names of the tools behind that require a task. Cheap to clone (one set, shared).
#[derive(Clone, Default)]
pub(crate) struct RequiredTools(Arc<Mutex<HashSet<String>>>);

impl RequiredTools {
    /// The server behind lists `tools` now.
    pub fn listed(&self, tools: &[Tool]) {
        let required = tools.iter().filter(|t| requires_task(t));
        *self.lock() = required.map(|t| t.name.clone()).collect();
    }

    /// Whether the tool `name` behind requires a task.
    pub fn contains(&self, name: &str) -> bool {
        self.lock().contains(name)
    }

    /// Whether no tool behind requires a task.
    pub fn is_empty(&self) -> bool {
        self.lock().is_empty()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashSet<String>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Whether the server behind runs `tool` only as a task.
pub(crate) fn requires_task(tool: &Tool) -> bool {
    tool.execution.task_support == TaskSupport::Required
}
