//! `@modelcontextprotocol/ext-tasks` 0.2.2 on the TypeScript SDK v2 client
//! (`tests/peers/ext_tasks_client.mjs`): the official requester of both task eras.

use super::{Argv, Peers};

impl Peers {
    /// `ext_tasks_client.mjs MODE --era ERA [ARGS] -- SERVER...`: `run` (a task to its result,
    /// another cancelled), `start` (a task handed off: its serialized reference printed) or
    /// `resume` (`--ref JSON`: `resumeTask` in this new process) against a stdio server.
    pub fn ext_tasks_client(&self, mode: &str, era: &str, args: &[&str], server: &Argv) -> Argv {
        self.node_script("ext_tasks_client.mjs")
            .args(&[mode, "--era", era])
            .args(args)
            .arg("--")
            .extend(server)
    }

    /// The same against a Streamable HTTP endpoint.
    pub fn ext_tasks_client_url(&self, mode: &str, era: &str, args: &[&str], url: &str) -> Argv {
        self.node_script("ext_tasks_client.mjs")
            .args(&[mode, "--era", era])
            .args(args)
            .args(&["--url", url])
    }
}
