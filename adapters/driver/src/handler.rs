//! Requests the application answers outside tools: a client's server-to-client requests
//! (`elicitation/create`, `sampling/createMessage`, `roots/list`) and a server's own methods
//! (`resources/*`, `prompts/*`, …), each by an async function from params to result.

use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;

use futures::FutureExt;
use serde_json::{json, Value};
use taskwire_engine::era::v2025_11_25::RELATED_TASK;
use taskwire_engine::{AppRequest, RpcError};

use crate::driver::{Outcome, Work};
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

/// The work of answering `request` with `handler`. The params name the task the request
/// is about the same way in both eras: the 2025-11-25 related-task `_meta` entry (added for
/// a 2026-07-28 task's input request, which carries it outside the params).
pub(crate) fn request_work(handler: &Handler, request: AppRequest) -> Work {
    let mut params = request
        .params
        .and_then(|raw| serde_json::from_str(raw.get()).ok())
        .unwrap_or(Value::Null);
    if let (Some(task), Value::Object(fields)) = (&request.related_task, &mut params) {
        if let Value::Object(meta) = fields.entry("_meta").or_insert_with(|| json!({})) {
            meta.entry(RELATED_TASK)
                .or_insert_with(|| json!({ "taskId": task.as_str() }));
        }
    }
    let method = request.method;
    let work = handler(params).map(move |answer| object_result(&method, answer?));
    Work::new(request.call, work)
}

/// A handler's answer, which must be an object; anything else is -32603 for the peer
/// instead of a reply the spec forbids.
fn object_result(method: &str, answer: Value) -> Outcome {
    match answer {
        Value::Object(_) => {
            Ok(serde_json::value::to_raw_value(&answer).expect("JSON values serialize"))
        }
        _ => Err(RpcError::internal(format!(
            "Internal error: the {method} handler answered {answer}, not a JSON object"
        ))),
    }
}
