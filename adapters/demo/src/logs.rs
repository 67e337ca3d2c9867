//! What the demo binaries report on stderr: the driver's and the transports' `tracing`
//! events, filtered by `RUST_LOG` (default: `warn` on stdio, `info` over HTTP), in colour
//! only on a terminal; and each task's spans over OTLP when the standard
//! `OTEL_EXPORTER_OTLP_*` variables name a collector.

/// Reports from here on, at `default` unless `RUST_LOG` says; keep the guard until the end
/// of `main` (it sends the last spans).
#[cfg(not(target_os = "wasi"))]
pub fn init(default: &str) -> taskwire_driver::telemetry::Telemetry {
    taskwire_driver::telemetry::init(default)
}

/// Prints `tracing` events on stderr from here on, at `default` unless `RUST_LOG` says.
#[cfg(target_os = "wasi")]
pub fn init(default: &str) {
    use tracing_subscriber::EnvFilter;
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .try_init();
}
