//! The servers the benchmark drives, where their programs are, and how each is started (ours
//! on a SQLite or PostgreSQL store get a fresh database per start).

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::conn::Conn;
use super::database::{Database, ScratchDb};
use super::postgres_db::{PostgresServer, URL_ENV};
use taskwire_tests::peers::{self, Argv};

/// A server under test.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ServerId {
    /// `task-server --bench-tools --runtime smol`.
    Smol,
    /// `task-server --bench-tools --runtime smol --store sqlite:PATH` on a fresh database
    /// (`synchronous=NORMAL`).
    SmolSqlite,
    /// The same with `?synchronous=full`.
    SmolSqliteFull,
    /// `task-server --bench-tools --runtime smol --store postgres://…` on a fresh database of
    /// the PostgreSQL server in `TASKWIRE_POSTGRES_URL`.
    SmolPostgres,
    /// `task-server --bench-tools --runtime smol --metrics 127.0.0.1:0`: [`ServerId::Smol`]
    /// with its metrics recorded (Prometheus), nobody scraping them.
    SmolMetrics,
    /// `task-server --bench-tools --runtime tokio`.
    Tokio,
    /// `tests/peers/bench_server.mjs` on the TypeScript SDK 1.32.2.
    TypeScript,
    /// `tests/peers/bench_server.py` on the Python SDK (mcp 1.30.0).
    Python,
    /// `rmcp-echo-server` on rmcp 3.11.0 (echo only).
    Rmcp,
    /// `null-server`, the do-nothing stdio server: the limit (echo only).
    Limit,
    /// `taskwire proxy --era 2025-11-25 -- task-server --bench-tools --runtime smol`: the
    /// proxy in front of [`ServerId::Smol`], both sides in one era.
    Proxy,
    /// `null-relay -- task-server --bench-tools --runtime smol`: a process that only copies
    /// bytes between the load driver and [`ServerId::Smol`], the floor of any stdio proxy.
    Relay,
}

impl ServerId {
    /// Every server, in the order of the tables.
    pub const ALL: [ServerId; 12] = [
        ServerId::Smol,
        ServerId::SmolSqlite,
        ServerId::SmolSqliteFull,
        ServerId::SmolPostgres,
        ServerId::SmolMetrics,
        ServerId::Tokio,
        ServerId::TypeScript,
        ServerId::Python,
        ServerId::Rmcp,
        ServerId::Limit,
        ServerId::Proxy,
        ServerId::Relay,
    ];

