//! The tools as `tools/list` lists them, shared with the server's handles, so that a
//! transport reads one (the marks of its input schema) without a round trip to the driver.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use taskwire_engine::{Host, Tool};

/// The host's tools, copied each time they change (each shared: reading one is a count).
#[derive(Clone, Debug, Default)]
pub(crate) struct Catalog(Arc<RwLock<HashMap<String, Arc<Tool>>>>);

impl Catalog {
    /// The tool `name`, as listed now.
    pub fn get(&self, name: &str) -> Option<Arc<Tool>> {
        self.0.read().expect("not poisoned").get(name).cloned()
    }

    /// Copies every tool of `host`.
    pub fn fill(&self, host: &Host) {
        let tools = host
            .tools()
            .map(|t| (t.name.clone(), Arc::new(t.clone())))
            .collect();
        *self.0.write().expect("not poisoned") = tools;
    }

    /// Copies the tool `name` of `host` as it is now (gone when `host` has none).
    pub fn refresh(&self, host: &Host, name: &str) {
        let mut tools = self.0.write().expect("not poisoned");
        match host.tool(name) {
            Some(tool) => tools.insert(name.to_owned(), Arc::new(tool.clone())),
            None => tools.remove(name),
        };
    }
}
