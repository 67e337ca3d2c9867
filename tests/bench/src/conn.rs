//! One server process on raw pipes: spawned, initialized, fed request lines in batches, and
//! read one reply at a time (notifications are read and dropped).
//!
//! The driver is single-threaded and blocking. Callers keep what is in flight small (64
//! requests), so neither pipe fills while the other side waits. A watchdog thread kills the
//! server when a read or write makes no progress for [`STALL_LIMIT`], so a hung server fails
//! the run instead of blocking it.

use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::database::Database;
use super::replies::{self, Incoming, Reply};
use super::requests;
use taskwire_tests::peers::Argv;

/// How long one read or write may make no progress before the server is killed.
pub const STALL_LIMIT: Duration = Duration::from_secs(30);
/// How long a server may take to exit once its stdin is closed.
const EXIT_GRACE: Duration = Duration::from_secs(3);

/// A running server, initialized.
pub struct Conn {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    outgoing: Vec<u8>,
    line: Vec<u8>,
    next_id: u64,
    watchdog: Watchdog,
    stderr_log: PathBuf,
    /// The server's database, removed after the server is stopped (fields drop after
    /// [`Drop::drop`]).
    database: Option<Database>,
    /// Time from spawning the process to reading its `initialize` answer.
    pub spawn_to_initialize: Duration,
    /// The `initialize` result.
    pub initialize_result: Value,
}

