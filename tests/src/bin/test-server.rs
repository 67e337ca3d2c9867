//! `test-server [--runtime smol|tokio] [--step-ms N] [--store SPEC [--crash-on-task N]]`
//! (`--help`): the demo server (`task-server`'s tools and `demo-task`) plus test-only tools, for the
//! demo and driver suites (`tests/tests/demo/`, `tests/tests/driver/`). `--crash-on-task N`
//! aborts the process right after the store commits the write holding the Nth task made,
//! before the driver hears of it (so before its `CreateTaskResult` goes out): a crash between
//! the database and the reply.
//!
//! - `panic`: sets the status message "about to panic", then panics.
//! - `ticker`: appends a line to the file named by its `file` argument every `step_ms`
//!   (argument, default 20) until it is dropped, so a test can see when work stops.
//! - `flood`: reports progress and status in a tight loop until it is dropped (fairness).

use std::collections::HashSet;
use std::io::Write;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use clap::Parser;
use serde::Deserialize;
use taskwire_demo::options::RuntimeChoice;
use taskwire_demo::store::OpenError;
use taskwire_demo::tools::ServerOptions;
use taskwire_driver::engine::{Change, JournalEntry, TaskSnapshot};
use taskwire_driver::engine::{RpcError, TaskSupport, Tool};
use taskwire_driver::{
    BoxFuture, NoArgs, Refused, Server, StoreError, TaskStore, ToolContext, ToolOutcome,
};

/// The panicking tool's status message, set before it panics.
const PANIC_STATUS: &str = "about to panic";
/// What it panics with.
const PANIC_MESSAGE: &str = "test-server: the panic tool panicked on purpose";

/// The demo server plus test-only tools (`panic`, `ticker`, `flood`), for the demo and driver
/// suites.
#[derive(Debug, Parser)]
#[command(name = "test-server", version)]
struct Args {
    /// The async runtime serving stdio.
    #[arg(long, value_enum, default_value_t)]
    runtime: RuntimeChoice,
    /// The pause between the steps of the demo's tools, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 1000)]
    step_ms: u64,
    /// Keeps the tasks in a store, as `task-server --store` takes it.
    #[arg(long, value_name = "SPEC")]
    store: Option<String>,
    /// Aborts the process right after the store commits the write holding the Nth task made
    /// (with --store).
    #[arg(long, value_name = "N", requires = "store")]
    crash_on_task: Option<usize>,
}

fn main() -> ExitCode {
    quiet_deliberate_panics();
    let args = Args::parse();
    let step = Duration::from_millis(args.step_ms);
    let store = match store(args.store.as_deref(), args.crash_on_task) {
        Ok(store) => store,
        Err(e) => return usage(&e),
    };
    let server = match taskwire_demo::tools::server(ServerOptions {
        step,
        ..ServerOptions::default()
    }) {
        Ok(server) => with_test_tools(server),
        Err(e) => return usage(&e.to_string()),
    };
    let server = match store {
        Some(store) => server.with_store(store),
        None => server,
    };
    let served = match args.runtime {
        RuntimeChoice::Smol => taskwire_smol::serve_stdio(server),
        RuntimeChoice::Tokio => tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .and_then(|rt| rt.block_on(taskwire_tokio::serve_stdio(server))),
    };
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("test-server: {e}");
            ExitCode::FAILURE
        }
    }
}

/// `--store SPEC` (as `task-server` takes it), crashing once the task `--crash-on-task` counts
/// is stored.
fn store(spec: Option<&str>, crash_after: Option<usize>) -> Result<Option<CrashingStore>, String> {
    let Some(spec) = spec else {
        return Ok(None);
    };
    let inner = taskwire_demo::store::open(spec).map_err(|e| match e {
        OpenError::Spec(e) => e,
        OpenError::Store(e) => e.to_string(),
    })?;
    Ok(Some(CrashingStore {
        inner,
        crash_after,
        made: Arc::new(Mutex::new(HashSet::new())),
    }))
}

/// A store that aborts the process once a write holding the Nth task made (its first `Put`)
/// is committed.
struct CrashingStore {
    inner: Arc<dyn TaskStore>,
    crash_after: Option<usize>,
    /// The tasks it has stored so far.
    made: Arc<Mutex<HashSet<String>>>,
}

impl TaskStore for CrashingStore {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn load(&self) -> BoxFuture<Result<Vec<TaskSnapshot>, StoreError>> {
        self.inner.load()
    }

    fn write(&self, entries: Arc<[JournalEntry]>) -> BoxFuture<Result<Vec<Refused>, StoreError>> {
        let made = {
            let mut made = self.made.lock().expect("not poisoned");
            for entry in entries.iter() {
                if let Change::Put(task) = &entry.change {
                    made.insert(task.info.id.to_string());
                }
            }
            made.len()
        };
        let write = self.inner.write(entries);
        let crash = self.crash_after.is_some_and(|n| made >= n);
        Box::pin(async move {
            let written = write.await;
            if written.is_ok() && crash {
                eprintln!("test-server: crashing once task {made} is stored, as asked");
                std::process::abort();
            }
            written
        })
    }
}

fn with_test_tools(server: Server) -> Server {
    server
        .tool(Tool::new("panic", TaskSupport::Optional), panic_tool)
        .tool(Tool::new("ticker", TaskSupport::Optional), ticker)
        .tool(Tool::new("flood", TaskSupport::Optional), flood)
}

async fn panic_tool(ctx: ToolContext, _: NoArgs) -> ToolOutcome {
    ctx.set_status(PANIC_STATUS).await;
    panic!("{PANIC_MESSAGE}");
}

#[derive(Deserialize)]
struct TickerArgs {
    file: String,
    #[serde(default)]
    step_ms: Option<u64>,
}

async fn ticker(ctx: ToolContext, args: TickerArgs) -> ToolOutcome {
    let file = args.file;
    let step = Duration::from_millis(args.step_ms.unwrap_or(20));
    let mut tick = 0u64;
    loop {
        tick += 1;
        let mut out = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&file)
            .map_err(|e| RpcError::new(-32603, format!("cannot open {file:?}: {e}")))?;
        let _ = writeln!(out, "tick {tick}");
        ctx.sleep(step).await;
    }
}

/// Never waits on anything but its own reports: a tool that would hog the thread if the
/// context did not take turns with the rest.
async fn flood(ctx: ToolContext, _: NoArgs) -> ToolOutcome {
    let mut n = 0u64;
    loop {
        n += 1;
        ctx.progress(n as f64, None, None).await;
        if n % 1000 == 0 {
            ctx.set_status(format!("update {n}")).await;
        }
    }
}

/// One line on stderr for the `panic` tool's panic (no backtrace, even with
/// `RUST_BACKTRACE` set); any other panic is reported as usual.
fn quiet_deliberate_panics() {
    let report = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let payload = info.payload();
        let text = payload
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| payload.downcast_ref::<&str>().copied());
        if text == Some(PANIC_MESSAGE) {
            eprintln!("{PANIC_MESSAGE} (expected by the test)");
        } else {
            report(info);
        }
    }));
}

fn usage(error: &str) -> ExitCode {
    eprintln!("test-server: {error}\n\nFor more information, try '--help'.");
    ExitCode::from(2)
}
