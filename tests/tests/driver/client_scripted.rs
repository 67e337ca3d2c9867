//! Issue 12, "Client: correct against any compliant server": the demo `task-client` and the
//! library client against `scripted-server`, a server written without the engine. Each
//! scenario is checked by the client's outcome and by the server's log: whether `params.task`
//! went out, when each poll came, and what was answered before what.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::Value;
use taskwire_driver::engine::PlainReason;
use taskwire_driver::{code, Error};
use taskwire_tests::peers::Run;
use taskwire_tests::procs;
use taskwire_tests::scripted::clients::{self, Seen};
use taskwire_tests::scripted::{Log, DONE_TEXT, ELICIT_ID, PLAIN_TEXT, TASK_ID, TOOL};

const RELATED_TASK: &str = "io.modelcontextprotocol/related-task";
/// Timer and pipe jitter allowed below a poll interval.
const TOLERANCE_MS: u64 = 10;
/// The client's `PollConfig` defaults: the fastest it polls, and its pace when the server
/// suggests none.
const MIN_POLL_MS: u64 = 100;
const DEFAULT_POLL_MS: u64 = 1_000;
/// The input scenarios' result once the client accepted with `confirm: true`.
const INPUT_TEXT: &str = r#"input: accept {"confirm":true}"#;
/// A client that notices a dead server or a timeout ends within this.
const PROMPTLY: Duration = Duration::from_secs(5);

fn server() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_scripted-server"))
}

fn cli(scenario: &str) -> (Run, Log) {
    clients::cli(&server(), scenario, &[])
}

fn library(scenario: &str) -> (Seen, Log) {
    clients::library(&server(), scenario, None)
}

/// The texts of `task-client`'s stamped lines.
fn lines(run: &Run) -> Vec<&str> {
    run.stdout.lines().map(|l| procs::stamped(l).1).collect()
}

fn assert_line(run: &Run, wanted: &str) {
    assert!(lines(run).contains(&wanted), "no line {wanted:?}\n{run}");
}

/// The status a logged message shows: a `tasks/get` answer, a `CreateTaskResult` or a
/// status notification.
fn status(msg: &Value) -> Option<&str> {
    let shown = [
        &msg["result"]["status"],
        &msg["result"]["task"]["status"],
        &msg["params"]["status"],
    ];
    shown.into_iter().find_map(Value::as_str)
}

/// Where (index, entry) the server first showed `wanted`.
fn shown(log: &Log, wanted: &str) -> Option<(usize, u64)> {
    log.0
        .iter()
        .enumerate()
        .find(|(_, e)| e.dir == "out" && status(&e.msg) == Some(wanted))
        .map(|(i, e)| (i, e.t))
}

// ---- input_required ---------------------------------------------------------------------

/// The input_required flow as the server saw it: the client declared elicitation, sent one
/// `tasks/result` after `input_required` showed (by a poll, or by a notification with no
/// poll at all), answered the elicitation with the related-task meta, and had its result
/// before any poll showed the task completed.
fn input_logged(log: &Log, polled: bool) {
    let init = log.only("initialize");
    assert!(
        init.msg["params"]["capabilities"]["elicitation"].is_object(),
        "{log}"
    );
    let (at, t) = shown(log, "input_required").expect("input_required was shown");
    assert_eq!(
        log.0[at].msg.get("method").is_none(),
        polled,
        "shown by a poll? {log}"
    );
    if !polled {
        assert!(log.requests("tasks/get").is_empty(), "polled anyway\n{log}");
    }
    let result = log.only("tasks/result");
    assert!(
        result.t >= t,
        "tasks/result before input_required showed\n{log}"
    );
    let reply = log
        .reply_to(ELICIT_ID)
        .expect("the elicitation was answered");
    assert_eq!(reply.msg["result"]["action"], "accept", "{log}");
    assert_eq!(
        reply.msg["result"]["_meta"][RELATED_TASK]["taskId"], TASK_ID,
        "{log}"
    );
    let answered = log.0.iter().position(|e| {
        e.dir == "out" && e.msg.get("method").is_none() && e.msg["id"] == result.msg["id"]
    });
    let answered = answered.expect("tasks/result was answered");
    let polled_done = log.0.iter().position(|e| {
        e.dir == "out" && e.msg.get("method").is_none() && e.msg["result"]["status"] == "completed"
    });
    assert!(polled_done.is_none_or(|p| p > answered), "{log}");
}

