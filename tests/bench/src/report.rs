//! The Markdown report: the machine and settings, one table per workload (medians with
//! min–max over the rounds), notes for anything skipped, then the ratio tables: each of ours
//! with tasks in memory to each peer, ours on a durable store (SQLite, PostgreSQL) to ours
//! in memory (smol), ours with metrics on to smol, and the proxy (and the null relay) in front
//! of smol to smol; with the issues' targets.

use std::fmt::Write;

use super::cli::Options;
use super::rounds::Results;
use super::servers::ServerId;
use super::stats::Summary;
use super::workloads::{Metric, Outcome, Workload};

/// The whole report.
pub fn render(options: &Options, results: &Results) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "Machine: {}.", machine());
    let servers: Vec<&str> = options.servers.iter().map(|s| s.label()).collect();
    let _ = writeln!(
        out,
        "{} round(s), alternating over: {}. Cells: median (min–max over the rounds).",
        options.rounds,
        servers.join(", ")
    );
    for &workload in &options.workloads {
        workload_table(&mut out, options, results, workload);
    }
    for &ours in options.servers.iter().filter(|s| s.is_ours_in_memory()) {
        peers_ratio_table(&mut out, options, results, ours);
    }
    durable_ratio_table(&mut out, options, results);
    metrics_ratio_table(&mut out, options, results);
    proxy_ratio_table(&mut out, options, results);
    out
}

fn workload_table(out: &mut String, options: &Options, results: &Results, workload: Workload) {
    let metrics = workload.metrics();
    let _ = writeln!(out, "\n### {}\n", workload.title(&options.sizes));
    let labels: Vec<&str> = metrics.iter().map(|m| m.label()).collect();
    let _ = writeln!(out, "| server | {} |", labels.join(" | "));
    let _ = writeln!(out, "| --- |{}", " ---: |".repeat(metrics.len()));
    let mut notes: Vec<(ServerId, usize, &str)> = Vec::new();
    for &server in &options.servers {
        let outcomes = results.outcomes(workload, server);
        for (round, outcome) in outcomes.iter().enumerate() {
            let Some(reason) = outcome.skipped.as_deref() else {
                continue;
            };
            if !notes.iter().any(|&(s, _, r)| s == server && r == reason) {
                notes.push((server, round + 1, reason));
            }
        }
        let cells: Vec<String> = if !workload.applies_to(server) {
            vec!["n/a".into(); metrics.len()]
        } else {
            (0..metrics.len())
                .map(|i| match summary(outcomes, i) {
                    _ if !metrics[i].applies_to(server) => "–".into(),
                    None if outcomes.iter().any(|o| o.skipped.is_some()) => "skipped".into(),
                    found => cell(metrics[i], found),
                })
                .collect()
        };
        let _ = writeln!(out, "| {} | {} |", server.label(), cells.join(" | "));
    }
    if !notes.is_empty() {
        let _ = writeln!(out);
    }
    for (server, round, reason) in notes {
        let _ = writeln!(out, "- {}, round {round}: {reason}.", server.label());
    }
}

/// `ours` (with tasks in memory) to each peer, one column each.
fn peers_ratio_table(out: &mut String, options: &Options, results: &Results, ours: ServerId) {
    let columns: Vec<Column> = options
        .servers
        .iter()
        .filter(|s| !s.is_ours() && !s.is_in_front())
        .map(|&other| Column {
            label: other.label().into(),
            of: ours,
            to: other,
        })
        .collect();
    let heading = format!(
        "Ratios: {} / each server (medians; for rates above 1 means ours is faster, for times, \
         CPU, switches and memory below 1 means ours uses less)",
        ours.label()
    );
    ratio_table(out, options, results, &heading, &columns);
}

/// A target an issue set: the ratio of `of` to ours in memory (smol) on `metric` of
/// `workload`, at least or at most `bound`.
struct Target {
    of: ServerId,
    workload: Workload,
    metric: Metric,
    bound: Bound,
}

enum Bound {
    AtLeast(f64),
    AtMost(f64),
}

/// Issue 21's targets for 32 lifecycles in flight: at least these fractions of the
/// in-memory store's rate.
const DURABLE_TARGETS: [Target; 3] = [
    lifecycles_32(ServerId::SmolSqlite, 0.5),
    lifecycles_32(ServerId::SmolSqliteFull, 0.25),
    lifecycles_32(ServerId::SmolPostgres, 0.2),
];

