//! Following a task the peer hosts for us: its newest view, polls paced by its
//! `pollInterval`, fetching its result, and giving up, with a clear error, on a server that
//! stops making sense (malformed answers, a result that never comes).

use super::types::{Task, TaskIdParams};
use crate::error::PeerErrorKind;
use crate::event::Event;
use crate::host::{Host, Timer};
use crate::ids::{CallId, SessionId, TaskId};
use crate::jsonrpc::{code, RequestId, RpcError};
use crate::session::Purpose;
use crate::session::Session;
use crate::status::TaskStatus;
use crate::task::TaskInfo;

/// Malformed `tasks/get` answers in a row after which a task is given up.
pub(crate) const MAX_MALFORMED: u8 = 3;

/// What we know of a task the peer hosts.
#[derive(Debug, Default)]
pub(crate) struct RemoteTask {
    /// The newest view seen (from `CreateTaskResult`, `tasks/get` or a notification).
    view: Option<TaskInfo>,
    /// We created it (its `CreateTaskResult` arrived); only then do we poll and fetch.
    pub(super) ours: bool,
    pub(super) auto_poll: bool,
    pub(crate) get_in_flight: bool,
    /// Our own `tasks/result` for it, once sent.
    result_request: Option<RequestId>,
    pub(super) result_reported: bool,
    /// Malformed `tasks/get` answers in a row.
    malformed: u8,
    /// 2026-07-28: the `inputRequests` keys handed to the application, each with the call
    /// that answers it while unanswered.
    pub(crate) asked: Vec<(String, Option<CallId>)>,
    /// 2026-07-28: our `subscriptions/listen` for it, while open.
    pub(crate) listen: Option<RequestId>,
}

impl RemoteTask {
    fn status(&self) -> Option<TaskStatus> {
        self.view.as_ref().map(|t| t.status)
    }

    pub(super) fn view(&self) -> Option<&TaskInfo> {
        self.view.as_ref()
    }

