//! The workloads: what each measures, on which servers, and how big.
//!
//! - [`startup`]: spawn to `initialize` answer, idle RSS.
//! - [`echo`]: sequential `tools/call echo` (rate, latency, server CPU and context switches
//!   per call) and 64 calls in flight.
//! - [`lifecycle`]: task lifecycles (`tools/call instant_task` as a task, `tasks/get` until
//!   completed, `tasks/result`), sequential and 32 in flight.
//! - [`retained`]: N retained tasks: creation rate, a full `tasks/list` pagination, RSS per
//!   task, and for ours on a durable store (SQLite, PostgreSQL) the database's size on disk
//!   per task.
//!
//! [`Metric`] names and formats what they measure.

pub mod echo;
pub mod lifecycle;
mod metric;
pub mod retained;
pub mod startup;

pub use metric::Metric;

use std::time::{Duration, Instant};

use super::conn::Conn;
use super::servers::ServerId;

/// Calls in flight in the windowed echo workload.
pub const ECHO_WINDOW: usize = 64;
/// Lifecycles in flight in the windowed lifecycle workload.
pub const LIFECYCLE_WINDOW: usize = 32;
/// Task creations in flight while filling the store for the retained-task workloads.
pub const FILL_WINDOW: usize = 64;

/// How many operations each workload does.
#[derive(Clone, Debug)]
pub struct Sizes {
    /// Untimed operations before each timed echo or lifecycle run (JIT warm-up, caches),
    /// within a quarter of `time_cap`.
    pub warmup: usize,
    /// Longest a timed echo or lifecycle run goes on: a slow server stops early, and its rate
    /// is over what it did.
    pub time_cap: Duration,
    /// Sequential echo calls (at most).
    pub echo_calls: usize,
    /// Echo calls with [`ECHO_WINDOW`] in flight (at most).
    pub window_calls: usize,
    /// Sequential lifecycles (at most).
    pub lifecycles: usize,
    /// Lifecycles with [`LIFECYCLE_WINDOW`] in flight (at most).
    pub window_lifecycles: usize,
    /// The retained-task counts, one workload each.
    pub retained: Vec<usize>,
    /// Processes started per round by the startup workload (its sample is their median).
    pub spawns: usize,
    /// Longest a retained-task workload may take; a server projected to need more is skipped.
    pub retained_budget: Duration,
}

impl Sizes {
    /// The warm-up before a timed run.
    fn warmup_limit(&self, count: usize) -> Limit {
        Limit::new(count, self.time_cap / 4)
    }

    /// A timed run of at most `count` operations.
    fn timed_limit(&self, count: usize) -> Limit {
        Limit::new(count, self.time_cap)
    }
}

/// Where a run stops: after `count` operations or at `deadline`, whichever comes first.
#[derive(Clone, Copy, Debug)]
pub struct Limit {
    /// Most operations.
    pub count: usize,
    /// No operation starts after this.
    pub deadline: Instant,
}

impl Limit {
    /// `count` operations, for at most `cap` from now.
    pub fn new(count: usize, cap: Duration) -> Limit {
        Limit {
            count,
            deadline: Instant::now() + cap,
        }
    }

    /// Whether another operation may start after `started` ones.
    pub fn more(&self, started: usize) -> bool {
        started < self.count && Instant::now() < self.deadline
    }
}

/// A workload.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Workload {
    /// Spawn to `initialize` answer; RSS after it.
    Startup,
    /// Sequential echo calls.
    Echo,
    /// Echo calls, [`ECHO_WINDOW`] in flight.
    EchoWindow,
    /// Sequential task lifecycles.
    Lifecycle,
    /// Task lifecycles, [`LIFECYCLE_WINDOW`] in flight.
    LifecycleWindow,
    /// This many retained tasks.
    Retained(usize),
}

