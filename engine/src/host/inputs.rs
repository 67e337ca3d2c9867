//! Feeding the host its input and draining its output (the run loop's two halves).

use super::Host;
use crate::error::UsageError;
use crate::event::{Output, RequestRead};
use crate::framing::Frame;
use crate::ids::SessionId;
use crate::routed::Check;
use crate::time::Millis;

impl Host {
    /// Feeds bytes of a newline-delimited stream (stdio). Partial lines are buffered.
    /// Input for a closed or unknown session is ignored; after [`Host::shutdown`] every
    /// input is [`UsageError::ShutDown`].
    pub fn handle_bytes(
        &mut self,
        now: Millis,
        session: SessionId,
        bytes: &[u8],
    ) -> Result<(), UsageError> {
        self.enter(now)?;
        let Some(s) = self.state.session_mut(session) else {
            return Ok(());
        };
        let mut framer = std::mem::take(&mut s.framer);
        framer.push(bytes, |frame| self.handle_frame(session, frame));
        if let Some(s) = self.state.session_mut(session) {
            s.framer = framer;
        }
        Ok(())
    }

    /// The byte stream ended: handles a final unterminated line, then closes the session.
    pub fn handle_eof(&mut self, now: Millis, session: SessionId) -> Result<(), UsageError> {
        self.enter(now)?;
        let Some(s) = self.state.session_mut(session) else {
            return Ok(());
        };
        let mut framer = std::mem::take(&mut s.framer);
        framer.finish(|frame| self.handle_frame(session, frame));
        self.state.close_session(session);
        Ok(())
    }

    /// Feeds one complete JSON-RPC message (for transports that frame messages themselves).
    pub fn handle_message(
        &mut self,
        now: Millis,
        session: SessionId,
        message: &[u8],
    ) -> Result<(), UsageError> {
        self.enter(now)?;
        self.handle_frame(session, Frame::Line(message));
        Ok(())
    }

    /// [`Host::handle_message`], with the caller's `check` of each request the message
    /// holds, given what the engine read of it before serving it ([`Routed`](crate::Routed)): a request
    /// the check refuses is answered with the check's error and not served. A transport
    /// that routed the message on its headers checks them here, in the engine's one read of
    /// the message. Requests of an era that names no protocol version in the message are
    /// shown with their method only.
    pub fn handle_checked(
        &mut self,
        now: Millis,
        session: SessionId,
        message: &[u8],
        check: Check,
    ) -> Result<(), UsageError> {
        self.enter(now)?;
        self.state.check = Some(check);
        self.handle_frame(session, Frame::Line(message));
        self.state.check = None;
        Ok(())
    }

    /// Fires every deadline due at `now`. Spurious calls do nothing. (Every other input
    /// fires due deadlines too, so they are never late while input keeps arriving; only
    /// this one lets finished tasks go past
    /// [`TaskConfig::keep_finished`](crate::TaskConfig), so that a task read back for a
    /// request is held until that request is answered.)
    pub fn handle_timeout(&mut self, now: Millis) -> Result<(), UsageError> {
        self.enter(now)?;
        self.state.forget_finished();
        Ok(())
    }

    /// The next message to send, event to handle or change to store. Drain to `None` after
    /// every call that takes `&mut self`, then read [`Host::poll_timeout`].
    #[inline]
    pub fn poll_output(&mut self) -> Option<Output> {
        self.state.poll_output()
    }

    /// Whether the host reports the requests it reads ([`Host::requests_read`]), for a
    /// caller that times them from receipt to answer. Default: off (nothing is kept).
    pub fn report_requests(&mut self, report: bool) {
        self.report_requests = report;
        self.reads = Vec::new();
    }

    /// The requests the last input call read, in order (with [`Host::report_requests`]):
    /// drain them before the next call that takes the time, which forgets those left. A
    /// message the engine cannot read as a request (a parse error, a line too long) is not
    /// one, though it may be answered with an error.
    pub fn requests_read(&mut self) -> impl Iterator<Item = RequestRead> + '_ {
        self.reads.drain(..)
    }

    /// When [`Host::handle_timeout`] must be called next; `None` when nothing is scheduled
    /// (always, after [`Host::shutdown`]).
    pub fn poll_timeout(&self) -> Option<Millis> {
        self.state.next_deadline()
    }
}
