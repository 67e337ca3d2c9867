//! `subscriptions/listen`: a stream on the listen request's id of `notifications/tasks` for
//! the tasks it names (`notifications.taskIds`), each the whole task as `tasks/get` would
//! show it, and of the server's notices it asks for (its tools', prompts' or resources' list
//! changed, a subscribed resource updated) that the server sends.

use serde::Deserialize;

use super::encode;
use super::input::asks_of;
use super::meta::{stateless, tasks_required, Meta, RequestMeta};
use super::state::{self as kept, Listen, Notices};
use crate::era::kept::State;
use crate::event::{Event, MessageKind};
use crate::ids::{SessionId, TaskId};
use crate::jsonrpc::{Reject, RequestId};
use crate::model::{Era, Notice};
use crate::state::PeerRequest;

/// `params` of `subscriptions/listen`.
#[derive(Deserialize)]
pub(super) struct ListenParams {
    notifications: Filter,
    #[serde(rename = "_meta", default)]
    meta: Meta,
}

stateless!(ListenParams);

/// `SubscriptionFilter` (a `null` member is as if missing).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Filter {
    #[serde(default)]
    task_ids: Option<Vec<String>>,
    #[serde(default)]
    tools_list_changed: Option<bool>,
    #[serde(default)]
    prompts_list_changed: Option<bool>,
    #[serde(default)]
    resources_list_changed: Option<bool>,
    #[serde(default)]
    resource_subscriptions: Option<Vec<String>>,
}

impl Filter {
    /// The notices asked for that this server sends: its tools' list changes with
    /// `Config::tools_list_changed`, its prompts' and resources' with the application's
    /// capability declaring `listChanged`, resource updates with its `resources` declaring
    /// `subscribe`.
    fn agreed(&self, st: &State) -> Notices {
        let config = &st.config;
        let declares = |capability: &str, flag: &str| config.app_declares(capability, flag);
        let uris = self.resource_subscriptions.as_deref().unwrap_or_default();
        let mut subscriptions: Vec<String> = Vec::new();
        if declares("resources", "subscribe") {
            for uri in uris {
                if !subscriptions.contains(uri) {
                    subscriptions.push(uri.clone());
                }
            }
        }
        Notices {
            tools_list_changed: self.tools_list_changed == Some(true) && config.tools_list_changed,
            prompts_list_changed: self.prompts_list_changed == Some(true)
                && declares("prompts", "listChanged"),
            resources_list_changed: self.resources_list_changed == Some(true)
                && declares("resources", "listChanged"),
            resource_subscriptions: subscriptions,
        }
    }
}

impl Notices {
    fn is_empty(&self) -> bool {
        *self == Notices::default()
    }

    fn carries(&self, notice: &Notice) -> bool {
        match notice {
            Notice::ToolsListChanged => self.tools_list_changed,
            Notice::PromptsListChanged => self.prompts_list_changed,
            Notice::ResourcesListChanged => self.resources_list_changed,
            Notice::ResourceUpdated { uri } => self.resource_subscriptions.contains(uri),
            // Log messages go with the request they are about, never on a stream.
            Notice::Log(_) => false,
        }
    }
}

/// Opens a listen stream: the acknowledgement names the task ids we report on (the
/// caller's own tasks; others are left out so that their existence does not leak) and the
/// notices we agreed to send, each task is reported at once as it stands, then on every
/// change, and the stream ends with a result once every task it follows is terminal (at
/// once when it follows none), unless it carries notices: then it stays open until the
/// client ends it.
pub(super) fn on_listen(
    st: &mut State,
    session: SessionId,
    id: &RequestId,
    p: ListenParams,
    meta: &RequestMeta,
) -> Result<(), Reject> {
    let notices = p.notifications.agreed(st);
    let asked_tasks = p.notifications.task_ids.is_some();
    let wanted = p.notifications.task_ids.unwrap_or_default();
    if !wanted.is_empty() && !meta.declares_tasks() {
        return Err(tasks_required());
    }
    let owner = st.owner_of(session);
    let mut agreed: Vec<TaskId> = Vec::new();
    for task in &wanted {
        if let Some(record) = st.tasks.get_owned(task, owner) {
            if !agreed.contains(&record.id) {
                agreed.push(record.id.clone());
            }
        }
    }
    let tasks = asked_tasks.then_some(agreed.as_slice());
    let line = encode::listen_acknowledged(id, tasks, &notices);
    let kind = MessageKind::Notification {
        method: "notifications/subscriptions/acknowledged",
        task: None,
        stream: Some(id.clone()),
    };
    st.send(session, kind, None, line);
    let mut live = Vec::new();
    for task in agreed {
        // Each task as it stands first, so nothing between its creation and the
        // subscription is missed.
        notify_listener(st, session, id, &task);
        let finished = st.tasks.get(&task).is_none_or(|r| r.status.is_terminal());
        if finished {
            continue;
        }
        st.follow(session, Era::V2026_07_28, &task);
        live.push(task);
    }
    if live.is_empty() && notices.is_empty() {
        let line = encode::listen_ended(id);
        st.reply(session, id, None, line);
        return Ok(());
    }
    let subscribes = !notices.resource_subscriptions.is_empty();
    if let Some(s) = st.session_mut(session) {
        s.requests
            .insert(id.clone(), PeerRequest::Held(Era::V2026_07_28));
        kept::of_session(s).listens.push(Listen {
            id: id.clone(),
            tasks: live,
            notices,
        });
    }
    if subscribes {
        report_subscriptions(st, session);
    }
    Ok(())
}

