//! Traces: one trace per task, across processes. A server's `tools/call` span continues the
//! W3C trace context the caller put in the request's `params._meta` (`traceparent`,
//! `tracestate`); the task's work runs in a child span, on whichever process runs it (a
//! worker continues the context the task's stored request kept); status changes are events
//! of the work's span, each question a span until its answer, each store write that carries
//! the task a span of its own. A client puts its current span's context in its requests.
//!
//! The spans are `tracing` spans at DEBUG level: free unless a subscriber wants them (the
//! binaries' OTLP export, `telemetry::init`). The context crosses processes only with the
//! `opentelemetry` feature, through the global propagator the application installs.

use std::collections::HashMap;
use std::future::Future;

use futures::future::Either;
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use taskwire_engine::{Change, JournalEntry, RpcError, StopReason, TaskId, TaskStatus};
use tracing::field::Empty;
use tracing::{Instrument, Span};

/// The span of a `tools/call` this server takes: a child of the caller's span when the
/// request's `_meta` carries its context.
pub(crate) fn call_span(tool: &str, meta: Option<&RawValue>) -> Span {
    let span = tracing::debug_span!(
        "tools/call",
        otel.name = format!("tools/call {tool}"),
        otel.kind = "server",
        mcp.method.name = "tools/call",
        gen_ai.tool.name = tool,
        mcp.task.id = Empty,
    );
    continue_trace(&span, meta);
    span
}

/// The span of a `tools/call` this client makes, whose context its `_meta` carries.
pub(crate) fn client_span(tool: &str) -> Span {
    tracing::debug_span!(
        "tools/call",
        otel.name = format!("tools/call {tool}"),
        otel.kind = "client",
        mcp.method.name = "tools/call",
        gen_ai.tool.name = tool,
    )
}

/// Where a task's work span hangs: under the call span of this process, or under the
/// context a stored request kept (work claimed from a front, or resumed).
pub(crate) enum Parent<'a> {
    Call(&'a Span),
    Stored(Option<&'a RawValue>),
}

/// The span of a call's work (a task's, or a plain call's) on this process.
fn work_span(parent: Parent<'_>, tool: &str, task: Option<&TaskId>, attempt: u32) -> Span {
    let task = task.map(TaskId::as_str);
    let fields = |parent: Option<&Span>| {
        tracing::debug_span!(
            parent: parent.and_then(Span::id),
            "work",
            otel.name = format!("work {tool}"),
            gen_ai.tool.name = tool,
            mcp.task.id = task,
            taskwire.attempt = attempt,
        )
    };
    match parent {
        Parent::Call(call) => {
            if let Some(task) = task {
                call.record("mcp.task.id", task);
            }
            fields(Some(call))
        }
        Parent::Stored(meta) => {
            let span = fields(None);
            continue_trace(&span, meta);
            span
        }
    }
}

/// `work` in `span`, which tells how it ended (or that it stopped, dropped unfinished).
pub(crate) fn traced<T>(
    span: Span,
    work: impl Future<Output = Result<T, RpcError>> + Send + 'static,
) -> impl Future<Output = Result<T, RpcError>> + Send + 'static {
    if span.is_disabled() {
        return Either::Left(work);
    }
    Either::Right(
        async move {
            let outcome = work.await;
            match &outcome {
                Ok(_) => tracing::debug!(status = "completed", "work ended"),
                Err(e) => tracing::debug!(status = "failed", code = e.code, error = %e.message, "work ended"),
            }
            outcome
        }
        .instrument(span),
    )
}

/// The work in the current span stops unfinished: why (`None`: its process stops), and, for
/// a cancel, the task's status.
pub(crate) fn stopped(reason: Option<StopReason>) {
    if reason == Some(StopReason::Cancelled) {
        status(TaskStatus::Cancelled, None);
    }
    let reason = match reason {
        Some(StopReason::Cancelled) => "cancelled",
        Some(StopReason::Expired) => "expired",
        Some(StopReason::Closed) => "closed",
        Some(StopReason::Removed) => "removed",
        Some(StopReason::InputRequired) => "input_required",
        Some(StopReason::Moved) => "moved",
        Some(_) => "other",
        None => "shutdown",
    };
    tracing::debug!(reason, "work stopped before it ended");
}

/// A status change of the task whose work runs in the current span.
pub(crate) fn status(status: TaskStatus, message: Option<&str>) {
    tracing::debug!(
        status = status.as_str(),
        status_message = message,
        "task status"
    );
}