    /// The name `--servers` takes.
    pub fn key(self) -> &'static str {
        match self {
            ServerId::Smol => "smol",
            ServerId::SmolSqlite => "smol-sqlite",
            ServerId::SmolSqliteFull => "smol-sqlite-full",
            ServerId::SmolPostgres => "smol-postgres",
            ServerId::SmolMetrics => "smol-metrics",
            ServerId::Tokio => "tokio",
            ServerId::TypeScript => "ts",
            ServerId::Python => "python",
            ServerId::Rmcp => "rmcp",
            ServerId::Limit => "null",
            ServerId::Proxy => "proxy",
            ServerId::Relay => "relay",
        }
    }

    /// The name in the tables.
    pub fn label(self) -> &'static str {
        match self {
            ServerId::Smol => "taskwire (smol)",
            ServerId::SmolSqlite => "taskwire (smol, SQLite NORMAL)",
            ServerId::SmolSqliteFull => "taskwire (smol, SQLite FULL)",
            ServerId::SmolPostgres => "taskwire (smol, PostgreSQL)",
            ServerId::SmolMetrics => "taskwire (smol, metrics on)",
            ServerId::Tokio => "taskwire (tokio)",
            ServerId::TypeScript => "TypeScript SDK 1.32.2",
            ServerId::Python => "Python SDK 1.30.0",
            ServerId::Rmcp => "rmcp 3.11.0",
            ServerId::Limit => "limit (null-server)",
            ServerId::Proxy => "taskwire proxy → taskwire (smol)",
            ServerId::Relay => "null-relay → taskwire (smol)",
        }
    }

    /// Whether it is ours (`task-server`, or the proxy in front of it).
    pub fn is_ours(self) -> bool {
        self.is_ours_in_memory()
            || self.is_durable()
            || matches!(self, ServerId::Proxy | ServerId::SmolMetrics)
    }

    /// Whether it is one of ours with tasks in memory: a row of the tables of ratios to the
    /// peers (ours on a durable store are compared with [`ServerId::Smol`] instead).
    pub fn is_ours_in_memory(self) -> bool {
        matches!(self, ServerId::Smol | ServerId::Tokio)
    }

    /// Whether it is one of ours on a durable store (SQLite or PostgreSQL), with a database of
    /// its own per start and a size on disk.
    pub fn is_durable(self) -> bool {
        self.sqlite().is_some() || self == ServerId::SmolPostgres
    }

    /// Its SQLite store's `synchronous` mode, for ours on a SQLite store.
    pub fn sqlite(self) -> Option<Synchronous> {
        match self {
            ServerId::SmolSqlite => Some(Synchronous::Normal),
            ServerId::SmolSqliteFull => Some(Synchronous::Full),
            _ => None,
        }
    }

    /// Whether it hosts 2025-11-25 tasks (`instant_task`, `tasks/get|result|list`).
    pub fn hosts_tasks(self) -> bool {
        !matches!(self, ServerId::Rmcp | ServerId::Limit)
    }

    /// Whether it is a process in front of [`ServerId::Smol`] (the proxy, the null relay).
    pub fn is_in_front(self) -> bool {
        matches!(self, ServerId::Proxy | ServerId::Relay)
    }

    /// Tasks it holds before any call, which `tasks/list` also shows (`task-server`'s
    /// `demo-task`, also through the null relay and the proxy, which relays tasks in one era).
    pub fn precreated_tasks(self) -> usize {
        usize::from(self.is_ours() || self == ServerId::Relay)
    }
}

/// The proxy's task caps, raised as `task-server --bench-tools` raises its own (200,000).
const PROXY_MAX_TASKS: &str = "200000";

/// Programs given on the command line instead of built.
#[derive(Clone, Debug, Default)]
pub struct Prebuilt {
    /// `--task-server`.
    pub task_server: Option<PathBuf>,
    /// `--null-server`.
    pub null_server: Option<PathBuf>,
    /// `--taskwire`.
    pub taskwire: Option<PathBuf>,
    /// `--null-relay`.
    pub null_relay: Option<PathBuf>,
}

/// SQLite's `synchronous` in WAL mode, as `task-server --store` takes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Synchronous {
    /// `?synchronous=normal` (the default): durable when the process crashes.
    Normal,
    /// `?synchronous=full`: every commit waits for the disk.
    Full,
}

impl Synchronous {
    /// The `--store sqlite:PATH` value for a database at `path`.
    pub fn store_arg(self, path: &Path) -> OsString {
        let mut arg = OsString::from("sqlite:");
        arg.push(path);
        arg.push(match self {
            Synchronous::Normal => "?synchronous=normal",
            Synchronous::Full => "?synchronous=full",
        });
        arg
    }
}

/// The programs behind the servers.
#[derive(Clone, Debug)]
pub struct Programs {
    /// The release `task-server`.
    pub task_server: PathBuf,
    /// The release `null-server`.
    pub null_server: PathBuf,
    /// The release `taskwire` (for the proxy).
    pub taskwire: PathBuf,
    /// The release `null-relay`.
    pub null_relay: PathBuf,
    /// The peers' install (`tests/peers/setup.sh`).
    pub peers: peers::Peers,
    /// The PostgreSQL server of [`ServerId::SmolPostgres`] (`TASKWIRE_POSTGRES_URL`), when
    /// that server is run.
    pub postgres: Option<PostgresServer>,
}

