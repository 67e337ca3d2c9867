//! The application's work on calls: answering them, and what a call reports while it runs
//! (its task's status message, progress, log messages, requests for input).

use serde_json::value::RawValue;
use serde_json::Value;

use super::Host;
use crate::error::UsageError;
use crate::event::StopReason;
use crate::ids::{CallId, InputId, TaskId};
use crate::jsonrpc::RpcError;
use crate::log_level::LogLevel;
use crate::model::Role;
use crate::time::Millis;

impl Host {
    /// Answers a call: a plain call gets `outcome` as its reply; a task stores it as its
    /// outcome (`completed`, or `failed` for an error; an `isError: true` result is
    /// `completed` with a tool error, which 2025-11-25 shows as `failed`).
    ///
    /// A task that was cancelled meanwhile keeps its status: the answer is dropped and
    /// [`UsageError::TaskFinished`] says so (a common race, not a mistake). Once a call is
    /// answered, or its task expired or was removed, the call is gone:
    /// [`UsageError::UnknownCall`].
    pub fn respond(
        &mut self,
        now: Millis,
        call: CallId,
        outcome: Result<Value, RpcError>,
    ) -> Result<(), UsageError> {
        let outcome = match outcome {
            Ok(value @ Value::Object(_)) => {
                Ok(serde_json::value::to_raw_value(&value).expect("JSON values serialize"))
            }
            Ok(_) => return Err(UsageError::NotAnObject("a result")),
            Err(e) => Err(e),
        };
        self.enter(now)?;
        self.state.answer(call, outcome)
    }

    /// [`Host::respond`] with the result already serialized (e.g. by
    /// `serde_json::value::to_raw_value` from a typed result), which saves building a
    /// `Value` on the way. It must be a JSON object ([`UsageError::NotAnObject`]).
    pub fn respond_raw(
        &mut self,
        now: Millis,
        call: CallId,
        outcome: Result<Box<RawValue>, RpcError>,
    ) -> Result<(), UsageError> {
        let outcome = match outcome {
            Ok(raw) if !raw.get().trim_start().starts_with('{') => {
                return Err(UsageError::NotAnObject("a result"))
            }
            // Whitespace between tokens may hold newlines, which would split the line.
            Ok(raw) if crate::scan::count_either(raw.get().as_bytes(), b'\n', b'\r') > 0 => {
                Ok(one_line(&raw))
            }
            other => other,
        };
        self.enter(now)?;
        self.state.answer(call, outcome)
    }

    /// Sets a running task's status message (the peer is told). `None` clears it, and
    /// lets a 2026-07-28 task's progress show as its message again (see
    /// [`Host::notify_progress`]).
    pub fn set_task_message(
        &mut self,
        now: Millis,
        call: CallId,
        message: Option<String>,
    ) -> Result<(), UsageError> {
        self.enter(now)?;
        let st = &mut self.state;
        let task = st.running_task(call)?;
        if let Some(state) = st.call_mut(call) {
            state.own_message = message.is_some();
        }
        st.change_message(&task, message);
        Ok(())
    }

    /// Ends the task `call` works for as `cancelled`, as its requestor's `tasks/cancel`
    /// would, on the application's own account (e.g. the work it relays was cancelled
    /// elsewhere): `message` its status message (`None` keeps the last one), -32602 "Task
    /// was cancelled" its outcome, its followers told; the work stops ([`Event::Stop`] with
    /// [`StopReason::Cancelled`]). [`UsageError::TaskFinished`] when it has ended already,
    /// [`UsageError::UnknownCall`] for a call without a task.
    ///
    /// [`Event::Stop`]: crate::Event::Stop
    pub fn cancel_work(
        &mut self,
        now: Millis,
        call: CallId,
        message: Option<String>,
    ) -> Result<(), UsageError> {
        self.enter(now)?;
        let st = &mut self.state;
        let task = st.running_task(call)?;
        if st.cancel_task(&task, message) {
            st.after_settle(&task, Some(StopReason::Cancelled));
        }
        Ok(())
    }

    /// Cancels hosted task `task` on the application's own account, whoever owns it and
    /// wherever its work runs (an operator's word): as [`Host::cancel_work`] does, by the
    /// task's id; a task whose work runs on another host sharing the store is cancelled in
    /// the store (its host stops the work when it hears of it).
    /// [`UsageError::TaskFinished`] when it has ended already, [`UsageError::UnknownTask`]
    /// when the host does not hold it.
    pub fn cancel_hosted(
        &mut self,
        now: Millis,
        task: &str,
        message: Option<String>,
    ) -> Result<(), UsageError> {
        self.enter(now)?;
        let st = &mut self.state;
        let task = match st.tasks.get(task) {
            None => return Err(UsageError::UnknownTask(task.into())),
            Some(r) if r.status.is_terminal() => {
                let (task, status) = (r.id.clone(), r.status);
                return Err(UsageError::TaskFinished { task, status });
            }
            Some(r) => r.id.clone(),
        };
        if st.cancel_task(&task, message) {
            st.after_settle(&task, Some(StopReason::Cancelled));
        }
        Ok(())
    }