impl Workload {
    /// Every workload for `sizes`, in the order of the report.
    pub fn all(sizes: &Sizes) -> Vec<Workload> {
        let mut all = vec![
            Workload::Echo,
            Workload::EchoWindow,
            Workload::Lifecycle,
            Workload::LifecycleWindow,
        ];
        all.extend(sizes.retained.iter().map(|&n| Workload::Retained(n)));
        all.push(Workload::Startup);
        all
    }

    /// The name `--workloads` takes (`retained` selects every retained size).
    pub fn key(self) -> String {
        match self {
            Workload::Startup => "startup".into(),
            Workload::Echo => "echo".into(),
            Workload::EchoWindow => format!("echo-{ECHO_WINDOW}"),
            Workload::Lifecycle => "lifecycle".into(),
            Workload::LifecycleWindow => format!("lifecycle-{LIFECYCLE_WINDOW}"),
            Workload::Retained(n) => format!("retained-{}", count_name(n)),
        }
    }

    /// The heading of its table.
    pub fn title(self, sizes: &Sizes) -> String {
        let (warm, cap) = (sizes.warmup, sizes.time_cap.as_secs());
        match self {
            Workload::Startup => format!(
                "Startup: spawn to `initialize` answer, RSS after it (median of {} spawns per round)",
                sizes.spawns
            ),
            Workload::Echo => format!(
                "Sequential `tools/call echo` (up to {} calls or {cap} s, after {warm} warm-up)",
                sizes.echo_calls
            ),
            Workload::EchoWindow => format!(
                "`tools/call echo`, {ECHO_WINDOW} in flight (up to {} calls or {cap} s, after \
                 {warm} warm-up)",
                sizes.window_calls
            ),
            Workload::Lifecycle => format!(
                "Sequential task lifecycles: `tools/call instant_task` as a task, `tasks/get` \
                 until completed, `tasks/result` (up to {} lifecycles or {cap} s, after {} \
                 warm-up)",
                sizes.lifecycles,
                warm / 4
            ),
            Workload::LifecycleWindow => format!(
                "Task lifecycles, {LIFECYCLE_WINDOW} in flight (up to {} lifecycles or {cap} s, \
                 after {} warm-up)",
                sizes.window_lifecycles,
                warm / 4
            ),
            Workload::Retained(n) => format!(
                "{} retained tasks: creation ({FILL_WINDOW} in flight), a full `tasks/list` \
                 pagination, RSS per task, disk per task (SQLite: .db, -wal, -shm files; \
                 PostgreSQL: pg_total_relation_size of taskwire_tasks)",
                count_name(n)
            ),
        }
    }

