//! The scenarios `scripted-server` can play: each a row of knobs over one shared behaviour
//! (see `peer`), so that each row shows at a glance what is unusual about it.

/// How the server answers `tasks/get`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Gets {
    /// With the task as it is.
    Answer,
    /// Never.
    Ignore,
    /// With this JSON result (not a valid task).
    Malformed(&'static str),
}

/// Where the server exits (without a word).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    /// Right after answering `initialize`.
    AfterInitialize,
    /// Right after answering `tools/list`.
    AfterToolsList,
    /// Right after answering the `tools/call` that created the task.
    AfterCreate,
    /// On receiving the n-th `tasks/get` (unanswered).
    AtPoll(u32),
    /// 200 ms after receiving `tasks/result`, still holding it.
    WhileResultHeld,
}

/// A status change, `at_ms` after the task was created.
#[derive(Clone, Copy, Debug)]
pub struct Step {
    /// When, in ms after creation.
    pub at_ms: u64,
    /// The new status.
    pub status: &'static str,
    /// The new `statusMessage`.
    pub message: Option<&'static str>,
}

/// One scenario.
#[derive(Clone, Copy, Debug)]
pub struct Scenario {
    /// Its name on the command line.
    pub name: &'static str,
    /// Declares `capabilities.tasks.requests.tools.call`.
    pub tasks: bool,
    /// The tool's `execution` member, as JSON text; `None` leaves it out.
    pub execution: Option<&'static str>,
    /// The task's `pollInterval`; `None` leaves it out.
    pub poll_interval: Option<u64>,
    /// Status changes after creation (the task starts `working`).
    pub timeline: &'static [Step],
    /// Sends `notifications/tasks/status` on every change.
    pub notify: bool,
    /// Asks for input (`elicitation/create`) when `tasks/result` comes while the task is
    /// `input_required`; the answer completes the task.
    pub elicit: bool,
    /// How `tasks/get` is answered.
    pub gets: Gets,
    /// Answers `tasks/result` once the task is terminal (else never).
    pub results: bool,
    /// Where it exits, if it does.
    pub exit: Option<Exit>,
}

const fn step(at_ms: u64, status: &'static str, message: Option<&'static str>) -> Step {
    Step {
        at_ms,
        status,
        message,
    }
}

const OPTIONAL: Option<&str> = Some(r#"{"taskSupport":"optional"}"#);
const INPUT: &[Step] = &[step(50, "input_required", Some("confirm?"))];
const DONE_SOON: &[Step] = &[step(50, "completed", None)];
const NO_STATUS: &str = r#"{"taskId":"task-1","createdAt":"2025-11-25T00:00:00.000Z",
    "lastUpdatedAt":"2025-11-25T00:00:00.000Z","ttl":60000}"#;
const NUMERIC_STATUS: &str = r#"{"taskId":"task-1","status":5,
    "createdAt":"2025-11-25T00:00:00.000Z","lastUpdatedAt":"2025-11-25T00:00:00.000Z"}"#;

/// A well-behaved task server: the row every scenario starts from.
const BASE: Scenario = Scenario {
    name: "",
    tasks: true,
    execution: OPTIONAL,
    poll_interval: Some(100),
    timeline: &[],
    notify: false,
    elicit: false,
    gets: Gets::Answer,
    results: true,
    exit: None,
};

