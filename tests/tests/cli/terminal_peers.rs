//! `taskwire call` in a real terminal (tmux) against the official peers: the live line and
//! the result on the seed's Python server and the TypeScript SDK's (2025-11-25) and rmcp
//! 3.11's (2026-07-28) task servers; server-everything's research task asking in a form
//! mid-task (`input_required`), and its elicitation sent as a task of ours, both answered with
//! keys. Each server's stderr goes to a file, so the screen is taskwire's.

use std::time::Duration;

use taskwire_tests::peers::{self, Argv, Peers};
use taskwire_tests::procs;

use crate::tmux::{shell_line, Tmux};

const LIMIT: Duration = Duration::from_secs(60);

/// `taskwire call ARGS… -- SERVER` in a fresh terminal, the server's stderr in a scratch file.
fn call_in_tmux(p: &Peers, test: &str, args: &[&str], server: &Argv) -> Tmux {
    let server = server.stderr_to(&p.scratch(&format!("{test}.stderr")));
    let line = Argv::new(procs::taskwire())
        .arg("call")
        .args(args)
        .arg("--")
        .extend(&server);
    Tmux::start(test, &shell_line(&line))
}

/// Runs `long_running_task` on `server`: the live line shows a step's message, and the
/// result stays.
fn live_task(test: &str, server: impl FnOnce(&Peers) -> Argv, protocol: &str, step: &str) {
    let Some(p) = peers::ready(test) else {
        return;
    };
    let tmux = call_in_tmux(p, test, &["long_running_task"], &server(p));
    tmux.wait_for(&format!("working · {step}"), LIMIT);
    let screen = tmux.wait_for("EXIT=", LIMIT);
    for line in [
        &format!("(protocol {protocol})"),
        "task created: ",
        "status: completed",
        "result:",
        "任务完成！",
        "EXIT=0",
    ] {
        assert!(screen.contains(line), "no {line:?}:\n{screen}");
    }
}

#[test]
fn the_live_line_on_the_seed_server() {
    live_task(
        "the_live_line_on_the_seed_server",
        Peers::seed_server,
        "2025-11-25",
        "处理步骤 1...",
    );
}

#[test]
fn the_live_line_on_the_typescript_server() {
    live_task(
        "the_live_line_on_the_typescript_server",
        |p| p.ts_server(&["--step-ms", "700"]),
        "2025-11-25",
        "处理步骤 1...",
    );
}

#[test]
fn the_live_line_on_the_rmcp_server() {
    live_task(
        "the_live_line_on_the_rmcp_server",
        |p| p.rmcp_task_server("700"),
        "2026-07-28",
        "处理步骤 1...",
    );
}

/// `simulate-research-query` goes `input_required` and asks which "python" is meant (a
/// choice, on `tasks/result`); the second choice is picked with keys, and the report says so.
#[test]
fn everythings_research_task_asks_mid_task_and_the_form_is_answered_with_keys() {
    let test = "everythings_research_task_asks_mid_task_and_the_form_is_answered_with_keys";
    let Some(p) = peers::ready(test) else {
        return;
    };
    let args = [
        "simulate-research-query",
        "--args",
        r#"{"topic": "python", "ambiguous": true}"#,
    ];
    let tmux = call_in_tmux(p, test, &args, &p.everything());
    tmux.wait_for("Fill in the form", LIMIT);
    tmux.keys(&["Enter"]);
    tmux.wait_for("Python snake species", LIMIT);
    tmux.keys(&["Down", "Enter"]);
    let screen = tmux.wait_for("EXIT=", LIMIT);
    for line in [
        "status: input_required",
        "input requested: The research query \"python\"",
        "answered: accept",
        "status: completed",
        "Research Report: python (snake)",
        "EXIT=0",
    ] {
        assert!(screen.contains(line), "no {line:?}:\n{screen}");
    }
}

/// `trigger-elicitation-request-async` asks us for a form as a task of ours (the server polls
/// it): a text, a yes/no and a choice, typed in the terminal, reach the server.
#[test]
fn everythings_elicitation_task_is_a_form_filled_in_with_keys() {
    let test = "everythings_elicitation_task_is_a_form_filled_in_with_keys";
    let Some(p) = peers::ready(test) else {
        return;
    };
    let tmux = call_in_tmux(
        p,
        test,
        &["trigger-elicitation-request-async"],
        &p.everything(),
    );
    tmux.wait_for("Fill in the form", LIMIT);
    tmux.keys(&["Enter"]);
    // Required fields come first: the name, then the optional yes/no and colour.
    tmux.wait_for("Your Name", LIMIT);
    tmux.keys(&["-l", "taskwire"]);
    tmux.keys(&["Enter"]);
    tmux.wait_for("Terms Agreement", LIMIT);
    tmux.keys(&["y", "Enter"]);
    tmux.wait_for("Favorite Color", LIMIT);
    tmux.keys(&["Down", "Down", "Enter"]);
    let screen = tmux.wait_for("EXIT=", LIMIT);
    for line in [
        "answered: accept",
        "\"name\": \"taskwire\"",
        "\"agreeToTerms\": true",
        "\"favoriteColor\": \"Green\"",
        "EXIT=0",
    ] {
        assert!(screen.contains(line), "no {line:?}:\n{screen}");
    }
}
