//! Our requests to a session's peer, in the era the session speaks (chosen once, when it
//! opened), and the peer's tasks we follow.

use serde_json::{Map, Value};

use super::Host;
use crate::error::UsageError;
use crate::ids::{SessionId, TaskId};
use crate::jsonrpc::RequestId;
use crate::model::{Era, Request, TaskInfo};
use crate::state::Timer;
use crate::time::Millis;

impl Host {
    /// Sends `request` to the session's peer in the era it speaks; the rest of its life
    /// (answers, tasks, inputs) arrives as events, as each variant says.
    pub fn send(
        &mut self,
        now: Millis,
        session: SessionId,
        request: Request,
    ) -> Result<RequestId, UsageError> {
        if let Request::CallTool { arguments, .. } | Request::CallToolAsTask { arguments, .. } =
            &request
        {
            check_arguments(arguments)?;
        }
        let era = self.requesting(now, session)?;
        if let Request::FollowTask { task } = &request {
            let id = TaskId::from(task.as_str());
            if self.state.is_our_remote_task(session, &id) {
                return Err(UsageError::AlreadyFollowing(id));
            }
        }
        let st = &mut self.state;
        st.protocol(era).send(st, session, request)
    }

    /// [`Host::send`], with `meta` added to the request's `params._meta`: e.g. the W3C trace
    /// context (`traceparent`, `tracestate`) that lets the server continue the caller's
    /// trace. The members the engine writes itself are refused
    /// ([`UsageError::ReservedMeta`]): `progressToken` and every key under
    /// `io.modelcontextprotocol/`. Only the requests sent now carry `meta`: not the later
    /// polls of a task, nor a 2025-11-25 task call sent again plainly.
    pub fn send_with_meta(
        &mut self,
        now: Millis,
        session: SessionId,
        request: Request,
        meta: Map<String, Value>,
    ) -> Result<RequestId, UsageError> {
        let reserved =
            |key: &String| key == "progressToken" || key.starts_with("io.modelcontextprotocol/");
        if let Some(key) = meta.keys().find(|k| reserved(k)) {
            return Err(UsageError::ReservedMeta(key.clone()));
        }
        self.state.request_meta = Some(meta);
        let sent = self.send(now, session, request);
        self.state.request_meta = None;
        sent
    }

    /// Sends any request; the answer arrives as [`Event::Response`](crate::Event::Response).
    pub fn request(
        &mut self,
        now: Millis,
        session: SessionId,
        method: &str,
        params: Option<Value>,
    ) -> Result<RequestId, UsageError> {
        let method = method.to_owned();
        self.send(now, session, Request::Any { method, params })
    }

    /// `tools/list`, one page; it arrives as [`Event::ToolPage`](crate::Event::ToolPage), and
    /// (2025-11-25) each tool's task support is remembered for [`Host::call_tool_as_task`].
    pub fn list_tools(
        &mut self,
        now: Millis,
        session: SessionId,
        cursor: Option<String>,
    ) -> Result<RequestId, UsageError> {
        self.send(now, session, Request::ListTools { cursor })
    }

    /// A plain `tools/call`; `arguments` is an object, or `null` for none. On a 2026-07-28
    /// session an `InputRequiredResult` (MRTR) is not the answer: its inputs reach the
    /// application as [`Event::Request`](crate::Event::Request)s (`request` is the key), and
    /// once all are answered the call goes again with them;
    /// [`Event::Response`](crate::Event::Response) for this request id ends it.
    pub fn call_tool(
        &mut self,
        now: Millis,
        session: SessionId,
        name: &str,
        arguments: Value,
    ) -> Result<RequestId, UsageError> {
        let name = name.to_owned();
        self.send(now, session, Request::CallTool { name, arguments })
    }

