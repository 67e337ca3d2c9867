//! `--store SPEC`: the durable task store a server binary keeps its tasks in.
//!
//! - `sqlite:PATH`, `sqlite:PATH?synchronous=full` (or `=normal`, the default): a SQLite file
//!   ([`taskwire_sqlite`]), held by this process alone; `lock_wait=MS` (default 5000) is how
//!   long it waits at start while another process still holds the file, e.g.
//!   `sqlite:PATH?synchronous=full&lock_wait=10000`.
//! - `postgres://user@host:port/database` (or `postgresql://…`): a PostgreSQL database
//!   ([`taskwire_postgres`]). Two more query parameters set how the process takes part among
//!   replicas sharing the database: `replica=NAME` (default: the host name) and `lease=MS`
//!   (milliseconds, default 15000); the others go to the database connection.

use std::sync::Arc;
use std::time::Duration;

use taskwire_driver::{StoreError, TaskStore};
use taskwire_postgres::PostgresOptions;

/// Why `--store` gave no store.
#[derive(Debug)]
pub enum OpenError {
    /// The option itself is wrong (a usage error).
    Spec(String),
    /// The store would not open (its message names it).
    Store(StoreError),
}

/// Opens the store `spec` names.
pub fn open(spec: &str) -> Result<Arc<dyn TaskStore>, OpenError> {
    if spec.starts_with("postgres://") || spec.starts_with("postgresql://") {
        let (url, options) = postgres(spec).map_err(OpenError::Spec)?;
        let store = taskwire_postgres::PostgresStore::connect_with(&url, options)
            .map_err(OpenError::Store)?;
        return Ok(Arc::new(store));
    }
    let (path, options) = taskwire_sqlite::parse_spec(spec).map_err(|_| {
        OpenError::Spec(format!(
            "--store takes sqlite:PATH[?synchronous=normal|full][&lock_wait=MS] or \
             postgres://…, not {spec:?}"
        ))
    })?;
    let store = taskwire_sqlite::SqliteStore::open_with(path, options).map_err(OpenError::Store)?;
    Ok(Arc::new(store))
}

/// The connection URL and replica options of `postgres://…[?replica=NAME][&lease=MS]`.
fn postgres(spec: &str) -> Result<(String, PostgresOptions), String> {
    let mut options = PostgresOptions::default();
    let Some((url, query)) = spec.split_once('?') else {
        return Ok((spec.to_owned(), options));
    };
    let mut rest = Vec::new();
    for pair in query.split('&') {
        match pair.split_once('=') {
            Some(("replica", name)) if !name.is_empty() => options.replica = name.to_owned(),
            Some(("lease", ms)) => {
                let ms: u64 = ms.parse().map_err(|_| {
                    format!("--store {spec:?}: lease takes milliseconds, not {ms:?}")
                })?;
                options.lease = Duration::from_millis(ms);
            }
            _ => rest.push(pair),
        }
    }
    let url = if rest.is_empty() {
        url.to_owned()
    } else {
        format!("{url}?{}", rest.join("&"))
    };
    Ok((url, options))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn postgres_specs_carry_the_replica_options() {
        let (url, options) =
            postgres("postgres://a@h:5/db?replica=r1&application_name=x&lease=2000").unwrap();
        assert_eq!(url, "postgres://a@h:5/db?application_name=x");
        assert_eq!(
            (options.replica.as_str(), options.lease),
            ("r1", Duration::from_secs(2))
        );
        let (url, options) = postgres("postgres://a@h/db").unwrap();
        assert_eq!(url, "postgres://a@h/db");
        assert_eq!(options.lease, Duration::from_secs(15));
        assert!(postgres("postgres://a@h/db?lease=soon")
            .unwrap_err()
            .contains("lease takes milliseconds"));
    }

    #[test]
    fn a_postgres_url_that_does_not_parse_is_a_store_error_naming_it() {
        let Err(OpenError::Store(error)) = open("postgres://db.example:port/tasks") else {
            panic!("refused");
        };
        assert!(
            error.to_string().contains("not a connection URL"),
            "{error}"
        );
    }
}