impl Conn {
    /// Starts `argv` with its stderr going to `stderr_log`, and runs the handshake:
    /// `initialize`, `notifications/initialized`, then one `ping` round trip.
    pub fn start(argv: &Argv, stderr_log: &Path) -> Result<Conn, String> {
        let stderr = File::create(stderr_log)
            .map_err(|e| format!("cannot create {}: {e}", stderr_log.display()))?;
        let mut command = argv.command();
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr);
        let started = Instant::now();
        let mut child = command
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", argv.display()))?;
        let stdin = child.stdin.take().expect("stdin is piped");
        let stdout = BufReader::with_capacity(1 << 16, child.stdout.take().expect("piped"));
        let watchdog = Watchdog::start(child.id());
        let mut conn = Conn {
            child,
            stdin: Some(stdin),
            stdout,
            outgoing: Vec::with_capacity(1 << 16),
            line: Vec::with_capacity(1 << 12),
            next_id: 0,
            watchdog,
            stderr_log: stderr_log.to_path_buf(),
            database: None,
            spawn_to_initialize: Duration::ZERO,
            initialize_result: Value::Null,
        };
        let id = conn.reserve(1).start;
        conn.send(&requests::initialize(id))?;
        let reply = conn.recv()?;
        conn.spawn_to_initialize = started.elapsed();
        reply.expect_id(id)?;
        let result = reply.raw_result("an InitializeResult")?;
        conn.initialize_result = serde_json::from_str(result).map_err(|e| e.to_string())?;
        let version = &conn.initialize_result["protocolVersion"];
        if version != requests::PROTOCOL_VERSION {
            return Err(format!(
                "initialize: protocol {} was asked for, the server answered {version}",
                requests::PROTOCOL_VERSION
            ));
        }
        conn.queue(requests::INITIALIZED);
        let id = conn.reserve(1).start;
        conn.send(&requests::ping(id))?;
        let pong = conn.recv()?;
        pong.expect_id(id)?;
        pong.expect_result()?;
        Ok(conn)
    }

    /// Keeps the server's `database` for as long as the server runs, then removes it.
    pub fn keep(&mut self, database: Database) {
        self.database = Some(database);
    }

    /// The server's database, if it has one of ours.
    pub fn database(&self) -> Option<&Database> {
        self.database.as_ref()
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Whether the `initialize` result has something at `pointer` (a JSON pointer such as
    /// `/capabilities/tasks/list`).
    pub fn declares(&self, pointer: &str) -> bool {
        self.initialize_result.pointer(pointer).is_some()
    }

    /// `count` fresh request ids.
    pub fn reserve(&mut self, count: u64) -> std::ops::Range<u64> {
        let start = self.next_id;
        self.next_id += count;
        start..self.next_id
    }

    /// Adds a request line (with its newline) to the next write.
    pub fn queue(&mut self, line: &str) {
        self.outgoing.extend_from_slice(line.as_bytes());
    }

    /// Writes everything queued, in one write.
    pub fn flush(&mut self) -> Result<(), String> {
        if self.outgoing.is_empty() {
            return Ok(());
        }
        let stdin = self.stdin.as_mut().expect("stdin is open until close");
        self.watchdog.busy(true);
        let written = stdin.write_all(&self.outgoing);
        self.watchdog.busy(false);
        self.outgoing.clear();
        written.map_err(|e| self.failure(&format!("cannot write to the server: {e}")))
    }

    /// Queues `line` and writes.
    pub fn send(&mut self, line: &str) -> Result<(), String> {
        self.queue(line);
        self.flush()
    }

    /// The next reply, blocking; notifications before it are dropped. Call it only with a
    /// request outstanding.
    pub fn recv(&mut self) -> Result<Reply, String> {
        loop {
            if let Some(reply) = self.read_message()? {
                return Ok(reply);
            }
        }
    }

    /// The next reply if it is already buffered, so reading it cannot block (notifications
    /// before it are dropped); `None` when no whole line is left in the buffer.
    pub fn recv_buffered(&mut self) -> Result<Option<Reply>, String> {
        while self.stdout.buffer().contains(&b'\n') {
            if let Some(reply) = self.read_message()? {
                return Ok(Some(reply));
            }
        }
        Ok(None)
    }

    /// Reads one line: a reply, or `None` for a notification or a blank line.
    fn read_message(&mut self) -> Result<Option<Reply>, String> {
        self.line.clear();
        self.watchdog.busy(true);
        let read = self.stdout.read_until(b'\n', &mut self.line);
        self.watchdog.busy(false);
        match read {
            Ok(0) => return Err(self.failure("the server closed its stdout")),
            Ok(_) => {}
            Err(e) => return Err(self.failure(&format!("cannot read from the server: {e}"))),
        }
        let line = self.line.strip_suffix(b"\n").unwrap_or(&self.line);
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.iter().all(u8::is_ascii_whitespace) {
            return Ok(None);
        }
        match replies::parse(line) {
            Ok(Incoming::Reply(reply)) => Ok(Some(reply)),
            Ok(Incoming::Notification) => Ok(None),
            Err(e) => Err(self.failure(&format!("the server wrote {e}"))),
        }
    }

    /// Closes stdin and waits for the server to exit (killing it after a grace period).
    pub fn close(mut self) {
        self.stdin = None;
        let deadline = Instant::now() + EXIT_GRACE;
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// `message`, with why the server stopped (if the watchdog killed it) and the end of its
    /// stderr.
    fn failure(&self, message: &str) -> String {
        let mut text = message.to_owned();
        if self.watchdog.fired() {
            text.push_str(&format!(
                " (it made no progress for {}s and was killed)",
                STALL_LIMIT.as_secs()
            ));
        }
        let stderr = std::fs::read_to_string(&self.stderr_log).unwrap_or_default();
        let lines: Vec<&str> = stderr.lines().collect();
        let tail = &lines[lines.len().saturating_sub(20)..];
        if !tail.is_empty() {
            text.push_str(&format!(
                "\n--- the end of its stderr ({}):\n{}",
                self.stderr_log.display(),
                tail.join("\n")
            ));
        }
        text
    }
}

impl Drop for Conn {
    fn drop(&mut self) {
        self.watchdog.stop();
        if !matches!(self.child.try_wait(), Ok(Some(_))) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Kills the server when a read or write has been pending for [`STALL_LIMIT`] without any
/// completing. The hot path costs two relaxed atomic stores per read or write.
struct Watchdog {
    state: Arc<WatchState>,
    thread: Option<JoinHandle<()>>,
}

#[derive(Default)]
struct WatchState {
    busy: AtomicBool,
    progress: AtomicU64,
    stop: AtomicBool,
    fired: AtomicBool,
}

impl Watchdog {
    fn start(pid: u32) -> Watchdog {
        let state = Arc::new(WatchState::default());
        let watched = Arc::clone(&state);
        let thread = std::thread::spawn(move || {
            let tick = Duration::from_millis(200);
            let mut last = (0, Instant::now());
            while !watched.stop.load(Ordering::Relaxed) {
                std::thread::park_timeout(tick);
                let progress = watched.progress.load(Ordering::Relaxed);
                if progress != last.0 || !watched.busy.load(Ordering::Relaxed) {
                    last = (progress, Instant::now());
                } else if last.1.elapsed() >= STALL_LIMIT {
                    watched.fired.store(true, Ordering::Relaxed);
                    let _ = std::process::Command::new("kill")
                        .args(["-KILL", &pid.to_string()])
                        .status();
                    return;
                }
            }
        });
        Watchdog {
            state,
            thread: Some(thread),
        }
    }

    fn busy(&self, busy: bool) {
        if !busy {
            let done = self.state.progress.load(Ordering::Relaxed) + 1;
            self.state.progress.store(done, Ordering::Relaxed);
        }
        self.state.busy.store(busy, Ordering::Relaxed);
    }

    fn fired(&self) -> bool {
        self.state.fired.load(Ordering::Relaxed)
    }

    fn stop(&mut self) {
        self.state.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            thread.thread().unpark();
            let _ = thread.join();
        }
    }
}
