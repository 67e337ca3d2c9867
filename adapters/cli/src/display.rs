//! What the user sees: events as stamped lines (kept in the scroll-back) under a live line
//! (spinner, status, message, elapsed time, a progress bar when the total is known) on a
//! terminal; the same lines without the live line or colours otherwise; one JSON object per
//! event with `--json`.

use std::io::{self, IsTerminal, Write};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use console::style;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde_json::{json, Value};
use taskwire_driver::{CallToolResult, Content, Error, RpcError};

/// The live line's progress scale: a bar of this many steps.
const BAR_STEPS: u64 = 1_000;

/// Where the command's output goes. Cheap to clone: the client's handlers hold one, to
/// suspend the live line while they ask the user.
#[derive(Clone)]
pub struct Display(Arc<Inner>);

struct Inner {
    json: bool,
    /// Event lines go to stderr, leaving stdout to the one thing asked for (`call --detach`:
    /// the task id).
    events_on_stderr: bool,
    /// A terminal on stdout: a live line and colours (unless NO_COLOR).
    live: bool,
    start: Instant,
    bar: Mutex<Option<ProgressBar>>,
}

impl Display {
    /// JSON lines with `json`; else lines, live on a terminal, on stderr with
    /// `events_on_stderr`.
    pub fn new(json: bool, events_on_stderr: bool) -> Self {
        let terminal = io::stdout().is_terminal();
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        console::set_colors_enabled(terminal && !json && !no_color);
        Display(Arc::new(Inner {
            json,
            events_on_stderr,
            live: terminal && !json,
            start: Instant::now(),
            bar: Mutex::new(None),
        }))
    }

    /// Whether output is JSON lines.
    pub fn is_json(&self) -> bool {
        self.0.json
    }

    /// One event: `event` as a JSON line, or `line`; either stamped with the time since the
    /// start.
    pub fn event(&self, event: Value, line: impl FnOnce() -> String) {
        if self.0.json {
            return self.json_line(event);
        }
        let line = format!(
            "[{:>7.3}s] {}",
            self.0.start.elapsed().as_secs_f64(),
            line()
        );
        match self.0.bar.lock().unwrap().as_ref() {
            Some(bar) => bar.println(line),
            None if self.0.events_on_stderr => {
                let _ = writeln!(io::stderr().lock(), "{line}");
            }
            None => write_line(&line),
        }
    }

    /// A JSON event on its line, with `elapsedMs`: the milliseconds since the start.
    fn json_line(&self, mut event: Value) {
        if let Value::Object(fields) = &mut event {
            let elapsed = self.0.start.elapsed().as_millis();
            fields.insert(
                "elapsedMs".into(),
                json!(u64::try_from(elapsed).unwrap_or(u64::MAX)),
            );
        }
        write_line(&event.to_string());
    }

    /// Text for people (a listing, a result); nothing with `--json`.
    pub fn text(&self, text: &str) {
        if !self.0.json {
            self.suspend(|| write_line(text));
        }
    }

