//! `fleet-bench [--smoke] [--rounds N] [--seconds S] [--in-flight N] [--stored N]
//! [--task-server PATH]`: what a fleet costs on PostgreSQL, against one process on the same
//! database, measured in the same run. Needs `TASKWIRE_POSTGRES_URL` (a server whose
//! `shared_preload_libraries` has `pg_stat_statements`, as `tests/postgres.sh` starts it) and
//! `haproxy` on PATH.
//!
//! Set-ups, each on a fresh database, in alternating rounds:
//! - **one**: one `task-server --http --role both`;
//! - **fleet**: HAProxy (round-robin) in front of two `--role front` processes, and two
//!   `--role worker` processes running the work.
//!
//! The load: 2026-07-28 task lifecycles (`instant_task` as a task, then `tasks/get` every
//! 2 ms until completed), `--in-flight` at once (default 32), from this process over HTTP/1.1
//! keep-alive. For each set-up: lifecycles per second; CPU per lifecycle of our processes
//! (HAProxy's apart) and of the database's; database statements per lifecycle (the calls
//! `pg_stat_statements` counts on the set-up's database, `BEGIN` and `COMMIT` included);
//! RSS of each process. Then, once, each role's RSS and start-up time with no stored task
//! and with `--stored` finished tasks (default 1,000,000) in the database.
//!
//! `--smoke` runs everything briefly (a test runs it so that it never rots). Use release
//! builds for figures: `cargo build --release -p taskwire-demo -p taskwire-bench --bins`.

use std::path::PathBuf;
use std::process::{Child, ExitCode, Stdio};
use std::time::{Duration, Instant};

use clap::Parser;
use futures::future::join_all;
use taskwire_bench::http_load::lifecycle_2026;
use taskwire_bench::postgres_db::{PostgresServer, ScratchPgDb};
use taskwire_bench::procfs::{cpu_use, rss_kib};
use taskwire_tests::peers::Argv;

/// What a fleet costs on PostgreSQL against one process on the same database (needs
/// TASKWIRE_POSTGRES_URL with pg_stat_statements, and haproxy).
#[derive(Debug, Parser)]
#[command(name = "fleet-bench", version)]
struct Args {
    /// Runs everything briefly: 1 round of 0.5 s, 1,000 stored tasks (overrides --rounds,
    /// --seconds, --stored).
    #[arg(long)]
    smoke: bool,
    /// Rounds, each on fresh processes and databases.
    #[arg(long, value_name = "N", default_value_t = 3)]
    rounds: usize,
    /// How long each set-up is measured per round, in seconds (after a warm-up of a tenth).
    #[arg(long, value_name = "S", default_value_t = 5.0)]
    seconds: f64,
    /// Lifecycles in flight.
    #[arg(long, value_name = "N", default_value_t = 32)]
    in_flight: usize,
    /// Finished tasks stored for the memory and start-up measure.
    #[arg(long, value_name = "N", default_value_t = 1_000_000)]
    stored: u64,
    /// Our task-server (default: the one beside this program).
    #[arg(long, value_name = "PATH")]
    task_server: Option<PathBuf>,
}

/// How often a lifecycle polls its task.
const POLL: Duration = Duration::from_millis(2);

/// A process of ours (or HAProxy), killed when dropped.
struct Process {
    child: Child,
    label: String,
    /// Where it serves HTTP, if it does.
    url: Option<String>,
    log: PathBuf,
}

