//! The benchmark fixture (`task-server --bench-tools`): two tools that do no work of their own,
//! so that a load driver measures the protocol stack, and limits raised so that 100,000
//! retained tasks with a 10-minute TTL fit.
//!
//! - [`ECHO`]: taskSupport "forbidden"; returns its string argument `text` as one text block.
//! - [`INSTANT_TASK`]: taskSupport "optional"; completes at once with the text [`INSTANT_TEXT`].

use serde::Deserialize;
use serde_json::json;
use taskwire_driver::engine::{Config, TaskSupport, Tool};
use taskwire_driver::{CallToolResult, NoArgs, Server};

/// The echo tool's name.
pub const ECHO: &str = "echo";
/// The instant task tool's name.
pub const INSTANT_TASK: &str = "instant_task";
/// What `instant_task` returns.
pub const INSTANT_TEXT: &str = "done";
/// Most tasks held at once with the bench tools: the 100,000 retained tasks of the largest
/// workload, `demo-task`, and room to spare (the defaults are 100,000 in all and 10,000 per
/// requestor).
pub const MAX_TASKS: usize = 200_000;
/// The retention the benchmark asks for (10 minutes); the default `max_ttl_ms` (24 h) allows it.
pub const BENCH_TTL_MS: u64 = 600_000;

/// Raises the task caps (in all, and per requestor) to [`MAX_TASKS`]. The other limits already
/// fit: TTLs are clamped to 24 h, and `max_pending_requests` (4096) is far above the
/// benchmark's 64 calls in flight.
pub fn raise_limits(config: &mut Config) {
    config.tasks.max_tasks = MAX_TASKS;
    config.tasks.max_tasks_per_owner = MAX_TASKS;
}

/// `server` with [`ECHO`] and [`INSTANT_TASK`] added.
pub fn add_tools(server: Server) -> Server {
    let echo = Tool::new(ECHO, TaskSupport::Forbidden)
        .with_description("Returns its `text` argument as one text block.")
        .with_input_schema(json!({
            "type": "object",
            "properties": { "text": { "type": "string" } },
            "required": ["text"]
        }));
    let instant = Tool::new(INSTANT_TASK, TaskSupport::Optional)
        .with_description("Completes at once with the text \"done\".");
    server
        .tool(echo, |_, args: EchoArgs| async move {
            Ok(CallToolResult::text(args.text))
        })
        .tool(instant, |_, _: NoArgs| async {
            Ok(CallToolResult::text(INSTANT_TEXT))
        })
}

/// `echo`'s arguments: a wrong or missing `text` is a -32602 answer before the tool runs.
#[derive(Deserialize)]
struct EchoArgs {
    text: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_fit_100k_retained_tasks_with_a_ten_minute_ttl() {
        let mut config = Config::new("t", "0");
        raise_limits(&mut config);
        assert!(config.tasks.max_tasks > 100_001, "100k tasks and demo-task");
        assert!(
            config.tasks.max_tasks_per_owner > 100_001,
            "all from one requestor"
        );
        assert!(
            config.tasks.enabled && config.tasks.list,
            "tasks/list is served"
        );
        assert!(config
            .tasks
            .max_ttl_ms
            .is_none_or(|max| max >= BENCH_TTL_MS));
        assert!(config.tasks.min_ttl_ms <= BENCH_TTL_MS);
        assert!(
            config.limits.max_pending_requests >= 64,
            "64 calls in flight"
        );
    }
}
