//! [`Metrics`]: a `prometheus-client` registry in the OpenMetrics text format, at a route of
//! the user's app or on a listener of its own.

use std::io;
use std::sync::Arc;

use axum::http::header;
use axum::routing::get;
use axum::Router;
use taskwire_driver::prometheus_client::encoding::text::encode;
use taskwire_driver::prometheus_client::registry::Registry;

/// The OpenMetrics content type (Prometheus reads it).
const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// A registry of metrics to serve: the driver's (`Server::metrics`), the endpoint's
/// ([`HttpMetrics`](crate::HttpMetrics)), and any of the application's own. Cheap to clone.
///
/// ```
/// use taskwire_driver::prometheus_client::registry::Registry;
/// use taskwire_driver::{Config, Server};
/// use taskwire_http::{HttpConfig, HttpMetrics, Metrics};
///
/// let mut registry = Registry::default();
/// let server = Server::new(Config::new("greeter", "1.0.0")).metrics(&mut registry);
/// let config = HttpConfig {
///     metrics: Some(HttpMetrics::register(&mut registry)),
///     ..HttpConfig::default()
/// };
/// let metrics = Metrics::new(registry);
/// assert!(metrics.render().contains("taskwire_tasks{status=\"working\"} 0"));
/// // Mount `metrics.router("/metrics")` in your app, or `metrics.serve(listener)` apart.
/// # let _ = (server, config);
/// ```
#[derive(Clone, Debug)]
pub struct Metrics {
    registry: Arc<Registry>,
}

impl Metrics {
    /// Serves `registry` as it is now (its metrics keep changing; no more can be added).
    pub fn new(registry: Registry) -> Metrics {
        Metrics {
            registry: Arc::new(registry),
        }
    }

    /// Every metric now, in the OpenMetrics text format (Prometheus scrapes it).
    pub fn render(&self) -> String {
        let mut text = String::new();
        // Writing to a String does not fail.
        let _ = encode(&mut text, &self.registry);
        text
    }

    /// A `GET` route at `path` answering [`Metrics::render`]; merge it into your app. It
    /// asks for no credentials: serve it where only your scraper reaches (or see
    /// [`Metrics::serve`] for a listener of its own).
    pub fn router(&self, path: &str) -> Router {
        let metrics = self.clone();
        Router::new().route(
            path,
            get(move || async move { ([(header::CONTENT_TYPE, CONTENT_TYPE)], metrics.render()) }),
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