impl Process {
    fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Waits until it logged `text` (our servers log "tasks restored" once loaded), or its
    /// port takes a connection; fails if it exits first.
    fn ready(&mut self, text: Option<&str>) -> Result<Duration, String> {
        let started = Instant::now();
        let deadline = started + Duration::from_secs(600);
        loop {
            let logged = text.is_some_and(|text| {
                std::fs::read_to_string(&self.log).is_ok_and(|log| log.contains(text))
            });
            let listening = self.url.as_deref().is_some_and(|url| {
                let address = url.trim_start_matches("http://").trim_end_matches("/mcp");
                std::net::TcpStream::connect(address).is_ok()
            });
            if logged || (text.is_none() && listening) {
                return Ok(started.elapsed());
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                let log = std::fs::read_to_string(&self.log).unwrap_or_default();
                return Err(format!("{} exited ({status}):\n{log}", self.label));
            }
            if Instant::now() > deadline {
                return Err(format!("{} was not ready within 600 s", self.label));
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> Result<u16, String> {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|e| format!("no free port: {e}"))
}

/// Starts `argv` as `label`, its stderr in a file of its own; `url` where it will serve.
fn spawn(argv: &Argv, label: &str, url: Option<String>) -> Result<Process, String> {
    let dir = std::env::temp_dir().join(format!("fleet-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let log = dir.join(format!("{label}.log"));
    let file = std::fs::File::create(&log).map_err(|e| format!("{}: {e}", log.display()))?;
    let child = argv
        .command()
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(file)
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", argv.display()))?;
    Ok(Process {
        child,
        label: label.to_owned(),
        url,
        log,
    })
}

/// `task-server` in `role` as replica `name` on `db` (HTTP on a free port unless a worker).
fn server(program: &PathBuf, db: &ScratchPgDb, name: &str, role: &str) -> Result<Process, String> {
    let store = format!("{}?replica={name}", db.url());
    let mut argv = Argv::new(program)
        .args(&["--store", &store, "--role", role, "--bench-tools"])
        .env("RUST_LOG", "warn,taskwire_driver::driver=info");
    let mut url = None;
    if role != "worker" {
        let address = format!("127.0.0.1:{}", free_port()?);
        url = Some(format!("http://{address}/mcp"));
        argv = argv.args(&["--http", &address]);
    }
    let mut process = spawn(&argv, name, url)?;
    process.ready(Some("tasks restored"))?;
    if process.url.is_some() {
        process.ready(None)?;
    }
    Ok(process)
}

/// HAProxy round-robin over `fronts`.
fn balancer(fronts: &[&Process]) -> Result<Process, String> {
    let port = free_port()?;
    let servers: String = fronts
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let url = f.url.as_deref().unwrap_or_default();
            let address = url.trim_start_matches("http://").trim_end_matches("/mcp");
            format!("    server front{i} {address}\n")
        })
        .collect();
    let config = std::env::temp_dir().join(format!("fleet-bench-{}.cfg", std::process::id()));
    let text = format!(
        "global\n    maxconn 4096\ndefaults\n    mode http\n    timeout connect 1s\n    \
         timeout client 60s\n    timeout server 60s\nfrontend mcp\n    bind 127.0.0.1:{port}\n    \
         default_backend fronts\nbackend fronts\n    balance roundrobin\n{servers}"
    );
    std::fs::write(&config, text).map_err(|e| format!("{}: {e}", config.display()))?;
    let argv = Argv::new("haproxy").args(&["-f", &config.to_string_lossy(), "-db"]);
    let mut process = spawn(
        &argv,
        "haproxy",
        Some(format!("http://127.0.0.1:{port}/mcp")),
    )
    .map_err(|e| format!("{e} (install HAProxy: apt-get install haproxy)"))?;
    process.ready(None)?;
    Ok(process)
}

/// One set-up's processes: ours, HAProxy's if any, and where the load goes.
struct SetUp {
    ours: Vec<Process>,
    balancer: Option<Process>,
    url: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    One,
    Fleet,
}

impl Kind {
    fn label(self) -> &'static str {
        match self {
            Kind::One => "one process (both)",
            Kind::Fleet => "fleet (HAProxy, 2 fronts, 2 workers)",
        }
    }

    fn start(self, program: &PathBuf, db: &ScratchPgDb) -> Result<SetUp, String> {
        match self {
            Kind::One => {
                let one = server(program, db, "one", "both")?;
                let url = one.url.clone().unwrap_or_default();
                Ok(SetUp {
                    ours: vec![one],
                    balancer: None,
                    url,
                })
            }
            Kind::Fleet => {
                let fronts = [
                    server(program, db, "front0", "front")?,
                    server(program, db, "front1", "front")?,
                ];
                let balancer = balancer(&[&fronts[0], &fronts[1]])?;
                let url = balancer.url.clone().unwrap_or_default();
                let mut ours: Vec<Process> = fronts.into_iter().collect();
                ours.push(server(program, db, "worker0", "worker")?);
                ours.push(server(program, db, "worker1", "worker")?);
                Ok(SetUp {
                    ours,
                    balancer: Some(balancer),
                    url,
                })
            }
        }
    }
}

/// What one round measured of one set-up.
#[derive(Clone, Debug, Default)]
struct Measure {
    rate: f64,
    cpu_ms: f64,
    db_cpu_ms: f64,
    statements: f64,
    /// Statements per lifecycle by kind (the statement's text, shortened), most first.
    kinds: Vec<(String, f64)>,
    rss_kib: Vec<(String, u64)>,
}

/// The CPU time of each `postgres` process, in seconds, by process id.
fn database_cpu() -> std::collections::HashMap<u32, f64> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Default::default();
    };
    entries
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/comm"))
                .is_ok_and(|c| c.trim() == "postgres")
        })
        .filter_map(|pid| Some((pid, cpu_use(pid).ok()?.cpu.as_secs_f64())))
        .collect()
}

