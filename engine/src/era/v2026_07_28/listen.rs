//! `subscriptions/listen` with `notifications.taskIds`: a stream of `notifications/tasks`,
//! each the whole task as `tasks/get` would show it, on the listen request's id.

use serde::Deserialize;
use serde_json::value::RawValue;

use super::encode;
use super::meta::{tasks_required, RequestMeta};
use crate::event::MessageKind;
use crate::host::Host;
use crate::ids::{SessionId, TaskId};
use crate::jsonrpc::{self, Reject, RequestId};
use crate::session::Inbound;

#[derive(Deserialize)]
struct ListenParams {
    notifications: Filter,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Filter {
    #[serde(default)]
    task_ids: Option<Vec<String>>,
}

impl Host {
    /// Opens a listen stream: the acknowledgement names the ids we report on (the caller's
    /// own tasks; others are left out so that their existence does not leak), each task is
    /// reported at once as it stands, then on every change, and the stream ends with a
    /// result once every task it follows is terminal (at once when it follows none).
    pub(super) fn on_listen(
        &mut self,
        session: SessionId,
        id: &RequestId,
        params: Option<&RawValue>,
        meta: &RequestMeta,
    ) -> Result<(), Reject> {
        let p: ListenParams = jsonrpc::params(params)?;
        let wanted = p.notifications.task_ids.unwrap_or_default();
        if !wanted.is_empty() && !meta.declares_tasks() {
            return Err(tasks_required());
        }
        let owner = self.session(session).map_or(u32::MAX, |s| s.owner);
        let mut agreed: Vec<TaskId> = Vec::new();
        for task in &wanted {
            if let Some(record) = self.tasks.get_owned(task, owner) {
                if !agreed.contains(&record.id) {
                    agreed.push(record.id.clone());
                }
            }
        }
        let line = encode::listen_acknowledged(id, &agreed);
        let kind = MessageKind::Notification {
            method: "notifications/subscriptions/acknowledged",
            task: None,
        };
        self.send(session, kind, None, line);
        let mut live = Vec::new();
        for task in agreed {
            // Each task as it stands first, so nothing between its creation and the
            // subscription is missed.
            self.notify_listener(session, id, &task);
            let finished = self.tasks.get(&task).is_none_or(|r| r.status.is_terminal());
            if finished {
                continue;
            }
            if let Some(&call) = self.work.get(&task) {
                if let Some(state) = self.call_mut(call) {
                    state.follow(session);
                }
            }
            live.push(task);
        }
        if live.is_empty() {
            let line = encode::listen_ended(id);
            self.reply(session, id, None, line);
            return Ok(());
        }
        if let Some(s) = self.session_mut(session) {
            s.inbound.insert(id.clone(), Inbound::Listen);
            s.listens.push((id.clone(), live));
        }
        Ok(())
    }

    /// Reports a task's change on the session's listen streams that follow it; a stream
    /// whose every task is now terminal ends. Whether any stream follows the task.
    pub(crate) fn tell_listeners(&mut self, session: SessionId, task: &TaskId) -> bool {
        let Some(s) = self.session(session) else {
            return false;
        };
        let streams: Vec<RequestId> = s
            .listens
            .iter()
            .filter(|(_, tasks)| tasks.contains(task))
            .map(|(id, _)| id.clone())
            .collect();
        if streams.is_empty() {
            return false;
        }
        let terminal = self.tasks.get(task).is_none_or(|r| r.status.is_terminal());
        for stream in streams {
            self.notify_listener(session, &stream, task);
            if !terminal {
                continue;
            }
            let ended = self.session_mut(session).is_some_and(|s| {
                let Some(at) = s.listens.iter().position(|(id, _)| *id == stream) else {
                    return false;
                };
                s.listens[at].1.retain(|t| t != task);
                let empty = s.listens[at].1.is_empty();
                if empty {
                    s.listens.remove(at);
                    s.inbound.remove(&stream);
                }
                empty
            });
            if ended {
                let line = encode::listen_ended(&stream);
                self.reply(session, &stream, None, line);
            }
        }
        true
    }

    fn notify_listener(&mut self, session: SessionId, stream: &RequestId, task: &TaskId) {
        let Some(record) = self.tasks.get(task) else {
            return;
        };
        let line = encode::task_notification(stream, record, self.asks_of(task));
        let kind = MessageKind::Notification {
            method: "notifications/tasks",
            task: Some(task.clone()),
        };
        self.send(session, kind, Some(task), line);
    }
}
