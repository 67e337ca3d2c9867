//! Startup: the time from spawning a server to reading its `initialize` answer, and its RSS
//! once `notifications/initialized` and a `ping` have gone through.

use super::Outcome;
use crate::conn::Conn;
use crate::procfs;
use crate::stats::Summary;

/// Starts `spawns` servers one after the other; each value is the median over them.
pub fn run(
    spawns: usize,
    start: &mut dyn FnMut() -> Result<Conn, String>,
) -> Result<Outcome, String> {
    let (mut times_ms, mut rss_mib) = (Vec::new(), Vec::new());
    for _ in 0..spawns.max(1) {
        let conn = start()?;
        times_ms.push(conn.spawn_to_initialize.as_secs_f64() * 1e3);
        rss_mib.push(procfs::rss_kib(conn.pid())? as f64 / 1024.0);
        conn.close();
    }
    let median = |values: &[f64]| Summary::of(values).map_or(0.0, |s| s.median);
    Ok(Outcome::measured(vec![median(&times_ms), median(&rss_mib)]))
}
