//! What our demo `task-client` printed, parsed: lines like
//! `[ 1.003s] status: working - 处理步骤 1...` and `[ 3.004s] result: 任务完成！`.

use serde_json::{json, Value};
use taskwire_demo::tools::DONE_MESSAGE;

use super::Run;

/// The seed's status messages, in order.
pub const STEPS: [&str; 3] = ["开始执行...", "处理步骤 1...", "处理步骤 2..."];
/// The seed's result text.
pub const RESULT: &str = "任务完成！";

/// What a peer client printed of our `task-server`'s `long_running_task`: its task views
/// (`views`, each with `status` and `message`) `working`, with no message, one of the seed's
/// steps or, just before the end, the demo's closing message; the last `completed` with the
/// closing message; and its `result` event, the seed's text with no tool error.
pub fn assert_ran_to_completion(out: &Run, views: &[Value]) {
    let (last, before) = views
        .split_last()
        .unwrap_or_else(|| panic!("no task view\n{out}"));
    assert_eq!(
        (&last["status"], &last["message"]),
        (&json!("completed"), &json!(DONE_MESSAGE)),
        "{out}"
    );
    for view in before {
        assert_eq!(view["status"], "working", "{out}");
        let message = view["message"].as_str().unwrap_or_default();
        assert!(
            message.is_empty() || STEPS.contains(&message) || message == DONE_MESSAGE,
            "{out}"
        );
    }
    let result = out.event("result");
    assert_eq!(
        (&result["text"], &result["isError"]),
        (&json!(RESULT), &json!(false)),
        "{out}"
    );
}

/// The steps of one `task-client` run.
#[derive(Debug, Default)]
pub struct DemoClient {
    /// `connected to NAME VERSION (protocol V)`: the text after "connected to ".
    pub connected: Option<String>,
    /// `tools: [...]` as printed.
    pub tools: Option<String>,
    /// The task id from `task created: ID`.
    pub task: Option<String>,
    /// Every `status: S - M` line: (S, M).
    pub statuses: Vec<(String, String)>,
    /// The text of `result: T` (or `result (error): T`).
    pub result: Option<String>,
}

impl DemoClient {
    /// Parses the stdout of a `task-client` run.
    pub fn parse(run: &Run) -> DemoClient {
        let mut out = DemoClient::default();
        for line in run.stdout.lines() {
            let Some((_, text)) = line.split_once("] ") else {
                continue;
            };
            if let Some(rest) = text.strip_prefix("connected to ") {
                out.connected = Some(rest.to_owned());
            } else if let Some(rest) = text.strip_prefix("tools: ") {
                out.tools = Some(rest.to_owned());
            } else if let Some(rest) = text.strip_prefix("task created: ") {
                out.task = Some(rest.to_owned());
            } else if let Some(rest) = text.strip_prefix("status: ") {
                let (status, message) = rest.split_once(" - ").unwrap_or((rest, ""));
                out.statuses
                    .push((status.trim().to_owned(), message.trim().to_owned()));
            } else if let Some(rest) = text.strip_prefix("result: ") {
                out.result = Some(rest.to_owned());
            }
        }
        out
    }

    /// The distinct non-empty messages, in order of first appearance.
    pub fn messages(&self) -> Vec<&str> {
        let mut seen: Vec<&str> = Vec::new();
        for (_, m) in &self.statuses {
            if !m.is_empty() && !seen.contains(&m.as_str()) {
                seen.push(m);
            }
        }
        seen
    }

    /// The statuses in order, consecutive repeats collapsed.
    pub fn status_path(&self) -> Vec<&str> {
        let mut path: Vec<&str> = Vec::new();
        for (s, _) in &self.statuses {
            if path.last() != Some(&s.as_str()) {
                path.push(s);
            }
        }
        path
    }
}

/// `cargo build`, without the variables cargo gave this test process to describe its own
/// package (`CARGO_PKG_*`, `CARGO_MANIFEST_*`, `CARGO_CRATE_NAME`, `CARGO_PRIMARY_PACKAGE`):
/// ring's build script reruns when `CARGO_PKG_NAME`, `CARGO_MANIFEST_DIR` or the version ones
/// change, so a nested build that kept them rebuilt ring and everything above it (rustls,
/// reqwest, the OAuth and HTTP adapters, the demo: about 18 s on 2 cores), and the next
/// `cargo test` rebuilt them back.
fn cargo_build() -> super::Argv {
    let mut env = super::Argv::new("env");
    for (name, _) in std::env::vars_os() {
        let name = name.to_string_lossy();
        let ours = name.starts_with("CARGO_PKG_")
            || name.starts_with("CARGO_MANIFEST_")
            || name == "CARGO_CRATE_NAME"
            || name == "CARGO_PRIMARY_PACKAGE";
        if ours {
            env = env.args(&["-u", &name]);
        }
    }
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    env.arg(cargo).arg("build")
}

/// The path of a demo binary (`task-server`, `task-client`, `conformance-server`) or of the
/// command line (`taskwire`), built once per test process with `cargo build -p taskwire-demo
/// -p taskwire-cli` (the dev profile, whose dependencies the test build already compiled);
/// panics with cargo's output if the build fails. Measurements
/// use [`release_binary`] instead.
pub fn binary(name: &str) -> std::path::PathBuf {
    use std::sync::OnceLock;
    static BUILT: OnceLock<Result<std::path::PathBuf, String>> = OnceLock::new();
    let dir = BUILT.get_or_init(|| {
        let target = super::target_dir();
        let build = super::run(
            &cargo_build()
                .args(&["-p", "taskwire-demo", "-p", "taskwire-cli"])
                .arg("--target-dir")
                .arg(&target),
            std::time::Duration::from_secs(900),
        );
        match build.code {
            Some(0) => Ok(target.join("debug")),
            _ => Err(format!(
                "cannot build the demo binaries and taskwire\n{build}"
            )),
        }
    });
    match dir {
        Ok(dir) => dir.join(format!("{name}{}", std::env::consts::EXE_SUFFIX)),
        Err(why) => panic!("{why}"),
    }
}

/// The path of `bin` of `package` built with `cargo build --release` (for the benchmarks).
pub fn release_binary(package: &str, bin: &str) -> Result<std::path::PathBuf, String> {
    let target = super::target_dir();
    let build = super::run(
        &cargo_build()
            .args(&["--release", "-p", package, "--bin", bin])
            .arg("--target-dir")
            .arg(&target),
        std::time::Duration::from_secs(900),
    );
    if build.code != Some(0) {
        return Err(format!("cannot build {bin}\n{build}"));
    }
    let name = format!("{bin}{}", std::env::consts::EXE_SUFFIX);
    Ok(target.join("release").join(name))
}
