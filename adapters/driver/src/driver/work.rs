//! Running a call's work: polled once in the driver's turn, so work that does not wait
//! completes at once; otherwise spawned, reporting back with [`Command::Finished`]. A panic
//! fails the call with an internal error; an abort (the call stopped) drops it silently.

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::task::{Context, Poll};

use futures::future::{AbortHandle, Abortable};
use futures::FutureExt;
use serde_json::value::RawValue;
use taskwire_engine::{CallId, RpcError};

use super::{App, Command, Driver, Work};
use crate::runtime::now;

/// How a call's work ends: its result object as JSON text, or an error.
pub(crate) type Outcome = Result<Box<RawValue>, RpcError>;

impl<A: App> Driver<A> {
    /// Runs `work`: at once when it does not wait (after the commands it queued, so that
    /// their order holds); otherwise spawned.
    pub(super) fn run(&mut self, work: Work, cx: &mut Context<'_>) {
        let Work { call, future, span } = work;
        let mut guarded = Box::pin(AssertUnwindSafe(future).catch_unwind());
        if let Poll::Ready(result) = guarded.as_mut().poll(cx) {
            while let Ok(command) = self.commands.try_recv() {
                self.on_command(command);
            }
            return self.finish(call, result.unwrap_or_else(panicked));
        }
        let (handle, registration) = AbortHandle::new_pair();
        let commands = self.tx.clone();
        let abortable = Abortable::new(guarded, registration);
        self.runtime.spawn(Box::pin(async move {
            if let Ok(result) = abortable.await {
                let outcome = result.unwrap_or_else(panicked);
                let _ = commands.send(Command::Finished { call, outcome }).await;
            }
        }));
        self.workers.insert(call, (handle, span));
    }

    /// Answers a call with its work's outcome (always an object: tools' results and
    /// handlers' answers are checked). The engine refuses only a call that has already
    /// ended (cancelled, expired, closed), whose outcome nobody waits for.
    pub(super) fn finish(&mut self, call: CallId, outcome: Outcome) {
        match &outcome {
            Ok(_) => tracing::debug!(?call, "call finished"),
            Err(error) => tracing::debug!(?call, code = error.code, "call failed"),
        }
        let _ = self.host.respond_raw(now(), call, outcome);
        self.call_changed(call, true, None);
    }
}

/// A panic as the internal error the caller gets.
fn panicked(panic: Box<dyn std::any::Any + Send>) -> Outcome {
    let what = panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into());
    tracing::error!(panic = %what, "a tool or handler panicked; its call fails with -32603");
    Err(RpcError::internal(format!(
        "Internal error: the tool panicked: {what}"
    )))
}
