//! A fleet of `task-server` processes on one PostgreSQL database, as the fleet tests run it:
//! replicas (`--role both`, the default), fronts (`--role front`, over Streamable HTTP),
//! workers (`--role worker`, no transport) and HAProxy balancing the fronts round-robin. Each
//! process logs (`RUST_LOG`: the driver's debug reports) to a file of its database's and name's
//! own, printed when its test panics.

use std::path::PathBuf;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use crate::peers::demo::binary;
use crate::peers::http::HttpServer;
use crate::peers::{target_dir, Argv};

/// `task-server` on `database` as replica `name` (its lease `lease_ms`, its steps `step_ms`,
/// with the extra and the benchmark tools, logging the driver's debug reports); the caller
/// adds where it serves and its role.
pub fn server_argv(database: &str, name: &str, lease_ms: u64, step_ms: u64) -> Argv {
    let store = format!("{database}?replica={name}&lease={lease_ms}");
    Argv::new(binary("task-server"))
        .args(&[
            "--store",
            &store,
            "--step-ms",
            &step_ms.to_string(),
            "--bench-tools",
            "--extra-tools",
        ])
        .env(
            "RUST_LOG",
            "taskwire_driver=debug,taskwire_postgres=info,taskwire_http=info",
        )
}

/// Where the stderr of process `name` of `database`'s fleet goes.
pub fn log_of(database: &str, name: &str) -> PathBuf {
    let dir = target_dir().join("tmp/replicas");
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    let database_name = database.rsplit('/').next().unwrap_or(database);
    dir.join(format!("{database_name}-{name}.log"))
}

/// `task-server --http` on `database` as `name` in `role` (`both` or `front`).
pub fn http_server(
    database: &str,
    name: &str,
    role: &str,
    lease_ms: u64,
    step_ms: u64,
) -> HttpServer {
    HttpServer::start(
        |port| {
            server_argv(database, name, lease_ms, step_ms).args(&[
                "--role",
                role,
                "--http",
                &format!("127.0.0.1:{port}"),
            ])
        },
        Some(&log_of(database, name)),
    )
}

/// A front: `task-server --http --role front` on `database` as `name`.
pub fn front(database: &str, name: &str, lease_ms: u64, step_ms: u64) -> HttpServer {
    http_server(database, name, "front", lease_ms, step_ms)
}

/// A worker process (`task-server --role worker`), killed when dropped; dropped while its
/// test panics, it prints its log first.
pub struct Worker {
    child: Child,
    /// Its replica name.
    pub name: String,
    log: PathBuf,
}

impl Worker {
    /// Starts worker `name` on `database`.
    pub fn start(database: &str, name: &str, lease_ms: u64, step_ms: u64) -> Worker {
        Worker::start_with(database, name, lease_ms, step_ms, &[])
    }

    /// [`Worker::start`] with more options (`--concurrency N`).
    pub fn start_with(
        database: &str,
        name: &str,
        lease_ms: u64,
        step_ms: u64,
        options: &[&str],
    ) -> Worker {
        let argv = server_argv(database, name, lease_ms, step_ms).args(options);
        Worker::spawn(database, name, argv)
    }

    /// Worker `name` of `database`'s fleet, started from `argv` (made with [`server_argv`];
    /// `--role worker` is added).
    pub fn spawn(database: &str, name: &str, argv: Argv) -> Worker {
        let log = log_of(database, name);
        let file = std::fs::File::create(&log).expect("a log file");
        let child = argv
            .args(&["--role", "worker"])
            .command()
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(file)
            .spawn()
            .expect("task-server starts");
        Worker {
            child,
            name: name.to_owned(),
            log,
        }
    }

    /// Sends `signal` (`KILL`, `STOP`, `CONT`) to the process.
    pub fn signal(&self, signal: &str) {
        let sent = std::process::Command::new("kill")
            .args([format!("-{signal}"), self.child.id().to_string()])
            .status()
            .expect("kill runs");
        assert!(sent.success(), "kill -{signal} {}", self.name);
    }

    /// What it logged so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Waits (15 s at most) until its log has a line containing `text`.
    pub async fn until_logged(&self, text: &str) {
        let deadline = Instant::now() + Duration::from_secs(15);
        while !self.log().contains(text) {
            assert!(
                Instant::now() < deadline,
                "{} did not log {text:?} within 15 s:\n{}",
                self.name,
                self.log()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("--- worker {} log:\n{}", self.name, self.log());
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// HAProxy on a free port in front of `fronts`: round-robin per request, except that a
/// 2025-11-25 session stays on the front that opened it (stuck on `Mcp-Session-Id`, which the
/// front's answer to `initialize` sets); a request whose front cannot be reached goes to
/// another one. Fails, saying what to install, without `haproxy` on PATH.
pub fn balancer(database: &str, fronts: &[&HttpServer]) -> HttpServer {
    let installed = std::process::Command::new("haproxy")
        .arg("-v")
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        installed,
        "the fleet tests balance with HAProxy: install it (Debian: apt-get install haproxy; \
         tests/run-all.sh does)"
    );
    let config = log_of(database, "haproxy").with_extension("cfg");
    let servers: String = fronts
        .iter()
        .enumerate()
        .map(|(i, front)| {
            let address = front
                .url
                .trim_start_matches("http://")
                .trim_end_matches("/mcp");
            format!("    server front{i} {address} check inter 200ms fall 1 rise 2\n")
        })
        .collect();
    HttpServer::start(
        |port| {
            let text = format!(
                "global\n    maxconn 4096\n\
                 defaults\n    mode http\n    timeout connect 1s\n    timeout client 60s\n    \
                 timeout server 60s\n    retries 3\n    option redispatch 1\n    \
                 retry-on conn-failure empty-response\n\
                 frontend mcp\n    bind 127.0.0.1:{port}\n    default_backend fronts\n\
                 backend fronts\n    balance roundrobin\n    \
                 stick-table type string len 64 size 100k expire 30m\n    \
                 stick on req.hdr(mcp-session-id)\n    \
                 stick store-response res.hdr(mcp-session-id)\n{servers}"
            );
            std::fs::write(&config, text).expect("the HAProxy configuration");
            Argv::new("haproxy").args(&["-f", &config.to_string_lossy(), "-db"])
        },
        Some(&log_of(database, "haproxy")),
    )
}