const fn lifecycles_32(of: ServerId, at_least: f64) -> Target {
    Target {
        of,
        workload: Workload::LifecycleWindow,
        metric: Metric::LifecyclesPerSecond,
        bound: Bound::AtLeast(at_least),
    }
}

/// Issue 23's targets for the proxy in front of smol: at most 1.5× its latency on
/// sequential calls, at least half its pipelined throughput.
const PROXY_TARGETS: [Target; 3] = [
    Target {
        of: ServerId::Proxy,
        workload: Workload::Echo,
        metric: Metric::P50Micros,
        bound: Bound::AtMost(1.5),
    },
    Target {
        of: ServerId::Proxy,
        workload: Workload::EchoWindow,
        metric: Metric::CallsPerSecond,
        bound: Bound::AtLeast(0.5),
    },
    Target {
        of: ServerId::Proxy,
        workload: Workload::LifecycleWindow,
        metric: Metric::LifecyclesPerSecond,
        bound: Bound::AtLeast(0.5),
    },
];

/// Ours on a durable store (SQLite, PostgreSQL) to ours in memory, all on smol, then whether
/// [`DURABLE_TARGETS`] are met.
fn durable_ratio_table(out: &mut String, options: &Options, results: &Results) {
    let heading = "Ratios: durable store vs in-memory (smol): each server on a durable store / \
         {smol} (medians; for rates above 1 means the store is faster, so higher is better; \
         for times, CPU, switches and memory below 1 means the store uses less)";
    let stores: Vec<ServerId> = (options.servers.iter())
        .filter(|s| s.is_durable())
        .copied()
        .collect();
    let verdicts = "Issue 21 targets, lifecycle-32 lifecycles/s (store / in-memory)";
    to_smol_table(
        out,
        options,
        results,
        &stores,
        heading,
        verdicts,
        &DURABLE_TARGETS,
    );
}

/// The issue 41 goal: with metrics recorded (and nothing exporting traces), at least 95% of
/// smol's rates without.
const METRICS_TARGETS: [Target; 4] = [
    metrics_on(Workload::Echo, Metric::CallsPerSecond),
    metrics_on(Workload::EchoWindow, Metric::CallsPerSecond),
    metrics_on(Workload::Lifecycle, Metric::LifecyclesPerSecond),
    metrics_on(Workload::LifecycleWindow, Metric::LifecyclesPerSecond),
];

const fn metrics_on(workload: Workload, metric: Metric) -> Target {
    Target {
        of: ServerId::SmolMetrics,
        workload,
        metric,
        bound: Bound::AtLeast(0.95),
    }
}

/// Ours with metrics on to ours without (both smol), then whether [`METRICS_TARGETS`] are met.
fn metrics_ratio_table(out: &mut String, options: &Options, results: &Results) {
    if !options.servers.contains(&ServerId::SmolMetrics) {
        return;
    }
    let heading = "Ratios: metrics on / off: {smol} with `--metrics` / without (medians; for \
         rates 1 means no cost; for times, CPU, switches and memory above 1 is the metrics' cost)";
    let verdicts = "Issue 41 goal (metrics on / off)";
    to_smol_table(
        out,
        options,
        results,
        &[ServerId::SmolMetrics],
        heading,
        verdicts,
        &METRICS_TARGETS,
    );
}

/// The proxy and the null relay in front of smol to smol alone, then whether
/// [`PROXY_TARGETS`] are met; then the proxy to the relay: what the proxy costs beyond the
/// extra process and pipes any proxy has.
fn proxy_ratio_table(out: &mut String, options: &Options, results: &Results) {
    let heading = "Ratios: in front of smol / {smol} (medians; for rates above 1 means the \
         process in front is faster; for times, CPU, switches and memory below 1 means it \
         uses less; the server CPU is that of the process in front alone)";
    let in_front: Vec<ServerId> = (options.servers.iter())
        .filter(|s| s.is_in_front())
        .copied()
        .collect();
    let verdicts = "Issue 23 targets (proxy / direct)";
    to_smol_table(
        out,
        options,
        results,
        &in_front,
        heading,
        verdicts,
        &PROXY_TARGETS,
    );
    if in_front.len() == 2 {
        let heading = "Ratios: the proxy / the null relay, both in front of smol: the proxy's \
             own cost beyond the extra process (medians, read as above)";
        let column = Column {
            label: "proxy / relay".into(),
            of: ServerId::Proxy,
            to: ServerId::Relay,
        };
        ratio_table(out, options, results, heading, &[column]);
    }
}

