//! The output queue: messages for the sessions' peers, events for the application, and
//! journal entries; messages about a task wait while the store has not confirmed its change.

use std::collections::{BTreeSet, HashSet, VecDeque};

use super::{Kept, State};
use crate::event::{Event, MessageKind, Output, StopReason, Transmit};
use crate::ids::{CallId, SessionId, TaskId};
use crate::jsonrpc::{self, Reject, RequestId, RpcError};
use crate::model::Era;
use crate::peer_error::PeerErrorKind;

/// A message held until the journal entry it waits for is stored.
#[derive(Debug)]
pub(crate) struct Held {
    /// It goes out once entries up to this one are stored: its own, or the one the message
    /// before it waits for (the order of a session's messages holds).
    pub after: u64,
    /// The entry it reveals, if any (its reply fails if that entry cannot be stored).
    pub reveals: Option<u64>,
    /// The task its reply creates.
    pub creates: Option<TaskId>,
    /// How its reply is given again when the store keeps another version of its task.
    pub again: Option<AnswerAgain>,
    pub transmit: Transmit,
}

/// A reply to a request about one task, given again from the task as the store holds it
/// when the store refused the change the reply reveals because it keeps another version of
/// the task (another host finished it first, or claimed its work).
#[derive(Debug)]
pub(crate) struct AnswerAgain {
    pub era: Era,
    pub verb: TaskVerb,
    pub task: TaskId,
}

/// What a request about one task asked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TaskVerb {
    /// `tasks/get`.
    Get,
    /// `tasks/result`.
    Result,
    /// `tasks/cancel`.
    Cancel,
}

/// What the store refused of a batch, for [`State::release_held_failing`].
pub(super) struct Refusals<'e, F> {
    /// The error of the replies revealing an entry, or `None` when it is stored.
    pub failed: F,
    /// Tasks the store keeps another version of, now applied here: replies about them are
    /// given again ([`AnswerAgain`]), notifications revealing a refused change of them are
    /// dropped (what they tell did not happen).
    pub superseded: &'e HashSet<TaskId>,
}

/// What the caller drains, and the sessions that have messages held for the journal.
#[derive(Debug, Default)]
pub(super) struct Queue {
    items: VecDeque<Output>,
    /// Sessions whose `held` queue is not empty.
    holding: BTreeSet<SessionId>,
}

