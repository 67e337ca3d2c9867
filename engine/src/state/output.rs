//! The output queue: messages for the sessions' peers, events for the application, and
//! journal entries; messages about a task wait while the store has not confirmed its change.

use std::collections::{BTreeSet, VecDeque};

use super::State;
use crate::event::{Event, MessageKind, Output, StopReason, Transmit};
use crate::ids::{CallId, SessionId, TaskId};
use crate::jsonrpc::{self, Reject, RequestId, RpcError};
use crate::peer_error::PeerErrorKind;

/// What the caller drains, and the sessions that have messages held for the journal.
#[derive(Debug, Default)]
pub(super) struct Queue {
    items: VecDeque<Output>,
    /// Sessions whose `held` queue is not empty.
    holding: BTreeSet<SessionId>,
}

impl State {
    /// The next output, in order.
    #[inline]
    pub fn poll_output(&mut self) -> Option<Output> {
        self.out.items.pop_front()
    }

    #[inline]
    pub(super) fn push_output(&mut self, output: Output) {
        self.out.items.push_back(output);
    }

    #[inline]
    pub fn event(&mut self, event: Event) {
        self.out.items.push_back(Output::Event(event));
    }

    /// Tells the application to stop a call's work.
    pub fn stop(&mut self, call: CallId, reason: StopReason, message: Option<String>) {
        self.event(Event::Stop {
            call,
            reason,
            message,
        });
    }

    /// Queues a message for a session's peer. A message `about` a task with a change the
    /// store has not confirmed waits for it, and later messages of that session queue
    /// behind it so that the order holds. A closing session gets nothing more.
    pub fn send(
        &mut self,
        session: SessionId,
        kind: MessageKind,
        about: Option<&TaskId>,
        message: String,
    ) {
        let wait = self.journal.wait_for(about);
        let Some(s) = self.sessions.get_mut(session.index, session.generation) else {
            return;
        };
        if s.closing {
            return;
        }
        let transmit = Transmit {
            session,
            kind,
            message,
        };
        match (wait, s.held.back()) {
            (None, None) => self.out.items.push_back(Output::Send(transmit)),
            (wait, last) => {
                let after = last.map_or(0, |(seq, _)| *seq);
                s.held.push_back((wait.unwrap_or(0).max(after), transmit));
                self.out.holding.insert(session);
            }
        }
    }

    /// Releases the held messages whose journal entries are now stored, session by session.
    pub(super) fn release_held(&mut self, confirmed: u64) {
        let holding: Vec<SessionId> = self.out.holding.iter().copied().collect();
        for session in holding {
            let Some(s) = self.sessions.get_mut(session.index, session.generation) else {
                self.out.holding.remove(&session);
                continue;
            };
            while s.held.front().is_some_and(|(seq, _)| *seq <= confirmed) {
                if let Some((_, t)) = s.held.pop_front() {
                    self.out.items.push_back(Output::Send(t));
                }
            }
            if s.held.is_empty() {
                self.out.holding.remove(&session);
            }
        }
    }

    /// The answer to the peer's request `id`.
    #[inline]
    pub fn reply(
        &mut self,
        session: SessionId,
        id: &RequestId,
        about: Option<&TaskId>,
        message: String,
    ) {
        let kind = MessageKind::Reply {
            to: Some(id.clone()),
            error: None,
        };
        self.send(session, kind, about, message);
    }

    /// An error answer (`id` omitted when it could not be read).
    pub fn reply_error(&mut self, session: SessionId, id: Option<&RequestId>, error: &RpcError) {
        let kind = MessageKind::Reply {
            to: id.cloned(),
            error: Some(error.code),
        };
        self.send(session, kind, None, jsonrpc::error_line(id, error));
    }

    /// Answers a refused request with its error, and reports the peer's mistake.
    pub fn refuse(&mut self, session: SessionId, id: &RequestId, reject: Reject) {
        self.reply_error(session, Some(id), &reject.error);
        if let Some(kind) = reject.kind {
            self.peer_error(session, kind, reject.error.message);
        }
    }

    pub fn peer_error(&mut self, session: SessionId, kind: PeerErrorKind, message: String) {
        self.event(Event::PeerError {
            session,
            kind,
            message,
        });
    }
}