    /// Sends `notifications/progress` when the request asked for it (a `progressToken`);
    /// nothing is sent without a token. A task of the 2026-07-28 era, which has no progress
    /// notifications for tasks, shows it as its status message instead (what its
    /// `tasks/get` and `notifications/tasks` say): `message` when given, else `"3 of 5"`
    /// (`progress` of `total`) or `"3"`; unless the application set the task's message
    /// itself with [`Host::set_task_message`], which then stands until it clears it.
    pub fn notify_progress(
        &mut self,
        now: Millis,
        call: CallId,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    ) -> Result<(), UsageError> {
        if !progress.is_finite() || total.is_some_and(|t| !t.is_finite()) {
            return Err(UsageError::NonFiniteProgress);
        }
        self.enter(now)?;
        let st = &mut self.state;
        let state = st.call(call).ok_or(UsageError::UnknownCall(call))?;
        let (era, task) = (state.era, state.task.clone());
        if task.is_some() {
            st.running_task(call)?;
        }
        st.protocol(era)
            .progress(st, call, task.as_ref(), progress, total, message);
        Ok(())
    }

    /// Asks the requestor for input on behalf of a call: `method` is `elicitation/create`,
    /// `sampling/createMessage` or `roots/list`. A task shows `input_required` until every
    /// input request is answered; the answer arrives as
    /// [`Event::InputResponse`](crate::Event::InputResponse). In 2025-11-25 the request goes
    /// to the peer; a 2026-07-28 task lists it in `tasks/get` (`inputRequests`) until
    /// `tasks/update` answers it; a plain 2026-07-28 call either finds the answer in its
    /// request (an MRTR retry: `Event::InputResponse` at once) or ends, its request answered
    /// with an `InputRequiredResult`
    /// ([`StopReason::InputRequired`](crate::StopReason::InputRequired)), and the client
    /// retries it as a new call.
    pub fn request_input(
        &mut self,
        now: Millis,
        call: CallId,
        method: &str,
        params: Value,
    ) -> Result<InputId, UsageError> {
        let capability = match method {
            "elicitation/create" => "elicitation",
            "sampling/createMessage" => "sampling",
            "roots/list" => "roots",
            _ => return Err(UsageError::NotAnInputMethod(method.to_owned())),
        };
        let Value::Object(params) = params else {
            return Err(UsageError::NotAnObject("input request params"));
        };
        self.enter(now)?;
        let st = &mut self.state;
        let state = st.call(call).ok_or(UsageError::UnknownCall(call))?;
        let era = state.era;
        if state.task.is_some() {
            st.running_task(call)?;
        }
        st.protocol(era)
            .request_input(st, call, method, capability, params)
    }

    /// Sends a log message about a call (`notifications/message`, `logger` naming its
    /// source) on the session of its request, when the requestor wants it; a message it
    /// does not want is dropped, which is no error. In 2025-11-25 the requestor wants every
    /// level until its session's `logging/setLevel` names the least severe one it wants,
    /// and a task's messages carry related-task `_meta`. In 2026-07-28 only a plain call
    /// whose request named a level (`_meta["io.modelcontextprotocol/logLevel"]`) gets them,
    /// and a task never does.
    ///
    /// Needs [`Config::logging`](crate::Config::logging) ([`UsageError::LoggingOff`]) and a
    /// call a client made ([`UsageError::WrongRole`] on a client session).
    pub fn log(
        &mut self,
        now: Millis,
        call: CallId,
        level: LogLevel,
        logger: Option<&str>,
        data: Value,
    ) -> Result<(), UsageError> {
        if !self.state.config.logging {
            return Err(UsageError::LoggingOff);
        }
        self.enter(now)?;
        let st = &mut self.state;
        let state = st.call(call).ok_or(UsageError::UnknownCall(call))?;
        let (era, session) = (state.era, state.session);
        if state.task.is_some() {
            st.running_task(call)?;
        }
        let Some(s) = session.and_then(|id| st.session(id)) else {
            return Ok(());
        };
        if s.role != Role::Server {
            return Err(UsageError::WrongRole {
                needs: Role::Server,
            });
        }
        st.protocol(era).log(st, call, level, logger, &data);
        Ok(())
    }

    /// Accepts the task the requestor offered ([`ToolCall::task_offered`]): the task is
    /// created and the requestor answered with it; the call goes on as the task's work.
    /// When the task cannot be created ([`UsageError::TaskRefused`]: a task limit), the
    /// requestor gets that error as its answer and the call is over.
    ///
    /// [`ToolCall::task_offered`]: crate::ToolCall::task_offered
    pub fn start_task(&mut self, now: Millis, call: CallId) -> Result<TaskId, UsageError> {
        self.enter(now)?;
        let state = self.state.call(call).ok_or(UsageError::UnknownCall(call))?;
        let Some(ttl) = state.offer else {
            return Err(UsageError::NotATaskOffer(call));
        };
        self.state.accept_offer(call, ttl)
    }
}

/// `raw` again, without the whitespace between its tokens.
fn one_line(raw: &RawValue) -> Box<RawValue> {
    let value: Value = serde_json::from_str(raw.get()).expect("a RawValue is valid JSON");
    serde_json::value::to_raw_value(&value).expect("JSON values serialize")
}
