//! Runs a peer process to the end, or kills it (and everything it started) at a deadline, and
//! reads the JSON lines it printed.

use std::fmt;
use std::io::Read;
use std::process::{Child, Stdio};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::Argv;

/// How long the output pipes may stay open after the process exits (a grandchild such as the
/// server under a peer client still holding them); then the process group is killed.
const LINGER: Duration = Duration::from_secs(3);

/// A finished peer process.
#[derive(Debug)]
pub struct Run {
    /// The command line.
    pub command: String,
    /// Exit code; `None` when killed (by the deadline or a signal).
    pub code: Option<i32>,
    /// Whether the deadline killed it.
    pub timed_out: bool,
    /// Whether something it started (e.g. the server under a peer client) still held its
    /// output open 3 s after it exited, and was killed.
    pub lingered: bool,
    /// Everything it printed on stdout.
    pub stdout: String,
    /// Everything it printed on stderr.
    pub stderr: String,
    /// Wall-clock time until it exited.
    pub elapsed: Duration,
}

impl Run {
    /// Every stdout line that is a JSON object, in order.
    pub fn json_lines(&self) -> Vec<Value> {
        self.stdout
            .lines()
            .filter(|l| l.trim_start().starts_with('{'))
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }

    /// The peer-script events (`{"event": kind, ...}`) of one kind, in order.
    pub fn events(&self, kind: &str) -> Vec<Value> {
        self.json_lines()
            .into_iter()
            .filter(|e| e["event"] == kind)
            .collect()
    }

    /// The only event of `kind`; panics (with the whole run) unless there is exactly one.
    pub fn event(&self, kind: &str) -> Value {
        let mut found = self.events(kind);
        assert_eq!(found.len(), 1, "expected one {kind:?} event\n{self}");
        found.remove(0)
    }

    /// The kinds of all events, in order.
    pub fn kinds(&self) -> Vec<String> {
        self.json_lines()
            .iter()
            .filter_map(|e| e["event"].as_str().map(str::to_owned))
            .collect()
    }

    /// Panics (showing the whole run) unless it exited with `code` and everything it started
    /// exited too.
    pub fn assert_exit(&self, code: i32) -> &Run {
        assert_eq!(self.code, Some(code), "unexpected exit\n{self}");
        assert!(!self.lingered, "a process it started did not exit\n{self}");
        self
    }
}

impl fmt::Display for Run {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ending = match (self.timed_out, self.code) {
            (true, _) => "killed at its deadline".to_owned(),
            (false, Some(code)) if self.lingered => {
                format!("exit code {code}; what it started lingered and was killed")
            }
            (false, Some(code)) => format!("exit code {code}"),
            (false, None) => "killed by a signal".to_owned(),
        };
        writeln!(f, "--- command: {}", self.command)?;
        writeln!(f, "--- {ending} after {:.1?}", self.elapsed)?;
        writeln!(f, "--- stdout:\n{}", self.stdout.trim_end())?;
        write!(f, "--- stderr:\n{}", self.stderr.trim_end())
    }
}

/// Runs `argv` with stdin closed, collecting stdout and stderr. Past `deadline` the process
/// and everything it started are killed, and the run reports `timed_out`.
pub fn run(argv: &Argv, deadline: Duration) -> Run {
    let mut command = argv.command();
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    let start = Instant::now();
    let mut child = command
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {}: {e}", argv.display()));
    let stdout = collect(child.stdout.take());
    let stderr = collect(child.stderr.take());
    let (status, timed_out) = wait(&mut child, deadline);
    let elapsed = start.elapsed();
    let lingering = !finish(&[&stdout.1, &stderr.1], LINGER);
    if timed_out || lingering {
        kill_group(&mut child);
        finish(&[&stdout.1, &stderr.1], LINGER);
    }
    Run {
        command: argv.display(),
        code: status.and_then(|s| s.code()),
        timed_out,
        lingered: lingering && !timed_out,
        stdout: text(&stdout.0),
        stderr: text(&stderr.0),
        elapsed,
    }
}

type Collected = (Arc<Mutex<Vec<u8>>>, JoinHandle<()>);

fn collect(pipe: Option<impl Read + Send + 'static>) -> Collected {
    let buffer = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&buffer);
    let handle = std::thread::spawn(move || {
        let Some(mut pipe) = pipe else { return };
        let mut chunk = [0u8; 8192];
        while let Ok(n) = pipe.read(&mut chunk) {
            if n == 0 {
                break;
            }
            sink.lock()
                .expect("output buffer")
                .extend_from_slice(&chunk[..n]);
        }
    });
    (buffer, handle)
}

fn wait(child: &mut Child, deadline: Duration) -> (Option<std::process::ExitStatus>, bool) {
    let start = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return (Some(status), false),
            Ok(None) if start.elapsed() >= deadline => return (None, true),
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => panic!("waiting for a peer process: {e}"),
        }
    }
}

/// Waits up to `limit` for the readers to see EOF; whether they all did.
fn finish(readers: &[&JoinHandle<()>], limit: Duration) -> bool {
    let start = Instant::now();
    while readers.iter().any(|r| !r.is_finished()) {
        if start.elapsed() >= limit {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    true
}

/// Kills the process group we created for `child` (the peer and what it started).
fn kill_group(child: &mut Child) {
    #[cfg(unix)]
    {
        let group = format!("-{}", child.id());
        let _ = std::process::Command::new("kill")
            .args(["-KILL", "--", &group])
            .stderr(Stdio::null())
            .status();
    }
    let _ = child.kill();
    let _ = child.wait();
}

fn text(buffer: &Arc<Mutex<Vec<u8>>>) -> String {
    String::from_utf8_lossy(&buffer.lock().expect("output buffer")).into_owned()
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    fn sh(script: &str) -> Argv {
        Argv::new("sh").arg("-c").arg(script)
    }

    #[test]
    fn a_hung_peer_is_killed_with_what_it_started() {
        let run = run(
            &sh("echo started; sleep 30 & sleep 30"),
            Duration::from_millis(300),
        );
        assert!(run.timed_out, "{run}");
        assert_eq!(run.code, None);
        assert_eq!(run.stdout.trim(), "started");
        assert!(run.elapsed < Duration::from_secs(5), "{run}");
        assert!(run.to_string().contains("killed at its deadline"));
    }

    #[test]
    fn a_straggler_holding_the_pipes_does_not_block() {
        let start = Instant::now();
        let run = run(
            &sh("sleep 30 & echo '{\"event\":\"x\"}'"),
            Duration::from_secs(10),
        );
        assert_eq!(run.code, Some(0), "{run}");
        assert!(run.lingered);
        assert_eq!(run.event("x")["event"], "x");
        assert!(start.elapsed() < LINGER * 3, "{run}");
    }
}
