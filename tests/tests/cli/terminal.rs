//! `taskwire call` in a real terminal (tmux): the live line, the scroll-back, Ctrl-C, a form.

use std::time::Duration;

use taskwire_demo::tools::STEPS;
use taskwire_tests::procs;

use crate::tmux::{shell, Tmux};

fn call_line(tool_and_args: &str, step_ms: u64, server_args: &str) -> String {
    format!(
        "{} call {tool_and_args} -- {} --step-ms {step_ms} {server_args}",
        shell(&procs::taskwire()),
        shell(&procs::task_server()),
    )
}

const LIMIT: Duration = Duration::from_secs(30);

#[test]
fn the_live_line_follows_the_task_and_the_result_stays() {
    let tmux = Tmux::start("live", &call_line("long_running_task", 700, ""));
    // The live line shows each step's message as it comes (the spinner and elapsed time with
    // it), and the status changes stay above it with their times.
    for step in STEPS {
        let screen = tmux.wait_for(&format!("working · {step}"), LIMIT);
        assert!(screen.contains('['), "the elapsed time: {screen}");
    }
    let screen = tmux.wait_for("EXIT=0", LIMIT);
    for line in [
        "connected to task-server",
        "task created: ",
        "status: working - 处理步骤 2...",
        "status: completed - 处理完成",
        "result:",
        "任务完成！",
    ] {
        assert!(screen.contains(line), "no {line:?}:\n{screen}");
    }
    assert!(
        !screen.contains("working · "),
        "the live line is gone at the end:\n{screen}"
    );
}

#[test]
fn ctrl_c_cancels_the_task() {
    let tmux = Tmux::start("cancel", &call_line("long_running_task", 2_000, ""));
    tmux.wait_for("working · 处理步骤 1...", LIMIT);
    // The first Ctrl-C cancels (the server's answer comes as the task's status).
    tmux.keys(&["C-c"]);
    let screen = tmux.wait_for("EXIT=3", LIMIT);
    for line in ["cancelling the task", "status: cancelled"] {
        assert!(screen.contains(line), "no {line:?}:\n{screen}");
    }
}

#[test]
fn a_form_is_answered_with_keys() {
    let tmux = Tmux::start(
        "form",
        &call_line(
            "confirm_task --arg 'question=Ship it?'",
            100,
            "--extra-tools",
        ),
    );
    tmux.wait_for("Fill in the form", LIMIT);
    tmux.keys(&["Enter"]);
    tmux.wait_for("Confirm", LIMIT);
    tmux.keys(&["y", "Enter"]);
    let screen = tmux.wait_for("EXIT=0", LIMIT);
    for line in [
        "input requested: Ship it?",
        "answered: accept",
        "Ship it? confirmed",
    ] {
        assert!(screen.contains(line), "no {line:?}:\n{screen}");
    }
}