/// The CPU the `postgres` processes used since `before` (those that started meanwhile
/// counted whole; those that exited meanwhile are lost, as /proc forgets them).
fn database_cpu_since(before: &std::collections::HashMap<u32, f64>) -> f64 {
    database_cpu()
        .into_iter()
        .map(|(pid, now)| now - before.get(&pid).copied().unwrap_or(0.0))
        .filter(|used| *used > 0.0)
        .sum()
}

/// Lifecycles on `url`, `lanes` at once, for `seconds`: how many.
async fn load(url: &str, lanes: usize, seconds: f64) -> Result<u64, String> {
    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(lanes)
        .build()
        .map_err(|e| e.to_string())?;
    let limit = Duration::from_secs_f64(seconds);
    let lane = |l: usize| {
        let http = &http;
        async move {
            let start = Instant::now();
            let mut done = 0u64;
            while start.elapsed() < limit {
                lifecycle_2026(http, url, (l as u64) << 32 | done, true, Some(POLL)).await?;
                done += 1;
            }
            Ok::<u64, String>(done)
        }
    };
    let mut total = 0;
    for count in join_all((0..lanes).map(lane)).await {
        total += count?;
    }
    Ok(total)
}

const STATEMENTS: &str = "SELECT coalesce(sum(calls), 0)::int8 FROM pg_stat_statements \
                          WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())";

/// The statements by kind: the first words of each, and its calls.
const KINDS: &str = "SELECT left(regexp_replace(query, '\\s+', ' ', 'g'), 48), calls::int8 \
                     FROM pg_stat_statements \
                     WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) \
                       AND query NOT LIKE '%pg_stat_statements%' ORDER BY calls DESC";

fn measure(
    kind: Kind,
    program: &PathBuf,
    server: &PostgresServer,
    args: &Args,
) -> Result<Measure, String> {
    let db = server.create()?;
    db.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")?;
    db.number(STATEMENTS).map_err(|e| {
        format!("{e}: load pg_stat_statements (shared_preload_libraries = 'pg_stat_statements'; tests/postgres.sh starts its cluster so)")
    })?;
    let setup = kind.start(program, &db)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    runtime.block_on(load(&setup.url, args.in_flight, args.seconds / 10.0))?;
    db.execute("SELECT pg_stat_statements_reset()")?;
    let before: Vec<f64> = setup
        .ours
        .iter()
        .map(|p| cpu_use(p.pid()).map(|u| u.cpu.as_secs_f64()))
        .collect::<Result<_, _>>()?;
    let db_before = database_cpu();
    let start = Instant::now();
    let done = runtime.block_on(load(&setup.url, args.in_flight, args.seconds))?;
    let elapsed = start.elapsed().as_secs_f64();
    let db_cpu = database_cpu_since(&db_before);
    let mut cpu = 0.0;
    for (p, before) in setup.ours.iter().zip(before) {
        cpu += cpu_use(p.pid())?.cpu.as_secs_f64() - before;
    }
    let statements = db.number(STATEMENTS)? as f64;
    let per = done.max(1) as f64;
    let kinds = db
        .pairs(KINDS)?
        .into_iter()
        .map(|(kind, calls)| (kind, calls as f64 / per))
        .collect();
    let rss_kib = setup
        .ours
        .iter()
        .map(|p| Ok((p.label.clone(), rss_kib(p.pid())?)))
        .collect::<Result<_, String>>()?;
    drop(setup.balancer);
    drop(setup.ours);
    Ok(Measure {
        rate: done as f64 / elapsed,
        cpu_ms: cpu * 1000.0 / per,
        db_cpu_ms: db_cpu * 1000.0 / per,
        statements: statements / per,
        kinds,
        rss_kib,
    })
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(0.0)
}

/// Each role's RSS and start-up time with no stored task and with `stored` finished ones.
fn memory(program: &PathBuf, server: &PostgresServer, stored: u64) -> Result<(), String> {
    let db = server.create()?;
    // The tables, made by a first process.
    drop(self::server(program, &db, "setup", "both")?);
    println!("\n## Each role's RSS and start-up time (spawn to its tasks loaded), by finished tasks stored\n");
    println!("| role | RSS, none stored (KiB) | start-up, none stored | RSS, {stored} stored (KiB) | start-up, {stored} stored |");
    println!("| --- | ---: | ---: | ---: | ---: |");
    let mut rows: Vec<(String, u64, Duration)> = Vec::new();
    for pass in 0..2 {
        if pass == 1 {
            db.execute(&format!(
                "INSERT INTO taskwire_tasks (id, owner, status, message, updated_at, snapshot, runner)
                 SELECT 'old-' || g, 'bench', 'completed', NULL, 1700000000000,
                        '{{\"info\":{{\"id\":\"old-' || g || '\",\"status\":\"completed\",\
\"status_message\":null,\"created_at\":1700000000000,\"last_updated_at\":1700000000000,\
\"ttl_ms\":null,\"poll_interval_ms\":null}},\"owner\":\"bench\",\"era\":\"2026-07-28\",\
\"input_kinds\":{{\"elicitation\":false,\"sampling\":false,\"roots\":false}},\
\"outcome\":{{\"result\":{{\"value\":{{\"content\":[{{\"type\":\"text\",\"text\":\"done\"}}]}},\
\"is_error\":false}}}}}}', NULL
                 FROM generate_series(1, {stored}) AS g"
            ))?;
        }
        for role in ["both", "front", "worker"] {
            let started = Instant::now();
            let process = self::server(program, &db, role, role)?;
            let took = started.elapsed();
            let rss = rss_kib(process.pid())?;
            drop(process);
            if pass == 0 {
                rows.push((role.to_owned(), rss, took));
            } else if let Some(row) = rows.iter().find(|r| r.0 == role) {
                println!(
                    "| {role} | {} | {:.2} s | {rss} | {:.2} s |",
                    row.1,
                    row.2.as_secs_f64(),
                    took.as_secs_f64()
                );
            }
        }
    }
    Ok(())
}

