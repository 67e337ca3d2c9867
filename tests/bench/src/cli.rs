//! The command line of `bench`.

use std::num::NonZeroUsize;
use std::path::PathBuf;
use std::time::Duration;

use clap::error::ErrorKind;
use clap::{CommandFactory, Parser};

use super::servers::{Prebuilt, ServerId};
use super::workloads::{Sizes, Workload};

/// `bench --help`'s closing notes.
const NOTES: &str = "\
The peers come from `bash tests/peers/setup.sh` (target/peers/); a missing one fails the run.
smol-postgres (one of the default servers) needs TASKWIRE_POSTGRES_URL: `bash tests/postgres.sh
start` starts a private PostgreSQL and prints its URL; without it the run fails before starting
(leave smol-postgres out with --servers).";

/// The end-to-end stdio benchmark: taskwire beside the official SDKs and the do-nothing limit.
///
/// Drives stdio MCP servers with raw JSON-RPC lines in alternating rounds (each server once per
/// round) and prints Markdown tables: medians with min–max over the rounds, then ratios of ours
/// to each other server, and of ours on SQLite and PostgreSQL to ours in memory (smol). Every
/// reply is checked; a wrong one stops the run with the reason.
///
/// Without --quick or --smoke: 3 rounds; up to 20,000 sequential and 100,000 windowed echo
/// calls, up to 5,000 sequential and 20,000 windowed lifecycles (each run also stops after
/// 10 s), 10k and 100k retained tasks (a server whose fill would pass 120 s is skipped).
#[derive(Debug, Parser)]
#[command(name = "bench", version, after_long_help = NOTES)]
struct Cli {
    /// 1 round, runs of at most 2 s, 10k retained tasks only (about a minute).
    #[arg(long, conflicts_with = "smoke")]
    quick: bool,
    /// 1 round, a few hundred calls: checks the driver, measures nothing useful.
    #[arg(long)]
    smoke: bool,
    /// Rounds, at least 1 (default: 3; 1 with --quick or --smoke).
    #[arg(long, value_name = "N")]
    rounds: Option<NonZeroUsize>,
    /// The servers, comma-separated, from: smol, smol-sqlite, smol-sqlite-full, smol-postgres,
    /// smol-metrics, tokio, ts, python, rmcp, null, proxy, relay (default: all).
    ///
    /// smol-sqlite(-full) is task-server on smol with --store sqlite:PATH (synchronous=NORMAL,
    /// FULL), smol-postgres with --store postgres://… on the server of TASKWIRE_POSTGRES_URL;
    /// each start gets a fresh database (taskwire_bench_<pid>_<n> on PostgreSQL), removed when
    /// it stops. smol-metrics is smol with --metrics (recorded, nobody scraping). proxy is `taskwire proxy --era 2025-11-25` in front of smol; relay is
    /// null-relay in front of smol, a process that only copies bytes (the floor of any proxy).
    #[arg(long, value_name = "LIST")]
    servers: Option<String>,
    /// The workloads, comma-separated, from: echo, echo-64, lifecycle, lifecycle-32, retained
    /// (every size) or retained-10k / retained-100k, startup (default: all).
    #[arg(long, value_name = "LIST")]
    workloads: Option<String>,
    /// Uses this task-server instead of building it (cargo build --release).
    #[arg(long, value_name = "PATH")]
    task_server: Option<PathBuf>,
    /// Uses this null-server instead of building it (cargo build --release).
    #[arg(long, value_name = "PATH")]
    null_server: Option<PathBuf>,
    /// Uses this taskwire (for proxy) instead of building it (cargo build --release).
    #[arg(long, value_name = "PATH")]
    taskwire: Option<PathBuf>,
    /// Uses this null-relay (for relay) instead of building it (cargo build --release).
    #[arg(long, value_name = "PATH")]
    null_relay: Option<PathBuf>,
}

/// A parsed command line.
#[derive(Clone, Debug)]
pub struct Options {
    /// Rounds; each runs every workload once on every server.
    pub rounds: usize,
    /// The servers, in table order.
    pub servers: Vec<ServerId>,
    /// The workloads, in table order.
    pub workloads: Vec<Workload>,
    /// How much each workload does.
    pub sizes: Sizes,
    /// Programs given instead of built.
    pub prebuilt: Prebuilt,
}

