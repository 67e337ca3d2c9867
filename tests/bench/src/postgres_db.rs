//! A fresh PostgreSQL database for one server process: `taskwire_bench_<pid>_<n>` on the server
//! of `TASKWIRE_POSTGRES_URL`, dropped (`WITH (FORCE)`) when the [`ScratchPgDb`] is dropped,
//! and the size of its task table on disk.
//!
//! The bench is blocking: each statement runs on a connection of its own, in a current-thread
//! tokio runtime made for it (none of this is timed). Unlike the tests
//! ([`taskwire_tests::postgres::url`]), the bench does not look at `TASKWIRE_SKIP_POSTGRES`: selecting
//! `smol-postgres` without a server is an error that says what to do.

use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio_postgres::{Client, NoTls};

pub use taskwire_tests::postgres::URL_ENV;

/// Databases created by this process so far (part of each name).
static CREATED: AtomicU64 = AtomicU64::new(0);

/// The prefix of the bench's database names.
const PREFIX: &str = "taskwire_bench_";

/// How long connecting may take before the server counts as unreachable.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// The PostgreSQL server the bench makes its databases on: the URL in `TASKWIRE_POSTGRES_URL`,
/// whose database is where the bench connects to create and drop the others.
#[derive(Clone, Debug)]
pub struct PostgresServer {
    url: String,
}

impl PostgresServer {
    /// The server in `TASKWIRE_POSTGRES_URL`, or why there is none (unset, empty, not UTF-8, or
    /// not a URL ending in `/DATABASE`) and what to do about it.
    pub fn from_env() -> Result<PostgresServer, String> {
        const TODO: &str = "run `bash tests/postgres.sh start` and set TASKWIRE_POSTGRES_URL to \
                            the URL it prints (postgres://taskwire@127.0.0.1:55432/taskwire)";
        let url = match std::env::var_os(URL_ENV).map(|v| v.into_string()) {
            None => {
                return Err(format!(
                    "{URL_ENV} is not set, so there is no PostgreSQL server: {TODO}"
                ))
            }
            Some(Ok(url)) if url.trim().is_empty() => {
                return Err(format!(
                    "{URL_ENV} is empty, so there is no PostgreSQL server: {TODO}"
                ))
            }
            Some(Ok(url)) => url.trim().to_owned(),
            Some(Err(value)) => return Err(format!("{URL_ENV} is not UTF-8 ({value:?}): {TODO}")),
        };
        PostgresServer::new(url)
    }

    /// The server at `url` (`postgres://user@host:port/database`).
    pub fn new(url: String) -> Result<PostgresServer, String> {
        with_database(&url, "x")?;
        url.parse::<tokio_postgres::Config>()
            .map_err(|e| format!("{URL_ENV}={url} is not a PostgreSQL URL: {e}"))?;
        Ok(PostgresServer { url })
    }

    /// The URL of the database it connects to.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Connects once, failing with a message naming the server when it cannot; then drops the
    /// databases left by bench processes that are gone (one that was killed), saying so on
    /// stderr.
    pub fn check(&self) -> Result<(), String> {
        for name in self.bench_databases()? {
            let pid = name
                .strip_prefix(PREFIX)
                .and_then(|rest| rest.split_once('_'))
                .and_then(|(pid, _)| pid.parse::<u32>().ok());
            let Some(pid) = pid else { continue };
            if pid == std::process::id() || std::path::Path::new(&format!("/proc/{pid}")).exists() {
                continue;
            }
            eprintln!("bench: dropping {name}, left by bench process {pid}, which is gone");
            execute(
                &self.url,
                &format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"),
            )?;
        }
        Ok(())
    }

    /// The names of the bench's databases on the server (`taskwire_bench_*`), sorted.
    pub fn bench_databases(&self) -> Result<Vec<String>, String> {
        let sql = format!(
            "SELECT datname FROM pg_database WHERE starts_with(datname, '{PREFIX}') ORDER BY 1"
        );
        run(&self.url, |client| async move {
            let rows = client.query(&sql, &[]).await?;
            Ok(rows.iter().map(|row| row.get(0)).collect())
        })
    }

    /// A new, empty database `taskwire_bench_<pid>_<n>` (any earlier one of that name dropped).
    pub fn create(&self) -> Result<ScratchPgDb, String> {
        let n = CREATED.fetch_add(1, Ordering::Relaxed);
        let name = format!("{PREFIX}{}_{n}", std::process::id());
        execute(
            &self.url,
            &format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"),
        )?;
        execute(&self.url, &format!("CREATE DATABASE {name}"))?;
        Ok(ScratchPgDb {
            url: with_database(&self.url, &name)?,
            server: self.url.clone(),
            name,
        })
    }
}

/// A database of its own for one server process, dropped on drop (after the server stopped:
/// see [`crate::conn::Conn`]).
#[derive(Debug)]
pub struct ScratchPgDb {
    /// Where to connect to drop it.
    server: String,
    name: String,
    url: String,
}

