//! Following a task the peer hosts for us, in any era: its newest view, polls paced by its
//! poll interval, its outcome reported once, and giving up, with a clear error, on a server
//! that stops making sense (malformed answers, a result that never comes). How a poll or a
//! fetch is written is the session's era's.

use super::{Kept, State, Timer};
use crate::event::Event;
use crate::ids::{SessionId, TaskId};
use crate::jsonrpc::{RequestId, RpcError};
use crate::model::{Era, TaskInfo};
use crate::peer_error::PeerErrorKind;
use crate::status::TaskStatus;

/// Malformed `tasks/get` answers in a row after which a task is given up.
const MAX_MALFORMED: u8 = 3;

/// What we know of a task the peer hosts.
#[derive(Debug)]
pub(crate) struct RemoteTask {
    /// The era its session speaks to it in.
    pub era: Era,
    /// The newest view seen (from its creation, a poll or a notification).
    view: Option<TaskInfo>,
    /// We created it (its creation answer arrived); only then do we poll and fetch.
    pub ours: bool,
    pub auto_poll: bool,
    pub get_in_flight: bool,
    /// Our request for its outcome, once sent.
    pub fetch: Option<RequestId>,
    pub result_reported: bool,
    /// Malformed `tasks/get` answers in a row.
    malformed: u8,
}

impl RemoteTask {
    fn new(era: Era) -> Self {
        RemoteTask {
            era,
            view: None,
            ours: false,
            auto_poll: false,
            get_in_flight: false,
            fetch: None,
            result_reported: false,
            malformed: 0,
        }
    }

    pub fn status(&self) -> Option<TaskStatus> {
        self.view.as_ref().map(|t| t.status)
    }

    pub fn view(&self) -> Option<&TaskInfo> {
        self.view.as_ref()
    }

    /// Records the creation of a task of ours; an earlier view (a status notification
    /// that overtook it) wins if it is newer.
    fn created(&mut self, task: TaskInfo) -> TaskInfo {
        self.ours = true;
        self.auto_poll = true;
        let current = match self.view.take() {
            Some(early) if early.status != task.status && task.status.can_become(early.status) => {
                early
            }
            Some(early)
                if early.status == task.status && task.last_updated_at < early.last_updated_at =>
            {
                early
            }
            _ => task,
        };
        self.view = Some(current.clone());
        current
    }
}

/// The task an answer to our `tasks/get` or `tasks/cancel` of `task` holds, read by its
/// era's `read` (`None`: a time that is not RFC 3339); an error when the answer is one, is
/// no task, or names another.
pub(crate) fn answered_task<E: std::fmt::Display>(
    task: &TaskId,
    outcome: Result<serde_json::Value, RpcError>,
    read: impl FnOnce(&serde_json::Value) -> Result<Option<TaskInfo>, E>,
) -> Result<TaskInfo, RpcError> {
    let invalid = |what: String| RpcError::internal(format!("Invalid response: {what}"));
    let view = read(&outcome?).map_err(|e| invalid(format!("malformed task: {e}")))?;
    let view = view.ok_or_else(|| invalid("a time of the task is not RFC 3339".into()))?;
    if view.id != *task {
        return Err(invalid(format!(
            "the answer about task {task} is about task {}",
            view.id
        )));
    }
    Ok(view)
}

/// Where a view of a peer task came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Source {
    /// An answer to one of our requests.
    Answer,
    /// A notification: fresh state too, so the next poll moves back.
    Notification,
}

impl<K: Kept> State<K> {
    /// Hands the application the answer to its `tasks/get` or `tasks/cancel` of `task`, read
    /// by its era's `read` (see [`answered_task`]).
    pub fn answer_task<E: std::fmt::Display>(
        &mut self,
        session: SessionId,
        request: RequestId,
        task: &TaskId,
        outcome: Result<serde_json::Value, RpcError>,
        read: impl FnOnce(&serde_json::Value) -> Result<Option<TaskInfo>, E>,
    ) {
        let outcome = answered_task(task, outcome, read);
        self.event(Event::TaskAnswer {
            session,
            request,
            outcome,
        });
    }