/// Parses the arguments (without the program name). `--help` and `--version` come back as
/// errors too, of their own kinds: [`clap::Error::exit`] prints each where it belongs and
/// exits with its code (0 for those, 2 for a usage error).
pub fn parse(args: impl IntoIterator<Item = String>) -> Result<Options, clap::Error> {
    let cli = Cli::try_parse_from(std::iter::once("bench".to_owned()).chain(args))?;
    let invalid = |e: String| Cli::command().error(ErrorKind::ValueValidation, e);
    let (mode_rounds, sizes) = match (cli.quick, cli.smoke) {
        (true, _) => (1, quick()),
        (_, true) => (1, smoke()),
        _ => (3, full()),
    };
    let servers = match cli.servers {
        None => ServerId::ALL.to_vec(),
        Some(list) => pick(
            &list,
            &ServerId::ALL,
            |s| vec![s.key().to_owned()],
            "server",
        )
        .map_err(invalid)?,
    };
    let all = Workload::all(&sizes);
    let workloads = match cli.workloads {
        None => all,
        Some(list) => pick(&list, &all, selectors, "workload").map_err(invalid)?,
    };
    Ok(Options {
        rounds: cli.rounds.map_or(mode_rounds, NonZeroUsize::get),
        servers,
        workloads,
        sizes,
        prebuilt: Prebuilt {
            task_server: cli.task_server,
            null_server: cli.null_server,
            taskwire: cli.taskwire,
            null_relay: cli.null_relay,
        },
    })
}

/// The names that select a workload on the command line.
fn selectors(workload: Workload) -> Vec<String> {
    let mut names = vec![workload.key()];
    if let Workload::Retained(_) = workload {
        names.push("retained".into());
    }
    names
}

/// The items of `all` named in the comma-separated `list`, in the order of `all`.
fn pick<T: Copy>(
    list: &str,
    all: &[T],
    names: impl Fn(T) -> Vec<String>,
    kind: &str,
) -> Result<Vec<T>, String> {
    let wanted: Vec<&str> = list
        .split(',')
        .map(str::trim)
        .filter(|w| !w.is_empty())
        .collect();
    for word in &wanted {
        if !all
            .iter()
            .any(|&item| names(item).iter().any(|n| n == word))
        {
            let known: Vec<String> = all.iter().flat_map(|&item| names(item)).collect();
            return Err(format!(
                "unknown {kind} {word:?} (known: {})",
                known.join(", ")
            ));
        }
    }
    let picked: Vec<T> = all
        .iter()
        .copied()
        .filter(|&item| names(item).iter().any(|n| wanted.contains(&n.as_str())))
        .collect();
    if picked.is_empty() {
        return Err(format!("no {kind} selected"));
    }
    Ok(picked)
}

/// The full run.
fn full() -> Sizes {
    Sizes {
        warmup: 1_000,
        time_cap: Duration::from_secs(10),
        echo_calls: 20_000,
        window_calls: 100_000,
        lifecycles: 5_000,
        window_lifecycles: 20_000,
        retained: vec![10_000, 100_000],
        spawns: 5,
        retained_budget: Duration::from_secs(120),
    }
}

/// `--quick`: about a minute.
fn quick() -> Sizes {
    Sizes {
        warmup: 200,
        time_cap: Duration::from_secs(2),
        echo_calls: 2_000,
        window_calls: 5_000,
        lifecycles: 500,
        window_lifecycles: 1_000,
        retained: vec![10_000],
        spawns: 2,
        retained_budget: Duration::from_secs(60),
    }
}