impl ScratchPgDb {
    /// Its URL, for `task-server --store`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Its name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// `pg_total_relation_size('taskwire_tasks')`: the task table with its indexes and TOAST,
    /// in bytes (dead row versions included, as on disk).
    pub fn bytes_on_disk(&self) -> Result<u64, String> {
        let size: i64 = run(&self.url, |client| async move {
            let row = client
                .query_one("SELECT pg_total_relation_size('taskwire_tasks')", &[])
                .await?;
            Ok(row.get(0))
        })
        .map_err(|e| format!("{}: the size of taskwire_tasks: {e}", self.name))?;
        u64::try_from(size).map_err(|_| format!("{}: a size of {size} bytes", self.name))
    }

    /// Runs `sql` (one or more statements) on it.
    pub fn execute(&self, sql: &str) -> Result<(), String> {
        execute(&self.url, sql).map_err(|e| format!("{}: {e}", self.name))
    }

    /// The rows of a text and a `bigint` (`int8`) `sql` reads from it.
    pub fn pairs(&self, sql: &str) -> Result<Vec<(String, i64)>, String> {
        let owned = sql.to_owned();
        run(&self.url, |client| async move {
            let rows = client.query(&owned, &[]).await?;
            Ok(rows.iter().map(|row| (row.get(0), row.get(1))).collect())
        })
        .map_err(|e| format!("{}: {e} ({sql})", self.name))
    }

    /// The one `bigint` (`int8`) `sql` reads from it.
    pub fn number(&self, sql: &str) -> Result<i64, String> {
        let owned = sql.to_owned();
        run(&self.url, |client| async move {
            let row = client.query_one(&owned, &[]).await?;
            Ok(row.get::<_, i64>(0))
        })
        .map_err(|e| format!("{}: {e} ({sql})", self.name))
    }
}

impl Drop for ScratchPgDb {
    fn drop(&mut self) {
        let sql = format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.name);
        if let Err(e) = execute(&self.server, &sql) {
            eprintln!("bench: cannot drop the database {}: {e}", self.name);
        }
    }
}

/// Runs `sql` (one or more statements) on the database at `url`.
fn execute(url: &str, sql: &str) -> Result<(), String> {
    let owned = sql.to_owned();
    run(
        url,
        |client| async move { client.batch_execute(&owned).await },
    )
    .map_err(|e| format!("{e} ({sql})"))
}

/// Connects to `url` and runs `work` on the connection, in a runtime of its own: the
/// server's message when something fails.
fn run<T, F, Fut>(url: &str, work: F) -> Result<T, String>
where
    F: FnOnce(Client) -> Fut,
    Fut: Future<Output = Result<T, tokio_postgres::Error>>,
{
    let mut config: tokio_postgres::Config = url
        .parse()
        .map_err(|e| format!("{url} is not a PostgreSQL URL: {e}"))?;
    config.connect_timeout(CONNECT_TIMEOUT);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start a tokio runtime: {e}"))?;
    runtime.block_on(async {
        let (client, connection) = config.connect(NoTls).await.map_err(|e| {
            format!(
                "cannot reach the PostgreSQL server at {url}: {} (the private one starts \
                     with `bash tests/postgres.sh start`)",
                describe(&e)
            )
        })?;
        let connection = tokio::spawn(connection);
        let result = work(client).await.map_err(|e| describe(&e));
        // `work` dropped the client: the connection ends.
        let _ = connection.await;
        result
    })
}

/// The server's message, or the error with its causes (`error connecting to server:
/// Connection refused (os error 111)`).
fn describe(error: &tokio_postgres::Error) -> String {
    if let Some(db) = error.as_db_error() {
        return db.message().to_owned();
    }
    let mut text = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

/// `url` with its database (the last path segment) replaced by `database`.
fn with_database(url: &str, database: &str) -> Result<String, String> {
    match url.rsplit_once('/') {
        Some((server, _)) if server.contains("://") => Ok(format!("{server}/{database}")),
        _ => Err(format!(
            "{URL_ENV} must be a URL ending in /DATABASE (postgres://user@host:port/database), \
             not {url}"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_database_of_its_own_on_the_same_server() {
        assert_eq!(
            with_database("postgres://taskwire@127.0.0.1:55432/taskwire", "b1").unwrap(),
            "postgres://taskwire@127.0.0.1:55432/b1"
        );
        for url in ["postgres://taskwire@127.0.0.1:55432", "host=localhost"] {
            let why = with_database(url, "b1").unwrap_err();
            assert!(why.contains("must be a URL ending in /DATABASE"), "{why}");
        }
        assert!(PostgresServer::new("postgres://u@h:port/db".into()).is_err());
        assert!(PostgresServer::new("postgres://u@h:5432/db".into()).is_ok());
    }
}