    /// A `tools/call` as a task, when the server and the tool allow it:
    /// [`Event::TaskCreated`](crate::Event::TaskCreated) follows, then
    /// [`Event::TaskStatus`](crate::Event::TaskStatus) changes and one
    /// [`Event::TaskResult`](crate::Event::TaskResult).
    ///
    /// The call goes out plainly, with [`Event::RanPlainly`](crate::Event::RanPlainly) saying
    /// why and the answer as [`Event::Response`](crate::Event::Response), when the server
    /// did not declare task support, or (2025-11-25) the tool's last listed
    /// `execution.taskSupport` (see [`Host::list_tools`]; `task_support` when that is absent)
    /// is `"forbidden"` or absent. When the listing could not be read (an unknown value),
    /// the task is tried and, if refused with -32601, sent again plainly. A server that
    /// answers a task request plainly gives `Event::Response` too.
    ///
    /// On a 2026-07-28 session the request declares the tasks extension and the server
    /// decides (`ttl_ms` is not sent). A task's `inputRequests` reach the application as
    /// `Event::Request`s (`request` is the key, `related_task` the task; answer with
    /// [`Host::respond`], which sends `tasks/update`); its outcome arrives inline with
    /// `tasks/get` as `Event::TaskResult`.
    pub fn call_tool_as_task(
        &mut self,
        now: Millis,
        session: SessionId,
        name: &str,
        arguments: Value,
        ttl_ms: Option<u64>,
    ) -> Result<RequestId, UsageError> {
        let name = name.to_owned();
        self.send(
            now,
            session,
            Request::CallToolAsTask {
                name,
                arguments,
                ttl_ms,
            },
        )
    }

    /// Any task-augmented request (e.g. a server's `sampling/createMessage` to a client
    /// that hosts it; 2025-11-25 only).
    pub fn request_as_task(
        &mut self,
        now: Millis,
        session: SessionId,
        method: &str,
        params: Value,
        ttl_ms: Option<u64>,
    ) -> Result<RequestId, UsageError> {
        let Value::Object(params) = params else {
            return Err(UsageError::NotAnObject("request params"));
        };
        let method = method.to_owned();
        self.send(
            now,
            session,
            Request::AnyAsTask {
                method,
                params,
                ttl_ms,
            },
        )
    }

    /// `tasks/get`; the task as it stands arrives as
    /// [`Event::TaskAnswer`](crate::Event::TaskAnswer) (read in either era; a failure too),
    /// and updates the task's view.
    pub fn get_task(
        &mut self,
        now: Millis,
        session: SessionId,
        task: &str,
    ) -> Result<RequestId, UsageError> {
        self.send(
            now,
            session,
            Request::GetTask {
                task: task.to_owned(),
            },
        )
    }

    /// Follows a task made earlier (by another connection, or before a restart) as if this
    /// session had created it: a `tasks/get` reads it, and its answer arrives as
    /// [`Event::TaskCreated`](crate::Event::TaskCreated) for the returned request (or as
    /// [`Event::Response`](crate::Event::Response) with the error, e.g. -32602 for a task
    /// the server does not know). From then on, as for
    /// [`Host::call_tool_as_task`]: polls at its poll interval,
    /// [`Event::TaskStatus`](crate::Event::TaskStatus) on each change,
    /// its input requests (2026-07-28; 2025-11-25 asks them on `tasks/result`), and its
    /// outcome as [`Event::TaskResult`](crate::Event::TaskResult): in 2025-11-25 by
    /// `tasks/result`, in 2026-07-28 inline from `tasks/get`. Its progress is not seen (the
    /// token was the creator's). [`UsageError::AlreadyFollowing`] when this session follows
    /// it already.
    pub fn follow_task(
        &mut self,
        now: Millis,
        session: SessionId,
        task: &str,
    ) -> Result<RequestId, UsageError> {
        self.send(
            now,
            session,
            Request::FollowTask {
                task: task.to_owned(),
            },
        )
    }

    /// `tasks/result`; the answer arrives as [`Event::Response`](crate::Event::Response)
    /// (and, the first time, as [`Event::TaskResult`](crate::Event::TaskResult)). 2025-11-25
    /// only: in 2026-07-28 `tasks/get` carries the outcome ([`UsageError::NotInEra`]).
    pub fn task_result(
        &mut self,
        now: Millis,
        session: SessionId,
        task: &str,
    ) -> Result<RequestId, UsageError> {
        self.send(
            now,
            session,
            Request::TaskResult {
                task: task.to_owned(),
            },
        )
    }

    /// `tasks/cancel`; the task as it stands after the cancel arrives as
    /// [`Event::TaskAnswer`](crate::Event::TaskAnswer) (in 2026-07-28, where the cancel is an
    /// ack, as the `tasks/get` the engine sends after it reads it).
    pub fn cancel_task(
        &mut self,
        now: Millis,
        session: SessionId,
        task: &str,
    ) -> Result<RequestId, UsageError> {
        self.send(
            now,
            session,
            Request::CancelTask {
                task: task.to_owned(),
            },
        )
    }