    /// A task of ours was created (any era): it is followed from now on.
    pub fn track_created(
        &mut self,
        session: SessionId,
        era: Era,
        request: RequestId,
        task: TaskInfo,
    ) {
        let id = task.id.clone();
        let Some(s) = self.session_mut(session) else {
            return;
        };
        if s.remote.get(&id).is_some_and(|t| t.ours) {
            // Two calls cannot share one task: the second would never hear its outcome (the
            // server created it twice, or two follows of it were answered).
            let error = RpcError::internal(format!(
                "Task {id} is followed by an earlier call already: one call follows a task"
            ));
            return self.event(Event::Response {
                session,
                request,
                outcome: Err(error),
            });
        }
        let current = s
            .remote
            .entry(id.clone())
            .or_insert_with(|| RemoteTask::new(era))
            .created(task);
        self.event(Event::TaskCreated {
            session,
            request,
            task: current,
        });
        self.follow_up(session, &id);
        self.schedule_poll(session, &id, false);
    }

    /// A fresh view of a peer-hosted task.
    pub fn observe_remote_task(
        &mut self,
        session: SessionId,
        era: Era,
        task: TaskInfo,
        source: Source,
    ) {
        let max = self.config.tasks.max_tasks;
        let Some(s) = self.session_mut(session) else {
            return;
        };
        let id = task.id.clone();
        if !s.remote.contains_key(&id) && s.remote.len() >= max {
            return self.peer_error(
                session,
                PeerErrorKind::Malformed,
                format!("status of unknown task {id:?} dropped: too many"),
            );
        }
        let entry = s
            .remote
            .entry(id.clone())
            .or_insert_with(|| RemoteTask::new(era));
        if source == Source::Answer {
            entry.malformed = 0;
        }
        let visible = match &entry.view {
            None => true,
            // An older state that arrived late (a reordered answer or notification).
            Some(cur) if task.last_updated_at < cur.last_updated_at => return,
            Some(cur) if cur.status != task.status => {
                if !cur.status.can_become(task.status) {
                    return; // stale or out of order: the table decides
                }
                true
            }
            Some(cur) => cur.status_message != task.status_message,
        };
        entry.view = Some(task.clone());
        if !entry.ours {
            return;
        }
        let (fresh, in_flight) = (source == Source::Notification, entry.get_in_flight);
        if visible {
            self.event(Event::TaskStatus { session, task });
        }
        self.follow_up(session, &id);
        if fresh && !in_flight {
            self.schedule_poll(session, &id, true);
        }
    }

    /// The task's era fetches its outcome when it has one.
    pub fn follow_up(&mut self, session: SessionId, id: &TaskId) {
        if let Some(era) = self.remote_era(session, id) {
            self.protocol(era).follow_up(self, session, id);
        }
    }

    fn remote_era(&self, session: SessionId, id: &TaskId) -> Option<Era> {
        Some(self.session(session)?.remote.get(id)?.era)
    }

    /// The interval before the next poll of a task: the server's suggestion (never faster
    /// than `min_interval_ms`), capped by `max_interval_ms` when set, and by the task's
    /// retention less `min_interval_ms` (a later poll could only find it expired).
    fn poll_interval(&self, view: &TaskInfo) -> u64 {
        let p = self.config.polling;
        let mut interval = view
            .poll_interval_ms
            .unwrap_or(p.default_interval_ms)
            .max(p.min_interval_ms);
        if let Some(max) = p.max_interval_ms {
            interval = interval.min(max.max(p.min_interval_ms));
        }
        if let Some(ttl) = view.ttl_ms {
            interval = interval.min(ttl.saturating_sub(p.min_interval_ms).max(p.min_interval_ms));
        }
        interval
    }

    /// Schedules the next poll one interval from now; `reset` moves an existing one.
    pub fn schedule_poll(&mut self, session: SessionId, id: &TaskId, reset: bool) {
        let key = Timer::Poll(session, id.clone());
        let scheduled = self.has_timer(&key);
        let Some(entry) = self.session(session).and_then(|s| s.remote.get(id)) else {
            return;
        };
        let live = entry.status().is_some_and(|s| !s.is_terminal());
        if !(entry.ours && entry.auto_poll && live) || (scheduled && !reset) {
            return;
        }
        let Some(view) = entry.view.as_ref() else {
            return;
        };
        let at = self.now.plus(self.poll_interval(view));
        self.set_timer(key, at);
    }

    /// A poll answer came (or timed out): the next poll goes one interval later.
    pub fn after_poll(&mut self, session: SessionId, id: &TaskId) {
        if let Some(entry) = self.remote_entry(session, id) {
            entry.get_in_flight = false;
        }
        self.schedule_poll(session, id, false);
    }

