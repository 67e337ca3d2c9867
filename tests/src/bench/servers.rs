//! The servers the benchmark drives, where their programs are, and how each is started (ours
//! on a SQLite store get a fresh database per start).

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::conn::Conn;
use super::database::ScratchDb;
use crate::peers::{self, Argv};

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
}

impl ServerId {
    /// Every server, in the order of the tables.
    pub const ALL: [ServerId; 8] = [
        ServerId::Smol,
        ServerId::SmolSqlite,
        ServerId::SmolSqliteFull,
        ServerId::Tokio,
        ServerId::TypeScript,
        ServerId::Python,
        ServerId::Rmcp,
        ServerId::Limit,
    ];

    /// The name `--servers` takes.
    pub fn key(self) -> &'static str {
        match self {
            ServerId::Smol => "smol",
            ServerId::SmolSqlite => "smol-sqlite",
            ServerId::SmolSqliteFull => "smol-sqlite-full",
            ServerId::Tokio => "tokio",
            ServerId::TypeScript => "ts",
            ServerId::Python => "python",
            ServerId::Rmcp => "rmcp",
            ServerId::Limit => "null",
        }
    }

    /// The name in the tables.
    pub fn label(self) -> &'static str {
        match self {
            ServerId::Smol => "taskwire (smol)",
            ServerId::SmolSqlite => "taskwire (smol, SQLite NORMAL)",
            ServerId::SmolSqliteFull => "taskwire (smol, SQLite FULL)",
            ServerId::Tokio => "taskwire (tokio)",
            ServerId::TypeScript => "TypeScript SDK 1.32.2",
            ServerId::Python => "Python SDK 1.30.0",
            ServerId::Rmcp => "rmcp 3.11.0",
            ServerId::Limit => "limit (null-server)",
        }
    }

    /// Whether it is ours (`task-server`, with our `demo-task` pre-created).
    pub fn is_ours(self) -> bool {
        matches!(
            self,
            ServerId::Smol | ServerId::Tokio | ServerId::SmolSqlite | ServerId::SmolSqliteFull
        )
    }

    /// Whether it is one of ours with tasks in memory: a row of the tables of ratios to the
    /// peers (ours on SQLite are compared with [`ServerId::Smol`] instead).
    pub fn is_ours_in_memory(self) -> bool {
        matches!(self, ServerId::Smol | ServerId::Tokio)
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

    /// Tasks it holds before any call, which `tasks/list` also shows (our `demo-task`).
    pub fn precreated_tasks(self) -> usize {
        usize::from(self.is_ours())
    }
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
    /// The peers' install (`tests/peers/setup.sh`).
    pub peers: peers::Peers,
}

impl Programs {
    /// `task_server` and `null_server` as given, else built with cargo (`--release`); the peers
    /// where `setup.sh` puts them. Checks that each program `servers` needs is there, and says
    /// how to install it if not.
    pub fn locate(
        servers: &[ServerId],
        task_server: Option<PathBuf>,
        null_server: Option<PathBuf>,
    ) -> Result<Programs, String> {
        let needs = |s: ServerId| servers.contains(&s);
        let task_server = match task_server {
            Some(path) => path,
            None if servers.iter().any(|s| s.is_ours()) => {
                peers::demo::release_binary("taskwire-demo", "task-server")?
            }
            None => PathBuf::new(),
        };
        let null_server = match null_server {
            Some(path) => path,
            None if needs(ServerId::Limit) => {
                peers::demo::release_binary("taskwire-tests", "null-server")?
            }
            None => PathBuf::new(),
        };
        let programs = Programs {
            task_server,
            null_server,
            peers: peers::Peers::locate(),
        };
        for &server in servers {
            programs.check(server)?;
        }
        Ok(programs)
    }

    /// Starts `server` with its stderr going to `stderr_log` (see [`Conn::start`]). Ours on
    /// SQLite get a fresh database in a directory of their own under `scratch`, which the
    /// [`Conn`] removes when it is dropped.
    pub fn start(
        &self,
        server: ServerId,
        scratch: &Path,
        stderr_log: &Path,
    ) -> Result<Conn, String> {
        let Some(sync) = server.sqlite() else {
            return Conn::start(&self.argv(server), stderr_log);
        };
        let database = ScratchDb::create(scratch)?;
        let argv = self
            .argv(server)
            .arg("--store")
            .arg(sync.store_arg(database.path()));
        let mut conn = Conn::start(&argv, stderr_log)?;
        conn.keep(database);
        Ok(conn)
    }

    /// The command line that starts `server` (for ours on SQLite, without its `--store`).
    pub fn argv(&self, server: ServerId) -> Argv {
        let ours = |runtime: &str| {
            Argv::new(&self.task_server).args(&["--bench-tools", "--runtime", runtime])
        };
        match server {
            ServerId::Smol | ServerId::SmolSqlite | ServerId::SmolSqliteFull => ours("smol"),
            ServerId::Tokio => ours("tokio"),
            ServerId::TypeScript => self.peers.bench_ts_server(),
            ServerId::Python => self.peers.bench_py_server(),
            ServerId::Rmcp => Argv::new(self.peers.rmcp_echo_server()),
            ServerId::Limit => Argv::new(&self.null_server),
        }
    }

    fn check(&self, server: ServerId) -> Result<(), String> {
        const SETUP: &str = "install the peers with `bash tests/peers/setup.sh`";
        let peers = &self.peers;
        let (needed, why): (Vec<PathBuf>, String) = match server {
            ServerId::Smol | ServerId::Tokio | ServerId::SmolSqlite | ServerId::SmolSqliteFull => {
                (vec![self.task_server.clone()], String::new())
            }
            ServerId::Limit => (vec![self.null_server.clone()], String::new()),
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