fn input_cli(scenario: &str, polled: bool) {
    let (run, log) = cli(scenario);
    run.assert_exit(0);
    assert_line(&run, "status: input_required - confirm?");
    assert_line(&run, "input requested: Proceed? - accept");
    assert_line(&run, &format!("result: {INPUT_TEXT}"));
    input_logged(&log, polled);
}

fn input_library(scenario: &str, polled: bool) {
    let (seen, log) = library(scenario);
    assert_eq!(seen.text(&log), INPUT_TEXT);
    // Notified, the task shows `working` again before the result; a poll never sees that.
    let mut expected = vec!["input_required: confirm?".to_owned()];
    if !polled {
        expected.push("working: input received".into());
    }
    expected.push(format!("result: {INPUT_TEXT}"));
    assert_eq!(seen.updates, expected, "{log}");
    assert_eq!(seen.asked.len(), 1, "{seen:?}");
    assert_eq!(seen.asked[0]["message"], "Proceed?");
    assert_eq!(seen.asked[0]["_meta"][RELATED_TASK]["taskId"], TASK_ID);
    input_logged(&log, polled);
}

#[test]
fn input_required_polled_cli() {
    input_cli("input-polled", true);
}

#[test]
fn input_required_polled_library() {
    input_library("input-polled", true);
}

#[test]
fn input_required_notified_cli() {
    input_cli("input-notified", false);
}

#[test]
fn input_required_notified_library() {
    input_library("input-notified", false);
}

// ---- plain calls ------------------------------------------------------------------------

/// One `tools/call`, without `params.task`, and nothing to follow.
fn plain_logged(log: &Log) {
    let call = log.only("tools/call");
    assert!(
        call.msg["params"].get("task").is_none(),
        "params.task sent\n{log}"
    );
    assert!(log.requests("tasks/get").is_empty(), "{log}");
    assert!(log.requests("tasks/result").is_empty(), "{log}");
}

/// A task-augmented `tools/call` refused with -32601, then the same call plainly.
fn fallback_logged(log: &Log) {
    let calls = log.requests("tools/call");
    assert_eq!(calls.len(), 2, "{log}");
    assert!(calls[0].msg["params"]["task"].is_object(), "{log}");
    let refusal = log.answer_to(&calls[0].msg["id"]).expect("answered");
    assert_eq!(
        refusal.msg["error"]["code"],
        code::METHOD_NOT_FOUND,
        "{log}"
    );
    assert!(calls[1].msg["params"].get("task").is_none(), "{log}");
    assert_eq!(calls[1].msg["params"]["name"], TOOL);
    assert!(log.requests("tasks/get").is_empty(), "{log}");
}

fn plain_cli(scenario: &str, reason: &str, check: fn(&Log)) {
    let (run, log) = cli(scenario);
    run.assert_exit(0);
    assert_line(&run, &format!("calling it without a task: {reason}"));
    assert_line(&run, &format!("result: {PLAIN_TEXT}"));
    check(&log);
}

fn plain_library(scenario: &str, reason: PlainReason, check: fn(&Log)) {
    let (seen, log) = library(scenario);
    assert_eq!(seen.plain, Some(reason), "{log}");
    assert!(seen.task.is_none());
    assert_eq!(seen.text(&log), PLAIN_TEXT);
    check(&log);
}

const FORBIDS: &str = "the tool does not run as a task";
const REFUSED: &str = "the server refused a task for it";

#[test]
fn forbidden_cli() {
    plain_cli("forbidden", FORBIDS, plain_logged);
}

#[test]
fn forbidden_library() {
    plain_library("forbidden", PlainReason::ToolForbidsTasks, plain_logged);
}

