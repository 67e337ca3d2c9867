//! The interop suite: the official SDKs as peers (pinned, installed on first use under
//! `<target>/peers/` by `tests/peers/setup.sh`), as real processes both ways (`python`,
//! `typescript`, `everything`, `inspector`, `rmcp`, `turbomcp` on stdio; `http`: the
//! TypeScript and Python SDKs over Streamable HTTP; `browser_client`: the TypeScript SDK's client
//! in a web page of another origin, under CORS; `dashboard`: our task dashboard in a browser
//! while our client runs tasks), and their recorded traffic fed to our engine to pin each
//! tolerated quirk (`quirks_*`).
//!
//! `cargo test -p taskwire-tests --test interop [FILTER]`. `TASKWIRE_SKIP_INTEROP=1` skips the
//! tests that need the peers; each skipped test is reported on stderr and counted by
//! `tests/run-all.sh`.

mod common;

mod browser_client;
mod dashboard;
mod everything;
mod ext_tasks;
mod fastmcp;
mod fleet;
mod http;
mod http_rmcp;
mod inspector;
mod inspector_oauth;
mod inspector_web;
mod oauth;
mod python;
mod quirks_inspector;
mod quirks_python;
mod quirks_typescript;
mod rmcp;
mod turbomcp;
mod typescript;
