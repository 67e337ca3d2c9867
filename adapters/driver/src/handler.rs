//! Requests the application answers outside tools: a client's server-to-client requests
//! (`elicitation/create`, `sampling/createMessage`, `roots/list`) and a server's own methods
//! (`resources/*`, `prompts/*`, …), each by an async function from params to result.

use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;

use serde_json::Value;
use taskwire_engine::RpcError;

use crate::runtime::BoxFuture;

/// A handler for a request the application answers: params in (`null` when none), result
/// out.
pub type Handler = Arc<dyn Fn(Value) -> BoxFuture<Result<Value, RpcError>> + Send + Sync>;

/// Handlers by method: exact names, and prefixes ending in `*`.
#[derive(Clone, Default)]
pub(crate) struct Handlers(HashMap<String, Handler>);

impl Handlers {
    pub fn insert<F, Fut>(&mut self, method: &str, handler: F)
    where
        F: Fn(Value) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Value, RpcError>> + Send + 'static,
    {
        let handler: Handler = Arc::new(move |params| Box::pin(handler(params)));
        self.0.insert(method.to_owned(), handler);
    }

    pub fn contains(&self, method: &str) -> bool {
        self.0.contains_key(method)
    }

    /// The handler of `method`: its own, else the longest matching prefix pattern's.
    pub fn get(&self, method: &str) -> Option<&Handler> {
        self.0.get(method).or_else(|| {
            self.0
                .iter()
                .filter_map(|(pattern, h)| Some((pattern.strip_suffix('*')?, h)))
                .filter(|(prefix, _)| method.starts_with(prefix))
                .max_by_key(|(prefix, _)| prefix.len())
                .map(|(_, h)| h)
        })
    }
}