    /// Gives up a request of ours still waiting for its answer (the id a request method
    /// returned; e.g. a plain `tools/call` whose caller went away): the peer is told to stop
    /// (`notifications/cancelled`), its late answer passes quietly, and no event reports
    /// it. A call that went out again under another id (a 2025-11-25 task call refused and
    /// sent plainly, a later 2026-07-28 MRTR round) is cancelled under that id; one between
    /// MRTR rounds forgets the inputs it waits for. A 2025-11-25 task-augmented request
    /// still waiting for its `CreateTaskResult` is not sent `notifications/cancelled`
    /// (which must not cancel a task request): the task it makes is cancelled with
    /// `tasks/cancel` once it exists (the same when such a request times out). `false` when
    /// nothing of it is pending: answered already, or a task call whose task exists (cancel
    /// that with [`Host::cancel_task`]).
    pub fn cancel_request(
        &mut self,
        now: Millis,
        session: SessionId,
        request: &RequestId,
    ) -> Result<bool, UsageError> {
        let era = self.requesting(now, session)?;
        let st = &mut self.state;
        Ok(st.protocol(era).cancel_request(st, session, request))
    }

    /// Asks the server for the notices it sends only when asked: a 2026-07-28 server's list
    /// changes (`listChanged` of its tools, prompts and resources, those it declares) and
    /// updates of `resources` (when it declares `resources.subscribe`), on a
    /// `subscriptions/listen` stream that stays open; calling it again ends the stream
    /// opened before (`notifications/cancelled`) and opens one for the new `resources`.
    /// Each notice then arrives as [`Event::Notification`](crate::Event::Notification), as
    /// a 2025-11-25 server's do unasked. `None` when nothing is to be asked: a 2025-11-25
    /// server (whose resources are subscribed to with `resources/subscribe`, an ordinary
    /// request), or nothing declared.
    pub fn listen_for_notices(
        &mut self,
        now: Millis,
        session: SessionId,
        resources: &[String],
    ) -> Result<Option<RequestId>, UsageError> {
        let era = self.requesting(now, session)?;
        let st = &mut self.state;
        Ok(st.protocol(era).listen_for_notices(st, session, resources))
    }

    /// `tasks/list`, one page, which arrives as [`Event::TaskPage`](crate::Event::TaskPage)
    /// (2025-11-25 only: [`UsageError::NotInEra`] in 2026-07-28).
    pub fn list_tasks(
        &mut self,
        now: Millis,
        session: SessionId,
        cursor: Option<String>,
    ) -> Result<RequestId, UsageError> {
        self.send(now, session, Request::ListTasks { cursor })
    }

    /// Turns the engine's own polling and result fetching for a peer task on or off.
    pub fn set_auto_poll(
        &mut self,
        session: SessionId,
        task: &str,
        on: bool,
    ) -> Result<(), UsageError> {
        let st = &mut self.state;
        let entry = st
            .session_mut(session)
            .ok_or(UsageError::UnknownSession(session))?
            .remote
            .get_mut(task)
            .filter(|t| t.ours)
            .ok_or_else(|| UsageError::UnknownRemoteTask(TaskId::from(task)))?;
        entry.auto_poll = on;
        let task = TaskId::from(task);
        if on {
            st.follow_up(session, &task);
            st.schedule_poll(session, &task, false);
        } else {
            st.clear_timer(&Timer::Poll(session, task));
        }
        Ok(())
    }

    /// What we last heard of a task the peer hosts for us.
    pub fn remote_task(&self, session: SessionId, task: &str) -> Option<&TaskInfo> {
        self.state.session(session)?.remote.get(task)?.view()
    }

    /// Ids of the peer-hosted tasks we follow on a session, sorted.
    pub fn remote_task_ids(&self, session: SessionId) -> Vec<&TaskId> {
        let Some(s) = self.state.session(session) else {
            return Vec::new();
        };
        let mut ids: Vec<&TaskId> = s
            .remote
            .iter()
            .filter(|(_, t)| t.ours)
            .map(|(id, _)| id)
            .collect();
        ids.sort_unstable();
        ids
    }

    /// The era a ready session's requests go in (the oldest on a server session, whose
    /// requests to its client only that era has), with the clock moved to `now`.
    fn requesting(&mut self, now: Millis, session: SessionId) -> Result<Era, UsageError> {
        let s = self.state.ready(session)?;
        let era = s.era.unwrap_or(Era::ALL[Era::ALL.len() - 1]);
        self.enter(now)?;
        Ok(era)
    }
}

/// `tools/call` arguments: an object, or `null` for none.
fn check_arguments(arguments: &Value) -> Result<(), UsageError> {
    match arguments {
        Value::Null | Value::Object(_) => Ok(()),
        _ => Err(UsageError::NotAnObject("tool arguments")),
    }
}