/// `--smoke`: a few seconds, for the test that exercises the driver's checks.
fn smoke() -> Sizes {
    Sizes {
        warmup: 20,
        time_cap: Duration::from_secs(10),
        echo_calls: 200,
        window_calls: 200,
        lifecycles: 50,
        window_lifecycles: 64,
        retained: vec![300],
        spawns: 1,
        retained_budget: Duration::from_secs(30),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(args: &[&str]) -> Result<Options, String> {
        parse(args.iter().map(|a| a.to_string())).map_err(|e| e.to_string())
    }

    /// The kind of error `args` give, and the exit code `bench` would end with.
    fn refused(args: &[&str]) -> (ErrorKind, i32) {
        let e = parse(args.iter().map(|a| a.to_string())).unwrap_err();
        (e.kind(), e.exit_code())
    }

    #[test]
    fn the_command_line_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn modes_and_selections() {
        let default = run(&[]).unwrap();
        assert_eq!((default.rounds, default.servers.len()), (3, 12));
        assert!(default.servers.contains(&ServerId::SmolPostgres));
        assert_eq!(default.servers, ServerId::ALL);
        assert!(default.workloads.contains(&Workload::Retained(100_000)));
        let quick = run(&["--rounds", "2", "--quick"]).unwrap();
        assert_eq!(
            (quick.rounds, quick.sizes.retained.clone()),
            (2, vec![10_000])
        );
        let smoke = run(&["--smoke"]).unwrap();
        assert_eq!((smoke.rounds, smoke.sizes.retained), (1, vec![300]));
        let picked = run(&["--servers", "null,smol", "--workloads", "retained,echo"]).unwrap();
        assert_eq!(picked.servers, [ServerId::Smol, ServerId::Limit]);
        assert_eq!(
            picked.workloads,
            [
                Workload::Echo,
                Workload::Retained(10_000),
                Workload::Retained(100_000)
            ]
        );
        let stores = run(&[
            "--servers",
            "smol-postgres,smol-sqlite-full,smol,smol-sqlite",
        ])
        .unwrap();
        assert_eq!(
            stores.servers,
            [
                ServerId::Smol,
                ServerId::SmolSqlite,
                ServerId::SmolSqliteFull,
                ServerId::SmolPostgres
            ]
        );
        let postgres = run(&["--servers", "smol-postgres"]).unwrap();
        assert_eq!(postgres.servers, [ServerId::SmolPostgres]);
        assert!(run(&["--servers", "postgres"])
            .unwrap_err()
            .contains("smol-postgres"));
        let full = run(&["--servers", "smol-sqlite-full"]).unwrap();
        assert_eq!(full.servers, [ServerId::SmolSqliteFull]);
        assert!(run(&["--servers", "sqlite"])
            .unwrap_err()
            .contains("smol-sqlite-full"));
        let one = run(&["--workloads", "retained-100k"]).unwrap();
        assert_eq!(one.workloads, [Workload::Retained(100_000)]);
        let paths = run(&[
            "--task-server",
            "a",
            "--null-server",
            "b",
            "--taskwire",
            "c",
            "--null-relay",
            "d",
        ]);
        let paths = paths.unwrap().prebuilt;
        assert_eq!(
            (
                paths.task_server,
                paths.null_server,
                paths.taskwire,
                paths.null_relay
            ),
            (
                Some("a".into()),
                Some("b".into()),
                Some("c".into()),
                Some("d".into())
            )
        );
    }

    #[test]
    fn usage_errors_exit_2_and_help_and_version_0() {
        assert!(run(&["--servers", "go"])
            .unwrap_err()
            .contains("known: smol"));
        assert!(run(&["--workloads", "retained-100k", "--quick"])
            .unwrap_err()
            .contains("unknown workload \"retained-100k\""));
        assert!(run(&["--servers", ","])
            .unwrap_err()
            .contains("no server selected"));
        let invalid = (ErrorKind::ValueValidation, 2);
        assert_eq!(refused(&["--servers", "go"]), invalid);
        assert_eq!(refused(&["--workloads", "ping"]), invalid);
        assert_eq!(refused(&["--rounds", "0"]), invalid);
        assert_eq!(refused(&["--rounds", "x"]), invalid);
        assert_eq!(refused(&["--servers"]), (ErrorKind::InvalidValue, 2));
        assert_eq!(
            refused(&["--quick", "--smoke"]),
            (ErrorKind::ArgumentConflict, 2)
        );
        assert_eq!(refused(&["--bogus"]), (ErrorKind::UnknownArgument, 2));
        assert_eq!(refused(&["--help"]), (ErrorKind::DisplayHelp, 0));
        assert_eq!(refused(&["-h"]), (ErrorKind::DisplayHelp, 0));
        assert_eq!(refused(&["--version"]), (ErrorKind::DisplayVersion, 0));
    }
}
