//! The driver's side of a store shared by several server processes (replicas on one
//! database): other replicas' changes applied to the host as they arrive, tasks the host
//! does not hold fetched before the request naming them is answered, work waiting in the
//! store claimed and run here, and work whose claim ran out stopped.

use std::collections::VecDeque;
use std::task::{Context, Poll};

use taskwire_engine::{Envelope, Era, SessionId, TaskSnapshot};

use super::{now, poll_next, App, Command, Driver, Inbound, COMMANDS_PER_TURN};
use crate::store::{StoreError, StoreNews};

impl<A: App> Driver<A> {
    /// Feeds a message-link message to the host, unless the store is shared and the message
    /// names a task the host does not hold, or cancels one whose work runs elsewhere, or
    /// lists tasks (the host holds the live ones and the newest finished): then it waits
    /// (with the session's later messages, to keep their order) for the task, or the page,
    /// as stored now (so that a cancel racing the work's end elsewhere rarely sees it as
    /// running when it has finished).
    pub(super) fn deliver(&mut self, session: SessionId, message: Inbound) {
        if let Some(link) = self.store.as_mut().filter(|l| l.news.is_some()) {
            if let Some(waiting) = link.parked.get_mut(&session) {
                waiting.push_back(message);
                return;
            }
            let envelope = Envelope::read(&message.message).unwrap_or_default();
            let stale = |task: &&str| {
                !self.host.has_task(task)
                    || (envelope.method.as_deref() == Some("tasks/cancel")
                        && self.host.task_call(task).is_some()
                        && !self.host.runs_here(task))
            };
            let lookup = if envelope.method.as_deref() == Some("tasks/list") {
                self.host.owner(session).map(|owner| {
                    let after = envelope.list_after().map(|(at, id)| (at, id.to_owned()));
                    // One more than a page: the host tells from it whether more follow.
                    let limit = self.host.config().tasks.page_size.max(1) + 1;
                    link.store
                        .page(owner.as_str(), Era::V2025_11_25, after, limit)
                })
            } else {
                envelope.task().filter(stale).map(|task| {
                    let fetch = link.store.fetch(task);
                    Box::pin(async move { fetch.await.map(|found| found.into_iter().collect()) })
                        as crate::BoxFuture<_>
                })
            };
            if let Some(lookup) = lookup {
                link.parked.insert(session, VecDeque::from([message]));
                let tx = self.tx.clone();
                self.runtime.spawn(Box::pin(async move {
                    let found = lookup.await;
                    let _ = tx.send(Command::Fetched { session, found }).await;
                }));
                return;
            }
        }
        self.feed(session, message);
    }

    /// Hands the host one message (with its transport's check, if any).
    fn feed(&mut self, session: SessionId, inbound: Inbound) {
        let Inbound { message, check } = inbound;
        let timed = self.observer.as_mut().and_then(|o| o.requests.as_mut());
        let since = timed.as_ref().map(|requests| requests.now());
        // Refused only once the host is shut down, when its input no longer matters.
        let _ = match check {
            Some(check) => self.host.handle_checked(now(), session, &message, check),
            None => self.host.handle_message(now(), session, &message),
        };
        if let (Some(requests), Some(since)) = (timed, since) {
            requests.received(self.host.requests_read(), since);
        }
    }

    /// The store answered the fetch for `session`'s first waiting message: the tasks found
    /// join the host, and the session's messages go on in order.
    pub(super) fn fetched(
        &mut self,
        session: SessionId,
        found: Result<Vec<TaskSnapshot>, StoreError>,
    ) {
        let Some(link) = self.store.as_mut() else {
            return;
        };
        let mut waiting = link.parked.remove(&session).unwrap_or_default();
        match found {
            Ok(tasks) => {
                // A task whose work runs here is newest here.
                for task in tasks {
                    if !self.host.runs_here(&task.info.id) {
                        tracing::trace!(task = %task.info.id, "read a task from the store");
                        self.show_synced(&task, false);
                        let _ = self.host.sync(now(), task);
                    }
                }
            }
            // The host answers as it holds the tasks (a task not held: not found).
            Err(error) => tracing::warn!(
                store = link.store.name(),
                %error,
                "cannot read the tasks a request names; it is answered with those held here"
            ),
        }
        if let Some(first) = waiting.pop_front() {
            self.feed(session, first);
        }
        for next in waiting {
            self.deliver(session, next);
        }
    }

