//! The client of the server behind, and, with a restarter, the server started again once it
//! has gone: the next call after it exited finds a new one.

use std::future::Future;
use std::sync::Arc;

use futures::future::BoxFuture;
use futures::lock::Mutex;
use taskwire_driver::{Client, ClientBuilder, Error, RpcError};

/// Starts the server behind again and connects `ClientBuilder` to it (initialized); the
/// reason when it cannot.
pub(crate) type Restarter =
    Arc<dyn Fn(ClientBuilder) -> BoxFuture<'static, Result<Client, String>> + Send + Sync>;

/// The current client of the server behind. Cheap to clone.
#[derive(Clone)]
pub(crate) struct Backend {
    current: Arc<Mutex<Client>>,
    restart: Option<(Restarter, Arc<dyn Fn() -> ClientBuilder + Send + Sync>)>,
    /// Whether a server started again is asked for every log level ([`ask_every_level`]).
    every_level: bool,
    /// Told when a server started again serves (its tools are listed again).
    restarted: Arc<dyn Fn() + Send + Sync>,
}

impl Backend {
    /// `client`, made again by `restart` (with a client built by `builder`, then asked for
    /// every log level when `every_level`, then `restarted` called) when its connection has
    /// ended.
    pub fn new(
        client: Client,
        restart: Option<Restarter>,
        builder: impl Fn() -> ClientBuilder + Send + Sync + 'static,
        every_level: bool,
        restarted: impl Fn() + Send + Sync + 'static,
    ) -> Self {
        Backend {
            current: Arc::new(Mutex::new(client)),
            restart: restart.map(|r| (r, Arc::new(builder) as Arc<_>)),
            every_level,
            restarted: Arc::new(restarted),
        }
    }

    /// The client to call the server behind with: the current one, or, when its connection
    /// has ended and the proxy restarts servers, a new one (one restart for the calls that
    /// find it gone together).
    pub async fn client(&self) -> Result<Client, RpcError> {
        let mut current = self.current.lock().await;
        let Some((restart, builder)) = self.restart.as_ref().filter(|_| current.is_closed()) else {
            return Ok(current.clone());
        };
        tracing::warn!("the server behind has gone; starting it again");
        match restart(builder()).await {
            Ok(client) => {
                tracing::info!("the server behind started again");
                if self.every_level {
                    if let Err(e) = ask_every_level(&client).await {
                        tracing::warn!(error = %e, "the server behind refused logging/setLevel");
                    }
                }
                *current = client.clone();
                (self.restarted)();
                Ok(client)
            }
            Err(why) => {
                tracing::error!(error = %why, "the server behind cannot start again");
                Err(RpcError::internal(format!(
                    "The server behind the proxy has gone and could not be started again: {why}"
                )))
            }
        }
    }
}

/// Asks a 2025-11-25 server that logs for every level (`logging/setLevel` `debug`): the
/// proxy's front filters them for each of its clients by the level that client set.
pub(crate) async fn ask_every_level(client: &Client) -> Result<(), Error> {
    let every = serde_json::json!({ "level": "debug" });
    client.request("logging/setLevel", Some(every)).await?;
    tracing::debug!("the server behind asked for every log level");
    Ok(())
}

/// A restarter from an async function.
pub(crate) fn restarter<F, Fut>(f: F) -> Restarter
where
    F: Fn(ClientBuilder) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Client, String>> + Send + 'static,
{
    Arc::new(move |builder| Box::pin(f(builder)))
}