impl Programs {
    /// The prebuilt programs as given (`prebuilt`), else built with cargo (`--release`); the peers
    /// where `setup.sh` puts them; the PostgreSQL server in `TASKWIRE_POSTGRES_URL`. Checks that
    /// each program `servers` needs is there, and says how to install it if not, and that the
    /// PostgreSQL server answers (saying how to start it when the variable is unset).
    pub fn locate(servers: &[ServerId], prebuilt: Prebuilt) -> Result<Programs, String> {
        let Prebuilt {
            task_server,
            null_server,
            taskwire,
            null_relay,
        } = prebuilt;
        let needs = |s: ServerId| servers.contains(&s);
        let postgres = if needs(ServerId::SmolPostgres) {
            let server =
                PostgresServer::from_env().map_err(|why| without_postgres(servers, &why))?;
            Some(server)
        } else {
            None
        };
        let task_server = match task_server {
            Some(path) => path,
            None if servers.iter().any(|s| s.is_ours() || s.is_in_front()) => {
                peers::demo::release_binary("taskwire-demo", "task-server")?
            }
            None => PathBuf::new(),
        };
        let null_server = match null_server {
            Some(path) => path,
            None if needs(ServerId::Limit) => {
                peers::demo::release_binary("taskwire-bench", "null-server")?
            }
            None => PathBuf::new(),
        };
        let taskwire = match taskwire {
            Some(path) => path,
            None if needs(ServerId::Proxy) => {
                peers::demo::release_binary("taskwire-cli", "taskwire")?
            }
            None => PathBuf::new(),
        };
        let null_relay = match null_relay {
            Some(path) => path,
            None if needs(ServerId::Relay) => {
                peers::demo::release_binary("taskwire-bench", "null-relay")?
            }
            None => PathBuf::new(),
        };
        let programs = Programs {
            task_server,
            null_server,
            taskwire,
            null_relay,
            peers: peers::Peers::locate(),
            postgres,
        };
        for &server in servers {
            programs.check(server)?;
        }
        if let Some(postgres) = &programs.postgres {
            postgres
                .check()
                .map_err(|why| format!("{}: {why}", ServerId::SmolPostgres.label()))?;
        }
        Ok(programs)
    }

    /// Starts `server` with its stderr going to `stderr_log` (see [`Conn::start`]). Ours on
    /// SQLite get a fresh database in a directory of their own under `scratch`, ours on
    /// PostgreSQL a fresh database on [`Programs::postgres`]; the [`Conn`] removes it when it
    /// is dropped, after stopping the server.
    pub fn start(
        &self,
        server: ServerId,
        scratch: &Path,
        stderr_log: &Path,
    ) -> Result<Conn, String> {
        let (store, database) = if let Some(sync) = server.sqlite() {
            let database = ScratchDb::create(scratch)?;
            (sync.store_arg(database.path()), Database::Sqlite(database))
        } else if server == ServerId::SmolPostgres {
            let postgres = self.postgres.as_ref().ok_or_else(|| {
                format!(
                    "no PostgreSQL server ({URL_ENV}) was located for {}",
                    server.label()
                )
            })?;
            let database = postgres.create()?;
            (OsString::from(database.url()), Database::Postgres(database))
        } else {
            return Conn::start(&self.argv(server), stderr_log);
        };
        let argv = self.argv(server).arg("--store").arg(store);
        let mut conn = Conn::start(&argv, stderr_log)?;
        conn.keep(database);
        Ok(conn)
    }

    /// The command line that starts `server` (for ours on a durable store, without its
    /// `--store`).
    pub fn argv(&self, server: ServerId) -> Argv {
        let ours = |runtime: &str| {
            Argv::new(&self.task_server).args(&["--bench-tools", "--runtime", runtime])
        };
        match server {
            ServerId::Smol
            | ServerId::SmolSqlite
            | ServerId::SmolSqliteFull
            | ServerId::SmolPostgres => ours("smol"),
            ServerId::SmolMetrics => ours("smol").args(&["--metrics", "127.0.0.1:0"]),
            ServerId::Tokio => ours("tokio"),
            ServerId::TypeScript => self.peers.bench_ts_server(),
            ServerId::Python => self.peers.bench_py_server(),
            ServerId::Rmcp => Argv::new(self.peers.rmcp_echo_server()),
            ServerId::Limit => Argv::new(&self.null_server),
            ServerId::Proxy => Argv::new(&self.taskwire)
                .args(&["proxy", "--era", "2025-11-25"])
                .args(&["--max-tasks", PROXY_MAX_TASKS, "--max-tasks-per-client"])
                .args(&[PROXY_MAX_TASKS, "--"])
                .extend(&ours("smol")),
            ServerId::Relay => Argv::new(&self.null_relay).arg("--").extend(&ours("smol")),
        }
    }

