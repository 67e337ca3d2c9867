//! Settings both modules of the conformance suite share.

use std::time::Duration;

/// Outer bound on waiting for one of `conformance-server`'s answers: a hang fails the test
/// instead of blocking.
pub const HANG: Duration = Duration::from_secs(15);
