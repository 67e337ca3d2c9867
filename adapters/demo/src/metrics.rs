//! `--metrics ADDR`: the server's metrics in the Prometheus text format at
//! `http://ADDR/metrics`, on a listener and a thread of their own, whatever the server is
//! served over (stdio, HTTP, a worker).

use std::net::TcpListener;

use taskwire_http::Metrics;

/// Installs the Prometheus recorder and serves it at `http://{address}/metrics` from a
/// thread of its own; `Err` says why it cannot (the address, the port, another recorder).
pub fn serve(address: &str) -> Result<(), String> {
    let listener = TcpListener::bind(address).map_err(|e| format!("--metrics {address}: {e}"))?;
    let metrics = Metrics::install().map_err(|e| e.to_string())?;
    listener
        .set_nonblocking(true)
        .map_err(|e| format!("--metrics {address}: {e}"))?;
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
