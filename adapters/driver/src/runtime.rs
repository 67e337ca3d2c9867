//! What the driver needs from an async runtime, plus the wall clock and task ids.

use std::future::Future;
use std::pin::Pin;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use taskwire_engine::Millis;

/// A boxed future the runtime runs to completion.
pub type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;

/// Spawning and timers: all a runtime adapter provides (a few lines each for smol, tokio, WASI).
pub trait Runtime: Send + Sync + 'static {
    /// Runs `future` in the background.
    fn spawn(&self, future: BoxFuture<()>);
    /// Completes after `duration`.
    fn sleep(&self, duration: Duration) -> BoxFuture<()>;
}

/// The wall clock in milliseconds since the Unix epoch: the time fed to the engine.
pub fn now() -> Millis {
    let since = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    Millis(u64::try_from(since.as_millis()).unwrap_or(u64::MAX))
}

/// A random 128-bit task id from the OS RNG, written as a UUID (version 4).
pub fn random_task_id() -> String {
    let mut b = [0u8; 16];
    getrandom::fill(&mut b).expect("the OS random number generator is available");
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..]
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn task_ids_are_uuid_v4_and_distinct() {
        let (a, b) = (super::random_task_id(), super::random_task_id());
        assert_ne!(a, b);
        assert_eq!(a.len(), 36);
        assert_eq!(&a[14..15], "4");
        assert!("89ab".contains(&a[19..20]));
    }
}