    /// A poll timer fired: the task's era polls unless a poll is out already.
    pub(super) fn poll_remote_task(&mut self, session: SessionId, id: &TaskId) {
        let Some(entry) = self.session_mut(session).and_then(|s| s.remote.get_mut(id)) else {
            return;
        };
        if !entry.ours
            || !entry.auto_poll
            || entry.get_in_flight
            || entry.status().is_some_and(TaskStatus::is_terminal)
        {
            return;
        }
        entry.get_in_flight = true;
        let era = entry.era;
        self.protocol(era).poll(self, session, id);
    }

    /// The task's outcome, reported once; following it ends.
    pub fn on_remote_result(
        &mut self,
        session: SessionId,
        id: &TaskId,
        outcome: Result<serde_json::Value, RpcError>,
    ) {
        let Some(entry) = self.remote_entry(session, id) else {
            return;
        };
        if entry.result_reported {
            return;
        }
        entry.result_reported = true;
        // The answer is the outcome even when it beat the poll that shows the task
        // terminal (a server that answers at once when the input is in). Polling ends.
        if let Some(request) = entry.fetch.take() {
            self.clear_timer(&Timer::Request(session, request));
        }
        self.let_go(session, id);
        self.event(Event::TaskResult {
            session,
            task: id.clone(),
            outcome,
        });
    }

    /// An answer about a task of ours that is not that task: after a few in a row, the
    /// task ends.
    pub fn on_malformed_task_answer(
        &mut self,
        session: SessionId,
        id: &TaskId,
        request: &RequestId,
    ) {
        self.peer_error(
            session,
            PeerErrorKind::Malformed,
            format!("malformed task in answer to {request}"),
        );
        let Some(entry) = self.session_mut(session).and_then(|s| s.remote.get_mut(id)) else {
            return;
        };
        entry.malformed += 1;
        if entry.malformed >= MAX_MALFORMED {
            let error = RpcError::internal(format!(
                "The server sent {MAX_MALFORMED} malformed answers in a row to tasks/get for task {id}; \
                 giving up on it"
            ));
            self.give_up(session, id, error);
        }
    }

    /// Stops following a task of ours and reports `error` as its outcome (once).
    pub fn give_up(&mut self, session: SessionId, id: &TaskId, error: RpcError) {
        let Some(entry) = self.session(session).and_then(|s| s.remote.get(id)) else {
            return;
        };
        let (ours, reported, fetch) = (entry.ours, entry.result_reported, entry.fetch.clone());
        self.let_go(session, id);
        if let Some(request) = fetch {
            self.abandon_request(session, None, &request, "Task given up");
        }
        if ours && !reported {
            self.event(Event::TaskResult {
                session,
                task: id.clone(),
                outcome: Err(error),
            });
        }
    }

    /// Stops following a task: its era's state for it ends, its poll timer goes, and it is
    /// forgotten.
    fn let_go(&mut self, session: SessionId, id: &TaskId) {
        if let Some(era) = self.remote_era(session, id) {
            self.protocol(era).let_go(self, session, id);
        }
        if let Some(s) = self.session_mut(session) {
            s.remote.remove(id);
        }
        self.clear_timer(&Timer::Poll(session, id.clone()));
    }

    /// A closing session: every task of ours it followed ends with `error` (once).
    pub(super) fn end_following(&mut self, session: SessionId, error: &RpcError) {
        let ids: Vec<TaskId> = self
            .session(session)
            .map(|s| s.remote.keys().cloned().collect())
            .unwrap_or_default();
        let mut unreported = Vec::new();
        for id in ids {
            let Some(task) = self.session(session).and_then(|s| s.remote.get(&id)) else {
                continue;
            };
            if task.ours && !task.result_reported {
                unreported.push(id.clone());
            }
            self.let_go(session, &id);
        }
        unreported.sort();
        for task in unreported {
            self.event(Event::TaskResult {
                session,
                task,
                outcome: Err(error.clone()),
            });
        }
    }

    /// A task of ours, to update.
    pub fn remote_entry(&mut self, session: SessionId, id: &TaskId) -> Option<&mut RemoteTask> {
        self.session_mut(session)?
            .remote
            .get_mut(id)
            .filter(|t| t.ours)
    }

    /// Whether we follow `id` as a task of ours.
    pub fn is_our_remote_task(&self, session: SessionId, id: &TaskId) -> bool {
        self.session(session)
            .and_then(|s| s.remote.get(id))
            .is_some_and(|t| t.ours)
    }
}
