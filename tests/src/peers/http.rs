//! A Streamable HTTP server as a child process on a free local port (ours: `task-server
//! --http`, `conformance-server --http`; the peers': `ts_server.mjs --http`,
//! `py_http_server.py`), ready once a TCP connect succeeds, killed when dropped.

use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use super::demo::binary;
use super::{Argv, Peers};

/// How long a server may take to listen (Python imports and uvicorn take the longest).
const LISTEN_WITHIN: Duration = Duration::from_secs(20);

/// Serves `app` on `listener` (non-blocking) on a thread of its own, until `stop` ends: the
/// test's own HTTP services (an authorization server, an OTLP collector).
pub fn serve_in_background(
    listener: TcpListener,
    app: axum::Router,
    stop: impl std::future::Future<Output = ()> + Send + 'static,
) {
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        runtime.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).expect("tokio");
            let _ = axum::serve(listener, app)
                .with_graceful_shutdown(stop)
                .await;
        });
    });
}

/// A port of 127.0.0.1 that was free a moment ago (bound, read, released).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free local port")
        .port()
}

/// A server listening on `127.0.0.1:PORT`, serving MCP at `/mcp`. Dropped while its test
/// panics, it prints its stderr file first.
#[derive(Debug)]
pub struct HttpServer {
    child: Child,
    /// The command line, for messages.
    pub command: String,
    /// `http://127.0.0.1:PORT/mcp`.
    pub url: String,
    /// Where its stderr goes, if not to the test's stderr.
    pub stderr: Option<PathBuf>,
}

impl HttpServer {
    /// Starts `server(port)` on a free port, its stdin and stdout closed and its stderr
    /// written to `stderr` (inherited when `None`); returns once a TCP connect to the port
    /// succeeds. Panics if the process exits first or does not listen within 20 s.
    pub fn start(server: impl FnOnce(u16) -> Argv, stderr: Option<&Path>) -> HttpServer {
        let port = free_port();
        HttpServer::start_at(port, server(port), stderr)
    }

    /// [`HttpServer::start`] on `port` (where another server was: a restart).
    pub fn start_at(port: u16, argv: Argv, stderr: Option<&Path>) -> HttpServer {
        let mut command = argv.command();
        command.stdin(Stdio::null()).stdout(Stdio::null());
        if let Some(path) = stderr {
            let file = std::fs::File::create(path)
                .unwrap_or_else(|e| panic!("cannot create {}: {e}", path.display()));
            command.stderr(file);
        }
        let child = command
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", argv.display()));
        let mut server = HttpServer {
            child,
            command: argv.display(),
            url: format!("http://127.0.0.1:{port}/mcp"),
            stderr: stderr.map(Path::to_path_buf),
        };
        let address = format!("127.0.0.1:{port}");
        let deadline = Instant::now() + LISTEN_WITHIN;
        while TcpStream::connect(&address).is_err() {
            // (Its stderr is printed when `server` is dropped by the panic.)
            if let Ok(Some(status)) = server.child.try_wait() {
                panic!("{} exited ({status}) before it listened", server.command);
            }
            assert!(
                Instant::now() < deadline,
                "{} did not listen on {address} within {LISTEN_WITHIN:?}",
                server.command
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        server
    }

    /// Our `task-server --http 127.0.0.1:PORT ARGS` (`RUST_LOG=info`), its stderr in
    /// `<target>/tmp/interop/<test>.task-server.log`.
    pub fn task_server(peers: &Peers, test: &str, args: &[&str]) -> HttpServer {
        let log = peers.scratch(&format!("{test}.task-server.log"));
        HttpServer::start(
            |port| {
                Argv::new(binary("task-server"))
                    .args(&["--http", &format!("127.0.0.1:{port}")])
                    .args(args)
                    .env("RUST_LOG", "info")
            },
            Some(&log),
        )
    }

    /// Its process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Waits up to `within` for it to exit; its status, or `None` if it is still running.
    pub fn wait_exit(&mut self, within: Duration) -> Option<std::process::ExitStatus> {
        let deadline = Instant::now() + within;
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Some(status);
            }
            if Instant::now() >= deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// What it wrote to its stderr file so far, headed by a line naming it (empty when its
    /// stderr is inherited).
    pub fn log(&self) -> String {
        match &self.stderr {
            Some(path) => format!(
                "\n--- {} stderr ({}):\n{}",
                self.command,
                path.display(),
                std::fs::read_to_string(path).unwrap_or_default().trim_end()
            ),
            None => String::new(),
        }
    }
}

impl HttpServer {
    /// Kills it and waits until it has exited (its port is free again).
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        if std::thread::panicking() {
            // A failing test shows what the server said (the harness prints captured output).
            eprintln!("{}", self.log());
        }
        self.kill();
    }
}
