//! The Markdown report: the machine and settings, one table per workload (medians with
//! min–max over the rounds), notes for anything skipped, then the ratio tables.

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
    for &ours in options.servers.iter().filter(|s| s.is_ours()) {
        ratio_table(&mut out, options, results, ours);
    }
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

fn ratio_table(out: &mut String, options: &Options, results: &Results, ours: ServerId) {
    let others: Vec<ServerId> = options
        .servers
        .iter()
        .copied()
        .filter(|s| !s.is_ours())
        .collect();
    if others.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "\n### Ratios: {} / each server (medians; for rates above 1 means ours is faster, \
         for times, CPU, switches and memory below 1 means ours uses less)\n",
        ours.label()
    );
    let labels: Vec<&str> = others.iter().map(|s| s.label()).collect();
    let _ = writeln!(out, "| workload: metric | {} |", labels.join(" | "));
    let _ = writeln!(out, "| --- |{}", " ---: |".repeat(others.len()));
    for &workload in &options.workloads {
        for (i, &metric) in workload.metrics().iter().enumerate() {
            if !metric.compared() {
                continue;
            }
            let mine = summary(results.outcomes(workload, ours), i);
            let ratios: Vec<Option<f64>> = others
                .iter()
                .map(
                    |&other| match (mine, summary(results.outcomes(workload, other), i)) {
                        (Some(a), Some(b)) if b.median > 0.0 => Some(a.median / b.median),
                        _ => None,
                    },
                )
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
}
