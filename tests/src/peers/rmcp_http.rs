//! The rmcp 3.11 peers over Streamable HTTP (`tests/peers/rmcp`): the task server and the echo
//! server with `--http ADDR`, the task client with `--url URL`.

use std::path::PathBuf;

use super::{Argv, Peers};

impl Peers {
    /// `rmcp-task-server --step-ms MS --http 127.0.0.1:PORT [ARGS]`: the task server on rmcp's
    /// `StreamableHttpService` at `http://127.0.0.1:PORT/mcp` (legacy sessions, and 2026-07-28
    /// requests served statelessly; `--json-response` answers plain replies with JSON, not
    /// SSE).
    pub fn rmcp_http_task_server(&self, port: u16, step_ms: &str, args: &[&str]) -> Argv {
        self.rmcp_task_server(step_ms)
            .args(&["--http", &format!("127.0.0.1:{port}")])
            .args(args)
    }

    /// `rmcp-echo-server --http 127.0.0.1:PORT [ARGS]`: the benchmark's `echo` on rmcp's
    /// `StreamableHttpService`.
    pub fn rmcp_http_echo_server(&self, port: u16, args: &[&str]) -> Argv {
        Argv::new(self.rmcp_echo_server())
            .args(&["--http", &format!("127.0.0.1:{port}")])
            .args(args)
    }

    /// `rmcp-task-client [ARGS] --url URL`: rmcp's client through one task over Streamable
    /// HTTP (`StreamableHttpClientTransport` on reqwest), printing the same JSON event lines as
    /// on stdio.
    pub fn rmcp_task_client_url(&self, args: &[&str], url: &str) -> Argv {
        Argv::new(self.rmcp_task_client_path())
            .args(args)
            .args(&["--url", url])
    }

    /// Where `setup.sh` puts `rmcp-task-client`.
    pub fn rmcp_task_client_path(&self) -> PathBuf {
        self.rmcp_bin("rmcp-task-client")
    }
}
