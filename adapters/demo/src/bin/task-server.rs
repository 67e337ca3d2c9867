//! `task-server [--runtime smol|tokio | --http ADDR] [--required-tool] [--extra-tools]
//! [--bench-tools] [--step-ms N]`: the seed's MCP task server on stdio, or over Streamable
//! HTTP at `http://ADDR/mcp` (both eras; tokio, many threads). `--extra-tools` adds `confirm_task`
//! (asks for a confirmation mid-task) and `progress_task` (reports progress); `--bench-tools`
//! adds the benchmark fixture's `echo` and `instant_task` and room for 200,000 tasks.
//! `--store sqlite:PATH` keeps the tasks in a SQLite file, so that they survive a restart
//! (without it they live in memory); `sqlite:PATH?synchronous=full` makes every commit wait
//! for the disk (durable on power loss), `?synchronous=normal` is the default. The
//! `wasm32-wasip1` build runs on taskwire-wasi and has neither `--runtime` nor `--store`.

use std::process::ExitCode;
use std::time::Duration;

use taskwire_demo::options::Options;
#[cfg(not(target_os = "wasi"))]
use taskwire_demo::options::RuntimeChoice;
use taskwire_demo::tools::ServerOptions;

#[cfg(not(target_os = "wasi"))]
const USAGE: &str = "usage: task-server [--runtime smol|tokio | --http ADDR] \
                     [--store sqlite:PATH[?synchronous=normal|full] | --store postgres://…[?replica=NAME&lease=MS]] [--required-tool] \
                     [--extra-tools] [--bench-tools] [--step-ms N]";
#[cfg(target_os = "wasi")]
const USAGE: &str =
    "usage: task-server.wasm [--required-tool] [--extra-tools] [--bench-tools] [--step-ms N]";

fn main() -> ExitCode {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    if cfg!(target_os = "wasi") && args.iter().any(|a| a == "--runtime") {
        return usage(
            "--runtime is not available in the WASI build (it always runs on taskwire-wasi)",
        );
    }
    let step = match take_value(&mut args, "--step-ms") {
        Ok(ms) => Duration::from_millis(ms.unwrap_or(1000)),
        Err(e) => return usage(&e),
    };
    #[cfg(not(target_os = "wasi"))]
    let http = match taskwire_demo::options::take_value(&mut args, "--http") {
        Ok(address) => address,
        Err(e) => return usage(&e),
    };
    #[cfg(not(target_os = "wasi"))]
    let store = match taskwire_demo::options::take_value(&mut args, "--store") {
        Ok(None) => None,
        Ok(Some(spec)) => match taskwire_demo::store::open(&spec) {
            Ok(store) => Some(store),
            Err(taskwire_demo::store::OpenError::Spec(e)) => return usage(&e),
            Err(taskwire_demo::store::OpenError::Store(e)) => {
                eprintln!("task-server: {e}");
                return ExitCode::FAILURE;
            }
        },
        Err(e) => return usage(&e),
    };
    let flags = ["--required-tool", "--extra-tools", "--bench-tools"];
    let options = match Options::parse(args, &flags) {
        Ok(o) => o,
        Err(e) => return usage(&e),
    };
    let server_options = ServerOptions {
        step,
        required_tool: options.has("--required-tool"),
        bench_tools: options.has("--bench-tools"),
        extra_tools: options.has("--extra-tools"),
    };
    let server = match taskwire_demo::tools::server(server_options) {
        Ok(server) => server,
        Err(e) => return usage(&e.to_string()),
    };
    #[cfg(not(target_os = "wasi"))]
    let server = match store {
        Some(store) => server.with_store(store),
        None => server,
    };
    #[cfg(not(target_os = "wasi"))]
    if http.is_none() {
        taskwire_demo::logs::init("warn");
    }
    #[cfg(not(target_os = "wasi"))]
    let served = match (http, options.runtime) {
        (Some(address), _) => {
            taskwire_demo::http::serve(server, &address, taskwire_http::HttpConfig::default())
        }
        (None, RuntimeChoice::Smol) => taskwire_smol::serve_stdio(server),
        // One thread, as on smol: the driver, stdio and the tools share it.
        (None, RuntimeChoice::Tokio) => tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .and_then(|rt| rt.block_on(taskwire_tokio::serve_stdio(server))),
    };
    #[cfg(target_os = "wasi")]
    let served = taskwire_wasi::serve_stdio(server);
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("task-server: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Removes `--name VALUE` from `args`.
fn take_value(args: &mut Vec<String>, name: &str) -> Result<Option<u64>, String> {
    let Some(i) = args.iter().position(|a| a == name) else {
        return Ok(None);
    };
    let value = args
        .get(i + 1)
        .and_then(|v| v.parse().ok())
        .ok_or(format!("{name} takes a number"))?;
    args.drain(i..i + 2);
    Ok(Some(value))
}

fn usage(error: &str) -> ExitCode {
    eprintln!("task-server: {error}\n{USAGE}");
    ExitCode::from(2)
}