/// The span of a question a tool asks (`method`), until its answer (`error` when none).
pub(crate) fn question_span(method: &'static str) -> Span {
    tracing::debug_span!(
        "question",
        otel.name = method,
        mcp.method.name = method,
        error = Empty,
    )
}

/// The spans of the tasks whose changes this process writes to its store: each write that
/// carries one of them is a span in its trace. A span held here stays open (and so do its
/// parents) until the write that ends the task here: its end, its deletion, or its hand-off
/// (a task whose work moved to another process, its lease lost, is held until this one
/// stops).
#[derive(Default)]
pub(crate) struct TaskSpans {
    spans: HashMap<TaskId, Span>,
    /// This process writes to a store (else nothing is held).
    writing: bool,
}

impl TaskSpans {
    /// This process writes its changes to a store from now on.
    pub fn writing(&mut self) {
        self.writing = true;
    }

    /// The span of a call's work on this process ([`work_span`]); a task's store writes go
    /// under it.
    pub fn work(
        &mut self,
        parent: Parent<'_>,
        tool: &str,
        task: Option<&TaskId>,
        attempt: u32,
    ) -> Span {
        let span = work_span(parent, tool, task, attempt);
        if let Some(task) = task {
            self.insert(task, &span);
        }
        span
    }

    /// Store writes of `task` go under `span` (when it is recorded at all).
    pub fn insert(&mut self, task: &TaskId, span: &Span) {
        if self.writing && !span.is_disabled() {
            self.spans.insert(task.clone(), span.clone());
        }
    }

    /// A span for each task `batch` writes with a span here, under it. A task leaves once a
    /// write ends it here: it finished, went, or runs elsewhere (`runs_here` is false).
    pub fn writes(
        &mut self,
        store: &str,
        batch: &[JournalEntry],
        runs_here: impl Fn(&TaskId) -> bool,
    ) -> Vec<Span> {
        if self.spans.is_empty() {
            return Vec::new();
        }
        let mut spans = Vec::new();
        for entry in batch {
            let task = entry.change.task();
            let last = match &entry.change {
                Change::Put(snapshot) => snapshot.info.status.is_terminal() || !runs_here(task),
                Change::Delete { .. } => true,
                _ => false,
            };
            let Some(parent) = self.spans.get(task) else {
                continue;
            };
            spans.push(tracing::debug_span!(
                parent: parent,
                "store write",
                taskwire.store = store,
                entries = batch.len(),
                error = Empty,
            ));
            if last {
                self.spans.remove(task);
            }
        }
        spans
    }
}

/// Makes the caller's context in `meta` the parent of `span`.
#[cfg(feature = "opentelemetry")]
fn continue_trace(span: &Span, meta: Option<&RawValue>) {
    use opentelemetry::propagation::Extractor;
    use tracing_opentelemetry::OpenTelemetrySpanExt;

    /// The string members of `_meta`, as a propagator reads its carrier.
    struct Carrier(HashMap<String, Value>);
    impl Extractor for Carrier {
        fn get(&self, key: &str) -> Option<&str> {
            self.0.get(key).and_then(Value::as_str)
        }
        fn keys(&self) -> Vec<&str> {
            self.0.keys().map(String::as_str).collect()
        }
    }

    let Some(meta) = meta.filter(|_| !span.is_disabled()) else {
        return;
    };
    let Ok(members) = serde_json::from_str(meta.get()) else {
        return;
    };
    let carrier = Carrier(members);
    let context =
        opentelemetry::global::get_text_map_propagator(|propagator| propagator.extract(&carrier));
    let _ = span.set_parent(context);
}

#[cfg(not(feature = "opentelemetry"))]
fn continue_trace(_: &Span, _: Option<&RawValue>) {}

/// The current span's context as `_meta` members for a request of ours; `None` outside a
/// recorded span.
#[cfg(feature = "opentelemetry")]
pub(crate) fn current_context() -> Option<Map<String, Value>> {
    use opentelemetry::trace::TraceContextExt;
    use tracing_opentelemetry::OpenTelemetrySpanExt;

    let span = Span::current();
    if span.is_disabled() {
        return None;
    }
    let context = span.context();
    if !context.span().span_context().is_valid() {
        return None;
    }
    let mut carrier = HashMap::<String, String>::new();
    opentelemetry::global::get_text_map_propagator(|propagator| {
        propagator.inject_context(&context, &mut carrier)
    });
    let members: Map<String, Value> = carrier.into_iter().map(|(k, v)| (k, v.into())).collect();
    (!members.is_empty()).then_some(members)
}

#[cfg(not(feature = "opentelemetry"))]
pub(crate) fn current_context() -> Option<Map<String, Value>> {
    None
}
