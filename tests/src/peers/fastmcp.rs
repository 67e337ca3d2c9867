//! The FastMCP peers (`tests/peers/fastmcp_{server,client}.py`), each major version in the venv
//! `setup.sh` makes for it: FastMCP 3.4.11 speaks 2025-11-25 tasks, FastMCP 4.1.4 the
//! 2026-07-28 tasks extension.

use std::path::PathBuf;

use super::{Argv, Peers};

/// A FastMCP release with a venv of its own under `<target>/peers/`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FastMcp {
    /// `fastmcp[tasks]==3.4.11` (mcp 1.30.0): 2025-11-25 tasks on Docket's `memory://`.
    V3,
    /// `fastmcp[tasks]==4.1.4` (mcp 2.3.0, fastmcp-tasks): the 2026-07-28 tasks extension.
    V4,
}

impl FastMcp {
    /// The pinned version, as its `serverInfo` reports it.
    pub fn version(self) -> &'static str {
        match self {
            FastMcp::V3 => "3.4.11",
            FastMcp::V4 => "4.1.4",
        }
    }

    /// The protocol version it speaks with tasks.
    pub fn era(self) -> &'static str {
        match self {
            FastMcp::V3 => "2025-11-25",
            FastMcp::V4 => "2026-07-28",
        }
    }

    fn venv(self) -> &'static str {
        match self {
            FastMcp::V3 => "fastmcp3",
            FastMcp::V4 => "fastmcp4",
        }
    }
}

impl Peers {
    /// The Python of the venv of `release`.
    pub fn fastmcp_python(&self, release: FastMcp) -> PathBuf {
        self.target
            .join("peers")
            .join(release.venv())
            .join("bin/python")
    }

    /// `fastmcp_server.py --step-ms STEP --poll-ms POLL`: `long_running_task` as a FastMCP
    /// background task (the seed's three status messages, STEP apart, tasks advertising a
    /// POLL `pollInterval`) and a plain `echo`, on stdio.
    pub fn fastmcp_server(&self, release: FastMcp, step_ms: &str, poll_ms: &str) -> Argv {
        Argv::new(self.fastmcp_python(release))
            .arg(self.kit.join("fastmcp_server.py"))
            .args(&["--step-ms", step_ms, "--poll-ms", poll_ms])
    }

    /// The same server over Streamable HTTP at `http://127.0.0.1:PORT/mcp`.
    pub fn fastmcp_http_server(
        &self,
        release: FastMcp,
        port: u16,
        step_ms: &str,
        poll_ms: &str,
    ) -> Argv {
        self.fastmcp_server(release, step_ms, poll_ms)
            .args(&["--http", &port.to_string()])
    }

    /// `fastmcp_client.py -- SERVER...`: FastMCP's client runs a task to its result and
    /// cancels another (FastMCP 4: then a transparent `call_tool`), printing JSON lines.
    pub fn fastmcp_client(&self, release: FastMcp, server: &Argv) -> Argv {
        Argv::new(self.fastmcp_python(release))
            .arg(self.kit.join("fastmcp_client.py"))
            .arg("--")
            .extend(server)
    }

    /// `fastmcp_client.py --url URL`: the same over Streamable HTTP.
    pub fn fastmcp_client_url(&self, release: FastMcp, url: &str) -> Argv {
        Argv::new(self.fastmcp_python(release))
            .arg(self.kit.join("fastmcp_client.py"))
            .args(&["--url", url])
    }
}
