//! Resource subscriptions through the proxy: what the front's clients want updates of
//! (2025-11-25 `resources/subscribe`, counted per resource; 2026-07-28 listen streams, as
//! the front server reports them), asked of the server behind as one set, in its era
//! ([`Client::subscribe_resources`](taskwire_driver::Client::subscribe_resources)).

use std::collections::HashMap;
use std::sync::Arc;

use futures::lock::Mutex;
use serde::Deserialize;
use serde_json::{json, Value};
use taskwire_driver::{RpcError, Runtime};

use crate::backend::Backend;
use crate::forward::behind;

/// The front's subscriptions. Cheap to clone.
#[derive(Clone)]
pub(crate) struct Subscriptions {
    wanted: Arc<Mutex<Wanted>>,
    backend: Backend,
    runtime: Arc<dyn Runtime>,
}

/// Held while the server behind is asked, so that each asking sends the newest set.
#[derive(Default)]
struct Wanted {
    /// 2025-11-25 front clients' subscriptions minus their unsubscriptions, per resource.
    counted: HashMap<String, usize>,
    /// The resources the front's 2026-07-28 listen streams want.
    listening: Vec<String>,
}

impl Wanted {
    fn all(&self) -> Vec<String> {
        let mut all: Vec<String> = self.counted.keys().cloned().collect();
        all.extend(
            self.listening
                .iter()
                .filter(|u| !self.counted.contains_key(*u))
                .cloned(),
        );
        all.sort();
        all
    }
}

/// `params` of `resources/subscribe` and `resources/unsubscribe`.
#[derive(Deserialize)]
struct UriParams {
    uri: String,
}

impl Subscriptions {
    pub fn new(backend: Backend, runtime: Arc<dyn Runtime>) -> Self {
        let wanted = Arc::default();
        Subscriptions {
            wanted,
            backend,
            runtime,
        }
    }

    /// A front client's `resources/subscribe`: asked behind when no front client wanted the
    /// resource yet, the server behind's refusal the answer.
    pub async fn subscribe(&self, params: Value) -> Result<Value, RpcError> {
        let uri = uri_of(params)?;
        let mut wanted = self.wanted.lock().await;
        let mut all = wanted.all();
        if !all.contains(&uri) {
            all.push(uri.clone());
            self.ask(all).await?;
        }
        *wanted.counted.entry(uri).or_default() += 1;
        Ok(json!({}))
    }

    /// A front client's `resources/unsubscribe`: dropped behind once no front client wants
    /// the resource.
    pub async fn unsubscribe(&self, params: Value) -> Result<Value, RpcError> {
        let uri = uri_of(params)?;
        let mut wanted = self.wanted.lock().await;
        let before = wanted.all();
        if let Some(count) = wanted.counted.get_mut(&uri) {
            *count -= 1;
            if *count == 0 {
                wanted.counted.remove(&uri);
            }
        }
        let after = wanted.all();
        if after != before {
            self.ask(after).await?;
        }
        Ok(json!({}))
    }

    /// The front's 2026-07-28 listen streams now want `uris`: asked behind in the
    /// background.
    pub fn listening(&self, uris: Vec<String>) {
        let subscriptions = self.clone();
        self.runtime.spawn(Box::pin(async move {
            let mut wanted = subscriptions.wanted.lock().await;
            wanted.listening = uris;
            subscriptions.ask_logged(wanted.all()).await;
        }));
    }

    /// The server behind was started again: it is asked for every resource wanted, in the
    /// background.
    pub fn again(&self) {
        let subscriptions = self.clone();
        self.runtime.spawn(Box::pin(async move {
            let wanted = subscriptions.wanted.lock().await;
            subscriptions.ask_logged(wanted.all()).await;
        }));
    }

    async fn ask_logged(&self, all: Vec<String>) {
        if let Err(e) = self.ask(all).await {
            tracing::warn!(error = %e.message, "the server behind refused a resource subscription");
        }
    }

    async fn ask(&self, all: Vec<String>) -> Result<(), RpcError> {
        tracing::debug!(resources = ?all, "asking the server behind for resource updates");
        let client = self.backend.client().await?;
        client.subscribe_resources(all).await.map_err(behind)
    }
}

fn uri_of(params: Value) -> Result<String, RpcError> {
    let UriParams { uri } = serde_json::from_value(params)
        .map_err(|e| RpcError::invalid_params(format!("Invalid params: {e}")))?;
    Ok(uri)
}
