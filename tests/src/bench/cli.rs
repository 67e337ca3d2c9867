//! The command line of `bench`.

use std::path::PathBuf;
use std::time::Duration;

use super::servers::ServerId;
use super::workloads::{Sizes, Workload};

/// `bench --help`.
pub const USAGE: &str = "\
usage: bench [--quick | --smoke] [--rounds N] [--servers LIST] [--workloads LIST]
             [--task-server PATH] [--null-server PATH]

Drives stdio MCP servers with raw JSON-RPC lines in alternating rounds (each server once per
round) and prints Markdown tables: medians with min–max over the rounds, then ratios of ours to
each other server, and of ours on SQLite and PostgreSQL to ours in memory (smol). Every reply is
checked; a wrong one stops the run with the reason.

  (default)   3 rounds; up to 20,000 sequential and 100,000 windowed echo calls, up to 5,000
              sequential and 20,000 windowed lifecycles (each run also stops after 10 s), 10k
              and 100k retained tasks (a server whose fill would pass 120 s is skipped)
  --quick     1 round, runs of at most 2 s, 10k retained tasks only (about a minute)
  --smoke     1 round, a few hundred calls: checks the driver, measures nothing useful
  --rounds N  rounds (overrides the mode's)
  --servers   comma-separated, from: smol, smol-sqlite, smol-sqlite-full, smol-postgres,
              tokio, ts, python, rmcp, null (default: all); smol-sqlite(-full) is task-server
              on smol with --store sqlite:PATH (synchronous=NORMAL, FULL), smol-postgres with
              --store postgres://… on the server of TASKWIRE_POSTGRES_URL; each start gets a
              fresh database (taskwire_bench_<pid>_<n> on PostgreSQL), removed when it stops
  --workloads comma-separated, from: echo, echo-64, lifecycle, lifecycle-32, retained
              (every size) or retained-10k / retained-100k, startup (default: all)
  --task-server PATH, --null-server PATH
              use these binaries instead of building them (cargo build --release)

The peers come from `bash tests/peers/setup.sh` (target/peers/); a missing one fails the run.
smol-postgres (in the default `all`) needs TASKWIRE_POSTGRES_URL: `bash tests/postgres.sh start`
starts a private PostgreSQL and prints its URL; without it the run fails before starting (leave
smol-postgres out with --servers).";

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
    /// A prebuilt `task-server`, instead of building it.
    pub task_server: Option<PathBuf>,
    /// A prebuilt `null-server`, instead of building it.
    pub null_server: Option<PathBuf>,
}

/// What the command line asks for.
#[derive(Debug)]
pub enum Command {
    /// Run the benchmark.
    Run(Box<Options>),
    /// Print [`USAGE`].
    Help,
}

/// Parses the arguments (without the program name).
pub fn parse(args: impl IntoIterator<Item = String>) -> Result<Command, String> {
    let mut args = args.into_iter();
    let (mut mode_rounds, mut sizes) = (3, full());
    let mut rounds = None;
    let (mut servers, mut workloads) = (None, None);
    let (mut task_server, mut null_server) = (None, None);
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or(format!("{arg} takes a value"));
        match arg.as_str() {
            "--help" | "-h" => return Ok(Command::Help),
            "--quick" => (mode_rounds, sizes) = (1, quick()),
            "--smoke" => (mode_rounds, sizes) = (1, smoke()),
            "--rounds" => {
                let n = value()?.parse().ok().filter(|&n: &usize| n > 0);
                rounds = Some(n.ok_or("--rounds takes a positive number")?);
            }
            "--servers" => servers = Some(value()?),
            "--workloads" => workloads = Some(value()?),
            "--task-server" => task_server = Some(PathBuf::from(value()?)),
            "--null-server" => null_server = Some(PathBuf::from(value()?)),
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    let servers = match servers {
        None => ServerId::ALL.to_vec(),
        Some(list) => pick(
            &list,
            &ServerId::ALL,
            |s| vec![s.key().to_owned()],
            "server",
        )?,
    };
    let all = Workload::all(&sizes);
    let workloads = match workloads {
        None => all,
        Some(list) => pick(&list, &all, selectors, "workload")?,
    };
    Ok(Command::Run(Box::new(Options {
        rounds: rounds.unwrap_or(mode_rounds),
        servers,
        workloads,
        sizes,
        task_server,
        null_server,
    })))
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
        match parse(args.iter().map(|a| a.to_string()))? {
            Command::Run(options) => Ok(*options),
            Command::Help => Err("help".into()),
        }
    }

    #[test]
    fn modes_and_selections() {
        let default = run(&[]).unwrap();
        assert_eq!((default.rounds, default.servers.len()), (3, 9));
        assert!(default.servers.contains(&ServerId::SmolPostgres));
        assert_eq!(default.servers, ServerId::ALL);
        assert!(default.workloads.contains(&Workload::Retained(100_000)));
        let quick = run(&["--rounds", "2", "--quick"]).unwrap();
        assert_eq!(
            (quick.rounds, quick.sizes.retained.clone()),
            (2, vec![10_000])
        );
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
        assert!(run(&["--servers", "go"])
            .unwrap_err()
            .contains("known: smol"));
        assert!(run(&["--rounds", "0"]).is_err());
        assert!(run(&["--servers"]).is_err());
        assert!(matches!(parse(["--help".to_owned()]), Ok(Command::Help)));
    }
}
