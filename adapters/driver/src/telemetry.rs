//! What a binary reports: `tracing` events on stderr under `RUST_LOG`, and, when the standard
//! OpenTelemetry variables name a collector, the spans of each task exported over OTLP
//! (feature `opentelemetry`).
//!
//! ```no_run
//! // At the top of `main`; the guard flushes the last spans when it drops.
//! let _telemetry = taskwire_driver::telemetry::init("warn");
//! ```

use std::io::{self, IsTerminal};
use std::time::Duration;

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{Protocol, WithExportConfig};
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::SdkTracerProvider;
use opentelemetry_sdk::Resource;
use tracing_subscriber::filter::{LevelFilter, Targets};
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Layer};

/// The longest the last spans may take to leave when the guard drops.
const FLUSH_LIMIT: Duration = Duration::from_secs(5);

/// The exporter while it runs; dropping it sends the spans still buffered (waiting up to
/// 5 s for the collector).
#[must_use = "the last spans are sent when this drops: keep it until the end of `main`"]
pub struct Telemetry {
    provider: Option<SdkTracerProvider>,
}

impl Telemetry {
    /// Whether spans are exported.
    pub fn exporting(&self) -> bool {
        self.provider.is_some()
    }
}

impl Drop for Telemetry {
    fn drop(&mut self) {
        if let Some(provider) = self.provider.take() {
            if let Err(error) = provider.shutdown_with_timeout(FLUSH_LIMIT) {
                tracing::warn!(%error, "the last spans could not be sent to the OTLP collector");
            }
        }
    }
}

/// Prints `tracing` events on stderr (filtered by `RUST_LOG`, else `default`, such as
/// `"warn"`; in colour only on a terminal), and exports spans over OTLP/HTTP when
/// `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (the full URL) or `OTEL_EXPORTER_OTLP_ENDPOINT`
/// (`/v1/traces` is added) is set, unless `OTEL_SDK_DISABLED=true` or
/// `OTEL_TRACES_EXPORTER=none`. Otherwise nothing is exported and taskwire's spans cost
/// nothing (they are below the default levels).
///
/// The exporter reads the standard variables: `OTEL_EXPORTER_OTLP_[TRACES_]PROTOCOL`
/// (`http/protobuf`, the default, or `http/json`; another, such as `grpc`, is refused with a
/// warning and nothing is exported), `…_HEADERS`, `…_TIMEOUT`, `…_COMPRESSION`,
/// `OTEL_SERVICE_NAME` (default: the executable's name), `OTEL_RESOURCE_ATTRIBUTES`, the
/// batch's `OTEL_BSP_SCHEDULE_DELAY` (default 5 s) and `OTEL_BSP_MAX_QUEUE_SIZE`, and
/// `OTEL_TRACES_SAMPLER`. The W3C trace-context propagator is installed, so the server
/// continues the `traceparent` a request's `_meta` carries, and the client sends its own.
///
/// Exported: the spans and events of taskwire's crates from DEBUG up (each `tools/call`,
/// each task's work and status changes, its questions, its store writes), and other
/// crates' from INFO up. A second call leaves the first subscriber in place.
pub fn init(default: &str) -> Telemetry {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default));
    let print = tracing_subscriber::fmt::layer()
        .with_writer(io::stderr)
        .with_ansi(io::stderr().is_terminal())
        .with_filter(filter);
    let (provider, trouble) = match exporter() {
        Ok(provider) => (provider, None),
        Err(trouble) => (None, Some(trouble)),
    };
    let export = provider.as_ref().map(|provider| {
        let tracer = provider.tracer("taskwire");
        let spans = Targets::new()
            .with_default(LevelFilter::INFO)
            .with_target("taskwire", LevelFilter::DEBUG);
        tracing_opentelemetry::layer()
            .with_tracer(tracer)
            .with_filter(spans)
    });
    let _ = tracing_subscriber::registry()
        .with(print)
        .with(export)
        .try_init();
    if let Some(trouble) = trouble {
        tracing::warn!("{trouble}; spans are not exported");
    }
    if provider.is_some() {
        opentelemetry::global::set_text_map_propagator(TraceContextPropagator::new());
        tracing::debug!("spans are exported over OTLP");
    }
    Telemetry { provider }
}

/// The tracer provider the variables ask for: `Ok(None)` when they ask for none.
fn exporter() -> Result<Option<SdkTracerProvider>, String> {
    let set = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
    let disabled = set("OTEL_SDK_DISABLED").is_some_and(|v| v.eq_ignore_ascii_case("true"))
        || set("OTEL_TRACES_EXPORTER").is_some_and(|v| v.eq_ignore_ascii_case("none"));
    let endpoint = set("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT").or(set("OTEL_EXPORTER_OTLP_ENDPOINT"));
    if disabled || endpoint.is_none() {
        return Ok(None);
    }
    let asked = set("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL").or(set("OTEL_EXPORTER_OTLP_PROTOCOL"));
    let protocol = match asked.as_deref() {
        None | Some("http/protobuf") => Protocol::HttpBinary,
        Some("http/json") => Protocol::HttpJson,
        Some(other) => {
            return Err(format!(
                "the OTLP protocol {other:?} is not built in (http/protobuf and http/json are)"
            ))
        }
    };
    let exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_protocol(protocol)
        .build()
        .map_err(|e| format!("the OTLP exporter cannot start: {e}"))?;
    let mut resource = Resource::builder();
    if set("OTEL_SERVICE_NAME").is_none() {
        let exe = std::env::current_exe().ok();
        let name = exe
            .as_deref()
            .and_then(|p| p.file_stem())
            .and_then(|s| s.to_str());
        resource = resource.with_service_name(name.unwrap_or("taskwire").to_owned());
    }
    Ok(Some(
        SdkTracerProvider::builder()
            .with_batch_exporter(exporter)
            .with_resource(resource.build())
            .build(),
    ))
}
