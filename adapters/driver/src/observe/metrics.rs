//! The driver's metrics ([`Server::metrics`](crate::Server::metrics)), registered in a
//! `prometheus-client` registry under `taskwire_`. Names follow Prometheus conventions: units
//! in the name, labels of few values (a tool of the server's, a status, a method of the
//! protocol's, an era, an error code, a store; never a task id or an owner). Handles are
//! looked up once per label set and kept, so that recording is an atomic add or a short
//! lock. What each one means is in taskwire-http's README.

use std::collections::HashMap;

use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::{Registry, Unit};
use taskwire_engine::{Method, TaskStatus};

use super::histogram::Histogram;

/// One label.
type Label = [(&'static str, String); 1];
/// Two labels.
type Labels2 = [(&'static str, String); 2];
/// Three labels.
type Labels3 = [(&'static str, String); 3];
/// How a family makes a histogram.
type Buckets = fn() -> Histogram;

/// Histogram buckets for seconds: half a millisecond to an hour.
const SECONDS: [f64; 19] = [
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
    60.0, 300.0, 900.0, 3600.0,
];
/// Histogram buckets for the entries of one store write.
const ENTRIES: [f64; 10] = [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0, 1024.0];

fn seconds() -> Histogram {
    Histogram::new(&SECONDS)
}

fn entries() -> Histogram {
    Histogram::new(&ENTRIES)
}

/// Every metric family of the driver, registered once; cheap to clone (the families are
/// shared).
#[derive(Clone)]
pub(crate) struct Families {
    tasks_created: Family<Label, Counter>,
    tasks_ended: Family<Labels2, Counter>,
    tasks: Family<Label, Gauge>,
    task_duration: Family<Labels2, Histogram, Buckets>,
    task_first_update: Family<Label, Histogram, Buckets>,
    request_duration: Family<Labels2, Histogram, Buckets>,
    request_errors: Family<Labels3, Counter>,
    store_commit: Family<Label, Histogram, Buckets>,
    store_batch: Family<Label, Histogram, Buckets>,
    store_failures: Family<Label, Counter>,
    store_refused: Family<Label, Counter>,
    store_unclaimed: Gauge,
    role: Family<Label, Gauge>,
}

impl Families {
    /// The families, registered in `registry` under `taskwire_`, saying what each means.
    pub fn register(registry: &mut Registry) -> Families {
        let families = Families {
            tasks_created: Family::default(),
            tasks_ended: Family::default(),
            tasks: Family::default(),
            task_duration: Family::new_with_constructor(seconds),
            task_first_update: Family::new_with_constructor(seconds),
            request_duration: Family::new_with_constructor(seconds),
            request_errors: Family::default(),
            store_commit: Family::new_with_constructor(seconds),
            store_batch: Family::new_with_constructor(entries),
            store_failures: Family::default(),
            store_refused: Family::default(),
            store_unclaimed: Gauge::default(),
            role: Family::default(),
        };
        let r = registry.sub_registry_with_prefix("taskwire");
        let f = families.clone();
        r.register(
            "tasks_created",
            "Tasks this process made, by tool",
            f.tasks_created,
        );
        r.register(
            "tasks_ended",
            "Tasks that ended in this process, by tool and status (completed, failed, \
             cancelled, or expired: its retention ran out before it finished)",
            f.tasks_ended,
        );
        r.register("tasks", "Tasks this process holds now, by status", f.tasks);
        r.register_with_unit(
            "task_duration",
            "Seconds from a task's creation to its end, by tool and status",
            Unit::Seconds,
            f.task_duration,
        );
        r.register_with_unit(
            "task_first_update",
            "Seconds from a task's creation to the first change its work made (a status \
             message, progress, a question, its end), by tool",
            Unit::Seconds,
            f.task_first_update,
        );
        r.register_with_unit(
            "request_duration",
            "Seconds from a request's receipt to its answer, by method and era",
            Unit::Seconds,
            f.request_duration,
        );
        r.register(
            "request_errors",
            "Requests answered with a JSON-RPC error, by method, era and code",
            f.request_errors,
        );
        r.register_with_unit(
            "store_commit_duration",
            "Seconds one write to the task store took, by store",
            Unit::Seconds,
            f.store_commit,
        );
        r.register(
            "store_batch_entries",
            "Task changes in one write to the task store, by store",
            f.store_batch,
        );
        r.register(
            "store_write_failures",
            "Writes to the task store that failed (each is retried), by store",
            f.store_failures,
        );
        r.register(
            "store_refused_entries",
            "Task changes the store refused for good (another process's version stands), by \
             store",
            f.store_refused,
        );
        r.register(
            "store_unclaimed_tasks",
            "Tasks in the shared store whose work waits for a process (queued by a front, or \
             left by a process whose lease ran out), as last read",
            f.store_unclaimed,
        );
        r.register(
            "process_role",
            "1 for this process's part among processes sharing its store (front, worker, both)",
            f.role,
        );
        for status in STATUSES {
            let _ = families.tasks.get_or_create(&status_label(status));
        }
        families
    }

    /// This process's part in a fleet is `role` (`both`, `front`, `worker`).
    pub fn role(&self, role: &str) {
        self.role.get_or_create(&[("role", role.to_owned())]).set(1);
    }

    /// A write of `entries` to store `store` returned after `seconds`: with `refused` entries
    /// refused for good, or failed (`Err`).
    pub fn store_wrote(
        &self,
        store: &str,
        entries: usize,
        seconds: f64,
        refused: Result<usize, ()>,
    ) {
        let label = [("store", store.to_owned())];
        self.store_commit.get_or_create(&label).observe(seconds);
        self.store_batch
            .get_or_create(&label)
            .observe(entries as f64);
        match refused {
            Ok(0) => {}
            Ok(refused) => {
                self.store_refused
                    .get_or_create(&label)
                    .inc_by(refused as u64);
            }
            Err(()) => {
                self.store_failures.get_or_create(&label).inc();
            }
        }
    }

    /// The shared store says this many tasks wait for a process.
    pub fn unclaimed(&self, tasks: usize) {
        self.store_unclaimed
            .set(i64::try_from(tasks).unwrap_or(i64::MAX));
    }
}

/// Every status, for the gauge's labels.
const STATUSES: [TaskStatus; 5] = [
    TaskStatus::Working,
    TaskStatus::InputRequired,
    TaskStatus::Completed,
    TaskStatus::Failed,
    TaskStatus::Cancelled,
];

fn status_label(status: TaskStatus) -> Label {
    [("status", status.as_str().to_owned())]
}

/// How a task ended, for the metrics.
#[derive(Clone, Copy)]
pub enum End {
    Completed,
    Failed,
    Cancelled,
    /// Its retention ran out before it finished.
    Expired,
}

impl End {
    /// How a task of `status` ended (`None`: it has not).
    pub fn of(status: TaskStatus) -> Option<End> {
        match status {
            TaskStatus::Completed => Some(End::Completed),
            TaskStatus::Failed => Some(End::Failed),
            TaskStatus::Cancelled => Some(End::Cancelled),
            TaskStatus::Working | TaskStatus::InputRequired => None,
        }
    }

    const ALL: [&'static str; 4] = ["completed", "failed", "cancelled", "expired"];
}

/// The task metrics' handles, each looked up once (a tool's when it first shows, then
/// named by its index, [`TaskMetrics::tool`]).
pub struct TaskMetrics {
    families: Families,
    statuses: [Gauge; 5],
    tools: Vec<ToolMetrics>,
    by_name: foldhash::HashMap<String, usize>,
}

struct ToolMetrics {
    created: Counter,
    ended: [Counter; 4],
    durations: [Histogram; 4],
    first_update: Histogram,
}

impl TaskMetrics {
    /// Handles into `families`.
    pub fn new(families: Families) -> Self {
        let statuses = STATUSES.map(|s| families.tasks.get_or_create_owned(&status_label(s)));
        TaskMetrics {
            families,
            statuses,
            tools: Vec::new(),
            by_name: foldhash::HashMap::default(),
        }
    }

    /// A task moved from one status to another (`None`: it appeared, or left).
    pub fn status_moved(&self, before: Option<TaskStatus>, after: Option<TaskStatus>) {
        if before == after {
            return;
        }
        if let Some(status) = before {
            self.statuses[status_index(status)].dec();
        }
        if let Some(status) = after {
            self.statuses[status_index(status)].inc();
        }
    }

    /// This process made a task of tool `tool` ([`TaskMetrics::tool`]).
    pub fn created(&self, tool: usize) {
        self.tools[tool].created.inc();
    }

    /// A task of `tool` ended here as `how` after `seconds`.
    pub fn ended(&self, tool: usize, how: End, seconds: f64) {
        let metrics = &self.tools[tool];
        metrics.ended[how as usize].inc();
        metrics.durations[how as usize].observe(seconds);
    }

    /// A task of `tool` first changed `seconds` after its creation.
    pub fn first_update(&self, tool: usize, seconds: f64) {
        self.tools[tool].first_update.observe(seconds);
    }

    /// `tool`'s index, or (looked up once, then kept in `tool`) `unknown`'s: a task whose
    /// tool this process does not know.
    pub fn label_of(&mut self, tool: &mut Option<usize>) -> usize {
        *tool.get_or_insert_with(|| self.tool("unknown"))
    }

    /// The index of the metrics of the tool labelled `label`, looked up the first time.
    pub fn tool(&mut self, label: &str) -> usize {
        if let Some(&index) = self.by_name.get(label) {
            return index;
        }
        let f = &self.families;
        let tool = || ("tool", label.to_owned());
        let metrics = ToolMetrics {
            created: f.tasks_created.get_or_create_owned(&[tool()]),
            ended: End::ALL.map(|how| {
                (f.tasks_ended).get_or_create_owned(&[tool(), ("status", how.to_owned())])
            }),
            durations: End::ALL.map(|how| {
                (f.task_duration).get_or_create_owned(&[tool(), ("status", how.to_owned())])
            }),
            first_update: f.task_first_update.get_or_create_owned(&[tool()]),
        };
        self.tools.push(metrics);
        self.by_name.insert(label.to_owned(), self.tools.len() - 1);
        self.tools.len() - 1
    }
}

fn status_index(status: TaskStatus) -> usize {
    STATUSES.iter().position(|s| *s == status).unwrap_or(0)
}

/// The request metrics' handles, each looked up when it first shows.
pub struct RequestMetrics {
    families: Families,
    /// By method and era: `method * 2 + v2026`.
    durations: Vec<Option<Histogram>>,
    errors: HashMap<(usize, i64), Counter>,
}

impl RequestMetrics {
    /// Handles into `families`.
    pub fn new(families: Families) -> Self {
        RequestMetrics {
            families,
            durations: Vec::new(),
            errors: HashMap::new(),
        }
    }

    /// The label index of `method`: its place among [`Method::ALL`]; past them, `other`
    /// (a peer's names never become labels).
    pub fn method(method: Option<Method>) -> usize {
        method.map_or(Method::ALL.len(), |m| m as usize)
    }

    /// A request of `method` ([`RequestMetrics::method`]) and era was answered after
    /// `seconds`; `error`: its error code.
    pub fn answered(&mut self, method: usize, v2026: bool, seconds: f64, error: Option<i64>) {
        let label = method * 2 + usize::from(v2026);
        let labels = || {
            let method = Method::ALL.get(method).map_or("other", |m| m.as_str());
            let era = if v2026 { "2026-07-28" } else { "2025-11-25" };
            [("method", method.to_owned()), ("era", era.to_owned())]
        };
        if self.durations.len() <= label {
            self.durations.resize(label + 1, None);
        }
        let families = &self.families;
        self.durations[label]
            .get_or_insert_with(|| families.request_duration.get_or_create_owned(&labels()))
            .observe(seconds);
        if let Some(code) = error {
            self.errors
                .entry((label, code))
                .or_insert_with(|| {
                    let [method, era] = labels();
                    let code = ("code", code.to_string());
                    families
                        .request_errors
                        .get_or_create_owned(&[method, era, code])
                })
                .inc();
        }
    }
}
