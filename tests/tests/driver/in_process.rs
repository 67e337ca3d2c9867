//! A client (or raw lines) and a server of this process, connected over a socket pair.

use std::os::unix::net::UnixStream;
use std::sync::Arc;

use futures::AsyncReadExt;
use smol::Async;
use taskwire_driver::engine::{ClientEra, Config};
use taskwire_driver::{Client, ClientBuilder, Runtime, Server, ServerHandle};

/// `server` started on `runtime`, and a client built by `build` (from a configuration
/// opening in `era`) connected to it as owner `client`.
pub fn connect(
    runtime: &Arc<dyn Runtime>,
    server: Server,
    era: ClientEra,
    build: impl FnOnce(Config) -> ClientBuilder,
) -> Client {
    let handle = server.start(runtime.clone());
    connect_to(runtime, &handle, era, build)
}

/// [`connect`] to a server started already.
pub fn connect_to(
    runtime: &Arc<dyn Runtime>,
    handle: &ServerHandle,
    era: ClientEra,
    build: impl FnOnce(Config) -> ClientBuilder,
) -> Client {
    let (client_in, client_out) = socket(runtime, handle).split();
    let config = Config {
        client_era: era,
        ..Config::new("client", "0")
    };
    build(config).connect(runtime.clone(), Box::pin(client_in), Box::pin(client_out))
}

/// A socket connected to the server of `handle` as owner `client`, for raw JSON-RPC lines.
pub fn socket(runtime: &Arc<dyn Runtime>, handle: &ServerHandle) -> Async<UnixStream> {
    let (ours, theirs) = UnixStream::pair().expect("a socket pair");
    let (server_in, server_out) = Async::new(theirs).expect("non-blocking").split();
    let handle = handle.clone();
    runtime.spawn(Box::pin(async move {
        handle
            .connect("client", Box::pin(server_in), Box::pin(server_out))
            .await;
    }));
    Async::new(ours).expect("non-blocking")
}