    /// What it measures, in the order of its samples.
    pub fn metrics(self) -> &'static [Metric] {
        match self {
            Workload::Startup => &[Metric::SpawnToInitializeMs, Metric::IdleRssMib],
            Workload::Echo => &[
                Metric::CallsPerSecond,
                Metric::P50Micros,
                Metric::P99Micros,
                Metric::CpuMicrosPerCall,
                Metric::ContextSwitchesPerCall,
            ],
            Workload::EchoWindow => &[Metric::CallsPerSecond],
            Workload::Lifecycle | Workload::LifecycleWindow => {
                &[Metric::LifecyclesPerSecond, Metric::GetsPerLifecycle]
            }
            Workload::Retained(_) => &[
                Metric::CreatedPerSecond,
                Metric::ListMs,
                Metric::ListPages,
                Metric::BytesPerTask,
                Metric::DiskBytesPerTask,
            ],
        }
    }

    /// Whether `server` can run it (rmcp and the limit host no 2025-11-25 tasks).
    pub fn applies_to(self, server: ServerId) -> bool {
        match self {
            Workload::Startup | Workload::Echo | Workload::EchoWindow => true,
            // The proxy's tasks complete as it hears of those behind, in any order: the
            // listing's check (every task completed once the last one is) does not hold.
            Workload::Retained(_) if server == ServerId::Proxy => false,
            _ => server.hosts_tasks(),
        }
    }

    /// Runs it once against a fresh `start()`ed server.
    pub fn run(
        self,
        sizes: &Sizes,
        server: ServerId,
        start: &mut dyn FnMut() -> Result<Conn, String>,
    ) -> Result<Outcome, String> {
        if let Workload::Startup = self {
            return startup::run(sizes.spawns, start);
        }
        let mut conn = start()?;
        let outcome = match self {
            Workload::Startup => unreachable!("handled above"),
            Workload::Echo => echo::sequential(&mut conn, sizes.warmup_limit(sizes.warmup), || {
                sizes.timed_limit(sizes.echo_calls)
            }),
            Workload::EchoWindow => {
                echo::windowed(&mut conn, sizes.warmup_limit(sizes.warmup), || {
                    sizes.timed_limit(sizes.window_calls)
                })
            }
            Workload::Lifecycle => {
                lifecycle::run(&mut conn, 1, sizes.warmup_limit(sizes.warmup / 4), || {
                    sizes.timed_limit(sizes.lifecycles)
                })
            }
            Workload::LifecycleWindow => lifecycle::run(
                &mut conn,
                LIFECYCLE_WINDOW,
                sizes.warmup_limit(sizes.warmup / 4),
                || sizes.timed_limit(sizes.window_lifecycles),
            ),
            Workload::Retained(n) => retained::run(&mut conn, server, n, sizes.retained_budget),
        }?;
        conn.close();
        Ok(outcome)
    }
}

/// What one run of a workload gave: a value per [`Workload::metrics`] entry, `None` where it
/// was not measured, and then why.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Outcome {
    /// The values, in metric order (missing at the end means not measured either).
    pub values: Vec<Option<f64>>,
    /// Why some or all values are missing (printed under the table).
    pub skipped: Option<String>,
}

impl Outcome {
    /// Every metric measured.
    pub fn measured(values: Vec<f64>) -> Outcome {
        Outcome {
            values: values.into_iter().map(Some).collect(),
            skipped: None,
        }
    }

    /// Nothing measured, because of `reason`.
    pub fn skipped(reason: String) -> Outcome {
        Outcome {
            values: Vec::new(),
            skipped: Some(reason),
        }
    }

    /// The value of metric `index`, if measured.
    pub fn value(&self, index: usize) -> Option<f64> {
        self.values.get(index).copied().flatten()
    }

    /// Whether nothing was measured.
    pub fn is_empty(&self) -> bool {
        self.values.iter().all(Option::is_none)
    }
}

/// `10k`, `100k`, `1.5k`, or the number itself below 1000.
pub fn count_name(n: usize) -> String {
    match n {
        n if n >= 1000 && n % 1000 == 0 => format!("{}k", n / 1000),
        n if n >= 1000 => format!("{:.1}k", n as f64 / 1000.0),
        n => n.to_string(),
    }
}

/// Per second, from a count and the time it took.
fn rate(count: usize, elapsed: Duration) -> f64 {
    count as f64 / elapsed.as_secs_f64().max(1e-9)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_numbers() {
        assert_eq!(count_name(10_000), "10k");
        assert_eq!(count_name(1_500), "1.5k");
        assert_eq!(count_name(200), "200");
        assert_eq!(Workload::Retained(100_000).key(), "retained-100k");
        let sizes = Sizes {
            warmup: 0,
            time_cap: Duration::ZERO,
            echo_calls: 0,
            window_calls: 0,
            lifecycles: 0,
            window_lifecycles: 0,
            retained: vec![10_000],
            spawns: 1,
            retained_budget: Duration::ZERO,
        };
        for w in Workload::all(&sizes) {
            assert!(w.applies_to(ServerId::Smol));
            assert_eq!(
                w.applies_to(ServerId::Rmcp),
                matches!(w, Workload::Startup | Workload::Echo | Workload::EchoWindow)
            );
        }
    }
}