/// A column per server of `each` to ours in memory (smol), under `heading` (`{smol}` names
/// it), then `verdicts` on the `targets` of those servers; nothing without smol.
fn to_smol_table(
    out: &mut String,
    options: &Options,
    results: &Results,
    each: &[ServerId],
    heading: &str,
    verdicts: &str,
    targets: &[Target],
) {
    let memory = ServerId::Smol;
    if !options.servers.contains(&memory) {
        return;
    }
    let columns: Vec<Column> = (each.iter())
        .map(|&of| Column {
            label: format!("{} / {}", of.key(), memory.key()),
            of,
            to: memory,
        })
        .collect();
    let heading = heading.replace("{smol}", memory.label());
    ratio_table(out, options, results, &heading, &columns);
    let mut lines = Vec::new();
    for target in targets {
        let index = target
            .workload
            .metrics()
            .iter()
            .position(|&m| m == target.metric);
        let found = (columns.iter())
            .find(|c| c.of == target.of)
            .zip(index.filter(|_| options.workloads.contains(&target.workload)))
            .and_then(|(column, index)| column.ratio(results, target.workload, index));
        let Some(r) = found else { continue };
        let (met, bound) = match target.bound {
            Bound::AtLeast(b) => (r >= b, format!("≥ {b}")),
            Bound::AtMost(b) => (r <= b, format!("≤ {b}")),
        };
        lines.push(format!(
            "- {}, {} {}: {} (target {bound}): {}.",
            target.of.label(),
            target.workload.key(),
            target.metric.label(),
            ratio(r),
            if met { "met" } else { "not met" }
        ));
    }
    if !lines.is_empty() {
        let _ = writeln!(out, "\n{verdicts}:\n");
        let _ = writeln!(out, "{}", lines.join("\n"));
    }
}

/// A column of a ratio table: the medians of `of` over those of `to`.
struct Column {
    label: String,
    of: ServerId,
    to: ServerId,
}

impl Column {
    /// The ratio of the medians of metric `index` of `workload`, where both have one.
    fn ratio(&self, results: &Results, workload: Workload, index: usize) -> Option<f64> {
        let of = summary(results.outcomes(workload, self.of), index)?;
        let to = summary(results.outcomes(workload, self.to), index)?;
        (to.median > 0.0).then(|| of.median / to.median)
    }
}

/// A table of `columns` under `heading`, a row per compared metric of each workload (rows
/// with no ratio at all are left out); nothing without columns.
fn ratio_table(
    out: &mut String,
    options: &Options,
    results: &Results,
    heading: &str,
    columns: &[Column],
) {
    if columns.is_empty() {
        return;
    }
    let _ = writeln!(out, "\n### {heading}\n");
    let labels: Vec<&str> = columns.iter().map(|c| c.label.as_str()).collect();
    let _ = writeln!(out, "| workload: metric | {} |", labels.join(" | "));
    let _ = writeln!(out, "| --- |{}", " ---: |".repeat(columns.len()));
    for &workload in &options.workloads {
        for (i, &metric) in workload.metrics().iter().enumerate() {
            if !metric.compared() {
                continue;
            }
            let ratios: Vec<Option<f64>> = columns
                .iter()
                .map(|c| c.ratio(results, workload, i))
                .collect();
            if ratios.iter().all(Option::is_none) {
                continue;
            }
            let cells: Vec<String> = ratios
                .into_iter()
                .map(|r| r.map_or("n/a".into(), ratio))
                .collect();
            let _ = writeln!(
                out,
                "| {}: {} | {} |",
                workload.key(),
                metric.label(),
                cells.join(" | ")
            );
        }
    }
}

/// The summary of metric `index` over the rounds that measured it, if any did.
fn summary(outcomes: &[Outcome], index: usize) -> Option<Summary> {
    let values: Vec<f64> = outcomes.iter().filter_map(|o| o.value(index)).collect();
    Summary::of(&values)
}

/// `median (min–max)`, or just the median for one round.
fn cell(metric: Metric, summary: Option<Summary>) -> String {
    match summary {
        None => "—".into(),
        Some(s) if s.count == 1 => metric.format(s.median),
        Some(s) => format!(
            "{} ({}–{})",
            metric.format(s.median),
            metric.format(s.min),
            metric.format(s.max)
        ),
    }
}

/// Two significant digits: `0.0048`, `0.27`, `3.6`, `12`, `466`.
fn ratio(value: f64) -> String {
    let decimals = (1.0 - value.log10().floor()).clamp(0.0, 6.0) as usize;
    format!("{value:.decimals$}")
}