/// Every scenario (one row each: kept as a table by hand).
#[rustfmt::skip]
pub const SCENARIOS: &[Scenario] = &[
    // input_required seen by a poll, the answer to the held tasks/result completes the call.
    Scenario { name: "input-polled", timeline: INPUT, elicit: true, ..BASE },
    // The same, every status change notified and polls too slow to matter.
    Scenario { name: "input-notified", poll_interval: Some(30_000), timeline: INPUT,
        notify: true, elicit: true, ..BASE },
    // The tool must be called plainly.
    Scenario { name: "forbidden", execution: Some(r#"{"taskSupport":"forbidden"}"#), ..BASE },
    Scenario { name: "no-execution", execution: None, ..BASE },
    Scenario { name: "no-task-capability", tasks: false, ..BASE },
    // Support the client cannot read: a task is refused with -32601.
    Scenario { name: "unknown-support", execution: Some(r#"{"taskSupport":"sometimes"}"#),
        ..BASE },
    Scenario { name: "numeric-support", execution: Some(r#"{"taskSupport":1}"#), ..BASE },
    // pollInterval pacing; the task completes by time.
    Scenario { name: "poll-0", poll_interval: Some(0),
        timeline: &[step(1_000, "completed", None)], ..BASE },
    Scenario { name: "poll-absent", poll_interval: None,
        timeline: &[step(1_500, "completed", None)], ..BASE },
    Scenario { name: "poll-300", poll_interval: Some(300),
        timeline: &[step(1_000, "completed", None)], ..BASE },
    Scenario { name: "poll-40000", poll_interval: Some(40_000),
        timeline: &[step(1_000, "completed", None)], notify: true, ..BASE },
    // Progress only through notifications; tasks/get is never answered.
    Scenario { name: "notify-only", poll_interval: Some(200), notify: true, gets: Gets::Ignore,
        timeline: &[step(200, "working", Some("step 1")), step(400, "working", Some("step 2")),
            step(600, "completed", Some("step 2"))], ..BASE },
    Scenario { name: "result-never", timeline: DONE_SOON, results: false, ..BASE },
    Scenario { name: "malformed-no-status", gets: Gets::Malformed(NO_STATUS), ..BASE },
    Scenario { name: "malformed-status-number", gets: Gets::Malformed(NUMERIC_STATUS), ..BASE },
    // The server goes away at each point of the flow.
    Scenario { name: "exit-after-initialize", exit: Some(Exit::AfterInitialize), ..BASE },
    Scenario { name: "exit-after-tools-list", exit: Some(Exit::AfterToolsList), ..BASE },
    Scenario { name: "exit-after-create", exit: Some(Exit::AfterCreate), ..BASE },
    Scenario { name: "exit-while-polling", exit: Some(Exit::AtPoll(2)), ..BASE },
    Scenario { name: "exit-while-result-held", timeline: INPUT,
        exit: Some(Exit::WhileResultHeld), ..BASE },
];

impl Scenario {
    /// The scenario called `name`.
    pub fn named(name: &str) -> Option<&'static Scenario> {
        SCENARIOS.iter().find(|s| s.name == name)
    }

    /// Whether a task-augmented call of the tool is accepted: tasks declared, and the tool's
    /// `execution.taskSupport` is `"optional"` or `"required"`.
    pub fn accepts_tasks(&self) -> bool {
        let support = self
            .execution
            .and_then(|e| serde_json::from_str::<serde_json::Value>(e).ok())
            .and_then(|e| e["taskSupport"].as_str().map(str::to_owned));
        self.tasks && matches!(support.as_deref(), Some("optional" | "required"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_rows_parse() {
        for (i, s) in SCENARIOS.iter().enumerate() {
            assert!(
                SCENARIOS[..i].iter().all(|o| o.name != s.name),
                "{}",
                s.name
            );
            if let Some(e) = s.execution {
                serde_json::from_str::<serde_json::Value>(e).expect(s.name);
            }
            if let Gets::Malformed(text) = s.gets {
                serde_json::from_str::<serde_json::Value>(text).expect(s.name);
            }
        }
        let refusing: Vec<&str> = SCENARIOS
            .iter()
            .filter(|s| !s.accepts_tasks())
            .map(|s| s.name)
            .collect();
        assert_eq!(
            refusing,
            [
                "forbidden",
                "no-execution",
                "no-task-capability",
                "unknown-support",
                "numeric-support"
            ]
        );
    }
}
