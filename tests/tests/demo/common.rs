//! Settings several modules of the demo suite share.

use std::time::Duration;

/// How long a test body may take (the demo build before it does not count).
pub const LIMIT: Duration = Duration::from_secs(60);

/// Outer bound on anything that should be prompt: a hang fails the test instead of blocking.
pub const HANG: Duration = Duration::from_secs(10);

/// The servers' step (`--step-ms`) where the real one-second steps are not needed.
pub const STEP_MS: u64 = 40;