#[test]
fn no_execution_cli() {
    plain_cli("no-execution", FORBIDS, plain_logged);
}

#[test]
fn no_execution_library() {
    plain_library("no-execution", PlainReason::ToolForbidsTasks, plain_logged);
}

#[test]
fn no_task_capability_cli() {
    plain_cli(
        "no-task-capability",
        "the server offers no tool tasks",
        plain_logged,
    );
}

#[test]
fn no_task_capability_library() {
    plain_library(
        "no-task-capability",
        PlainReason::NoTaskCapability,
        plain_logged,
    );
}

#[test]
fn unknown_support_falls_back_cli() {
    plain_cli("unknown-support", REFUSED, fallback_logged);
}

#[test]
fn unknown_support_falls_back_library() {
    plain_library("unknown-support", PlainReason::TaskRefused, fallback_logged);
}

#[test]
fn numeric_support_falls_back_cli() {
    plain_cli("numeric-support", REFUSED, fallback_logged);
}

#[test]
fn numeric_support_falls_back_library() {
    plain_library("numeric-support", PlainReason::TaskRefused, fallback_logged);
}

// ---- poll pacing ------------------------------------------------------------------------

/// Polls of a task that completes `done_ms` after creation, paced at `interval`: none sooner
/// than `interval` after the call or the poll before, about as many as fit (not a busy loop,
/// not much slower), the last one the first to show it completed; then one `tasks/result`.
fn paced(log: &Log, interval: u64, done_ms: u64) {
    let mut last = log.only("tools/call").t;
    let polls = log.requests("tasks/get");
    for poll in &polls {
        let gap = poll.t - last;
        assert!(
            gap + TOLERANCE_MS >= interval,
            "a poll {gap} ms after the last (interval {interval})\n{log}"
        );
        last = poll.t;
    }
    let (most, fewest) = (done_ms / interval + 1, (done_ms / interval / 2).max(1));
    let n = polls.len() as u64;
    assert!(
        (fewest..=most).contains(&n),
        "{n} polls, not {fewest}..={most}\n{log}"
    );
    let shown: Vec<&str> = polls
        .iter()
        .map(|p| {
            log.answer_to(&p.msg["id"])
                .and_then(|a| status(&a.msg))
                .unwrap_or("-")
        })
        .collect();
    let (done, before) = shown.split_last().expect("polls");
    assert_eq!(*done, "completed", "{log}");
    assert!(before.iter().all(|s| *s == "working"), "{log}");
    assert!(log.only("tasks/result").t >= last, "{log}");
}

fn paced_cli(scenario: &str, interval: u64, done_ms: u64) {
    let (run, log) = cli(scenario);
    run.assert_exit(0);
    assert_line(&run, &format!("result: {DONE_TEXT}"));
    paced(&log, interval, done_ms);
}

fn paced_library(scenario: &str, interval: u64, done_ms: u64) {
    let (seen, log) = library(scenario);
    assert_eq!(seen.text(&log), DONE_TEXT);
    assert_eq!(
        seen.updates,
        ["completed: ", &format!("result: {DONE_TEXT}")],
        "{log}"
    );
    paced(&log, interval, done_ms);
}

#[test]
fn poll_interval_0_uses_the_minimum_cli() {
    paced_cli("poll-0", MIN_POLL_MS, 1_000);
}

#[test]
fn poll_interval_0_uses_the_minimum_library() {
    paced_library("poll-0", MIN_POLL_MS, 1_000);
}

#[test]
fn poll_interval_absent_uses_the_default_cli() {
    paced_cli("poll-absent", DEFAULT_POLL_MS, 1_500);
}

#[test]
fn poll_interval_absent_uses_the_default_library() {
    paced_library("poll-absent", DEFAULT_POLL_MS, 1_500);
}

#[test]
fn poll_interval_300_is_honoured_cli() {
    paced_cli("poll-300", 300, 1_000);
}

#[test]
fn poll_interval_300_is_honoured_library() {
    paced_library("poll-300", 300, 1_000);
}

