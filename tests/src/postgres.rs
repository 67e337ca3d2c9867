//! The PostgreSQL server of the PostgreSQL task-store tests. `tests/run-all.sh` starts a private
//! cluster with `tests/postgres.sh start` (127.0.0.1:55432, data under `<target>/postgres/`,
//! the superuser role `taskwire`, so a test may create a database of its own) and passes its URL
//! in `TASKWIRE_POSTGRES_URL`; [`url`] hands it to the test.
//!
//! Nothing here skips silently: without the variable the test fails, saying what to run.
//! `TASKWIRE_SKIP_POSTGRES=1` is the explicit opt-out, reported by [`skip`].

use std::ffi::OsString;

use crate::skip;

/// Set to `1` to skip the PostgreSQL tests. CI never sets it.
pub const SKIP_ENV: &str = "TASKWIRE_SKIP_POSTGRES";

/// The URL of the server the tests use: what `tests/postgres.sh start` prints last
/// (`postgres://taskwire@127.0.0.1:55432/taskwire`), or a server of yours.
pub const URL_ENV: &str = "TASKWIRE_POSTGRES_URL";

/// The URL of the PostgreSQL server (`TASKWIRE_POSTGRES_URL`), or `None` when the PostgreSQL
/// tests are switched off (`TASKWIRE_SKIP_POSTGRES=1`); then the test has reported that it is
/// skipped and why ([`crate::skip::record`]: on stderr, and counted by `tests/run-all.sh`), and
/// should return at once. Panics, saying what to do, when `TASKWIRE_POSTGRES_URL` is unset.
pub fn url() -> Option<String> {
    if skip::opted_out(SKIP_ENV) {
        let thread = std::thread::current();
        let label = thread
            .name()
            .filter(|name| *name != "main")
            .unwrap_or("postgres");
        skip::record(label, SKIP_ENV, "the PostgreSQL store tests are not run");
        return None;
    }
    match from_var(std::env::var_os(URL_ENV)) {
        Ok(url) => Some(url),
        Err(why) => panic!("{why}"),
    }
}

/// A new, empty database named `name` (any earlier one of that name dropped) on the server
/// of [`url`], and its URL; `None` when the PostgreSQL tests are skipped. Panics, saying why,
/// when the server cannot be reached.
pub fn fresh_database(name: &str) -> Option<String> {
    let server = url()?;
    let database = format!("taskwire_test_{name}");
    run_sql(
        &server,
        &[
            &format!("DROP DATABASE IF EXISTS {database} WITH (FORCE)"),
            &format!("CREATE DATABASE {database}"),
        ],
    );
    Some(with_database(&server, &database))
}

/// A PostgreSQL cluster of one test's own, for a test that stops and starts the server
/// under running replicas: `tests/postgres.sh` on another port, its data apart from the
/// shared cluster's (under `<target>/postgres-own/NAME`). Stopped when dropped.
pub struct OwnCluster {
    port: u16,
    target: std::path::PathBuf,
}

impl OwnCluster {
    /// Makes (on first use) and starts cluster `name` on 127.0.0.1:`port`; `None` when the
    /// PostgreSQL tests are skipped. Panics with the script's output when it fails.
    pub fn start(name: &str, port: u16) -> Option<OwnCluster> {
        url()?;
        let cluster = OwnCluster {
            port,
            target: crate::peers::target_dir().join("postgres-own").join(name),
        };
        cluster.script("start");
        Some(cluster)
    }

    /// The URL of a new, empty database `name` on it (an earlier one dropped).
    pub fn fresh_database(&self, name: &str) -> String {
        let server = format!("postgres://taskwire@127.0.0.1:{}/taskwire", self.port);
        run_sql(
            &server,
            &[
                &format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"),
                &format!("CREATE DATABASE {name}"),
            ],
        );
        with_database(&server, name)
    }

    /// Stops the server (`pg_ctl stop -m fast`: connections are cut).
    pub fn stop(&self) {
        self.script("stop");
    }

    /// Starts it again.
    pub fn start_again(&self) {
        self.script("start");
    }