    /// Applies what other replicas changed. Returns whether anything came.
    pub(super) fn take_store_news(&mut self, cx: &mut Context<'_>) -> bool {
        let mut busy = false;
        for _ in 0..COMMANDS_PER_TURN {
            let Some(news) = self.store.as_mut().and_then(|l| l.news.as_mut()) else {
                break;
            };
            let Poll::Ready(news) = poll_next(news.as_mut(), cx) else {
                break;
            };
            busy = true;
            match news {
                StoreNews::Changed(task) => {
                    tracing::trace!(task = %task.info.id, status = %task.info.status, "another replica changed a task");
                    self.show_synced(&task, self.host.runs_here(&task.info.id));
                    let _ = self.host.sync(now(), task);
                }
                StoreNews::Unclaimed(tasks) => {
                    if let Some(families) = self.observer.as_ref().and_then(|o| o.families.as_ref())
                    {
                        families.unclaimed(tasks);
                    }
                    if tasks > 0 {
                        self.work_waits();
                    }
                }
                StoreNews::Queued => self.work_waits(),
                StoreNews::Answered { task, responses } => {
                    tracing::debug!(%task, "answers to a task's input requests came through the store");
                    if let Err(error) = self.host.answer_inputs(now(), &task, responses) {
                        tracing::warn!(%task, %error, "answers relayed through the store found no work here");
                    }
                }
                StoreNews::Lost(task) => {
                    tracing::warn!(task = %task.info.id, "this process's claim on a task ran out and another runs it now; its work here stops");
                    self.show_synced(&task, false);
                    let _ = self.host.release(now(), task);
                }
            }
        }
        busy
    }

    /// The store says work may wait: the next claim asks for it.
    fn work_waits(&mut self) {
        if let Some(claims) = self.store.as_mut().and_then(|l| l.claims.as_mut()) {
            claims.more = true;
        }
    }

    /// Asks the store for work waiting in it, when this process runs work, has room for
    /// more, and some may wait.
    pub(super) fn claim(&mut self) {
        let running = self.workers.len();
        let Some(link) = self.store.as_mut() else {
            return;
        };
        let Some(claims) = link.claims.as_mut() else {
            return;
        };
        let room = claims.slots.saturating_sub(running);
        if claims.asking || !claims.more || room == 0 || self.stopping {
            return;
        }
        claims.asking = true;
        claims.more = false;
        let claim = link.store.claim(room);
        let tx = self.tx.clone();
        self.runtime.spawn(Box::pin(async move {
            let found = claim.await;
            let _ = tx.send(Command::Claimed { asked: room, found }).await;
        }));
    }

    /// The store answered a claim of up to `asked` tasks: their work runs here (first runs
    /// of handed-off work, or work whose process stopped, again).
    pub(super) fn claimed(&mut self, asked: usize, found: Result<Vec<TaskSnapshot>, StoreError>) {
        let Some(link) = self.store.as_mut() else {
            return;
        };
        let Some(claims) = link.claims.as_mut() else {
            return;
        };
        claims.asking = false;
        match found {
            Ok(tasks) => {
                // All it asked for: more may wait.
                claims.more |= tasks.len() >= asked;
                for task in tasks {
                    tracing::debug!(task = %task.info.id, "took a task's work from the store");
                    // Known before its work's first change here, which is no creation.
                    self.show_synced(&task, true);
                    let _ = self.host.adopt(now(), task);
                }
            }
            // The store's next word that work waits tries again.
            Err(error) => {
                tracing::warn!(store = link.store.name(), %error, "cannot take work from the store")
            }
        }
    }
}
