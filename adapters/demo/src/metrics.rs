//! `--metrics ADDR`: the server's metrics (its tasks, requests and store, and over HTTP the
//! endpoint's) in the OpenMetrics text format at `http://ADDR/metrics`, on a listener and a
//! thread of their own, whatever the server is served over (stdio, HTTP, a worker).

use std::net::TcpListener;

use taskwire_driver::prometheus_client::registry::Registry;
use taskwire_http::Metrics;

/// Serves `registry` at `http://{address}/metrics` from a thread of its own; `Err` says why
/// it cannot (the address, the port).
pub fn serve(address: &str, registry: Registry) -> Result<(), String> {
    let listener = TcpListener::bind(address).map_err(|e| format!("--metrics {address}: {e}"))?;
    listener
        .set_nonblocking(true)
        .map_err(|e| format!("--metrics {address}: {e}"))?;
    let metrics = Metrics::new(registry);
    std::thread::Builder::new()
        .name("metrics".into())
        .spawn(move || {
            let served = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .and_then(|rt| {
                    rt.block_on(async {
                        let listener = tokio::net::TcpListener::from_std(listener)?;
                        metrics.serve(listener).await
                    })
                });
            if let Err(error) = served {
                tracing::error!(%error, "the metrics listener stopped");
            }
        })
        .map_err(|e| format!("--metrics: no thread to serve them: {e}"))?;
    Ok(())
}