    fn script(&self, verb: &str) {
        let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("postgres.sh");
        let out = std::process::Command::new("bash")
            .arg(&script)
            .arg(verb)
            .env("TASKWIRE_POSTGRES_PORT", self.port.to_string())
            .env("CARGO_TARGET_DIR", &self.target)
            .output()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}", script.display()));
        assert!(
            out.status.success(),
            "postgres.sh {verb} (port {}) failed: {}{}",
            self.port,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

impl Drop for OwnCluster {
    fn drop(&mut self) {
        self.script("stop");
    }
}

/// Runs `statements`, one by one (each its own transaction), on the database at `url`, on a
/// connection of their own. Panics, naming the server or the statement, when one fails.
pub fn run_sql(url: &str, statements: &[&str]) {
    for sql in statements {
        if let Err(why) = try_sql(url, sql) {
            panic!("{sql}: {why}");
        }
    }
}

/// Runs `sql` on the database at `url`: the server's message when it fails. Panics when the
/// server cannot be reached.
pub fn try_sql(url: &str, sql: &str) -> Result<(), String> {
    with_client(url, async |client| {
        client.batch_execute(sql).await.map_err(|e| {
            e.as_db_error()
                .map_or(e.to_string(), |db| db.message().to_owned())
        })
    })
}

/// The first column of each row `sql` reads from the database at `url`, as text (`NULL`:
/// empty). Panics, saying why, when the query fails or the server cannot be reached.
pub fn query_text(url: &str, sql: &str) -> Vec<String> {
    with_client(url, async |client| {
        let rows = client
            .simple_query(sql)
            .await
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
        rows.iter()
            .filter_map(|message| match message {
                tokio_postgres::SimpleQueryMessage::Row(row) => {
                    Some(row.get(0).unwrap_or_default().to_owned())
                }
                _ => None,
            })
            .collect()
    })
}

/// What `work` makes of a connection of its own to the database at `url` (on a runtime of
/// its own). Panics when the server cannot be reached.
pub fn with_client<T>(url: &str, work: impl AsyncFnOnce(&tokio_postgres::Client) -> T) -> T {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    runtime.block_on(async {
        let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
            .await
            .unwrap_or_else(|e| panic!("cannot reach the PostgreSQL server at {url}: {e}"));
        tokio::spawn(connection);
        work(&client).await
    })
}

/// `url` with its database (the last path segment) replaced by `database`.
fn with_database(url: &str, database: &str) -> String {
    let (server, _) = url
        .rsplit_once('/')
        .filter(|(server, _)| server.contains("://"))
        .unwrap_or_else(|| panic!("{URL_ENV} must be a URL ending in /DATABASE, not {url}"));
    format!("{server}/{database}")
}

/// The URL in the value of `TASKWIRE_POSTGRES_URL`, or why there is none (unset, empty or not
/// UTF-8) and what to do.
fn from_var(value: Option<OsString>) -> Result<String, String> {
    const TODO: &str = "run `bash tests/postgres.sh start` and set TASKWIRE_POSTGRES_URL to the \
        URL it prints (tests/run-all.sh does both), or set TASKWIRE_SKIP_POSTGRES=1 to skip these \
        tests";
    let Some(value) = value else {
        return Err(format!(
            "{URL_ENV} is not set, so there is no PostgreSQL server: {TODO}"
        ));
    };
    match value.into_string() {
        Ok(url) if url.trim().is_empty() => Err(format!(
            "{URL_ENV} is empty, so there is no PostgreSQL server: {TODO}"
        )),
        Ok(url) => Ok(url),
        Err(value) => Err(format!("{URL_ENV} is not UTF-8 ({value:?}): {TODO}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TODO: &str = "run `bash tests/postgres.sh start` and set TASKWIRE_POSTGRES_URL to the \
        URL it prints (tests/run-all.sh does both), or set TASKWIRE_SKIP_POSTGRES=1 to skip these \
        tests";

    #[test]
    fn a_database_of_its_own_on_the_same_server() {
        assert_eq!(
            with_database("postgres://taskwire@127.0.0.1:55432/taskwire", "t1"),
            "postgres://taskwire@127.0.0.1:55432/t1"
        );
    }

    #[test]
    fn the_url_is_the_value() {
        let url = "postgres://taskwire@127.0.0.1:55432/taskwire";
        assert_eq!(from_var(Some(url.into())), Ok(url.to_owned()));
    }

    #[test]
    fn unset_says_what_to_do() {
        let why = from_var(None).unwrap_err();
        assert!(why.starts_with("TASKWIRE_POSTGRES_URL is not set"), "{why}");
        assert!(why.ends_with(TODO), "{why}");
    }

    #[test]
    fn empty_counts_as_unset() {
        for value in ["", "  "] {
            let why = from_var(Some(value.into())).unwrap_err();
            assert!(why.starts_with("TASKWIRE_POSTGRES_URL is empty"), "{why}");
            assert!(why.ends_with(TODO), "{why}");
        }
    }

    #[cfg(unix)]
    #[test]
    fn not_utf8_says_what_to_do() {
        use std::os::unix::ffi::OsStringExt;
        let why = from_var(Some(OsString::from_vec(b"postgres://\xff".to_vec()))).unwrap_err();
        assert!(
            why.starts_with("TASKWIRE_POSTGRES_URL is not UTF-8"),
            "{why}"
        );
        assert!(why.ends_with(TODO), "{why}");
    }
}
