//! A `scripted-server` log read back: what the client sent and when, what the server
//! answered, and why it stopped.

use std::fmt;
use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

/// One log line.
#[derive(Clone, Debug, Deserialize)]
pub struct Entry {
    /// Ms since the server started (monotonic).
    pub t: u64,
    /// `in` (from the client), `out` (to it), `exit` (the scenario's own exit) or `eof`
    /// (stdin ended).
    pub dir: String,
    /// The message (for `exit`, why).
    pub msg: Value,
}

/// A whole log.
#[derive(Clone, Debug)]
pub struct Log(pub Vec<Entry>);

impl Log {
    /// Reads the log at `path`; panics if it is missing or not JSON lines.
    pub fn read(path: &Path) -> Log {
        let text = std::fs::read_to_string(path)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
        let entries = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("bad log line {l:?}: {e}")))
            .collect();
        Log(entries)
    }

    /// The client's requests with this method, in order.
    pub fn requests(&self, method: &str) -> Vec<&Entry> {
        self.0
            .iter()
            .filter(|e| e.dir == "in" && e.msg["method"] == method && e.msg.get("id").is_some())
            .collect()
    }

    /// When the client's requests with this method arrived.
    pub fn times(&self, method: &str) -> Vec<u64> {
        self.requests(method).iter().map(|e| e.t).collect()
    }

    /// The one request with this method; panics (showing the log) unless there is one.
    pub fn only(&self, method: &str) -> &Entry {
        let found = self.requests(method);
        assert_eq!(found.len(), 1, "one {method} expected\n{self}");
        found[0]
    }

    /// The server's answer to the client's request `id`.
    pub fn answer_to(&self, id: &Value) -> Option<&Entry> {
        self.0
            .iter()
            .find(|e| e.dir == "out" && e.msg.get("method").is_none() && e.msg["id"] == *id)
    }

    /// The client's answer to the server's request `id`.
    pub fn reply_to(&self, id: &str) -> Option<&Entry> {
        self.0
            .iter()
            .find(|e| e.dir == "in" && e.msg.get("method").is_none() && e.msg["id"] == id)
    }

    /// Why the server exited on its own, if it did.
    pub fn exit(&self) -> Option<&str> {
        self.0.iter().find(|e| e.dir == "exit")?.msg.as_str()
    }
}

impl fmt::Display for Log {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "--- server log:")?;
        for e in &self.0 {
            writeln!(f, "{:>6} {:<4} {}", e.t, e.dir, e.msg)?;
        }
        Ok(())
    }
}