impl<K: Kept> State<K> {
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
        let reveals = self.journal.wait_for(about);
        self.queue(
            session,
            Transmit {
                session,
                kind,
                message,
            },
            reveals,
            None,
            None,
        );
    }

    /// The answer to the peer's request `id` about `task` (`verb` in `era`): given again
    /// from the task as the store holds it should the store keep another version of it.
    pub fn reply_about(
        &mut self,
        session: SessionId,
        id: &RequestId,
        again: AnswerAgain,
        error: Option<i64>,
        message: String,
    ) {
        let kind = MessageKind::Reply {
            to: Some(id.clone()),
            error,
        };
        let reveals = self.journal.wait_for(Some(&again.task));
        let transmit = Transmit {
            session,
            kind,
            message,
        };
        self.queue(session, transmit, reveals, None, Some(again));
    }

    /// Queues `transmit`, held until the journal entry it `reveals` is stored (and behind
    /// the session's messages held before it). A message that `creates` a task (its
    /// `CreateTaskResult`) takes the task with it if that entry cannot be stored.
    fn queue(
        &mut self,
        session: SessionId,
        transmit: Transmit,
        reveals: Option<u64>,
        creates: Option<TaskId>,
        again: Option<AnswerAgain>,
    ) {
        let Some(s) = self.sessions.get_mut(session.index, session.generation) else {
            return;
        };
        if s.closing {
            return;
        }
        match (reveals, s.held.back()) {
            (None, None) => self.out.items.push_back(Output::Send(transmit)),
            (reveals, last) => {
                let behind = last.map_or(0, |h| h.after);
                s.held.push_back(Held {
                    after: reveals.unwrap_or(0).max(behind),
                    reveals,
                    creates,
                    again: again.filter(|_| reveals.is_some()),
                    transmit,
                });
                self.out.holding.insert(session);
            }
        }
    }

    /// Releases the held messages whose journal entries are now stored, session by session.
    pub(super) fn release_held(&mut self, confirmed: u64) {
        let superseded = HashSet::new();
        self.release_held_failing(
            confirmed,
            Refusals {
                failed: |_| None,
                superseded: &superseded,
            },
        );
    }

    /// Releases the held messages that wait for entries up to `upto`. A reply that reveals
    /// an entry that could not be stored becomes its error, unless its task is one the store
    /// keeps another version of and the reply can be given again from it; a task whose
    /// `CreateTaskResult` became an error is removed (its work stops with
    /// [`StopReason::Removed`]): nobody learnt its id.
    pub(super) fn release_held_failing<'e>(
        &mut self,
        upto: u64,
        refusals: Refusals<'_, impl Fn(u64) -> Option<&'e RpcError>>,
    ) {
        let mut uncreated = Vec::new();
        let mut again = Vec::new();
        let holding: Vec<SessionId> = self.out.holding.iter().copied().collect();
        for session in holding {
            let Some(s) = self.sessions.get_mut(session.index, session.generation) else {
                self.out.holding.remove(&session);
                continue;
            };
            while s.held.front().is_some_and(|h| h.after <= upto) {
                let Some(held) = s.held.pop_front() else {
                    break;
                };
                let mut transmit = held.transmit;
                let Some(error) = held.reveals.and_then(&refusals.failed) else {
                    self.out.items.push_back(Output::Send(transmit));
                    continue;
                };
                match &transmit.kind {
                    MessageKind::Reply { to: Some(id), .. }
                        if held
                            .again
                            .as_ref()
                            .is_some_and(|a| refusals.superseded.contains(&a.task)) =>
                    {
                        // Given again below, once every held message is out, in place of
                        // this one.
                        if let Some(a) = held.again {
                            again.push((session, id.clone(), a, error.clone()));
                        }
                        continue;
                    }
                    MessageKind::Notification { task: Some(t), .. }
                        if refusals.superseded.contains(t) =>
                    {
                        continue;
                    }
                    MessageKind::Reply {
                        to: Some(id),
                        error: None,
                    } => {
                        transmit.message = jsonrpc::error_line(Some(id), error);
                        transmit.kind = MessageKind::Reply {
                            to: Some(id.clone()),
                            error: Some(error.code),
                        };
                        uncreated.extend(held.creates);
                    }
                    _ => {}
                }
                self.out.items.push_back(Output::Send(transmit));
            }
            if s.held.is_empty() {
                self.out.holding.remove(&session);
            }
        }
        for task in uncreated {
            if let Some(record) = self.tasks.remove(task.as_str()) {
                self.task_gone(record, StopReason::Removed);
            }
        }
        for (session, id, a, error) in again {
            let answered = self
                .protocol(a.era)
                .answer_again(self, &id, a.verb, &a.task);
            if let Some((line, code)) = answered {
                let kind = MessageKind::Reply {
                    to: Some(id),
                    error: code,
                };
                self.send(session, kind, Some(&a.task), line);
            } else {
                self.reply_error(session, Some(&id), &error);
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

    /// The `CreateTaskResult` answering `id`: held until the task's creation is stored,
    /// and, should that fail, an error that takes the task away.
    pub fn reply_created(
        &mut self,
        session: SessionId,
        id: &RequestId,
        task: &TaskId,
        message: String,
    ) {
        let kind = MessageKind::Reply {
            to: Some(id.clone()),
            error: None,
        };
        let reveals = self.journal.wait_for(Some(task));
        let transmit = Transmit {
            session,
            kind,
            message,
        };
        self.queue(session, transmit, reveals, Some(task.clone()), None);
    }

    /// The answer to `id` about several tasks (a `tasks/list` page), held until the
    /// entry `reveals` ([`State::newest_unstored`]) is stored.
    pub fn reply_listing(
        &mut self,
        session: SessionId,
        id: &RequestId,
        reveals: Option<u64>,
        message: String,
    ) {
        let kind = MessageKind::Reply {
            to: Some(id.clone()),
            error: None,
        };
        let transmit = Transmit {
            session,
            kind,
            message,
        };
        self.queue(session, transmit, reveals, None, None);
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
