//! Resource subscriptions through the proxy: what the front's clients of either era want
//! updates of, as the front server reports it, asked of the server behind as one set, in
//! its era ([`Client::subscribe_resources`](taskwire_driver::Client::subscribe_resources)).

use std::sync::Arc;

use futures::lock::Mutex;
use taskwire_driver::Runtime;

use crate::backend::Backend;
use crate::forward::behind;

/// The front's subscriptions. Cheap to clone.
#[derive(Clone)]
pub(crate) struct Subscriptions {
    /// Every resource the front's clients want; held while the server behind is asked, so
    /// that each asking sends the newest set.
    wanted: Arc<Mutex<Vec<String>>>,
    backend: Backend,
    runtime: Arc<dyn Runtime>,
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

    /// The front's clients now want `uris`: asked behind in the background.
    pub fn wanted(&self, uris: Vec<String>) {
        self.ask_in_background(Some(uris));
    }

    /// The server behind was started again: it is asked for every resource wanted, in the
    /// background.
    pub fn again(&self) {
        self.ask_in_background(None);
    }

    /// Asks behind for every resource wanted (`now`, when given, first replaces it).
    fn ask_in_background(&self, now: Option<Vec<String>>) {
        let subscriptions = self.clone();
        self.runtime.spawn(Box::pin(async move {
            let mut wanted = subscriptions.wanted.lock().await;
            if let Some(now) = now {
                *wanted = now;
            }
            subscriptions.ask(wanted.clone()).await;
        }));
    }

    async fn ask(&self, all: Vec<String>) {
        tracing::debug!(resources = ?all, "asking the server behind for resource updates");
        let asked = match self.backend.client().await {
            Ok(client) => client.subscribe_resources(all).await.map_err(behind),
            Err(e) => Err(e),
        };
        if let Err(e) = asked {
            tracing::warn!(error = %e.message, "the server behind refused a resource subscription");
        }
    }
}