fn run(mut args: Args) -> Result<(), String> {
    if args.smoke {
        args.rounds = 1;
        args.seconds = 0.5;
        args.stored = 1_000;
    }
    let program = match &args.task_server {
        Some(path) => path.clone(),
        None => std::env::current_exe()
            .map_err(|e| e.to_string())?
            .with_file_name("task-server"),
    };
    if !program.exists() {
        return Err(format!(
            "no task-server at {}: build it (cargo build --release -p taskwire-demo) or give --task-server",
            program.display()
        ));
    }
    let server = PostgresServer::from_env()?;
    server.check()?;
    let kinds = [Kind::One, Kind::Fleet];
    let mut measures: Vec<Vec<Measure>> = vec![Vec::new(), Vec::new()];
    for round in 0..args.rounds {
        // Alternating order, so that neither set-up always runs on a warmer machine.
        let order: Vec<usize> = if round % 2 == 0 {
            vec![0, 1]
        } else {
            vec![1, 0]
        };
        for i in order {
            measures[i].push(measure(kinds[i], &program, &server, &args)?);
        }
    }
    println!(
        "## Task lifecycles, {} in flight, on PostgreSQL (medians of {} rounds of {} s)\n",
        args.in_flight, args.rounds, args.seconds
    );
    println!("| set-up | lifecycles/s | our CPU per lifecycle | database CPU per lifecycle | statements per lifecycle | RSS per process (KiB) |");
    println!("| --- | ---: | ---: | ---: | ---: | --- |");
    let mut medians = Vec::new();
    for (kind, m) in kinds.iter().zip(&measures) {
        let pick = |f: fn(&Measure) -> f64| median(m.iter().map(f).collect());
        let (rate, cpu, db_cpu, statements) = (
            pick(|m| m.rate),
            pick(|m| m.cpu_ms),
            pick(|m| m.db_cpu_ms),
            pick(|m| m.statements),
        );
        let rss: Vec<String> = m
            .last()
            .map(|m| m.rss_kib.iter().map(|(p, k)| format!("{p} {k}")).collect())
            .unwrap_or_default();
        println!(
            "| {} | {rate:.0} | {cpu:.3} ms | {db_cpu:.3} ms | {statements:.1} | {} |",
            kind.label(),
            rss.join(", ")
        );
        medians.push((rate, cpu, db_cpu, statements));
    }
    for (kind, m) in kinds.iter().zip(&measures) {
        println!(
            "\n### Statements per lifecycle, {} (the last round)\n",
            kind.label()
        );
        println!("| statement | per lifecycle |\n| --- | ---: |");
        for (statement, per) in m.last().map(|m| m.kinds.as_slice()).unwrap_or_default() {
            println!("| `{}` | {per:.3} |", statement.replace('|', "\\|"));
        }
    }
    let (one, fleet) = (medians[0], medians[1]);
    println!("\n## Ratios: fleet / one process (for the rate above 1 means the fleet is faster; for the costs below 1 means the fleet spends less)\n");
    println!("| lifecycles/s | our CPU per lifecycle | database CPU per lifecycle | statements per lifecycle (target ≤ 2×) |");
    println!("| ---: | ---: | ---: | ---: |");
    println!(
        "| {:.2}× | {:.2}× | {:.2}× | {:.2}× |",
        fleet.0 / one.0,
        fleet.1 / one.1,
        fleet.2 / one.2,
        fleet.3 / one.3
    );
    memory(&program, &server, args.stored)
}

fn main() -> ExitCode {
    match run(Args::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("fleet-bench: {e}");
            ExitCode::FAILURE
        }
    }
}