/// Cores, CPU model and kernel, from std and /proc.
fn machine() -> String {
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find_map(|l| l.strip_prefix("model name"))
        .and_then(|rest| rest.split_once(':'))
        .map_or("unknown CPU", |(_, name)| name.trim());
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    format!(
        "{cores} cores (available parallelism), {model}, Linux {}",
        kernel.trim()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_and_ratios() {
        let one = Summary::of(&[1234.0]);
        assert_eq!(cell(Metric::CallsPerSecond, one), "1,234");
        let three = Summary::of(&[3.0, 1.0, 2.0]);
        assert_eq!(cell(Metric::P50Micros, three), "2.0 (1.0–3.0)");
        assert_eq!(cell(Metric::P50Micros, None), "—");
        let ratios = [0.00481, 0.274, 3.64, 12.4, 466.2].map(ratio);
        assert_eq!(ratios, ["0.0048", "0.27", "3.6", "12", "466"]);
    }

    /// The lines of the section whose heading contains `heading`.
    fn section<'a>(report: &'a str, heading: &str) -> Vec<&'a str> {
        let text = report
            .split("\n### ")
            .find(|s| s.lines().next().is_some_and(|h| h.contains(heading)))
            .unwrap_or_else(|| panic!("no {heading:?} in\n{report}"));
        text.lines().collect()
    }

    #[test]
    fn durable_servers_are_compared_with_smol_not_the_peers() {
        let args = "--smoke --servers smol,smol-sqlite,smol-sqlite-full,smol-postgres,ts \
                    --workloads lifecycle-32,retained";
        let options = super::super::cli::parse(args.split_whitespace().map(String::from))
            .unwrap_or_else(|e| panic!("{e}"));
        let retained = Workload::Retained(300);
        let mut results = Results::default();
        for (server, rate, disk) in [
            (ServerId::Smol, 1000.0, None),
            (ServerId::SmolSqlite, 600.0, Some(2048.0)),
            (ServerId::SmolSqliteFull, 200.0, Some(4096.0)),
            (ServerId::SmolPostgres, 150.0, Some(1536.0)),
            (ServerId::TypeScript, 500.0, None),
        ] {
            let lifecycles = Outcome::measured(vec![rate, 1.0]);
            results.add(Workload::LifecycleWindow, server, lifecycles);
            let mut fill = Outcome::measured(vec![rate, 10.0, 3.0, 500.0]);
            fill.values.push(disk);
            results.add(retained, server, fill);
        }
        let report = render(&options, &results);
        let smol = section(&report, "Ratios: taskwire (smol) / each server");
        assert_eq!(smol[2], "| workload: metric | TypeScript SDK 1.32.2 |");
        assert!(
            smol.contains(&"| lifecycle-32: lifecycles/s | 2.0 |"),
            "{smol:?}"
        );
        assert!(!report.contains("Ratios: taskwire (smol, SQLite"));
        assert!(!report.contains("Ratios: taskwire (smol, PostgreSQL)"));
        let durable = section(&report, "durable store vs in-memory (smol)");
        assert_eq!(
            durable[2],
            "| workload: metric | smol-sqlite / smol | smol-sqlite-full / smol | \
             smol-postgres / smol |"
        );
        assert!(durable.contains(&"| lifecycle-32: lifecycles/s | 0.60 | 0.20 | 0.15 |"));
        assert!(!durable.iter().any(|l| l.contains("disk B/task")));
        assert!(durable.contains(&"- taskwire (smol, SQLite NORMAL), lifecycle-32 lifecycles/s: 0.60 (target ≥ 0.5): met."));
        assert!(durable.contains(&"- taskwire (smol, SQLite FULL), lifecycle-32 lifecycles/s: 0.20 (target ≥ 0.25): not met."));
        assert!(durable.contains(&"- taskwire (smol, PostgreSQL), lifecycle-32 lifecycles/s: 0.15 (target ≥ 0.2): not met."));
        let table = section(&report, "300 retained tasks");
        assert!(
            table[2].ends_with("| RSS B/task | disk B/task |"),
            "{table:?}"
        );
        assert!(table.contains(&"| taskwire (smol) | 1,000 | 10.0 | 3 | 500 | – |"));
        assert!(table.contains(&"| taskwire (smol, SQLite FULL) | 200 | 10.0 | 3 | 500 | 4,096 |"));
        assert!(table.contains(&"| taskwire (smol, PostgreSQL) | 150 | 10.0 | 3 | 500 | 1,536 |"));
    }
}