    fn check(&self, server: ServerId) -> Result<(), String> {
        const SETUP: &str = "install the peers with `bash tests/peers/setup.sh`";
        let peers = &self.peers;
        let (needed, why): (Vec<PathBuf>, String) = match server {
            ServerId::Smol
            | ServerId::Tokio
            | ServerId::SmolSqlite
            | ServerId::SmolSqliteFull
            | ServerId::SmolPostgres
            | ServerId::SmolMetrics => (vec![self.task_server.clone()], String::new()),
            ServerId::Limit => (vec![self.null_server.clone()], String::new()),
            ServerId::Proxy => (
                vec![self.taskwire.clone(), self.task_server.clone()],
                String::new(),
            ),
            ServerId::Relay => (
                vec![self.null_relay.clone(), self.task_server.clone()],
                String::new(),
            ),
            ServerId::TypeScript => (
                vec![
                    peers
                        .node_dir
                        .join("node_modules/@modelcontextprotocol/sdk/package.json"),
                    peers.kit.join("bench_server.mjs"),
                ],
                format!("the TypeScript SDK 1.32.2 is missing: {SETUP}"),
            ),
            ServerId::Python => (
                vec![peers.python.clone(), peers.kit.join("bench_server.py")],
                format!("the Python SDK (mcp 1.30.0) venv is missing: {SETUP}"),
            ),
            ServerId::Rmcp => (
                vec![peers.rmcp_echo_server()],
                format!("the rmcp 3.11 echo server is not built: {SETUP}"),
            ),
        };
        match needed.iter().find(|path| !path.is_file()) {
            None => Ok(()),
            Some(path) => Err(format!(
                "{}: {} not found; {why}",
                server.label(),
                path.display()
            )),
        }
    }
}

/// Why [`ServerId::SmolPostgres`] cannot run (`why`: no usable `TASKWIRE_POSTGRES_URL`), and
/// the `--servers` that leaves it out of the selected `servers`.
fn without_postgres(servers: &[ServerId], why: &str) -> String {
    let postgres = ServerId::SmolPostgres;
    let others: Vec<&str> = servers
        .iter()
        .filter(|&&s| s != postgres)
        .map(|s| s.key())
        .collect();
    let instead = if others.is_empty() {
        String::new()
    } else {
        format!(" (--servers {})", others.join(","))
    };
    format!(
        "{}: {why}; or leave {} out with --servers{instead}",
        postgres.label(),
        postgres.key()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ours_on_a_durable_store() {
        let durable: Vec<ServerId> = ServerId::ALL
            .into_iter()
            .filter(|s| s.is_durable())
            .collect();
        assert_eq!(
            durable,
            [
                ServerId::SmolSqlite,
                ServerId::SmolSqliteFull,
                ServerId::SmolPostgres
            ]
        );
        assert!(durable
            .iter()
            .all(|s| s.is_ours() && !s.is_ours_in_memory()));
        assert_eq!(ServerId::SmolPostgres.sqlite(), None);
        assert_eq!(ServerId::SmolPostgres.precreated_tasks(), 1);
    }

    #[test]
    fn without_postgres_names_the_other_servers() {
        let why = "TASKWIRE_POSTGRES_URL is not set";
        assert_eq!(
            without_postgres(&ServerId::ALL[..4], why),
            "taskwire (smol, PostgreSQL): TASKWIRE_POSTGRES_URL is not set; or leave \
             smol-postgres out with --servers (--servers smol,smol-sqlite,smol-sqlite-full)"
        );
        assert_eq!(
            without_postgres(&[ServerId::SmolPostgres], why),
            "taskwire (smol, PostgreSQL): TASKWIRE_POSTGRES_URL is not set; or leave \
             smol-postgres out with --servers"
        );
    }
}