/// Tells the application every resource the session's listen streams now want updates of.
fn report_subscriptions(st: &mut State, session: SessionId) {
    let mut uris: Vec<String> = Vec::new();
    let listens = kept::session(st, session).map_or(&[][..], |k| &k.listens[..]);
    for uri in listens
        .iter()
        .flat_map(|l| &l.notices.resource_subscriptions)
    {
        if !uris.contains(uri) {
            uris.push(uri.clone());
        }
    }
    st.event(Event::ResourceSubscriptions { session, uris });
}

/// Sends `notice` on each of the session's listen streams that carries it.
pub(in crate::era) fn notify(st: &mut State, session: SessionId, notice: &Notice) {
    let streams: Vec<RequestId> = kept::session(st, session)
        .map(|k| {
            (k.listens.iter())
                .filter(|l| l.notices.carries(notice))
                .map(|l| l.id.clone())
                .collect()
        })
        .unwrap_or_default();
    for stream in streams {
        let line = encode::listen_notice(&stream, notice);
        let kind = MessageKind::Notification {
            method: notice.method(),
            task: None,
            stream: Some(stream),
        };
        st.send(session, kind, None, line);
    }
}

/// Reports a task's change on the session's listen streams that follow it; a stream whose
/// every task is now terminal (or gone) ends.
pub(super) fn tell_listeners(st: &mut State, session: SessionId, task: &TaskId) {
    let streams: Vec<RequestId> = kept::session(st, session)
        .map(|k| {
            k.listens
                .iter()
                .filter(|l| l.tasks.contains(task))
                .map(|l| l.id.clone())
                .collect()
        })
        .unwrap_or_default();
    let terminal = st.tasks.get(task).is_none_or(|r| r.status.is_terminal());
    for stream in streams {
        notify_listener(st, session, &stream, task);
        if !terminal {
            continue;
        }
        let ended = st.session_mut(session).is_some_and(|s| {
            let listens = &mut kept::of_session(s).listens;
            let Some(at) = listens.iter().position(|l| l.id == stream) else {
                return false;
            };
            listens[at].tasks.retain(|t| t != task);
            let empty = listens[at].tasks.is_empty() && listens[at].notices.is_empty();
            if empty {
                listens.remove(at);
                s.requests.remove(&stream);
            }
            empty
        });
        if ended {
            let line = encode::listen_ended(&stream);
            st.reply(session, &stream, None, line);
        }
    }
}

/// The client ends its stream (`notifications/cancelled`): nothing more is sent for it.
pub(super) fn drop_stream(st: &mut State, session: SessionId, request: &RequestId) {
    let Some(k) = kept::session_mut(st, session) else {
        return;
    };
    let Some(at) = k.listens.iter().position(|l| l.id == *request) else {
        return;
    };
    let dropped = k.listens.remove(at);
    if !dropped.notices.resource_subscriptions.is_empty() {
        report_subscriptions(st, session);
    }
}

fn notify_listener(st: &mut State, session: SessionId, stream: &RequestId, task: &TaskId) {
    let Some(record) = st.tasks.get(task) else {
        return;
    };
    let line = encode::task_notification(stream, record, asks_of(st, task));
    let kind = MessageKind::Notification {
        method: "notifications/tasks",
        task: Some(task.clone()),
        stream: Some(stream.clone()),
    };
    st.send(session, kind, Some(task), line);
}