/// `pollInterval` 40 000 and a completed notification after 1 s: no poll at all (the first
/// would be due 40 s after creation), the result fetched right after the notification.
fn slow_polls_logged(log: &Log) {
    assert!(log.requests("tasks/get").is_empty(), "{log}");
    let (_, done) = shown(log, "completed").expect("completed was notified");
    let fetched = log.only("tasks/result").t;
    assert!(
        (done..done + 1_000).contains(&fetched),
        "fetched at {fetched} ms\n{log}"
    );
}

#[test]
fn poll_interval_40000_completes_on_notification_cli() {
    let (run, log) = cli("poll-40000");
    run.assert_exit(0);
    assert_line(&run, "status: completed - ");
    assert_line(&run, &format!("result: {DONE_TEXT}"));
    assert!(run.elapsed < PROMPTLY, "{run}");
    slow_polls_logged(&log);
}

#[test]
fn poll_interval_40000_completes_on_notification_library() {
    let (seen, log) = library("poll-40000");
    assert_eq!(seen.text(&log), DONE_TEXT);
    assert!(seen.elapsed < PROMPTLY, "{seen:?}");
    slow_polls_logged(&log);
}

// ---- notifications only -----------------------------------------------------------------

/// `tasks/get` never answered: at most the one poll in flight; one `tasks/result`.
fn notified_logged(log: &Log) {
    assert!(log.requests("tasks/get").len() <= 1, "{log}");
    log.only("tasks/result");
}

#[test]
fn status_notifications_only_cli() {
    let (run, log) = cli("notify-only");
    run.assert_exit(0);
    for line in [
        "status: working - step 1",
        "status: working - step 2",
        "status: completed - step 2",
    ] {
        assert_line(&run, line);
    }
    assert_line(&run, &format!("result: {DONE_TEXT}"));
    notified_logged(&log);
}

#[test]
fn status_notifications_only_library() {
    let (seen, log) = library("notify-only");
    let expected = [
        "working: step 1",
        "working: step 2",
        "completed: step 2",
        "result: task done",
    ];
    assert_eq!(seen.updates, expected, "{log}");
    notified_logged(&log);
}

// ---- a result that never comes, malformed polls -----------------------------------------

/// The one `tasks/result`, never answered, cancelled by the client when it gave up.
fn abandoned_logged(log: &Log) {
    let result = log.only("tasks/result");
    assert!(log.answer_to(&result.msg["id"]).is_none(), "{log}");
    let cancels: Vec<_> = log
        .0
        .iter()
        .filter(|e| e.dir == "in" && e.msg["method"] == "notifications/cancelled")
        .collect();
    assert_eq!(cancels.len(), 1, "{log}");
    assert_eq!(
        cancels[0].msg["params"]["requestId"], result.msg["id"],
        "{log}"
    );
    // At about the timeout (500 ms after it was sent), not at once.
    assert!(cancels[0].t >= result.t + 250, "{log}");
}

const NO_RESULT: &str =
    "Task task-1 is completed, but the server did not answer tasks/result within 500 ms";

#[test]
fn tasks_result_never_answered_cli() {
    let (run, log) = clients::cli(&server(), "result-never", &["--request-timeout-ms", "500"]);
    run.assert_exit(1);
    assert_line(
        &run,
        &format!("task ended with status completed: {NO_RESULT} (-32001)"),
    );
    assert!(run.elapsed < PROMPTLY, "{run}");
    abandoned_logged(&log);
}

#[test]
fn tasks_result_never_answered_library() {
    let (seen, log) = clients::library(&server(), "result-never", Some(500));
    assert_eq!(seen.failure(&log), &Error::Timeout(NO_RESULT.into()));
    assert!(seen.elapsed < PROMPTLY, "{seen:?}");
    abandoned_logged(&log);
}

const MALFORMED: &str =
    "The server sent 3 malformed answers in a row to tasks/get for task task-1; giving up on it";

/// Exactly three polls (the engine's limit), nothing fetched.
fn malformed_logged(log: &Log) {
    assert_eq!(log.requests("tasks/get").len(), 3, "{log}");
    assert!(log.requests("tasks/result").is_empty(), "{log}");
}