    /// Shows the live line (on a terminal) with `message`.
    pub fn live(&self, message: String) {
        if !self.0.live {
            return;
        }
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stdout());
        bar.set_style(spinner_style());
        bar.set_message(message);
        bar.enable_steady_tick(Duration::from_millis(100));
        *self.0.bar.lock().unwrap() = Some(bar);
    }

    /// The live line's text.
    pub fn live_message(&self, message: String) {
        if let Some(bar) = self.0.bar.lock().unwrap().as_ref() {
            bar.set_message(message);
        }
    }

    /// Progress on the live line: a bar once the total is known.
    pub fn live_progress(&self, progress: f64, total: Option<f64>) {
        let guard = self.0.bar.lock().unwrap();
        let Some(bar) = guard.as_ref() else {
            return;
        };
        match total.filter(|t| *t > 0.0) {
            Some(total) => {
                if bar.length() != Some(BAR_STEPS) {
                    bar.set_style(bar_style());
                    bar.set_length(BAR_STEPS);
                }
                let done = (progress / total).clamp(0.0, 1.0);
                bar.set_position((done * BAR_STEPS as f64) as u64);
            }
            None => bar.set_prefix(format!("{progress}")),
        }
    }

    /// Removes the live line.
    pub fn live_end(&self) {
        if let Some(bar) = self.0.bar.lock().unwrap().take() {
            bar.finish_and_clear();
        }
    }

    /// Runs `f` (a prompt, a listing) with the live line out of the way.
    pub fn suspend<R>(&self, f: impl FnOnce() -> R) -> R {
        let bar = self.0.bar.lock().unwrap().clone();
        match bar {
            Some(bar) => bar.suspend(f),
            None => f(),
        }
    }

    /// The final line or JSON object of a call: its result or error, and the exit code.
    pub fn outcome(&self, outcome: &Result<CallToolResult, Error>, status: &str, exit: u8) {
        self.live_end();
        if self.0.json {
            let mut event = json!({ "event": "outcome", "outcome": status, "exitCode": exit });
            match outcome {
                Ok(result) => event["result"] = json!(result),
                Err(e) => event["error"] = error_json(e),
            }
            return self.json_line(event);
        }
        match outcome {
            Ok(result) => self.result(result),
            Err(e) => self.event(Value::Null, || format!("{status}: {}", style(say(e)).red())),
        }
    }

    /// A tool's result for people: its text, other blocks summed up, structured content as
    /// pretty JSON; a tool error in red.
    fn result(&self, result: &CallToolResult) {
        let head = match result.is_error {
            true => style("result (tool error):").red().bold().to_string(),
            false => style("result:").bold().to_string(),
        };
        self.event(Value::Null, || head);
        let mut body = Vec::new();
        for block in &result.content {
            body.push(match block {
                Content::Text { text } => text.clone(),
                Content::Image { data, mime_type } => {
                    format!("[image, {mime_type}, {} bytes of base64]", data.len())
                }
                Content::Audio { data, mime_type } => {
                    format!("[audio, {mime_type}, {} bytes of base64]", data.len())
                }
                Content::ResourceLink { uri, .. } => format!("[resource link {uri}]"),
                Content::Resource { resource } => format!("[resource {}]", resource.uri),
                other => format!("[{}]", json!(other)),
            });
        }
        let mut text = body.join("\n");
        if result.is_error {
            text = style(text).red().to_string();
        }
        if !text.is_empty() {
            write_line(&text);
        }
        if let Some(structured) = &result.structured_content {
            write_line(&style("structured content:").bold().to_string());
            write_line(&serde_json::to_string_pretty(structured).unwrap_or_default());
        }
    }

    /// An error that ends a command before any outcome (a connection, a request).
    pub fn error(&self, error: &Error, exit: u8) {
        self.fatal(error_json(error), &say(error), exit);
    }

    /// What ended a command before any outcome: `error` as JSON, or `message` on stderr.
    pub fn fatal(&self, error: Value, message: &str, exit: u8) {
        self.live_end();
        if self.0.json {
            let event = json!({ "event": "error", "error": error, "exitCode": exit });
            return self.json_line(event);
        }
        let _ = writeln!(io::stderr(), "taskwire: {}", style(message).red());
    }
}

/// An error as JSON: `{"kind": …, "message": …}`, with the JSON-RPC code when there is one.
pub fn error_json(error: &Error) -> Value {
    let kind = match error {
        Error::Rpc(_) => "rpc",
        Error::Usage(_) => "usage",
        Error::Timeout(_) => "timeout",
        Error::Closed => "closed",
        Error::Malformed(_) => "malformed",
        Error::Negotiation(_) => "negotiation",
        _ => "other",
    };
    let rpc = RpcError::from(error.clone());
    json!({ "kind": kind, "code": rpc.code, "message": say(error) })
}

/// An error in words, with what to do on this command line when the server says the client
/// lacks a capability (-32021) (the library's own advice names its API).
pub fn say(error: &Error) -> String {
    let missing = error.required_capabilities();
    let Some(rpc) = error.rpc().filter(|_| !missing.is_empty()) else {
        return error.to_string();
    };
    let mut said = rpc.to_string();
    for capability in missing {
        let add = match capability.as_str() {
            "io.modelcontextprotocol/tasks" => {
                "the tool runs only as a task: call it without --plain".to_owned()
            }
            "sampling" => {
                "the tool asks the client's model: answer with --sampling-cmd CMD".to_owned()
            }
            "elicitation" => {
                "the tool asks questions this client did not offer to answer".to_owned()
            }
            other => format!("taskwire does not offer {other:?}"),
        };
        said = format!("{said}; {add}");
    }
    said
}

fn spinner_style() -> ProgressStyle {
    ProgressStyle::with_template("{spinner:.cyan} {msg} {prefix} [{elapsed}]")
        .expect("a valid template")
}

fn bar_style() -> ProgressStyle {
    ProgressStyle::with_template(
        "{spinner:.cyan} [{bar:24.cyan/blue}] {percent:>3}% {msg} [{elapsed}]",
    )
    .expect("a valid template")
    .progress_chars("=> ")
}

/// A line on stdout; a closed stdout (`| head`) is no error worth reporting.
fn write_line(line: &str) {
    let _ = writeln!(io::stdout().lock(), "{line}");
}
