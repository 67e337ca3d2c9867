//! Calls: the work the application answers (a tool call, a peer request, the work of an
//! app-created task), addressed by [`CallId`](crate::CallId) whether or not it became a task,
//! and what a call sends its requestor in any era (progress, log messages).

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::Value;

use super::{Kept, PeerRequest, State};
use crate::event::{AppRequest, Event, MessageKind};
use crate::ids::{CallId, SessionId, TaskId};
use crate::jsonrpc::{self, RequestId};
use crate::log_level::LogLevel;
use crate::model::{Era, InputKinds, ProgressParams, TaskRequest};

/// A session told about a hosted task's changes, in the era it asked in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Follower {
    pub session: SessionId,
    pub era: Era,
}

/// One call awaiting the application's answer.
#[derive(Debug)]
pub(crate) struct Call<K: Kept> {
    /// The era of the request it answers: its rules read and write the call's messages.
    pub era: Era,
    /// The session it came from (where a plain call's reply and its progress go); `None`
    /// for the work of an app-created or restored task.
    pub session: Option<SessionId>,
    /// The peer request a plain call answers; `None` once it became a task.
    pub reply_to: Option<RequestId>,
    /// The task it runs as.
    pub task: Option<TaskId>,
    /// The request's progress token (valid for a task's whole life).
    pub progress_token: Option<Value>,
    /// Sessions told about the task's changes: where it was created and where it was
    /// asked about.
    pub followers: Vec<Follower>,
    /// The requestor asked for a task and the application decides: the requested ttl.
    pub offer: Option<Option<u64>>,
    /// The input the requestor can answer, as it declared it.
    pub input_kinds: InputKinds,
    /// The `tools/call` of a call offered a task, kept for the task ([`State::task_request`]).
    pub request: Option<Box<TaskRequest>>,
    /// A task whose work runs on another host sharing the store ([`State::sync_task`]):
    /// nothing runs here, the call only gathers followers.
    pub shadow: bool,
    /// The application set its task's status message itself (progress in an era that
    /// shows it as the status message leaves that message alone).
    pub own_message: bool,
    /// What the call's era keeps on it.
    pub kept: K::Call,
}

impl<K: Kept> Call<K> {
    /// A call answering the peer's request `request`.
    pub fn plain(
        era: Era,
        session: SessionId,
        request: RequestId,
        progress_token: Option<Value>,
    ) -> Self {
        Call {
            era,
            session: Some(session),
            reply_to: Some(request),
            task: None,
            progress_token,
            followers: Vec::new(),
            offer: None,
            input_kinds: InputKinds::default(),
            request: None,
            shadow: false,
            own_message: false,
            kept: K::Call::default(),
        }
    }

    /// The work of a task.
    pub fn task(
        era: Era,
        session: Option<SessionId>,
        task: TaskId,
        progress_token: Option<Value>,
    ) -> Self {
        Call {
            era,
            session,
            reply_to: None,
            task: Some(task),
            progress_token,
            followers: Vec::new(),
            offer: None,
            input_kinds: InputKinds::default(),
            request: None,
            shadow: false,
            own_message: false,
            kept: K::Call::default(),
        }
    }
}

impl<K: Kept> Call<K> {
    /// The stand-in for a task whose work runs on another host ([`State::sync_task`]).
    pub fn shadow(era: Era, task: TaskId) -> Self {
        Call {
            shadow: true,
            ..Call::task(era, None, task, None)
        }
    }
}

/// `params` of `notifications/message`.
#[derive(Serialize)]
struct LogParams<'a> {
    level: LogLevel,
    #[serde(skip_serializing_if = "Option::is_none")]
    logger: Option<&'a str>,
    data: &'a Value,
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    meta: Option<Value>,
}

impl<K: Kept> State<K> {
    /// The stream ([`MessageKind::stream`]) of what a call sends before its answer: its
    /// request's while it is a plain call, the session's (`None`) once it is a task.
    pub fn call_stream(&self, call: CallId) -> Option<RequestId> {
        self.call(call).and_then(|c| c.reply_to.clone())
    }

    /// `notifications/progress` on a call's session, when its request gave a progress token.
    #[allow(clippy::too_many_arguments)]
    pub fn send_progress(
        &mut self,
        call: CallId,
        stream: Option<RequestId>,
        task: Option<&TaskId>,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
        meta: Option<Value>,
    ) {
        let Some(state) = self.call(call) else {
            return;
        };
        let (Some(session), Some(progress_token)) = (state.session, state.progress_token.clone())
        else {
            return;
        };
        let params = ProgressParams {
            progress_token,
            progress,
            total,
            message,
            meta,
        };
        let line = jsonrpc::notification_line("notifications/progress", Some(params));
        let kind = MessageKind::Notification {
            method: "notifications/progress",
            task: task.cloned(),
            stream,
        };
        self.send(session, kind, task, line);
    }

    /// `notifications/message` on `session`.
    #[allow(clippy::too_many_arguments)]
    pub fn send_log(
        &mut self,
        session: SessionId,
        stream: Option<RequestId>,
        task: Option<&TaskId>,
        level: LogLevel,
        logger: Option<&str>,
        data: &Value,
        meta: Option<Value>,
    ) {
        let params = LogParams {
            level,
            logger,
            data,
            meta,
        };
        let line = jsonrpc::notification_line("notifications/message", Some(params));
        let kind = MessageKind::Notification {
            method: "notifications/message",
            task: task.cloned(),
            stream,
        };
        self.send(session, kind, task, line);
    }

    /// A request the application answers itself ([`Config::app_methods`](crate::Config)),
    /// as a call of `era`.
    pub fn app_request(
        &mut self,
        era: Era,
        session: SessionId,
        id: &RequestId,
        method: &str,
        params: Option<&RawValue>,
    ) -> CallId {
        let token = progress_token(params);
        let call = self.add_call(Call::plain(era, session, id.clone(), token));
        if let Some(s) = self.session_mut(session) {
            s.requests.insert(id.clone(), PeerRequest::Call(call));
        }
        self.event(Event::Request(AppRequest {
            call,
            session,
            request: id.clone(),
            method: method.to_owned(),
            params: params.map(ToOwned::to_owned),
            task: None,
            related_task: None,
        }));
        call
    }
}

/// `params._meta.progressToken`, if any.
fn progress_token(params: Option<&RawValue>) -> Option<Value> {
    #[derive(Deserialize)]
    struct P {
        #[serde(default, rename = "_meta")]
        meta: Option<M>,
    }
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct M {
        #[serde(default)]
        progress_token: Option<Value>,
    }
    let p: P = serde_json::from_str(params?.get()).ok()?;
    p.meta?.progress_token
}
