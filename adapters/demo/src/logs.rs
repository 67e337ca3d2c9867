//! What the demo binaries report on stderr: the driver's and the transports' `tracing`
//! events, filtered by `RUST_LOG` (default: `warn` on stdio, `info` over HTTP), in colour
//! only on a terminal.

use std::io::{self, IsTerminal};

use tracing_subscriber::EnvFilter;

/// Prints `tracing` events on stderr from here on, at `default` unless `RUST_LOG` says.
pub fn init(default: &str) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(io::stderr)
        .with_ansi(io::stderr().is_terminal())
        .try_init();
}
