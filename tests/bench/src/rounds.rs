//! Alternating rounds: round 1 runs every workload on each server in turn, round 2 again, and
//! so on, each workload on a freshly started server. Progress goes to stderr.

use std::collections::HashMap;
use std::time::Instant;

use super::cli::Options;
use super::servers::{Programs, ServerId};
use super::workloads::{Outcome, Workload};
use taskwire_tests::peers;

/// Every outcome, by workload and server, in round order.
#[derive(Debug, Default)]
pub struct Results {
    outcomes: HashMap<(Workload, ServerId), Vec<Outcome>>,
}

impl Results {
    /// The outcomes of `workload` on `server`, one per round (none if it does not apply).
    pub fn outcomes(&self, workload: Workload, server: ServerId) -> &[Outcome] {
        self.outcomes
            .get(&(workload, server))
            .map_or(&[], Vec::as_slice)
    }

    /// Records one more round's `outcome` of `workload` on `server`.
    pub(crate) fn add(&mut self, workload: Workload, server: ServerId, outcome: Outcome) {
        self.outcomes
            .entry((workload, server))
            .or_default()
            .push(outcome);
    }

    /// Why `workload` was skipped as a whole on `server` in an earlier round, if it was.
    fn skipped(&self, workload: Workload, server: ServerId) -> Option<&str> {
        self.outcomes(workload, server)
            .iter()
            .filter(|o| o.is_empty())
            .find_map(|o| o.skipped.as_deref())
    }
}

/// Runs every round; the first failure stops the run with a message naming where it happened.
/// Each server's stderr is kept in `target/tmp/bench/`, where ours on SQLite also get a fresh
/// database per start (removed when the server stops); ours on PostgreSQL get a fresh database
/// on its server (dropped when the server stops).
pub fn run(options: &Options, programs: &Programs) -> Result<Results, String> {
    let logs = peers::target_dir().join("tmp").join("bench");
    std::fs::create_dir_all(&logs).map_err(|e| format!("cannot create {}: {e}", logs.display()))?;
    let started = Instant::now();
    let mut results = Results::default();
    for round in 1..=options.rounds {
        for &server in &options.servers {
            for &workload in &options.workloads {
                if !workload.applies_to(server) {
                    continue;
                }
                let place = format!(
                    "round {round}/{}, {}, {}",
                    options.rounds,
                    server.label(),
                    workload.key()
                );
                if let Some(reason) = results.skipped(workload, server) {
                    let reason = reason.to_owned();
                    eprintln!(
                        "[{:>6.1}s] {place}: {reason} (as in an earlier round)",
                        started.elapsed().as_secs_f64()
                    );
                    results.add(workload, server, Outcome::skipped(reason));
                    continue;
                }
                let log = logs.join(format!("{}-{}.stderr.log", server.key(), workload.key()));
                let mut start = || programs.start(server, &logs, &log);
                let outcome = workload
                    .run(&options.sizes, server, &mut start)
                    .map_err(|e| format!("{place}: {e}"))?;
                eprintln!(
                    "[{:>6.1}s] {place}: {}",
                    started.elapsed().as_secs_f64(),
                    describe(workload, &outcome)
                );
                results.add(workload, server, outcome);
            }
        }
    }
    Ok(results)
}

/// One line for the progress log.
fn describe(workload: Workload, outcome: &Outcome) -> String {
    let mut parts: Vec<String> = workload
        .metrics()
        .iter()
        .enumerate()
        .filter_map(|(i, metric)| {
            let value = outcome.value(i)?;
            Some(format!("{} {}", metric.label(), metric.format(value)))
        })
        .collect();
    parts.extend(outcome.skipped.clone());
    parts.join(", ")
}
