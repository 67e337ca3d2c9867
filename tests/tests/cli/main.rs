//! The `taskwire` command line as its users meet it: scripted `--json` runs (events, exit
//! codes, bad input, servers that exit or never answer) against our `task-server`, the
//! seed's Python server, the TypeScript SDK's, rmcp 3.11's and turbomcp 4's task servers and
//! server-everything's sampling tool (`--sampling-cmd`); the live terminal in tmux (the status
//! line updating, the result, Ctrl-C cancelling the task, an elicitation form answered with
//! keys), also on the seed, TypeScript SDK and rmcp 3.11 servers and server-everything's
//! research task and elicitation task; `wait` and `tasks result` following a task made
//! earlier, in both eras; `proxy` between the eras, with `--as-task` and a cancel carried
//! behind; every binary's `--help` and `--version`; what a newcomer meets (`--detach`'s id
//! alone on stdout, errors that say what to do).
//!
//! `cargo test -p taskwire-tests --test cli [FILTER]`.

mod errors;
mod help;
mod json;
mod peers;
mod proxy;
mod proxy_peers;
mod proxy_wire;
mod sign_in;
mod terminal;
mod terminal_peers;
mod tmux;
mod wait;
