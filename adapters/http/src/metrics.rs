//! [`Metrics`]: this process's metrics in the Prometheus text format, at a route of the
//! user's app or on a listener of its own.

use std::io;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use axum::http::header;
use axum::routing::get;
use axum::Router;
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};

/// Histogram buckets for seconds: half a millisecond to an hour.
const SECONDS: &[f64] = &[
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
    60.0, 300.0, 900.0, 3600.0,
];
/// Histogram buckets for the entries of one store write.
const ENTRIES: &[f64] = &[1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0, 1024.0];
/// How often recorded histogram values are folded in, so that memory stays flat between
/// scrapes.
const UPKEEP: Duration = Duration::from_secs(5);

/// The recorder installed by [`Metrics::install`], once per process.
static INSTALLED: Mutex<Option<PrometheusHandle>> = Mutex::new(None);

/// This process's metrics (the driver's tasks, requests and store writes with
/// `Server::observe`, and this crate's sessions, streams and refusals) in the Prometheus
/// text format. Cheap to clone.
///
/// ```no_run
/// # async fn run(handle: taskwire_driver::ServerHandle) -> Result<(), taskwire_http::MetricsError> {
/// // Before the server starts, so that it describes its metrics.
/// let metrics = taskwire_http::Metrics::install()?;
/// let app = taskwire_http::router("/mcp", handle, Default::default())
///     .merge(metrics.router("/metrics"));
/// # Ok(()) }
/// ```
#[derive(Clone, Debug)]
pub struct Metrics {
    handle: PrometheusHandle,
}

/// [`Metrics::install`] found another `metrics` recorder installed in this process (by
/// another library): use that one's exporter, or install ours first.
#[derive(Debug)]
pub struct MetricsError(String);

impl std::fmt::Display for MetricsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "cannot install the Prometheus recorder: {} (another metrics recorder was installed \
             in this process first; use its exporter, or call Metrics::install before it)",
            self.0
        )
    }
}

impl std::error::Error for MetricsError {}

impl Metrics {
    /// Installs the Prometheus recorder as this process's `metrics` recorder (the first
    /// call; later calls return the same one). Histograms in seconds have buckets from
    /// 0.5 ms to 1 h; a store write's entries from 1 to 1024. A thread folds recorded
    /// values in every 5 s. Install it before a server starts with `Server::observe`, which
    /// describes its metrics as it starts.
    pub fn install() -> Result<Metrics, MetricsError> {
        let mut installed = INSTALLED.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(handle) = installed.as_ref() {
            return Ok(Metrics {
                handle: handle.clone(),
            });
        }
        let handle = PrometheusBuilder::new()
            .set_buckets_for_metric(Matcher::Suffix("_seconds".into()), SECONDS)
            .and_then(|b| b.set_buckets_for_metric(Matcher::Suffix("_entries".into()), ENTRIES))
            .and_then(PrometheusBuilder::install_recorder)
            .map_err(|e| MetricsError(e.to_string()))?;
        crate::counted::describe();
        let upkeep = handle.clone();
        let thread = std::thread::Builder::new()
            .name("metrics-upkeep".into())
            .spawn(move || loop {
                std::thread::sleep(UPKEEP);
                upkeep.run_upkeep();
            });
        if let Err(error) = thread {
            tracing::warn!(%error, "no thread for the metrics' upkeep; histograms fold in at each scrape");
        }
        *installed = Some(handle.clone());
        Ok(Metrics { handle })
    }

    /// Every metric now, in the Prometheus text format (version 0.0.4).
    pub fn render(&self) -> String {
        self.handle.render()
    }

    /// A `GET` route at `path` answering [`Metrics::render`]; merge it into your app. It
    /// asks for no credentials: serve it where only your scraper reaches (or see
    /// [`Metrics::serve`] for a listener of its own).
    pub fn router(&self, path: &str) -> Router {
        let metrics = self.clone();
        Router::new().route(
            path,
            get(move || async move {
                (
                    [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
                    metrics.render(),
                )
            }),
        )
    }

    /// Serves [`Metrics::router`] at `/metrics` on `listener` (apart from the MCP endpoint,
    /// e.g. on an address only the scraper reaches) until the task is dropped or the
    /// listener fails.
    pub async fn serve(self, listener: tokio::net::TcpListener) -> io::Result<()> {
        tracing::info!(address = %listener.local_addr()?, "serving metrics at /metrics");
        axum::serve(listener, self.router("/metrics")).await
    }
}