fn malformed_cli(scenario: &str) {
    let (run, log) = cli(scenario);
    run.assert_exit(1);
    assert_line(
        &run,
        &format!("task ended with status working: {MALFORMED} (-32603)"),
    );
    malformed_logged(&log);
}

fn malformed_library(scenario: &str) {
    let (seen, log) = library(scenario);
    let error = seen.error(&log);
    assert_eq!(
        (error.code, error.message.as_str()),
        (code::INTERNAL_ERROR, MALFORMED)
    );
    malformed_logged(&log);
}

#[test]
fn malformed_polls_without_status_cli() {
    malformed_cli("malformed-no-status");
}

#[test]
fn malformed_polls_without_status_library() {
    malformed_library("malformed-no-status");
}

#[test]
fn malformed_polls_with_numeric_status_cli() {
    malformed_cli("malformed-status-number");
}

#[test]
fn malformed_polls_with_numeric_status_library() {
    malformed_library("malformed-status-number");
}

// ---- the server exits -------------------------------------------------------------------

/// `task-client` against a server that exits: promptly, non-zero, saying the connection
/// closed (and, once a task existed, that it did not finish).
fn exit_cli(scenario: &str, task: bool) -> Log {
    let (run, log) = cli(scenario);
    assert!(
        log.exit().is_some(),
        "the server did not exit by itself\n{log}"
    );
    run.assert_exit(1);
    assert!(run.elapsed < PROMPTLY, "{run}");
    let said = if task {
        lines(&run)
            .iter()
            .any(|l| l.starts_with("task ended with status") && l.contains("Connection closed"))
    } else {
        run.stderr.contains("task-client: Connection closed")
    };
    assert!(said, "{run}");
    log
}

/// The library client against a server that exits: the step `failed` (or, once the task
/// exists, the call's outcome) fails with "Connection closed", promptly.
fn exit_library(scenario: &str, failed: Option<&str>) -> Log {
    let (seen, log) = library(scenario);
    assert!(
        log.exit().is_some(),
        "the server did not exit by itself\n{log}"
    );
    match failed {
        Some(step) => {
            let (at, error) = seen
                .failed
                .as_ref()
                .unwrap_or_else(|| panic!("{seen:?}\n{log}"));
            assert_eq!(*at, step, "{log}");
            assert_eq!(error.code, code::CONNECTION_CLOSED, "{error}");
        }
        None => {
            assert!(
                seen.failed.is_none() && seen.task.is_some(),
                "{seen:?}\n{log}"
            );
            assert_eq!(seen.failure(&log), &Error::Closed, "{log}");
        }
    }
    assert!(seen.elapsed < PROMPTLY, "{seen:?}");
    log
}

#[test]
fn server_exits_after_initialize_cli() {
    exit_cli("exit-after-initialize", false);
}

#[test]
fn server_exits_after_initialize_library() {
    exit_library("exit-after-initialize", Some("tools/list"));
}

#[test]
fn server_exits_after_tools_list_cli() {
    exit_cli("exit-after-tools-list", false);
}

#[test]
fn server_exits_after_tools_list_library() {
    exit_library("exit-after-tools-list", Some("tools/call"));
}

#[test]
fn server_exits_after_creating_the_task_cli() {
    exit_cli("exit-after-create", true);
}

#[test]
fn server_exits_after_creating_the_task_library() {
    exit_library("exit-after-create", None);
}

#[test]
fn server_exits_while_polled_cli() {
    let log = exit_cli("exit-while-polling", true);
    assert_eq!(log.requests("tasks/get").len(), 2, "{log}");
}

#[test]
fn server_exits_while_polled_library() {
    let log = exit_library("exit-while-polling", None);
    assert_eq!(log.requests("tasks/get").len(), 2, "{log}");
}

#[test]
fn server_exits_holding_tasks_result_cli() {
    let log = exit_cli("exit-while-result-held", true);
    log.only("tasks/result");
}

#[test]
fn server_exits_holding_tasks_result_library() {
    let log = exit_library("exit-while-result-held", None);
    log.only("tasks/result");
}
