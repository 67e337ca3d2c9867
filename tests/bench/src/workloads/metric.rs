//! What the workloads measure, and how a value is written in a table.

use crate::servers::ServerId;

/// A measured quantity.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Metric {
    /// Completed calls per second.
    CallsPerSecond,
    /// Median round trip, µs.
    P50Micros,
    /// 99th-percentile round trip, µs.
    P99Micros,
    /// Server CPU time (user + system, all threads) per call, µs.
    CpuMicrosPerCall,
    /// Server context switches (voluntary + involuntary, all threads) per call.
    ContextSwitchesPerCall,
    /// Completed lifecycles per second.
    LifecyclesPerSecond,
    /// `tasks/get` requests per lifecycle until the task showed `completed`.
    GetsPerLifecycle,
    /// Tasks created per second.
    CreatedPerSecond,
    /// Time to read every page of `tasks/list`, ms.
    ListMs,
    /// Pages in that listing.
    ListPages,
    /// (RSS with the tasks − idle RSS) / tasks created, bytes.
    BytesPerTask,
    /// The database's size on disk after the fill / tasks created, bytes; only for ours on a
    /// durable store: SQLite's files (`.db`, `-wal`, `-shm`), PostgreSQL's
    /// `pg_total_relation_size('taskwire_tasks')` (the table, its indexes and TOAST).
    DiskBytesPerTask,
    /// Spawn to `initialize` answer, ms.
    SpawnToInitializeMs,
    /// RSS after `initialize`, MiB.
    IdleRssMib,
}

impl Metric {
    /// The column heading.
    pub fn label(self) -> &'static str {
        match self {
            Metric::CallsPerSecond => "calls/s",
            Metric::P50Micros => "p50 µs",
            Metric::P99Micros => "p99 µs",
            Metric::CpuMicrosPerCall => "server CPU µs/call",
            Metric::ContextSwitchesPerCall => "context switches/call",
            Metric::LifecyclesPerSecond => "lifecycles/s",
            Metric::GetsPerLifecycle => "tasks/get per lifecycle",
            Metric::CreatedPerSecond => "created/s",
            Metric::ListMs => "full tasks/list ms",
            Metric::ListPages => "pages",
            Metric::BytesPerTask => "RSS B/task",
            Metric::DiskBytesPerTask => "disk B/task",
            Metric::SpawnToInitializeMs => "spawn → initialize ms",
            Metric::IdleRssMib => "idle RSS MiB",
        }
    }

    /// Whether the ratio tables show it (counts that only describe a run are left out, and
    /// so is the size on disk, which only ours on a durable store have).
    pub fn compared(self) -> bool {
        !matches!(
            self,
            Metric::GetsPerLifecycle | Metric::ListPages | Metric::DiskBytesPerTask
        )
    }

    /// Whether `server` has it at all (only ours on a durable store have a size on disk).
    pub fn applies_to(self, server: ServerId) -> bool {
        self != Metric::DiskBytesPerTask || server.is_durable()
    }

    /// `value` formatted for a table cell.
    pub fn format(self, value: f64) -> String {
        match self {
            Metric::CallsPerSecond
            | Metric::LifecyclesPerSecond
            | Metric::CreatedPerSecond
            | Metric::BytesPerTask
            | Metric::DiskBytesPerTask
            | Metric::ListPages => thousands(value),
            Metric::ContextSwitchesPerCall | Metric::GetsPerLifecycle => format!("{value:.2}"),
            _ if value >= 100.0 => thousands(value),
            _ => format!("{value:.1}"),
        }
    }
}

/// `value` rounded, with thousands separators: `12,345`.
fn thousands(value: f64) -> String {
    let digits = format!("{:.0}", value.abs());
    let mut out = String::new();
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(digit);
    }
    if value < 0.0 && digits != "0" {
        out.insert(0, '-');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert_eq!(thousands(1234567.4), "1,234,567");
        assert_eq!(thousands(999.6), "1,000");
        assert_eq!(thousands(12.0), "12");
        assert_eq!(Metric::P50Micros.format(78.26), "78.3");
        assert_eq!(Metric::ContextSwitchesPerCall.format(12.0), "12.00");
        assert_eq!(Metric::IdleRssMib.format(3.86), "3.9");
        assert_eq!(Metric::DiskBytesPerTask.format(1234.5), "1,234");
        assert!(Metric::DiskBytesPerTask.applies_to(ServerId::SmolSqliteFull));
        assert!(Metric::DiskBytesPerTask.applies_to(ServerId::SmolPostgres));
        assert!(!Metric::DiskBytesPerTask.applies_to(ServerId::Smol));
        assert!(Metric::BytesPerTask.applies_to(ServerId::Smol));
    }
}