    /// Records the `CreateTaskResult` of a task of ours; an earlier view (a status
    /// notification that overtook it) wins if it is newer.
    pub(super) fn created(&mut self, task: TaskInfo) -> TaskInfo {
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

/// Where a view of a peer task came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Source {
    /// A `tasks/get` or `tasks/cancel` answer.
    Answer,
    /// `notifications/tasks/status`: fresh state too, so the next poll moves back.
    Notification,
}

impl Host {
    /// A fresh view of a peer-hosted task.
    pub(crate) fn observe_remote_task(&mut self, session: SessionId, task: Task, source: Source) {
        let Some(task) = task.to_info() else {
            return self.peer_error(
                session,
                PeerErrorKind::Malformed,
                format!("task {:?}: a time is not RFC 3339", task.task_id),
            );
        };
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
        let entry = s.remote.entry(id.clone()).or_default();
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

    /// Fetches the result when the task needs input or is terminal; forgets it when done.
    pub(super) fn follow_up(&mut self, session: SessionId, id: &TaskId) {
        if self.session(session).is_some_and(Session::is_modern) {
            return self.modern_follow_up(session, id);
        }
        let timeout = self.config.request_timeout_ms;
        let now = self.now;
        let Some(s) = self.session_mut(session) else {
            return;
        };
        let Some(entry) = s.remote.get_mut(id) else {
            return;
        };
        let Some(status) = entry.status() else {
            return;
        };
        if !entry.ours || !entry.auto_poll {
            return;
        }
        let fetch = (status == TaskStatus::InputRequired || status.is_terminal())
            && entry.result_request.is_none();
        if status.is_terminal() && entry.result_reported {
            s.remote.remove(id);
        }
        if status.is_terminal() {
            self.timers.clear(&Timer::Poll(session, id.clone()));
        }
        let request = if fetch {
            let params = TaskIdParams {
                task_id: id.to_string(),
            };
            let purpose = Purpose::TaskResult {
                task: id.clone(),
                auto: true,
            };
            let request = self.send_request(session, "tasks/result", Some(params), purpose, None);
            if let Some(entry) = self.session_mut(session).and_then(|s| s.remote.get_mut(id)) {
                entry.result_request = request.clone();
            }
            request
        } else {
            self.session(session)
                .and_then(|s| s.remote.get(id))
                .and_then(|e| e.result_request.clone())
        };
        // A task that is terminal has its result ready: waiting for it is bounded.
        if let (true, Some(request), Some(ms)) = (status.is_terminal(), request, timeout) {
            let key = Timer::Request(session, request);
            if !self.timers.contains(&key) {
                self.timers.set(key, now.plus(ms));
            }
        }
    }

    /// The interval before the next poll of a task: the server's `pollInterval` (never
    /// faster than `min_interval_ms`), capped by `max_interval_ms` when set, and by the task's
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
    pub(super) fn schedule_poll(&mut self, session: SessionId, id: &TaskId, reset: bool) {
        let key = Timer::Poll(session, id.clone());
        let scheduled = self.timers.contains(&key);
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
        self.timers.set(key, at);
    }

    /// A poll answer came (or timed out): the next poll goes one interval later.
    pub(crate) fn after_poll(&mut self, session: SessionId, id: &TaskId) {
        if let Some(entry) = self.session_mut(session).and_then(|s| s.remote.get_mut(id)) {
            entry.get_in_flight = false;
        }
        self.schedule_poll(session, id, false);
    }

    /// A poll timer fired: send `tasks/get` unless one is already out.
    pub(crate) fn poll_remote_task(&mut self, session: SessionId, id: &TaskId) {
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
        let params = TaskIdParams {
            task_id: id.to_string(),
        };
        let purpose = Purpose::TaskGet {
            task: id.clone(),
            auto: true,
        };
        self.send_request(session, "tasks/get", Some(params), purpose, None);
    }

    /// The peer's answer to `tasks/result`: the task's outcome, reported once.
    pub(crate) fn on_remote_result(
        &mut self,
        session: SessionId,
        id: &TaskId,
        outcome: Result<serde_json::Value, RpcError>,
    ) {
        let Some(s) = self.session_mut(session) else {
            return;
        };
        let Some(entry) = s
            .remote
            .get_mut(id)
            .filter(|t| t.ours && !t.result_reported)
        else {
            return;
        };
        entry.result_reported = true;
        // The answer is the outcome even when it beat the poll that shows the task
        // terminal (a server that answers at once when the input is in). Polling ends.
        let request = entry.result_request.take();
        if let Some(entry) = s.remote.remove(id) {
            self.let_go(session, &entry);
        }
        if let Some(request) = request {
            self.timers.clear(&Timer::Request(session, request));
        }
        self.timers.clear(&Timer::Poll(session, id.clone()));
        self.event(Event::TaskResult {
            session,
            task: id.clone(),
            outcome,
        });
    }

    /// The peer no longer knows the task (expired or purged).
    pub(crate) fn remote_gone(&mut self, session: SessionId, id: &TaskId, error: RpcError) {
        self.give_up(session, id, error);
    }

    /// A `tasks/get` answer that is not this task: after a few in a row, the task ends.
    pub(crate) fn on_malformed_task_answer(
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

    /// Our `tasks/result` for a terminal task timed out.
    pub(super) fn result_timed_out(&mut self, session: SessionId, id: &TaskId) {
        let status = self
            .session(session)
            .and_then(|s| s.remote.get(id))
            .and_then(RemoteTask::status)
            .map_or("terminal", TaskStatus::as_str);
        let ms = self.config.request_timeout_ms.unwrap_or_default();
        let error = RpcError::new(
            code::REQUEST_TIMEOUT,
            format!(
                "Task {id} is {status}, but the server did not answer tasks/result within {ms} ms"
            ),
        );
        self.give_up(session, id, error);
    }

    /// Stops following a task of ours and reports `error` as its outcome (once).
    pub(crate) fn give_up(&mut self, session: SessionId, id: &TaskId, error: RpcError) {
        let Some(entry) = self.session_mut(session).and_then(|s| s.remote.remove(id)) else {
            return;
        };
        self.let_go(session, &entry);
        self.timers.clear(&Timer::Poll(session, id.clone()));
        if let Some(request) = entry.result_request {
            self.abandon_request(session, &request, "Task given up");
        }
        if entry.ours && !entry.result_reported {
            self.event(Event::TaskResult {
                session,
                task: id.clone(),
                outcome: Err(error),
            });
        }
    }
}

impl Host {
    /// A 2026-07-28 task has no `tasks/result`: a terminal one has its outcome read by
    /// `tasks/get` (the answer that showed it terminal usually carried it already).
    fn modern_follow_up(&mut self, session: SessionId, id: &TaskId) {
        let Some(entry) = self.session(session).and_then(|s| s.remote.get(id)) else {
            return;
        };
        let terminal = entry.status().is_some_and(TaskStatus::is_terminal);
        if entry.ours && terminal && !entry.result_reported {
            self.timers.clear(&Timer::Poll(session, id.clone()));
            self.fetch_outcome(session, id);
        }
    }

    /// The remote task of ours `id`, to update.
    pub(crate) fn remote_entry(
        &mut self,
        session: SessionId,
        id: &TaskId,
    ) -> Option<&mut RemoteTask> {
        self.session_mut(session)?
            .remote
            .get_mut(id)
            .filter(|t| t.ours)
    }

    /// Whether we follow `id` as a task of ours.
    pub(crate) fn is_our_remote_task(&self, session: SessionId, id: &TaskId) -> bool {
        self.session(session)
            .and_then(|s| s.remote.get(id))
            .is_some_and(|t| t.ours)
    }

    /// A `tasks/get` answer for the task is being read: no other poll starts meanwhile.
    pub(crate) fn mark_get_in_flight(&mut self, session: SessionId, id: &TaskId) {
        if let Some(entry) = self.remote_entry(session, id) {
            entry.get_in_flight = true;
        }
    }

    /// A task we stop following: the application's answers still due are not wanted, and
    /// our listen stream for it ends.
    pub(crate) fn let_go(&mut self, session: SessionId, entry: &RemoteTask) {
        for call in entry.asked.iter().filter_map(|(_, call)| *call) {
            self.remove_call(call);
        }
        if let Some(listen) = &entry.listen {
            self.abandon_request(session, listen, "Task finished");
        }
    }
}
