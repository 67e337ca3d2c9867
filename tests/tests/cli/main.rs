//! The `taskwire` command line as its users meet it: scripted `--json` runs (events, exit
//! codes, bad input, servers that exit or never answer) against our `task-server` and the
//! seed's Python server, and the live terminal in tmux (the status line updating, the result,
//! Ctrl-C cancelling the task, an elicitation form answered with keys).
//!
//! `cargo test -p taskwire-tests --test cli [FILTER]`.

mod help;
mod json;
mod terminal;
